"""report.html: what it shows, that it is self-contained and escaped, and that a real browser renders it.

The browser tests need Chromium (`bash .ci/install-chromium.sh`). Without it they
skip, except under CI=true, where a missing Chromium fails them.
"""

import html
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import standin  # noqa: E402
from standin import run_cli  # noqa: E402
from arena.base import MOST_LOOKS  # noqa: E402
from arena.cards import card_names, card_sizes, load_cards, load_rubric  # noqa: E402
from arena.jobs import job_kind, judge_id, match_of  # noqa: E402
from arena.state import apply, deps_of, find_match, finished, new_state, opponent, path_of  # noqa: E402
from arena.storage import Run  # noqa: E402
from arena.context import Context  # noqa: E402
from arena.outputs import attacks_on  # noqa: E402
from arena.wording import looks_text, points, progress_line  # noqa: E402

from arena import report  # noqa: E402

HOSTILE = "</div><script>alert(1)</script>"
CHROMIUM = "/usr/bin/chromium"
# tmpfs makes bracket.py's fsyncs free, so whole stand-in tournaments play fast
SCRATCH = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def scratch_dir(test):
    d = tempfile.mkdtemp(prefix="arena-report-", dir=SCRATCH)
    test.addCleanup(shutil.rmtree, d, True)
    return d


def start(d, agents, seed, baseline=True, task="Write a function that parses ISO dates\nIt must reject 2023-02-30.\n"):
    with open(os.path.join(d, "task.md"), "w", encoding="utf-8") as f:
        f.write(task)
    with open(os.path.join(d, "old.md"), "w", encoding="utf-8") as f:
        f.write("the old answer\n")
    args = ["init", "--agents", str(agents), "--seed", str(seed), "--task-file", "task.md", "--run", "r", "--direct"]
    run_cli(args + (["--baseline-file", "old.md"] if baseline else []), d)


def play(d, agents, seed, baseline=True):
    """A whole stand-in tournament through the CLI, then `report`; returns (state, html, report path)."""
    start(d, agents, seed, baseline)
    standin.Orchestrator(d, standin.StandIn(d, seed=1), "r", runner=standin.run_here).play()
    return render(d)


PLAYED = {}


def played(agents, seed):
    """A finished tournament with a baseline, played once per test module and shared."""
    if (agents, seed) not in PLAYED:
        d = tempfile.mkdtemp(prefix="arena-report-", dir=SCRATCH)
        PLAYED[(agents, seed)] = (d,) + play(d, agents, seed)
    return PLAYED[(agents, seed)]


def tearDownModule():
    for value in PLAYED.values():
        shutil.rmtree(value[0], True)


def render(d):
    _, out, _ = run_cli(["report", "--run", "r"], d)
    path = os.path.join(d, out.strip().split("report: ", 1)[1])
    with open(path, encoding="utf-8") as f:
        page = f.read()
    return load_state(d), page, path


def load_state(d):
    return Run("r", os.path.join(d, ".arena")).load()


def all_matches(st):
    return [m for rnd in st["rounds"] for m in rnd["matches"]]


def hrefs(page):
    return re.findall(r'href="([^"]*)"', page)


def fabricate(root, n, seed=3):
    """A finished run of n agents made in-process through the engine's own events (no files, no CLI)."""
    cards = load_cards()
    sizes = card_sizes(cards)
    run = Run("big", root)
    os.makedirs(run.path("out"))
    with open(run.path("task.md"), "w", encoding="utf-8") as f:
        f.write("Plan the launch week\n")
    ev = {"e": "init", "seq": 1, "run": "big", "agents": n, "seed": seed, "wave": 10, "at": time.time(),
          "fence": "F", "baseline": True, "sizes": list(sizes), "pairing": "rated", "most_looks": list(MOST_LOOKS)}
    st = new_state(ev, sizes)
    rng = standin.pick(seed, "fabricate")
    ncrit = len(load_rubric())
    while not finished(st):
        ready = sorted(j for j, i in st["jobs"].items()
                       if i["s"] == "ready" and all(st["jobs"][d]["s"] == "done" for d in deps_of(st, j)))
        if not ready:
            st["seq"] += 1
            apply(st, {"e": "advance", "seq": st["seq"]}, checked=False)
            continue
        for job in ready:
            kind = job_kind(job)
            if kind == "spawn":
                out = {"sol": "out/%s.md" % job}
            elif kind == "atk":
                out = {"labels": "FMm"[:rng.randrange(4)]}
            elif kind == "def":
                mid, who = match_of(job), job.split("-")[3]
                m = find_match(st, mid)
                k = len(st["summ"]["%s-atk-%s" % (mid, opponent(m, who))]["labels"])
                out = {"ans": "C" * k, "sol": "out/%s-sol-%s.md" % (mid, who)}
            elif kind == "judge":
                m = find_match(st, match_of(job))
                out = {"sc": {a: [rng.randrange(11) for _ in range(ncrit)] for a in (m["a"], m["b"])},
                       "fat": {m["a"]: rng.random() < .05, m["b"]: rng.random() < .05}, "conf": "high",
                       "why": "stand-in", "order": [m["a"], m["b"]], "names": ["Wren", "Lark"]}
            else:
                out = {"sc": {"winner": [5] * ncrit, "baseline": [6] * ncrit}, "conf": "high", "why": "",
                       "fat": {"winner": False, "baseline": False}, "order": ["winner", "baseline"],
                       "names": ["Wren", "Lark"]}
            st["seq"] += 1
            apply(st, {"e": "done", "seq": st["seq"], "job": job, "out": out}, checked=False)
    return run, st


class Finished16(unittest.TestCase):
    """One finished 16-agent run with a baseline, shared by the tests of this class."""

    @classmethod
    def setUpClass(cls):
        cls.dir, cls.st, cls.page, cls.path = played(16, 5)
        cls.arena = Run("r", os.path.join(cls.dir, ".arena"))

    def test_every_match_of_every_round_with_its_winner(self):
        matches = all_matches(self.st)
        # the bracket's 15 and the checked merge's
        self.assertEqual(len(matches), 16)
        self.assertEqual(self.page.count('class="match"'), 16)
        for m in matches:
            self.assertIn('<div class="match" id="%s" data-winner="%s"' % (m["id"], self.st["results"][m["id"]]["w"]),
                          self.page)
        for rnd in self.st["rounds"]:
            self.assertIn('id="round-%d"' % rnd["n"], self.page)
        self.assertNotIn('data-state="pending"', self.page)

    def test_header_names_task_run_seed_agents_progress_and_winner(self):
        header = self.page[self.page.index("<header"):self.page.index("</header>")]
        self.assertIn("Write a function that parses ISO dates", header)
        self.assertNotIn("2023-02-30", header.split("<details")[0], "only the task's first line is the title")
        for value in ("r", "5", "16"):
            self.assertIn("<dd>%s</dd>" % value, header)
        self.assertIn(html.escape(progress_line(self.st)).split(", ")[0], header)
        self.assertIn("winner %s" % self.st["champion"], header)

    def test_winner_path_shows_scores_flags_and_the_attacks_survived(self):
        champ = self.st["champion"]
        section = re.search(r'<section id="winner" data-agent="%s">(.*?)</section>' % champ, self.page, re.S)
        self.assertIsNotNone(section)
        section = section.group(1)
        for crit, _, _ in load_rubric():
            self.assertIn(crit, section)
        path = path_of(self.st, champ)
        merge = 1 if (self.st["merged"] or {}).get("match") else 0
        self.assertEqual(section.count('<li class="step">'), len(path) + merge)
        for m, res in path:
            opp = opponent(m, champ)
            self.assertIn('href="#%s"' % m["id"], section)
            # totals are shown per look: two looks summed are shown halved
            self.assertIn('<td class="tot">%s</td>' % points(res["tot"][champ], res.get("n", 1)), section)
            self.assertIn('<td class="tot">%s</td>' % points(res["tot"][opp], res.get("n", 1)), section)
            if res.get("n", 1) >= 2:
                self.assertIn("%d looks: " % res["n"], section)
                self.assertIn(html.escape(looks_text(self.st, m, res)), section)
            answers = self.st["summ"]["%s-def-%s" % (m["id"], champ)]["ans"]
            attacks = attacks_on(Context(self.arena, self.st), "%s-atk-%s" % (m["id"], opp))
            self.assertEqual(len(attacks), len(answers))
            for (label, summary), ans in zip(attacks, answers):
                said = {"C": "conceded and fixed", "R": "rebutted"}[ans]
                self.assertIn('<span class="lab %s">%s</span> %s <span class="ans %s">%s</span>' % (
                    label[0] if label != "MINOR" else "m", label, html.escape(summary.strip()), ans.lower(), said),
                    section)

    def test_baseline_comparison_matches_the_final_verdict(self):
        f = self.st["final"]
        w, b = sum(f["sc"]["winner"]), sum(f["sc"]["baseline"])
        section = re.search(r'<section id="baseline"[^>]*>(.*?)</section>', self.page, re.S).group(1)
        self.assertIn("arena answer <b>%d</b>, old answer <b>%d</b>" % (w, b), section)
        self.assertIn('href="out/final.json"', section)

    def test_links_reach_every_output_file_and_only_files_that_exist(self):
        base = os.path.dirname(self.path)
        linked = set()
        for href in hrefs(self.page):
            if href.startswith("#"):
                self.assertIn('id="%s"' % href[1:], self.page)
                continue
            self.assertFalse(os.path.isabs(href) or ":" in href, href)
            self.assertTrue(os.path.isfile(os.path.join(base, href)), href)
            linked.add(href)
        for name in os.listdir(os.path.join(base, "out")):
            self.assertIn("out/" + name, linked)

    def test_self_contained(self):
        low = self.page.lower()
        for bad in ("<script src", "<link", "http://", "https://", "@import", "url(", "<img", "<iframe"):
            self.assertNotIn(bad, low)

    def test_every_agent_has_its_card(self):
        cards = load_cards()
        agents = re.search(r'<section id="agents">(.*?)</section>', self.page, re.S).group(1)
        for a, card in self.st["cards"].items():
            row = "<tr><td>%s</td><td>%s</td>" % (a, "</td><td>".join(card_names(cards, card)))
            self.assertIn(row, agents)


class ReportWhileRunning(unittest.TestCase):
    def test_a_run_in_progress_shows_pending_matches_and_no_winner(self):
        d = scratch_dir(self)
        start(d, 16, 9)
        orch = standin.Orchestrator(d, standin.StandIn(d, seed=2), "r")
        out = orch.next()
        for _ in range(4):  # a few waves: spawns and the first attacks, nothing judged yet
            out = orch.step(out)
        st, page, _ = render(d)
        self.assertIsNone(st["champion"])
        self.assertIn('<section id="winner" class="pending-winner" data-agent="">', page)
        self.assertIn("in progress", page)
        pending = [m for m in all_matches(st) if m["id"] not in st["results"]]
        self.assertTrue(pending)
        for m in pending:
            self.assertIn('<div class="match" id="%s" data-winner="" data-a="%s" data-b="%s" data-state="pending"'
                          % (m["id"], m["a"], m["b"]), page)
        self.assertEqual(page.count('class="match"'), len(all_matches(st)))
        self.assertIn('<div class="round future" id="round-4">', page)
        self.assertNotIn('<section id="baseline" class="better"', page)
        self.assertIn("Not run yet", page)

    def test_a_single_agent_run(self):
        d = scratch_dir(self)
        st, page, _ = play(d, 1, 3, baseline=False)
        self.assertIn('<section id="winner" data-agent="%s">' % st["champion"], page)
        self.assertEqual(page.count('class="match"'), 0)
        self.assertNotIn('id="baseline"', page)


class Hostile(unittest.TestCase):
    def test_text_from_files_is_escaped(self):
        d = scratch_dir(self)
        st, _, _ = play(d, 4, 11)
        run = Run("r", os.path.join(d, ".arena"))
        champ = st["champion"]
        m, _ = path_of(st, champ)[-1]
        atk = run.path("out", "%s-atk-%s.md" % (m["id"], opponent(m, champ)))
        with open(atk, "w", encoding="utf-8") as f:
            f.write("<!-- arena job: x -->\n## ATTACK 1 FATAL: %s\nbody\n" % HOSTILE)
        with open(run.path(st["sol"][st["ship"] or champ]), "w", encoding="utf-8") as f:
            f.write("<!-- arena job: x -->\nmy answer %s\n" % HOSTILE)
        with open(run.path("task.md"), "w", encoding="utf-8") as f:
            f.write("<img src=x onerror=alert(2)> %s\n" % HOSTILE)
        st["summ"][judge_id(m["id"], 1)]["why"] = HOSTILE  # the judge's reason, in memory only
        st["summ"]["%s-atk-%s" % (m["id"], opponent(m, champ))]["labels"] = "F"  # the attack list that counted
        page = report.render(Context(run, st))
        self.assertNotIn("<script>alert", page)
        self.assertNotIn("<img", page)
        self.assertGreaterEqual(page.count(html.escape(HOSTILE)), 4)
        self.assertEqual(page.count("<script>"), 1, "only the report's own script")


class Large(unittest.TestCase):
    def test_2160_agents_compact_with_early_rounds_collapsed(self):
        d = scratch_dir(self)
        run, st = fabricate(os.path.join(d, ".arena"), 2160)
        page = report.render(Context(run, st))
        self.assertLess(len(page.encode("utf-8")), 3 * 1024 * 1024)
        self.assertEqual(page.count('class="match"'), 2159)
        self.assertIn('<section id="winner" data-agent="%s">' % st["champion"], page)
        for rnd in st["rounds"]:
            opened = re.search(r'<details class="round" id="round-%d"[^>]*?( open)?>' % rnd["n"], page).group(1)
            self.assertEqual(bool(opened), len(rnd["matches"]) <= report.OPEN_ROUND_MAX, rnd["n"])
        self.assertIn("the OLD answer scored higher", page)


# ---------------------------------------------------------------- a real browser

def chromium(test, *args):
    """Run headless Chromium once; returns (stdout, stderr). Skips or fails when it is missing."""
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            test.fail("%s is missing under CI; install it with .ci/install-chromium.sh" % CHROMIUM)
        test.skipTest("no %s (bash .ci/install-chromium.sh installs it)" % CHROMIUM)
    profile = tempfile.mkdtemp(prefix="arena-chromium-")
    try:
        proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                               "--no-first-run", "--disable-background-networking", "--disable-component-update",
                               "--disable-sync", "--user-data-dir=" + profile] + list(args),
                              capture_output=True, text=True, timeout=60)
    finally:
        shutil.rmtree(profile, True)
    return proc.stdout, proc.stderr


def load_in_browser(test, path):
    """(DOM after the page's scripts ran, console messages) of a local page (path may end in #fragment)."""
    dom, log = chromium(test, "--enable-logging=stderr", "--v=0", "--virtual-time-budget=3000", "--dump-dom",
                        "file://" + os.path.abspath(path.split("#")[0]) + ("#" + path.split("#", 1)[1] if "#" in path else ""))
    # our page writes nothing to the console: any message (console.*, an uncaught error) is a failure
    console = [line for line in log.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
    return dom, console


def screenshot(test, path, png, height=2000):
    chromium(test, "--hide-scrollbars", "--screenshot=" + png, "--window-size=1280,%d" % height,
             "file://" + os.path.abspath(path))
    with open(png, "rb") as f:
        head = f.read(24)
    test.assertEqual(head[:8], b"\x89PNG\r\n\x1a\n")
    test.assertEqual(int.from_bytes(head[16:20], "big"), 1280)


class Browser(unittest.TestCase):
    def check(self, agents, seed):
        _, st, _, path = played(agents, seed)
        dom, console = load_in_browser(self, path)
        self.assertEqual(console, [])
        self.assertIn('data-ready="1"', dom, "the page's script did not run to its end")
        decided = sum(len(r["matches"]) for r in st["rounds"])
        self.assertEqual(decided, agents - 1 + (1 if st["merged"] and st["merged"].get("match") else 0))
        self.assertEqual(dom.count('class="match"'), decided)
        self.assertIn('<section id="winner" data-agent="%s">' % st["champion"], dom)
        shot = os.path.join(scratch_dir(self), "report.png")
        screenshot(self, path, shot)
        self.assertGreater(os.path.getsize(shot), 10000)
        return dom, path

    def test_16_agents(self):
        self.check(16, 5)

    def test_100_agents(self):
        dom, path = self.check(100, 7)
        self.assertIn('<details class="round" id="round-1" data-state="done">', dom, "50 matches start collapsed")
        # a link to a match of a collapsed round opens that round
        dom, console = load_in_browser(self, path + "#r1-m07")
        self.assertEqual(console, [])
        self.assertIn('<details class="round" id="round-1" data-state="done" open="">', dom)

    def test_a_broken_page_is_caught(self):
        d = scratch_dir(self)
        page = os.path.join(d, "broken.html")
        with open(page, "w") as f:
            f.write("<!DOCTYPE html><p>x</p><script>document.getElementById('nope').open = true;</script>"
                    "<script>setTimeout(function () { missing(); }, 50);</script>")
        _, console = load_in_browser(self, page)
        self.assertEqual(len(console), 2, console)
        self.assertTrue(any("Uncaught TypeError" in line for line in console), console)
        self.assertTrue(any("missing is not defined" in line for line in console), console)


def make_docs_screenshot(png):
    """docs/report.png: the report of a finished 16-agent stand-in run with a baseline."""
    class Shot(unittest.TestCase):
        def runTest(self):
            pass
    test = Shot()
    d = tempfile.mkdtemp(prefix="arena-report-", dir=SCRATCH)
    try:
        start(d, 16, 5, task="Write a Python function that parses ISO 8601 dates and rejects impossible ones\n")
        standin.Orchestrator(d, standin.StandIn(d, seed=1), "r").play()
        _, _, path = render(d)
        screenshot(test, path, os.path.abspath(png), height=3000)
    finally:
        shutil.rmtree(d, True)
    print(png)


if __name__ == "__main__":
    # python3 tests/test_report.py screenshot docs/report.png   regenerates the picture in the docs
    if sys.argv[1:2] == ["screenshot"]:
        make_docs_screenshot(sys.argv[2] if len(sys.argv) > 2 else os.path.join(standin.ROOT, "docs", "report.png"))
    else:
        unittest.main()
