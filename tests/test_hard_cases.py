"""Adversarial orchestration: late outputs, stale and refused files, leaks to judges, killed inits.

Each case drives bracket.py through its command line the way an orchestrator written
only from the README, SKILL.md and the briefs could: retrying before an agent wrote,
running next twice, leaving a folder where a file belongs, and so on.
"""

import contextlib
import io
import json
import random
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import readme
import standin
from standin import ENGINE, run_cli, state_bytes, state_of
from arena import outputs, state
from arena.jobs import TRIES
from arena.cards import load_cards, load_rubric
from arena.cli import main


class Run(unittest.TestCase):
    """A run driven call by call: the test decides which agent writes what, and when."""

    task = "Write a function that adds two numbers.\n"

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.cwd = self.tmp.name
        with open(os.path.join(self.cwd, "task.md"), "wb") as f:
            f.write(self.task.encode("utf-8"))
        self.agent = standin.StandIn(self.cwd, seed=5)
        self.outs = []

    def tearDown(self):
        self.tmp.cleanup()

    def init(self, n, *extra, run="r", seed=7):
        self.run = run
        run_cli(["init", "--agents", str(n), "--seed", str(seed), "--task-file", "task.md", "--run", run,
                 "--direct"] + list(extra), self.cwd)

    def next(self, *extra):
        _, out, _ = run_cli(["next", "--run", self.run] + list(extra), self.cwd)
        self.outs.append(out)
        return out

    def finish(self, out):
        """Play every wave until the run has finished; a run still waiting after 60 is a failure."""
        for _ in range(60):
            if "Finished" in out:
                return out
            self.wave(out)
            out = self.next()
        self.fail("the run did not finish; it last printed:\n" + out)

    def wave(self, out, skip=()):
        """Play every call of a printed wave except the jobs in skip; returns the jobs listed."""
        jobs = []
        for call in standin.parse_wave(out):
            jobs.append(call["description"])
            if call["description"] not in skip:
                self.agent(call)
        return jobs

    def path(self, *parts):
        return os.path.join(self.cwd, ".arena", self.run, *parts)

    def write(self, rel, text):
        with open(self.path(rel), "w", encoding="utf-8") as f:
            f.write(text)

    def read(self, rel):
        with open(self.path(rel), encoding="utf-8") as f:
            return f.read()

    def st(self):
        return state_of(self.cwd, self.run)

    def to_judges(self, n=2):
        """Play spawns, attacks and defences; returns the output of the next that hands out the judges."""
        out = self.next()
        while "-judge" not in out:
            self.assertIn("Wave", out)
            self.wave(out)
            out = self.next()
        return out


    def to_judges_except(self, job):
        """Play up to the wave that hands out job, play that wave without it; returns that next's output."""
        out = self.next()
        while job not in out:
            self.wave(out)
            out = self.next()
        self.wave(out, skip=(job,))
        return out


class LateOutputs(Run):
    def test_a_late_verdict_is_read_with_its_own_try_labels(self):
        self.init(2, "--recheck", "off")
        out = self.to_judges()
        self.assertIn("r1-m01-judge", out)
        sides1, names1 = self.st()["jobs"]["r1-m01-judge"]["lab"]
        # the orchestrator retries before the first judge wrote anything
        out = self.next("--retry")
        self.assertIn("r1-m01-judge", out)
        sides2, names2 = self.st()["jobs"]["r1-m01-judge"]["lab"]
        # fresh labels: none of try 1's come back, so a late try-1 verdict cannot pass for try 2's
        self.assertFalse(set(names1) & set(names2), (names1, names2))
        full = {"correctness": 30, "completeness": 25, "robustness": 20, "specificity": 15, "clarity": 10}
        low = {"correctness": 5, "completeness": 5, "robustness": 5, "specificity": 5, "clarity": 5}
        good = names1[sides1.index("a001")]
        bad = names1[sides1.index("a002")]
        self.write("out/r1-m01-judge.json", json.dumps({
            "job": "r1-m01-judge", "scores": {good: full, bad: low}, "fatal": {good: False, bad: False},
            "confidence": "high", "reason": "late try 1"}))
        self.next()
        res = self.st()["results"]["r1-m01"]
        self.assertEqual((res["w"], res["tot"]), ("a001", {"a001": 100, "a002": 25}))
        # try 2's judge writes after try 1's verdict counted: the result and the report stand
        self.write("out/r1-m01-judge.json", json.dumps({
            "job": "r1-m01-judge", "scores": {names2[0]: low, names2[1]: full},
            "fatal": {names2[0]: False, names2[1]: False}, "confidence": "high", "reason": "try 2 says otherwise"}))
        self.next()
        self.assertEqual(self.st()["results"]["r1-m01"]["w"], "a001")
        run_cli(["report", "--run", "r"], self.cwd)
        page = self.read("report.html")
        self.assertNotIn("try 2 says otherwise", page)
        self.assertIn("rewritten by another try", page)

    def test_a_winning_file_rewritten_after_judging_is_flagged_with_the_judged_copy(self):
        for baseline in (False, True):
            with self.subTest(baseline=baseline):
                self.setUp()
                self.addCleanup(self.tearDown)
                if baseline:
                    with open(os.path.join(self.cwd, "old.md"), "w") as f:
                        f.write("def add(a, b): return a - b\n")
                self.init(4, *(["--baseline-file", "old.md"] if baseline else []))
                out = self.next()
                while "Finished." not in out:
                    self.wave(out)
                    out = self.next()
                _, clean, _ = run_cli(["winner", "--run", self.run], self.cwd)
                self.assertNotIn("warning:", clean)
                st = self.st()
                # the text that ships: the champion's, or the checked merge's when it beat the champion
                shipped = st["ship"] or st["champion"]
                sol = st["sol"][shipped]
                judged_before = self.read(sol)
                # an earlier try of its last defence writes late, over the judged file
                self.write(sol, "<!-- arena job: %s -->\nA late, different solution by %s.\n" % (
                    sol[4:-3].replace("-sol-", "-def-"), shipped))
                _, text, _ = run_cli(["winner", "--run", self.run], self.cwd)
                m = re.search(r"^warning: that file changed after the judges last read it \(.*\); "
                              r"the text they judged is (\S+) \(agent ids replaced by labels\)$", text, re.M)
                self.assertTrue(m, text)
                self.assertIn("/j/final/" if baseline else "-judge", m.group(1))
                with open(os.path.join(self.cwd, m.group(1)), encoding="utf-8") as f:
                    copy = f.read()
                # the judged text, header dropped, is what the copy holds; the late text is not there
                self.assertRegex(judged_before, r"\nquality: [\d.]+\nrevision: \d+\n")
                self.assertEqual(copy, judged_before.split("\n", 1)[1])
                self.assertNotIn("A late, different solution", copy)
                self.assertEqual(self.st(), st, "winner changed the state")

    def test_judge_retry_gets_fresh_labels_and_the_same_order(self):
        sizes = tuple(len(p) for p in load_cards().values())
        for seed in range(20):
            st = state.new_state({"run": "x", "agents": 2, "seed": seed, "wave": 10, "at": 0, "fence": "f",
                                  "baseline": False, "pairing": "rated", "most_looks": [3, 5]}, sizes)
            tries = [state.judge_sides(st, "r1-m01-judge", t) for t in (1, 2, 3)]
            used = [n for _, names in tries for n in names]
            self.assertEqual(len(set(used)), 6, "a label came back on a later try: %s" % used)
            # the order is the seeded coin of the job, kept on retries so a seed replays the same
            self.assertTrue(all(sides == tries[0][0] for sides, _ in tries))
            # a second look sees the first look's order swapped, on every try, with labels of its own
            looks = [state.judge_sides(st, "r1-m01-judge2", t) for t in (1, 2, 3)]
            self.assertTrue(all(sides == tries[0][0][::-1] for sides, _ in looks))
            self.assertFalse(set(n for _, names in looks for n in names) & set(used))
        self.assertNotIn("fresh pair of labels and order", readme.all_text())


class RefusedFiles(Run):
    def test_a_refused_file_is_moved_aside_and_never_counts_twice(self):
        self.init(2)
        out = self.next()
        self.wave(out, skip=("spawn-a001",))
        self.write("out/spawn-a001.md", "no header\n")
        out = self.next()
        self.assertIn("spawn-a001", out)
        self.assertEqual(self.read("out/refused/spawn-a001.try1.md"), "no header\n")
        self.assertFalse(os.path.exists(self.path("out/spawn-a001.md")))
        before = state_bytes(self.cwd, "r")
        again = self.next()
        self.assertIn("Waiting for 1 job(s)", again)
        self.assertEqual(state_bytes(self.cwd, "r"), before, "a second next without new outputs changed the state")
        info = self.st()["jobs"]["spawn-a001"]
        self.assertEqual((info["s"], info["t"]), ("issued", 2))

    def test_a_folder_at_an_output_path_does_not_block_the_retry(self):
        self.init(2)
        out = self.next()
        self.wave(out, skip=("spawn-a001",))
        os.makedirs(self.path("out/spawn-a001.md", "inner"))
        out = self.next()
        self.assertIn("not a plain file", out)
        self.assertTrue(os.path.isdir(self.path("out/refused/spawn-a001.try1.md/inner")))
        self.wave(out)  # the re-issued agent can write its file
        self.next()
        self.assertEqual(self.st()["jobs"]["spawn-a001"]["s"], "done")
        self.assertEqual(self.st()["sol"]["a001"], "out/spawn-a001.md")

    def test_paths_planted_where_the_engine_writes_do_not_stop_the_run(self):
        self.init(2, "--recheck", "off")
        os.makedirs(self.path("b", "r1-m01-judge.md", "inner"))
        with open(self.path("j", "r1-m01-judge"), "w") as f:
            f.write("a file where a folder goes\n")
        out = self.to_judges()
        self.assertIn("r1-m01-judge", out)
        self.assertTrue(os.path.isfile(self.path("b", "r1-m01-judge.md")))
        self.assertTrue(os.path.isdir(self.path("out", "refused", "r1-m01-judge.in-the-way.md")))
        self.assertTrue(os.path.isfile(self.path("out", "refused", "r1-m01-judge.in-the-way")))

    def test_the_last_refusal_says_what_happens_next(self):
        self.init(2)
        out = self.next()
        self.wave(out, skip=("spawn-a001",))
        self.write("out/spawn-a001.md", "no header\n")
        out = self.next()
        self.assertIn("invalid, will be re-issued: spawn-a001", out)
        self.write("out/spawn-a001.md", "no header again\n")
        out = self.next()
        self.assertNotIn("will be re-issued: spawn-a001", out)
        self.assertRegex(out, r"invalid, no more tries, a001 forfeits its match: spawn-a001: ")
        self.assertEqual(self.read("out/refused/spawn-a001.try2.md"), "no header again\n")

    def test_a_refused_attack_is_not_handed_to_the_defender_or_the_judge(self):
        self.init(2, "--recheck", "off")
        out = self.next()
        self.wave(out)
        secret = "## ATTACK 1 SEVERE: refused attack text\n"
        for _ in range(TRIES["atk"]):
            out = self.next()
            self.assertIn("r1-m01-atk-a002", out)
            self.wave(out, skip=("r1-m01-atk-a002",))
            self.write("out/r1-m01-atk-a002.md", "<!-- arena job: r1-m01-atk-a002 -->\n" + secret)
        out = self.next()
        self.assertTrue(self.st()["summ"]["r1-m01-atk-a002"]["missing"])
        self.assertFalse(os.path.exists(self.path("out/r1-m01-atk-a002.md")))
        brief = self.read("b/r1-m01-def-a001.md")
        self.assertNotIn("r1-m01-atk-a002.md", brief)
        self.assertIn("no attacks", brief.lower())
        # the defender answers nothing and its defence is accepted
        while "-judge" not in out:
            self.wave(out)
            out = self.next()
        self.assertEqual(self.st()["summ"]["r1-m01-def-a001"]["ans"], "")
        copies = "".join(self.read(os.path.join("j", "r1-m01-judge", f))
                         for f in os.listdir(self.path("j", "r1-m01-judge")))
        self.assertNotIn("refused attack text", copies)
        # the refused files are kept, and the report links them
        self.assertEqual(sorted(os.listdir(self.path("out", "refused"))),
                         ["r1-m01-atk-a002.try1.md", "r1-m01-atk-a002.try2.md"])
        self.finish(out)
        run_cli(["report", "--run", "r"], self.cwd)
        self.assertIn('<a href="out/refused/r1-m01-atk-a002.try2.md">atk-a002.try2.md</a>', self.read("report.html"))
        _, win, _ = run_cli(["winner", "--run", "r"], self.cwd)
        self.assertNotIn("refused attack text", win)

    def test_a_refused_defence_is_not_shown_to_the_judge(self):
        self.init(2, "--recheck", "off")
        out = self.to_judges_except("r1-m01-def-a001")
        for _ in range(TRIES["def"]):
            self.write("out/r1-m01-def-a001.md", "<!-- arena job: r1-m01-def-a001 -->\n## ANSWER 9 CONCEDE: refused defence\n")
            self.write("out/r1-m01-sol-a001.md", "<!-- arena job: r1-m01-def-a001 -->\nrefused revision\n")
            out = self.next()
            self.wave(out, skip=("r1-m01-def-a001",))
        self.assertTrue(self.st()["summ"]["r1-m01-def-a001"]["missing"])
        self.assertEqual(self.st()["sol"]["a001"], "out/spawn-a001.md")
        copies = "".join(self.read(os.path.join("j", "r1-m01-judge", f))
                         for f in os.listdir(self.path("j", "r1-m01-judge")))
        self.assertNotIn("refused", copies.replace("it was refused on every try", ""))
        self.assertIn("no defence", copies)


class Verdicts(unittest.TestCase):
    def test_duplicate_keys_are_refused_at_any_level(self):
        rubric = load_rubric()
        card = ", ".join('"%s": 1' % c for c, _, _ in rubric)
        base = '{"job": "j", "scores": {"A": {%s}, "B": {%s}}, "fatal": {"A": false, "B": false}%s}'
        ok = base % (card, card, "")
        outputs.parse_verdict(ok, "j", ["A", "B"], rubric, "v.json")
        for text in (base % (card + ', "correctness": 0', card, ""),
                     base % (card, card, ', "fatal": {"A": true, "B": false}'),
                     base % (card, card, ', "job": "j"')):
            with self.assertRaisesRegex(outputs.BadOutput, "duplicate key"):
                outputs.parse_verdict(text, "j", ["A", "B"], rubric, "v.json")


class Leaks(Run):
    task = "Line one\r\nLine two, with a CR: \r\nend\r\n"

    def test_the_task_reaches_every_brief_byte_for_byte(self):
        self.init(2)
        out = self.to_judges()
        task = self.task.encode("utf-8")
        for name in os.listdir(self.path("b")):
            with open(self.path("b", name), "rb") as f:
                self.assertIn(task, f.read(), name)

    def test_agent_and_job_ids_are_scrubbed_whatever_surrounds_them(self):
        self.init(2, "--recheck", "off")
        leak = ("agent_a001 wrote a001_v2 and xa002y; see .arena/r/out/spawn-a002.md, r1-m01-atk-a002 and "
                "r1-m01-judge2.\nA100 and a12 stay.\n")
        out = self.next()
        while "r1-m01-def-a001" not in out:
            self.wave(out)
            out = self.next()
        self.wave(out, skip=("r1-m01-def-a001",))
        attacks = len(self.st()["summ"]["r1-m01-atk-a002"]["labels"])
        head = "<!-- arena job: r1-m01-def-a001 -->\n"
        self.write("out/r1-m01-def-a001.md", head + "".join(
            "## ANSWER %d CONCEDE: fixed in a001_v2\n%s" % (k, leak) for k in range(1, attacks + 1)))
        self.write("out/r1-m01-sol-a001.md", head + leak)
        out = self.next()
        self.assertIn("r1-m01-judge", out)
        folder = self.path("j", "r1-m01-judge")
        copies = "".join(self.read(os.path.join("j", "r1-m01-judge", f)) for f in sorted(os.listdir(folder)))
        self.assertIn("wrote", copies)
        self.assertNotRegex(copies, r"a00[12]")
        self.assertNotIn("r1-m01", copies)
        self.assertIn("A100 and a12 stay", copies)


class Baseline(Run):
    def test_the_baseline_judge_gets_as_many_tries_as_any_judge(self):
        self.assertEqual(TRIES["final"], TRIES["judge"])
        with open(readme.page("reliability.md"), encoding="utf-8") as f:
            text = f.read()
        self.assertIn("judge's %s times" % {2: "two", 3: "three"}[TRIES["judge"]], text)

    def test_one_agent_whose_spawn_fails_twice(self):
        with open(os.path.join(self.cwd, "old.md"), "w") as f:
            f.write("old answer\n")
        self.init(1, "--baseline-file", "old.md")
        for _ in range(TRIES["spawn"]):
            out = self.next()
            self.wave(out, skip=("spawn-a001",))
            self.write("out/spawn-a001.md", "no header\n")
        out = self.next()
        self.assertIn("Finished", out)
        self.assertIn("no solution", out)
        _, win, _ = run_cli(["winner", "--run", "r"], self.cwd)
        self.assertNotIn("not run yet", win)
        self.assertRegex(win, r"baseline check: not run: .*no solution")


class RunNames(Run):
    def test_an_empty_run_name_is_refused(self):
        self.init(2)
        for args in (["next", "--run", ""], ["status", "--run", ""],
                     ["init", "--agents", "2", "--task-file", "task.md", "--run", ""]):
            code, _, err = run_cli(args, self.cwd, check=False)
            self.assertEqual(code, 2, args)
            self.assertIn("empty", err)

    def test_a_killed_init_is_safe_to_repeat(self):
        env = dict(os.environ, ARENA_KILL_AT="2")  # dies writing task.md, before the journal
        proc = subprocess.run(ENGINE + ["init", "--agents", "2", "--seed", "1", "--task-file",
                               "task.md", "--run", "t", "--direct"], cwd=self.cwd, capture_output=True, env=env)
        self.assertLess(proc.returncode, 0)
        self.assertTrue(os.path.isdir(os.path.join(self.cwd, ".arena", "t")))
        self.assertFalse(os.path.exists(os.path.join(self.cwd, ".arena", "t", "journal.jsonl")))
        code, _, err = run_cli(["next", "--run", "t"], self.cwd, check=False)
        self.assertEqual(code, 2)
        self.assertIn("init", err)
        self.assertIn("again", err)
        self.run = "t"
        self.init(2, run="t", seed=1)
        self.assertIn("Wave 1", self.next())

    def test_init_killed_at_every_write_point_is_finished_by_the_same_init(self):
        argv = ["init", "--agents", "3", "--seed", "4", "--task-file", "task.md", "--run", "k", "--direct"]
        clean = None
        for point in range(1, 60):
            run_dir = os.path.join(self.cwd, ".arena", "k")
            if os.path.exists(run_dir):
                shutil.rmtree(run_dir)
            env = dict(os.environ, ARENA_KILL_AT=str(point))
            proc = subprocess.run(ENGINE + argv, cwd=self.cwd, capture_output=True, env=env)
            if proc.returncode == 0:
                break  # past the last write point: init ran whole
            self.assertLess(proc.returncode, 0, proc.stderr)
            code, out, err = run_cli(argv, self.cwd, check=False)
            self.assertEqual(code, 0, "init killed at write point %d, then run again: %s" % (point, err))
            self.assertIn("next: next --run k", out)
            self.run = "k"
            first = self.next()
            self.assertIn("Wave 1", first, "after a kill at write point %d" % point)
            clean = clean or first
            self.assertEqual(first, clean, "a kill at write point %d changed the first wave" % point)
        else:
            self.fail("init still died at its 59th write point")
        self.assertGreater(point, 5, "init has fewer write points than this test expects")
        # a different init under the same name is still refused
        code, _, err = run_cli(argv[:2] + ["4"] + argv[3:], self.cwd, check=False)
        self.assertEqual(code, 2)
        self.assertIn("already exists", err)


if __name__ == "__main__":
    unittest.main()


class SharedFlawAgent:
    """Stand-ins with a visible quality and flaws: a flaw both sides share, raised by only one attacker.

    A solution scores its quality less 10 points per flaw still in it. a001's attacker finds the
    shared flaw in a002; a002's attacker finds nothing. A defender fixes what is raised against it
    and, when its brief lists the attacks its side raised, any of those flaws it has too.
    """

    solutions = {"a001": "quality: 70\nflaw: the layout of the experiment is unclear\n",
                 "a002": "quality: 66\nflaw: the layout of the experiment is unclear\n"}

    def __init__(self, test):
        self.test = test

    def __call__(self, call):
        t = self.test
        brief = t.read(re.match(r"^Read \.arena/[^/]+/(\S+) and follow it\.$", call["prompt"]).group(1))
        job = re.search(r"^done (\S+)$", brief, re.M).group(1)
        head = "<!-- arena job: %s -->\n" % job
        if job.startswith("spawn-"):
            t.write("out/%s.md" % job, head + self.solutions[job[6:]])
        elif "-atk-" in job:
            me = job.split("-")[3]
            target = t.read(re.search(r"`\.arena/[^/]+/(out/[^`]+)`", brief.split("## Steps")[1]).group(1))
            flaws = re.findall(r"^flaw: (.*)$", target, re.M) if me == "a001" else []
            t.write("out/%s.md" % job, head + "".join("## ATTACK %d MAJOR: %s\nIt is there.\n" % (k, f)
                                                      for k, f in enumerate(flaws, 1)))
        elif "-def-" in job:
            me, mid = job.split("-")[3], "-".join(job.split("-")[:2])
            own = t.read(re.search(r"`\.arena/[^/]+/(out/[^`]+)`", brief.split("## Steps")[1]).group(1))
            answers, fixed = [], set()
            for k, (_, flaw) in enumerate(standin_attacks(t, brief, "Attacks on your solution"), 1):
                answers.append("## ANSWER %d CONCEDE: fixed\nDone.\n" % k)
                fixed.add(flaw)
            for k, (_, flaw) in enumerate(standin_attacks(t, brief, "Attacks your side raised"), 1):
                if "flaw: %s\n" % flaw in own:
                    answers.append("## ALSO FIXED %d: mine had it too\nDone.\n" % k)
                    fixed.add(flaw)
            revised = "".join(line + "\n" for line in own.splitlines()[1:] if line[len("flaw: "):] not in fixed)
            t.write("out/%s.md" % job, head + "".join(answers))
            t.write("out/%s-sol-%s.md" % (mid, me), head + revised)
        else:
            labels = re.findall(r"^- ([A-Z][a-z]+)$", brief, re.M)
            scores = {}
            for label in labels:
                path = re.search(r"^- %s\n  - revised solution: \.arena/[^/]+/(\S+)$" % label, brief, re.M).group(1)
                text = t.read(path)
                total = int(re.search(r"^quality: (\d+)$", text, re.M).group(1)) - 10 * text.count("flaw: ")
                scores[label] = dict(zip(("correctness", "completeness", "robustness", "specificity", "clarity"),
                                         split_points(total)))
            t.write("out/%s.json" % job, json.dumps({"job": job, "scores": scores,
                                                     "fatal": {x: False for x in labels}, "confidence": "high"}))
        return "done " + job


def standin_attacks(test, brief, which):
    """(label, summary) of the attack list a defence brief names on the line starting with `which`."""
    m = re.search(r"^\s*- %s[^`\n]*`\.arena/[^/]+/([^`]+)`" % re.escape(which), brief, re.M)
    return re.findall(r"^## ATTACK \d+ (\S+): (.*)$", test.read(m.group(1)), re.M) if m else []


def split_points(total):
    """A total spread over the rubric's maxima (30, 25, 20, 15, 10) in order."""
    out = []
    for top in (30, 25, 20, 15, 10):
        out.append(min(top, total))
        total -= out[-1]
    return out


class SharedFlaws(Run):
    def test_a_flaw_both_share_no_longer_decides_the_match(self):
        # the stand-ins here write no merge: the match is the point
        self.init(2, "--recheck", "off", "--merge", "off")
        self.agent = SharedFlawAgent(self)
        self.finish(self.next())
        st = self.st()
        self.assertEqual(st["summ"]["r1-m01-def-a001"]["also"], [1])
        res = st["results"]["r1-m01"]
        # without the other side's list a002 would win 66 to 60 on a flaw both had
        self.assertEqual((res["w"], res["tot"]), ("a001", {"a001": 70, "a002": 66}))
        _, win, _ = run_cli(["winner", "--run", "r"], self.cwd)
        self.assertIn("a001 fixed attack 1 of those on a002, a flaw it shared; a002 fixed attack 1 of those on it", win)
        run_cli(["report", "--run", "r"], self.cwd)
        self.assertIn("a001 fixed attack 1 of those on a002, a flaw it shared", self.read("report.html"))

    def test_also_fixed_sections_are_checked(self):
        for body, raised, error in (("## ALSO FIXED 3: x\n", 2, "names no attack"),
                                    ("## ALSO FIXED 1: x\n## ALSO FIXED 1: y\n", 2, "twice"),
                                    ("## ALSO FIXED one: x\n", 2, "names no attack"),
                                    ("## ALSO FIXED 1: x\n", 0, "it had none")):
            with self.assertRaisesRegex(outputs.BadOutput, error):
                outputs.parse_also_fixed(body, raised, "d.md")
        self.assertEqual(outputs.parse_also_fixed("## ANSWER 1 REBUT: no\n## ALSO FIXED 2: x\n", 2, "d.md"), [2])


def in_process(cwd, args):
    """bracket.py's main in this process (a whole seeded run in seconds): its stdout."""
    old, out, err = os.getcwd(), io.StringIO(), io.StringIO()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        os.chdir(old)
    assert code == 0, err.getvalue()
    return out.getvalue()


class MisbehavingOrchestrator(unittest.TestCase):
    """Seeded runs where agents write late, after `next --retry` already handed their jobs out
    again, and `next` is run twice between outputs. Stand-ins write the same content on every
    try of a job, so such a run must end exactly like a clean one, with no output refused."""

    def play_clean(self, cwd, seed):
        agent, out = standin.StandIn(cwd, seed=seed), in_process(cwd, ["next", "--run", "r"])
        while "Finished" not in out:
            for call in standin.parse_wave(out):
                agent(call)
            out = in_process(cwd, ["next", "--run", "r"] + (["--retry"] if "Waiting for" in out else []))
        return state_of(cwd, "r")

    def play_late(self, cwd, seed):
        rng = random.Random(seed)
        agent = standin.StandIn(cwd, seed=seed)
        seen, late, outs, broken = set(), [], [], set()
        snaps = tempfile.mkdtemp(dir=cwd)
        self.late_reads = 0

        def play(brief):
            agent({"prompt": "Read %s and follow it." % brief})

        def next_(*extra):
            out = in_process(cwd, ["next", "--run", "r"] + list(extra))
            outs.append(out)
            return out

        def play_due():
            """Late agents whose moment came: each waits a few steps, whatever the engine did meanwhile."""
            for item in list(late):
                item[0] -= 1
                if item[0] <= 0:
                    late.remove(item)
                    play(item[1])
                    self.late_reads += state_of(cwd, "r")["jobs"][item[2]]["s"] == "issued"

        out = next_()
        for _ in range(2000):
            if "Finished" in out:
                break
            for call in standin.parse_wave(out):
                job = call["description"]
                # the agent reads its brief when it starts: keep that try's brief
                snap = os.path.join(snaps, "%s.%d.md" % (job, len(os.listdir(snaps))))
                with open(os.path.join(cwd, call["prompt"][len("Read "):-len(" and follow it.")]), "rb") as f:
                    data = f.read()
                with open(snap, "wb") as f:
                    f.write(data)
                draw = rng.random() if job not in seen else 1.0
                if draw < 0.4:
                    late.append([rng.randrange(1, 4), snap, job])
                elif draw < 0.5:
                    # a first try that fails its checks: a wrong header, or a folder where the file goes
                    broken.add(job)
                    path = re.search(r"`(\.arena/[^`]+?/out/%s\.(?:md|json))`" % re.escape(job), data.decode()).group(1)
                    if rng.random() < 0.5:
                        os.makedirs(os.path.join(cwd, path, "inner"))
                    else:
                        with open(os.path.join(cwd, path), "w") as f:
                            f.write("<!-- arena job: spawn-a999 -->\n")
                else:
                    play(snap)
                seen.add(job)
            play_due()
            out = next_()
            if "Waiting for" in out:
                before = state_bytes(cwd, "r")
                again = next_()
                self.assertEqual(state_bytes(cwd, "r"), before, "a second next without outputs changed the state")
                self.assertEqual(again.splitlines()[1:], [x for x in out.splitlines()[1:] if not x.startswith("invalid")])
                # hand the late ones out again while their first agents are still at work
                out = next_("--retry") if rng.random() < 0.7 else again
        while late:  # the last stragglers write after the run is over: nothing changes
            play(late.pop()[1])
        self.assertEqual(next_().splitlines()[-1], out.splitlines()[-1])
        # the only refusals are the early retries' and the broken first tries': no late output
        # was refused or misread, and no refused file counted twice
        refused = [line for o in outs for line in o.splitlines() if line.startswith("invalid")]
        self.assertTrue(all(line.startswith("invalid, will be re-issued: ") for line in refused), refused)
        self.assertFalse([line for line in refused if not line.endswith(": no output after its agent returned")
                          and line.split(": ")[1] not in broken])
        self.assertTrue(any("no output after its agent returned" in line for line in refused))
        self.assertEqual(len([line for line in refused if line.split(": ")[1] in broken]), len(broken))
        self.assertEqual(len(os.listdir(os.path.join(cwd, ".arena", "r", "out", "refused"))), len(broken))
        return state_of(cwd, "r")

    def test_late_outputs_and_repeated_next_change_no_result(self):
        late_reads = 0
        for seed in range(1, 6):
            with tempfile.TemporaryDirectory() as clean, tempfile.TemporaryDirectory() as late:
                for cwd in (clean, late):
                    with open(os.path.join(cwd, "task.md"), "w") as f:
                        f.write("Name three prime numbers.\n")
                    in_process(cwd, ["init", "--agents", "8", "--seed", str(seed), "--task-file", "task.md",
                                     "--run", "r", "--direct"])
                want, got = self.play_clean(clean, seed), self.play_late(late, seed)
                late_reads += self.late_reads
                self.assertEqual(got["champion"], want["champion"], seed)
                self.assertEqual({m: (r["w"], r["how"], r.get("tot")) for m, r in got["results"].items()},
                                 {m: (r["w"], r["how"], r.get("tot")) for m, r in want["results"].items()}, seed)
        # outputs written by an earlier try while a later one was out: the case under test
        self.assertGreater(late_reads, 10)
