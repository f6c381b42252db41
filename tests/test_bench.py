"""The bench (init --run-code --bench): what bench.json may list, and what an entry decides."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import re
import shlex
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "skills", "arena"))

from arena import bench  # noqa: E402
from arena.jobs import job_kind  # noqa: E402
from arena.wording import match_bench_lines  # noqa: E402

sys.path.insert(0, HERE)
from standin import Orchestrator, StandIn, init_run, run_cli, state_of  # noqa: E402

TEST = ("import json, re, sys\ncode = re.findall(r'```python\\n(.*?)```', open(sys.argv[1]).read(), re.S)[0]\n"
        "open('inc.py', 'w').write(code)\nimport inc\n"
        "print(json.dumps({'cases': 1, 'failed': [] if inc.inc(1) == 2 else ['inc(1)']}))\n")


class Marks(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.folder)

    def write(self, name, text):
        with open(os.path.join(self.folder, name), "w", encoding="utf-8") as f:
            f.write(text)

    def listed(self, *entries):
        self.write("bench.json", json.dumps({"bench": list(entries)}))
        return bench.read_marks(self.folder, "w")

    def test_a_self_contained_test_is_kept_and_a_solution_module_may_be_imported(self):
        self.write("t.py", TEST)
        marks = self.listed({"kind": "test", "file": "t.py", "for": "inc(1) is 2"})
        self.assertEqual([m["file"] for m in marks], ["t.py"])
        self.assertEqual(bench.read_marks(tempfile.mkdtemp(), "w"), [])

    def test_what_is_not_self_contained_is_refused(self):
        self.write("t.py", TEST)
        self.write("named.py", "print('a007')\n")
        self.write("path.py", "open('.arena/x/out/spawn-a001.md')\n")
        self.write("bad.json", "{")
        cases = [({"kind": "test", "file": "missing.py", "for": "x"}, "not a plain file"),
                 ({"kind": "test", "file": "named.py", "for": "x"}, "names an agent"),
                 ({"kind": "test", "file": "path.py", "for": "x"}, "path of the run"),
                 ({"kind": "scorer", "file": "t.py", "for": "x"}, "lower"),
                 ({"kind": "test", "file": "t.py", "for": "x", "data": ["bad.json"]}, "not valid JSON"),
                 ({"kind": "guess", "file": "t.py", "for": "x"}, "kind")]
        for entry, why in cases:
            with self.assertRaises(bench.BenchError) as e:
                self.listed(entry)
            self.assertIn(why, str(e.exception))
        with self.assertRaises(bench.BenchError):
            self.listed(*[{"kind": "test", "file": "t.py", "for": "x"}] * 4)

    def test_a_package_installed_outside_the_standard_library_is_refused(self):
        site = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, site)
        with open(os.path.join(site, "thirdparty_pkg_x.py"), "w") as f:
            f.write("")
        sys.path.insert(0, site)
        self.addCleanup(sys.path.remove, site)
        self.write("t.py", "import json, thirdparty_pkg_x\n")
        with self.assertRaises(bench.BenchError) as e:
            self.listed({"kind": "test", "file": "t.py", "for": "x"})
        self.assertIn("thirdparty_pkg_x", str(e.exception))


class Decisions(unittest.TestCase):
    def test_a_test_decides_for_the_side_that_passes_every_case(self):
        t = {"kind": "test"}
        ok, bad = {"cases": 3, "failed": 0}, {"cases": 3, "failed": 1}
        self.assertEqual(bench.decision(t, {"A": ok, "B": bad}, ["A", "B"]), "A")
        self.assertEqual(bench.decision(t, {"A": {"error": "x"}, "B": ok}, ["A", "B"]), "B")
        self.assertIsNone(bench.decision(t, {"A": bad, "B": bad}, ["A", "B"]))
        self.assertIsNone(bench.decision(t, {"A": ok, "B": None}, ["A", "B"]))

    def test_a_scorer_leans_only_beyond_its_margin_on_two_runs_of_each_side(self):
        low = {"kind": "scorer", "better": "lower"}
        twice = lambda *runs: {"score": sum(runs) / len(runs), "runs": list(runs)}
        self.assertEqual(bench.lean(low, {"A": twice(100, 100), "B": twice(101, 101)}, ["A", "B"]), "A")
        self.assertIsNone(bench.lean(low, {"A": twice(100, 100), "B": twice(100.4, 100.4)}, ["A", "B"]))
        high = dict(low, better="higher")
        self.assertEqual(bench.lean(high, {"A": twice(100, 100), "B": twice(101, 101)}, ["A", "B"]), "B")
        # one run each: a gap over the margin waits for the second runs, one within it needs none
        once = {"A": {"score": 100.0}, "B": {"score": 101.0}}
        self.assertIsNone(bench.lean(low, once, ["A", "B"]))
        self.assertTrue(bench.needs_repeat(low, once, ["A", "B"]))
        self.assertFalse(bench.needs_repeat(low, {"A": {"score": 100.0}, "B": {"score": 100.4}}, ["A", "B"]))
        self.assertFalse(bench.needs_repeat(low, {"A": twice(100, 100), "B": {"score": 100.4}}, ["A", "B"]))
        # the sides' spreads between their own runs widen the margin: 1 apart, spreads 0.8 + 0.4
        wide = {"A": twice(99.6, 100.4), "B": twice(100.8, 101.2)}
        self.assertIsNone(bench.lean(low, wide, ["A", "B"]))
        self.assertEqual(bench.lean(low, dict(wide, B=twice(101.1, 101.5)), ["A", "B"]), "A")

    def test_the_score_is_decided_when_two_scorers_agree_and_none_leans_the_other_way(self):
        twice = lambda x: {"score": x, "runs": [x, x]}
        sc = lambda i, better="lower": {"id": "b%02d" % i, "kind": "scorer", "for": "height", "better": better}
        st = {"bench": [sc(1), {"id": "b02", "kind": "test", "for": "x"}, sc(3), sc(4, "higher")]}
        ab = ["A", "B"]
        row = lambda a, b: {"A": twice(a), "B": twice(b)}
        ok = {"cases": 1, "failed": 0}
        agree = {"b01": row(100, 101), "b02": {"A": ok, "B": ok}, "b03": row(50, 51), "b04": row(10, 10)}
        self.assertEqual(bench.decisions(st, agree, ab), {"b01": "A", "b03": "A"})
        # b04 (higher is better) puts B ahead: the scorers disagree, nothing is decided
        against = dict(agree, b04=row(10, 11))
        self.assertEqual(bench.decisions(st, against, ab), {})
        self.assertIn("the scorers disagree (b01 for A; b03 for A; b04 for B)", bench.report_lines(st, against, ab)[-1])
        # one scorer leaning beyond its margin with the others within theirs decides nothing
        one = dict(agree, b03=row(50, 50.1))
        self.assertEqual(bench.decisions(st, one, ab), {})
        self.assertIn("only 1 of the 3 scorers leans beyond its margin; it takes 2", bench.report_lines(st, one, ab)[-1])
        # a scorer that did not score both sides does not count: the one left decides alone
        alone = {"b01": row(100, 101), "b03": {"A": {"error": "timed out"}, "B": twice(51)}, "b04": {"A": None, "B": None}}
        self.assertEqual(bench.decisions(st, alone, ab), {"b01": "A"})
        self.assertIn("decided for A (b01: 1 of 1 scorers", bench.report_lines(st, alone, ab)[-1])
        # a test decides on its own, whatever the scorers say
        broke = dict(against, b02={"A": ok, "B": {"cases": 1, "failed": 1}})
        self.assertEqual(bench.decisions(st, broke, ab), {"b02": "A"})

    def test_a_repeat_averages_the_runs_and_an_error_in_either_is_the_result(self):
        first = bench.with_repeat(None, {"score": 10, "seconds": 1.0})
        self.assertEqual(first["runs"], [10])
        both = bench.with_repeat(first, {"score": 12, "seconds": 2.0})
        self.assertEqual((both["score"], both["runs"], both["seconds"]), (11, [10, 12], 3.0))
        self.assertIn("error", bench.with_repeat(first, {"error": "timed out after 60 s", "seconds": 60.0}))
        self.assertEqual(bench.result_text({"kind": "scorer"}, both), "score 11 (the average of 10, 12)")

    def test_scorer_figures_within_the_margin_are_a_measurement_not_an_open_difference(self):
        st = {"bench": [{"id": "b01", "kind": "scorer", "for": "distance", "better": "lower"}]}
        lines = bench.report_lines(st, {"b01": {"A": {"score": 100.0}, "B": {"score": 100.2}}}, ["A", "B"])
        self.assertIn("within its margin: 0.2 apart, its margin 0.501", lines[-2])
        self.assertIn("not decided by the bench: every scorer finds the sides within its margin", lines[-1])
        self.assertNotIn("open:", "\n".join(lines))
        lines = bench.report_lines(st, {"b01": {"A": {"score": 100.0}, "B": {"score": 110.0}}}, ["A", "B"])
        self.assertIn("not confirmed yet", lines[-2])
        self.assertEqual(bench.unconfirmed(st, {"b01": {"A": {"score": 100.0}, "B": {"score": 110.0}}}, ["A", "B"]),
                         ["b01"])

    def test_results_are_kept_by_the_solution_without_the_line_naming_its_job(self):
        body = "Routes.\n```python\nx = 1\n```\n"
        first = bench.solution_digest("<!-- arena job: spawn-a001 -->\n" + body)
        self.assertEqual(first, bench.solution_digest("<!-- arena job: r1-m01-def-a001 -->\n" + body))
        self.assertNotEqual(first, bench.solution_digest("<!-- arena job: spawn-a001 -->\n" + body + "y = 2\n"))

    def test_a_run_prints_what_its_kind_says_or_an_error(self):
        entry = {"kind": "test"}
        said = lambda text: bench.read_result(entry, {"status": 0, "limit": None, "text": text})
        self.assertEqual(said('{"cases": 2, "failed": ["x"]}')["failed"], 1)
        self.assertIn("error", said("no json"))
        self.assertIn("error", bench.read_result({"kind": "scorer"}, {"status": 0, "limit": None,
                                                                       "text": '{"score": NaN}'}))


class FolderRun:
    """What bench.run_bench needs of a run: its folder."""

    def __init__(self, folder):
        self.dir = folder

    def path(self, *parts):
        return os.path.join(self.dir, *parts)


# A scorer whose score is the number on the solution's last line.
BY_TEXT = "import json, sys\nprint(json.dumps({'score': float(open(sys.argv[1]).read().split()[-1])}))\n"


class Repeats(unittest.TestCase):
    def test_a_gap_over_the_margin_runs_each_side_again_and_a_close_one_does_not(self):
        folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, folder)
        run = FolderRun(folder)
        os.makedirs(run.path("bench", "s"))
        with open(run.path("bench", "s", "score.py"), "w") as f:
            f.write(BY_TEXT)
        st = {"bench": [{"id": "b01", "kind": "scorer", "file": "score.py", "data": [], "dir": "bench/s",
                         "for": "distance", "better": "lower"}]}
        far = bench.run_bench(run, st, [("A", "x 100", "x 100"), ("B", "x 110", "x 110")], run.path("w"))["b01"]
        self.assertEqual([far["A"]["runs"], far["B"]["runs"]], [[100.0, 100.0], [110.0, 110.0]])
        self.assertEqual(bench.lean(st["bench"][0], far, ["A", "B"]), "A")
        self.assertEqual(bench.decisions(st, {"b01": far}, ["A", "B"]), {"b01": "A"})  # the only scorer decides
        close = bench.run_bench(run, st, [("A", "x 100", "x 100"), ("C", "x 100.2", "x 100.2")], run.path("w"))
        self.assertEqual(close["b01"]["C"]["runs"], [100.2])
        self.assertEqual(close["b01"]["A"]["runs"], [100.0, 100.0])  # kept from the first pair


    def test_a_verdict_is_refused_while_a_gap_over_the_margin_awaits_its_second_runs(self):
        from types import SimpleNamespace
        from arena.outputs import BadOutput, bench_checked
        folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, folder)
        run = FolderRun(folder)
        os.makedirs(run.path("out"))
        texts = {"a001": "x 100", "a002": "x 110"}
        for agent, text in texts.items():
            with open(run.path("out", agent + ".md"), "w") as f:
                f.write(text)
        entry = {"id": "b01", "kind": "scorer", "for": "distance", "better": "lower"}
        st = {"run": "r", "bench": [entry], "jobs": {"r1-m01-judge": {"bn": 1}},
              "sol": {a: "out/%s.md" % a for a in texts}}
        ctx = SimpleNamespace(st=st, run=run)

        def keep(agent, runs):
            path = bench.result_path(run, entry, texts[agent])
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                json.dump({"score": sum(runs) / len(runs), "runs": runs}, f)
        keep("a001", [100.0])
        keep("a002", [110.0])
        v = {"decided_list": [{"difference": "shorter", "supports": "Finch"}]}
        check = lambda: bench_checked(ctx, "r1-m01-judge", v, ["a001", "a002"], ["Finch", "Robin"], "out/v.json")
        with self.assertRaises(BadOutput) as e:
            check()
        self.assertIn("b01", str(e.exception))
        keep("a001", [100.0, 100.0])
        keep("a002", [110.0, 110.0])
        kept, decides = check()
        self.assertEqual((kept, decides), ({"b01": {"a001": 100.0, "a002": 110.0}}, {"b01": "a001"}))


class Command(unittest.TestCase):
    def test_a_run_without_the_bench_refuses_the_command(self):
        cwd = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, cwd)
        with open(os.path.join(cwd, "task.md"), "w") as f:
            f.write("Write inc.\n")
        bracket = os.path.join(HERE, "..", "skills", "arena", "bracket.py")
        run = lambda *a: subprocess.run([sys.executable, "-S", bracket] + list(a), cwd=cwd, capture_output=True,
                                        text=True)
        run("init", "--direct", "--agents", "2", "--seed", "1", "--run-code", "--task-file", "task.md", "--run", "r")
        run("next", "--run", "r")
        out = run("bench", "--run", "r", "--job", "spawn-a001")
        self.assertEqual(out.returncode, 2)
        self.assertIn("keeps no bench", out.stderr)


# A bench test that fails any solution carrying the marker; the stand-in marks a002's solutions.
MARKED = ("import json, sys\ntext = open(sys.argv[1], encoding='utf-8').read()\n"
          "print(json.dumps({'cases': 1, 'failed': ['marked'] if 'BENCH' + 'FAIL' in text else []}))\n")

ALWAYS = "import json\nprint(json.dumps({'cases': 2, 'failed': []}))\n"


class BenchStandIn(StandIn):
    """The product's stand-ins, plus what a bench asks of them: a002 writes solutions the bench's
    test fails, every attack lists that test, and a judge runs the bench (but the one named in
    `skip` not on its first try) and supports in `decided` what the bench decided."""

    def __init__(self, cwd, skip=(), marked=("a002",), equal=False, judge_adds=False, dispute=False):
        StandIn.__init__(self, cwd, seed=3, run_code=True, checks=False, equal=equal)
        self.skip, self.bench_out, self.marked = set(skip), {}, set(marked)
        # dispute: every judge says the bench's entries misread the task, and keeps its own verdict
        self.dispute = dispute
        # judge_adds: every judge lists a test of its own too (the first one collected adds it)
        self.judge_adds = judge_adds

    def __call__(self, call):
        receipt = StandIn.__call__(self, call)
        job = receipt.split()[1]
        kind = job_kind(job)
        with open(os.path.join(self.cwd, call["prompt"].split()[1]), encoding="utf-8") as f:
            brief = f.read()
        folder = re.search(r"Your work folder is `([^`]+)`", brief).group(1)
        if (kind == "spawn" and job[6:] in self.marked) or (kind == "def" and job[-4:] in self.marked):
            sol = "spawn-a002" if kind == "spawn" else job.replace("-def-", "-sol-")
            run_dir = os.path.dirname(os.path.dirname(call["prompt"].split()[1]))
            with open(os.path.join(self.cwd, run_dir, "out", sol + ".md"), "a", encoding="utf-8") as f:
                f.write("\nBENCHFAIL\n")
        elif kind == "atk":
            self._write(folder + "marked.py", MARKED)
            self._write(folder + "bench.json", json.dumps({"bench": [
                {"kind": "test", "file": "marked.py", "for": "no marked solution (the task says so)"}]}))
        elif kind == "judge":
            if self.judge_adds:
                self._write(folder + "always.py", ALWAYS)
                self._write(folder + "bench.json", json.dumps({"bench": [
                    {"kind": "test", "file": "always.py", "for": "the output has the task's form"}]}))
            if job in self.skip:
                self.skip.discard(job)
                return receipt
            command = re.search(r"`(python3 -S \"[^\"]+\" bench --run \S+ --job \S+)`", brief)
            if not command:
                return receipt
            out = subprocess.run(shlex.split(command.group(1)), cwd=self.cwd, capture_output=True, text=True,
                                 timeout=120).stdout
            self.bench_out[job] = out
            won = re.findall(r"^  decided: for (\w+)$", out, re.M)
            path = os.path.join(self.cwd, re.search(r"`(\.arena/[^`]+?/out/%s\.json)`" % re.escape(job), brief).group(1))
            with open(path, encoding="utf-8") as f:
                v = json.load(f)
            if self.dispute:
                v["disputed"] = {eid: "the task leaves this open" for eid in re.findall(r"^(b\d\d) test", out, re.M)}
            elif won:
                for label in v["scores"]:
                    top = label == won[0]
                    v["scores"][label] = {c: (n if top else 0) for c, n in
                                          re.findall(r"^- ([a-z]+) \((\d+)\):", brief, re.M) for n in [int(n)]}
                    v["fatal"][label] = False
                v.pop("equivalent", None)
                v["decided"] = [{"difference": "the bench's test fails the other", "supports": won[0]}]
                v["open"] = []
            with open(path, "w", encoding="utf-8") as f:
                json.dump(v, f)
        return receipt


class WholeRun(unittest.TestCase):
    """A 4-agent --run-code --bench run played through the CLI, as an orchestrator plays it."""

    @classmethod
    def setUpClass(cls):
        cls.cwd = init_run(cls, 4, 5, "--run-code", "--bench", "--merge", "off", "--direct", "--wave", "4",
                           "--settle", "never", run="b")
        cls.agent = BenchStandIn(cls.cwd, skip={"r1-m01-judge"})
        Orchestrator(cls.cwd, cls.agent, "b", wave=4).play()
        cls.st = state_of(cls.cwd, "b")
        cls.winner = run_cli(["winner", "--run", "b"], cls.cwd)[1]

    @classmethod
    def addCleanup(cls, function, *args):  # init_run's folder lives as long as the class
        cls._cleanups = getattr(cls, "_cleanups", []) + [(function, args)]

    @classmethod
    def tearDownClass(cls):
        for function, args in reversed(getattr(cls, "_cleanups", [])):
            function(*args)

    def test_the_first_attack_adds_the_entry_and_a_copy_of_it_adds_nothing(self):
        self.assertEqual([(e["id"], e["kind"], e["by"]) for e in self.st["bench"]], [("b01", "test", "attack, round 1")])
        self.assertTrue(os.path.isfile(os.path.join(self.cwd, ".arena", "b", self.st["bench"][0]["dir"], "marked.py")))

    def test_a_verdict_written_before_the_bench_ran_is_refused(self):
        refused = os.listdir(os.path.join(self.cwd, ".arena", "b", "out", "refused"))
        self.assertIn("r1-m01-judge.try1.json", refused)
        self.assertEqual(self.st["jobs"]["r1-m01-judge"].get("t"), 2)

    def test_every_look_at_the_marked_solution_records_the_decision_against_it(self):
        looked = 0
        for job, v in self.st["summ"].items():
            if job_kind(job) != "judge" or "bn" not in v:
                continue
            looked += 1
            sides = sorted(v["sc"])
            marked = "a002" in sides
            self.assertEqual(set(v["bn"]["b01"]), set(sides))
            for side in sides:
                self.assertEqual(v["bn"]["b01"][side], "0/1" if side == "a002" else "1/1")
            self.assertEqual(v.get("bd"), {"b01": [s for s in sides if s != "a002"][0]} if marked else None, job)
        self.assertGreaterEqual(looked, 3)
        self.assertIn("a002", self.st["results"][[m for m in self.st["results"]
                                                   if "a002" in (self.st["results"][m]["w"], self.st["results"][m]["l"])][0]]["l"])

    def test_the_judge_saw_the_same_results_through_the_command(self):
        seen = [out for out in self.agent.bench_out.values() if "decided: for" in out]
        self.assertTrue(seen)
        self.assertTrue(all("failed 1 of 1: marked" in out and "passed all 1" in out for out in seen))

    def test_winner_and_report_show_the_bench(self):
        self.assertRegex(self.winner, r"\n  bench b01 test: a00\d 1/1, a00\d 1/1\n")  # the winner never met a002
        lost = [mid for mid, r in self.st["results"].items() if r["l"] == "a002"][0]
        m = [m for r in self.st["rounds"] for m in r["matches"] if m["id"] == lost][0]
        other = m["a"] if m["b"] == "a002" else m["b"]
        self.assertEqual(match_bench_lines(self.st, lost, [other, "a002"]),
                         ["bench b01 test: %s 1/1, a002 0/1; decided for %s" % (other, other)])
        run_cli(["report", "--run", "b"], self.cwd)
        with open(os.path.join(self.cwd, ".arena", "b", "report.html"), encoding="utf-8") as f:
            page = f.read()
        self.assertIn('<section id="bench">', page)
        self.assertIn("attack, round 1", page)


# Three scorers, each reading its own line ("S1 100") of a solution; lower is better. By agent,
# what each scorer finds: the pairs they make agree (a001 over a002), disagree (a001 against
# a003) and lean alone, whatever the bracket pairs.
SCORES = {"a001": (100, 100, 100), "a002": (110, 110, 100), "a003": (100, 110, 90), "a004": (105, 95, 100)}
SCORER = ("import json, sys\nline = [x for x in open(sys.argv[1], encoding='utf-8') if x.startswith('S%d ')][-1]\n"
          "print(json.dumps({'score': float(line.split()[1])}))\n")


class ScoredStandIn(BenchStandIn):
    """Stand-ins for a scored task: every solution carries its scorer lines (SCORES), the attacks
    of round 1 each add a scorer of their own (by the attacker's number; a004's is a001's again),
    and a judge supports in `decided` the side of the line `the score: decided for`, except the
    judges in `ignore` on their first try."""

    def __init__(self, cwd, ignore=()):
        BenchStandIn.__init__(self, cwd, marked=())
        self.ignore = set(ignore)

    def __call__(self, call):
        job = call["description"]
        kind = job_kind(job)
        with open(os.path.join(self.cwd, call["prompt"].split()[1]), encoding="utf-8") as f:
            brief = f.read()
        folder = re.search(r"Your work folder is `([^`]+)`", brief).group(1)
        run_dir = os.path.dirname(os.path.dirname(call["prompt"].split()[1]))
        receipt = StandIn.__call__(self, call)
        if kind in ("spawn", "def"):
            agent = job[-4:]
            sol = job if kind == "spawn" else job.replace("-def-", "-sol-")
            with open(os.path.join(self.cwd, run_dir, "out", sol + ".md"), "a", encoding="utf-8") as f:
                f.write("\n" + "".join("S%d %d\n" % (k + 1, x) for k, x in enumerate(SCORES[agent])))
        elif kind == "atk" and job.startswith("r1-"):
            k = (int(job[-3:]) - 1) % 3 + 1
            self._write(folder + "score.py", SCORER % k)
            self._write(folder + "bench.json", json.dumps({"bench": [
                {"kind": "scorer", "file": "score.py", "for": "figure %d" % k, "better": "lower"}]}))
        elif kind == "judge":
            command = re.search(r"`(python3 -S \"[^\"]+\" bench --run \S+ --job \S+)`", brief)
            out = subprocess.run(shlex.split(command.group(1)), cwd=self.cwd, capture_output=True, text=True,
                                 timeout=120).stdout
            self.bench_out.setdefault(job, []).append(out)
            won = re.findall(r"^the score: decided for (\w+) ", out, re.M)
            if job in self.ignore:
                self.ignore.discard(job)
                return receipt
            path = os.path.join(self.cwd, re.search(r"`(\.arena/[^`]+?/out/%s\.json)`" % re.escape(job), brief).group(1))
            with open(path, encoding="utf-8") as f:
                v = json.load(f)
            if won:
                v.pop("equivalent", None)
                v["decided"] = [{"difference": "the bench's scorers agree on the score", "supports": won[0]}]
                v["open"] = []
                v["scores"] = {label: {c: int(n) if label == won[0] else 0 for c, n in
                                       re.findall(r"^- ([a-z]+) \((\d+)\):", brief, re.M)} for label in v["scores"]}
            with open(path, "w", encoding="utf-8") as f:
                json.dump(v, f)
        return receipt


class ScoredRun(unittest.TestCase):
    """A 4-agent --bench run of a scored task played through the CLI: three scorers from
    different attacks, and a score decided only where two of them agree and none disagrees."""

    @classmethod
    def setUpClass(cls):
        cls.cwd = init_run(cls, 4, 5, "--run-code", "--bench", "--merge", "off", "--direct", "--wave", "4",
                           "--settle", "never", run="sc")
        cls.agent = ScoredStandIn(cls.cwd, ignore={"r1-m01-judge", "r1-m02-judge"})
        Orchestrator(cls.cwd, cls.agent, "sc", wave=4).play()
        cls.st = state_of(cls.cwd, "sc")

    addCleanup = WholeRun.addCleanup
    tearDownClass = WholeRun.tearDownClass

    def expected(self, sides):
        """{scorer id: side} the engine should record for a look at these two sides, from SCORES."""
        ids = [e["id"] for e in self.st["bench"]]
        fig = lambda side, k: SCORES[side][int(self.st["bench"][k]["for"].split()[-1]) - 1]
        leans = [None if fig(sides[0], k) == fig(sides[1], k) else min(sides, key=lambda s: fig(s, k))
                 for k in range(len(ids))]
        votes = [x for x in leans if x]
        if len(set(votes)) == 1 and len(votes) >= 2:
            return {eid: votes[0] for eid, x in zip(ids, leans) if x}
        return None

    def test_the_bench_keeps_one_scorer_from_each_of_three_attacks(self):
        self.assertEqual([(e["kind"], e["by"]) for e in self.st["bench"]], [("scorer", "attack, round 1")] * 3)
        self.assertEqual(sorted(e["for"] for e in self.st["bench"]), ["figure 1", "figure 2", "figure 3"])

    def test_every_look_records_a_decided_score_only_where_two_scorers_agree(self):
        looks = [(job, v) for job, v in self.st["summ"].items() if job_kind(job) == "judge" and "bn" in v]
        self.assertGreaterEqual(len(looks), 3)
        for job, v in looks:
            self.assertEqual(v.get("bd"), self.expected(sorted(v["sc"])), job)

    def test_the_command_says_when_the_scorers_disagree_or_lean_alone(self):
        said = "\n".join(out for outs in self.agent.bench_out.values() for out in outs)
        decided = any(self.expected(sorted(v["sc"])) for j, v in self.st["summ"].items() if "bn" in v)
        self.assertEqual("the score: decided for" in said, decided)
        self.assertRegex(said, r"the score: (not decided by the bench: the scorers disagree|decided for)")

    def test_a_verdict_that_passes_over_a_decided_score_is_refused(self):
        refused = set(os.listdir(os.path.join(self.cwd, ".arena", "sc", "out", "refused")))
        for job in ("r1-m01-judge", "r1-m02-judge"):
            v = self.st["summ"][job]
            agreed = self.expected(sorted(v["sc"]))
            self.assertEqual(job + ".try1.json" in refused, bool(agreed), job)


class Measured(unittest.TestCase):
    """Before a finished round closes, the engine runs the bench on its survivors itself."""

    def entries(self, run):
        os.makedirs(run.path("bench", "t"))
        os.makedirs(run.path("bench", "s"))
        with open(run.path("bench", "t", "marked.py"), "w") as f:
            f.write(MARKED)
        with open(run.path("bench", "s", "score.py"), "w") as f:
            f.write(BY_TEXT)
        return [{"id": "b01", "kind": "test", "file": "marked.py", "data": [], "dir": "bench/t", "for": "unmarked"},
                {"id": "b02", "kind": "scorer", "file": "score.py", "data": [], "dir": "bench/s", "for": "size",
                 "better": "lower"}]

    def test_survivors_are_grouped_by_the_tests_and_ranked_by_the_scorer(self):
        folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, folder)
        run = FolderRun(folder)
        os.makedirs(run.path("out"))
        texts = {"a001": "x 12", "a002": "BENCHFAIL 10", "a003": "y 11", "a004": "BENCHFAIL 13"}
        for agent, text in texts.items():
            with open(run.path("out", agent + ".md"), "w") as f:
                f.write(text)
        st = {"bench": self.entries(run), "sol": {a: "out/%s.md" % a for a in texts}, "rounds": [{}],
              "run_code_env": ()}
        agents = sorted(texts)
        self.assertIsNone(bench.measured_event(run, st, agents, ["b01"]))
        pairs = bench.survivor_texts(run, st, agents)
        self.assertEqual(len(bench.missing_runs(run, st, pairs)), 8)
        self.assertEqual(bench.measure(run, st, pairs), 0)
        ev = bench.measured_event(run, st, agents, ["b01"])
        self.assertEqual(ev["groups"], [["a001", "a003"], ["a002", "a004"]])
        self.assertEqual((ev["split"], ev["tests"], ev["round"]), (["b01"], ["b01"], 1))
        self.assertEqual(ev["res"]["a002"], {"b01": "0/1", "b02": 10.0})
        self.assertEqual(bench.best_first(st, ev["res"]), ["a002", "a003", "a001", "a004"])
        # a test no look upheld (or one a look disputed: state.grouping_tests) groups no one
        self.assertEqual(bench.measured_event(run, st, agents, [])["groups"], [agents])
        self.assertEqual(bench.measured_event(run, st, agents, [])["res"], ev["res"])
        # nothing left to run: a second measure runs nothing
        self.assertEqual(bench.measure(run, st, pairs, seconds=0), 0)

    def test_survivors_with_one_text_share_one_run(self):
        folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, folder)
        run = FolderRun(folder)
        os.makedirs(run.path("out"))
        for agent in ("a001", "a002"):
            with open(run.path("out", agent + ".md"), "w") as f:
                f.write("x 5")
        st = {"bench": self.entries(run), "sol": {a: "out/%s.md" % a for a in ("a001", "a002")}, "rounds": [{}],
              "run_code_env": ()}
        pairs = bench.survivor_texts(run, st, ["a001", "a002"])
        self.assertEqual(len(bench.missing_runs(run, st, pairs)), 4)
        self.assertEqual(bench.measure(run, st, pairs), 0)
        self.assertEqual(sorted(os.listdir(run.path(bench.MEASURE_FOLDER))), ["b01-a001", "b02-a001", "lock"])

    def test_a_result_that_cannot_be_kept_is_run_once_a_command(self):
        from unittest import mock
        folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, folder)
        run = FolderRun(folder)
        os.makedirs(run.path("out"))
        with open(run.path("out", "a001.md"), "w") as f:
            f.write("x 5")
        st = {"bench": self.entries(run), "sol": {"a001": "out/a001.md"}, "rounds": [{}], "run_code_env": ()}
        pairs = bench.survivor_texts(run, st, ["a001"])
        ran = []
        keep = bench.run_entry
        with mock.patch.object(bench, "kept_result", lambda *a: None), \
                mock.patch.object(bench, "run_entry", lambda *a, **k: ran.append(a[2]["id"]) or keep(*a, **k)):
            self.assertEqual(bench.measure(run, st, pairs), 2)  # both still missing, each run once
        self.assertEqual(ran, ["b01", "b02"])

    def test_an_entry_whose_files_are_gone_is_an_error_result_not_a_traceback(self):
        folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, folder)
        run = FolderRun(folder)
        entries = self.entries(run)
        shutil.rmtree(run.path("bench", "t"))
        st = {"bench": entries, "run_code_env": ()}
        found = bench.run_entry(run, st, entries[0], "x 1", "x 1", run.path("w"))
        self.assertIn("could not be set up", found["error"])
        self.assertEqual(bench.kept_result(run, entries[0], "x 1"), found)

    def test_a_measure_that_cannot_end_in_its_seconds_runs_nothing(self):
        folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, folder)
        run = FolderRun(folder)
        os.makedirs(run.path("out"))
        with open(run.path("out", "a001.md"), "w") as f:
            f.write("x 1")
        st = {"bench": self.entries(run), "sol": {"a001": "out/a001.md"}, "rounds": [{}], "run_code_env": ()}
        pairs = bench.survivor_texts(run, st, ["a001"])
        self.assertEqual(bench.measure(run, st, pairs, seconds=bench.TEST_SECONDS + 1), 1)  # the test, not the scorer
        self.assertIsNone(bench.kept_result(run, st["bench"][1], "x 1"))


def split_field(cwd, run):
    """The agents a BenchStandIn marks so that the bench's test splits round 1's survivors of an
    8-agent run while 3 of its 4 matches are equal: both sides of the first match (their look
    finds them alike), one side of the second (its look upholds the test)."""
    matches = state_of(cwd, run)["rounds"][0]["matches"]
    return (matches[0]["a"], matches[0]["b"], matches[1]["a"])


class Shown(unittest.TestCase):
    def test_winner_names_a_bounded_number_of_groups_and_agents(self):
        from arena.wording import grouped_text, survivor_bench_lines
        groups = [["a%03d" % i for i in range(1, 31)]] + [["a%03d" % i] for i in range(31, 51)]
        found = {"tests": ["b01"], "groups": groups, "split": ["b01"], "held": "probe",
                 "res": {a: {"b01": "1/1"} for g in groups for a in g}}
        line = survivor_bench_lines({"bench": [{"id": "b01", "kind": "test"}], "rounds": [{"n": 1, "bench": found}]})[0]
        self.assertIn("21 groups by b01: a001 a002 a003 a004 a005 a006 and 24 more | a031 |", line)
        self.assertIn("| 15 more groups; so no settle probe", line)
        self.assertEqual(grouped_text(found).count("a0"), 50)  # the report names them all


    def test_survivors_of_several_scorers_are_ranked_by_their_average_distance_behind_the_best(self):
        from arena.wording import survivor_bench_lines
        scorers = [{"id": "b01", "kind": "scorer", "better": "lower"}, {"id": "b02", "kind": "scorer", "better": "higher"}]
        # a001 is best on b01 and 2% behind on b02 (1.0%); a002 1% behind on b01 and best on b02 (0.5%)
        res = {"a001": {"b01": 100.0, "b02": 49.0}, "a002": {"b01": 101.0, "b02": 50.0}, "a003": {"b01": "error"}}
        st = {"bench": scorers, "rounds": [{"n": 1, "bench": {"res": res, "tests": [], "groups": [sorted(res)]}}]}
        self.assertEqual(bench.best_first(st, res), ["a002", "a001", "a003"])
        line = survivor_bench_lines(st)[0]
        self.assertIn("scorers b01, b02, each survivor's distance behind the best on each, averaged: a002 0.50%, "
                      "a001 1.00%, a003 not scored;", line)
        # one scorer: its own figures, as before
        st["bench"] = scorers[:1]
        self.assertIn("scorer b01 (lower is better) a001 100, a002 101, a003 error;", survivor_bench_lines(st)[0])


class BenchIn(unittest.TestCase):
    def test_the_bench_keeps_three_scorers_one_a_job(self):
        from arena.state import bench_in
        st = {"bench": []}
        mark = lambda name, kind="scorer": dict({"kind": kind, "file": "s.py", "data": [], "for": "x",
                                                 "dir": "bench/" + name}, **({"better": "lower"} if kind == "scorer" else {}))
        self.assertEqual(bench_in(st, "r1-m01-atk-a001", [mark("s1"), mark("s2"), mark("t1", "test")]), ["b01", "b02"])
        self.assertEqual(bench_in(st, "r1-m02-atk-a003", [mark("s1"), mark("s3")]), ["b03"])  # s1 is in already
        self.assertEqual(bench_in(st, "r1-m03-atk-a005", [mark("s4")]), ["b04"])
        self.assertEqual(bench_in(st, "r1-m04-atk-a007", [mark("s5"), mark("t2", "test")]), ["b05"])  # three scorers
        self.assertEqual([e["id"] for e in st["bench"] if e["kind"] == "scorer"], ["b01", "b03", "b04"])
        self.assertEqual(st["bench"][0]["by"], "attack, round 1")


class SplitField(unittest.TestCase):
    """--bench runs whose round-1 looks are mostly equal while the bench's test fails some of
    the survivors: a split by a test a look upheld holds back the settle probe; a test no look
    upheld, or one a look disputed, groups no one (the offer comes as without the bench)."""

    def play(self, n, marked, *mode, dispute=False):
        cwd = init_run(self, n, 5, "--run-code", "--bench", "--merge", "off", "--wave", "4", *mode, run="s")
        agent = BenchStandIn(cwd, marked=marked(cwd) if callable(marked) else marked, equal=True, dispute=dispute)
        orch = Orchestrator(cwd, agent, "s", wave=4)
        orch.play()
        return cwd, orch, state_of(cwd, "s")

    def check_held(self, cwd, orch, st):
        marked = split_field(cwd, "s")
        found = st["rounds"][0]["bench"]
        self.assertEqual((found["tests"], found["split"], found["held"]), (["b01"], ["b01"], "probe"))
        self.assertEqual(len(found["groups"]), 2)
        self.assertNotIn("probe-r1", st["jobs"])
        self.assertEqual(sum(1 for m in st["rounds"][0]["matches"] if st["results"][m["id"]].get("eq")), 3)
        self.assertNotIn(st["champion"], marked)  # later looks saw the test decide against the marked
        self.assertNotIn("bench", st["rounds"][-1])  # the final: one survivor, nothing to measure
        with open(os.path.join(cwd, ".arena", "s", "journal.jsonl"), encoding="utf-8") as f:
            kinds = [json.loads(line)["e"] for line in f]
        self.assertEqual(kinds.count("measured"), 2)  # rounds 1 and 2 of three
        self.assertEqual(kinds[kinds.index("measured") + 1], "advance")
        winner = run_cli(["winner", "--run", "s"], cwd)[1]
        self.assertIn("bench after round 1, run by the engine on its 4 survivors: its tests split them into 2 groups "
                      "by b01", winner)
        self.assertIn("so no settle probe", winner)
        run_cli(["report", "--run", "s"], cwd)
        with open(os.path.join(cwd, ".arena", "s", "report.html"), encoding="utf-8") as f:
            self.assertIn("<h3>Survivors of round 1</h3>", f.read())

    def test_direct(self):
        self.check_held(*self.play(8, lambda cwd: split_field(cwd, "s"), "--direct"))

    def test_lanes(self):
        cwd, orch, st = self.play(8, lambda cwd: split_field(cwd, "s"))
        self.assertGreater(orch.lane_sets, 0)
        self.check_held(cwd, orch, st)

    def test_a_test_every_judge_disputed_groups_no_one(self):
        cwd, orch, st = self.play(8, lambda cwd: split_field(cwd, "s"), "--direct", dispute=True)
        self.assertEqual(len(orch.offers), 1)
        self.assertEqual((st["rounds"][0]["bench"]["tests"], len(st["rounds"][0]["bench"]["groups"])), ([], 1))
        self.assertTrue(any(v.get("bx") == ["b01"] for v in st["summ"].values()))

    def test_a_test_no_look_upheld_groups_no_one(self):
        # every round-1 match is between two sides alike on the test, so no look saw it decide
        first = lambda cwd: tuple(state_of(cwd, "s")["rounds"][0]["matches"][0][k] for k in ("a", "b"))
        cwd, orch, st = self.play(4, first, "--direct")
        found = st["rounds"][0]["bench"]
        self.assertEqual((found["tests"], len(found["groups"])), ([], 1))
        self.assertEqual({row["b01"] for row in found["res"].values()}, {"0/1", "1/1"})  # they differ on it
        self.assertEqual(len(orch.offers), 1)

    def test_an_entry_no_look_ran_on_a_survivor_is_run_by_the_engine(self):
        cwd = init_run(self, 4, 5, "--run-code", "--bench", "--merge", "off", "--wave", "4", "--direct", run="s")
        agent = BenchStandIn(cwd, marked=(), equal=True, judge_adds=True)
        orch = Orchestrator(cwd, agent, "s", wave=4)
        orch.play()
        st = state_of(cwd, "s")
        added = [e for e in st["bench"] if e["file"] == "always.py"]
        self.assertEqual([e["by"] for e in added], ["judge, round 1"])
        found = st["rounds"][0]["bench"]
        self.assertEqual({row[added[0]["id"]] for row in found["res"].values()}, {"2/2"})
        # no look of round 1 ran it: the engine did, in the work folder it keeps for that, at most
        # once per survivor (results are kept by text, so survivors with one text share one run)
        ran = [n for n in os.listdir(os.path.join(cwd, ".arena", "s", "work", "bench-measure"))
               if n.startswith(added[0]["id"])]
        self.assertTrue(ran)
        self.assertLessEqual({n.split("-")[1] for n in ran}, set(found["res"]))
        self.assertEqual(len(ran), len({n.split("-")[1] for n in ran}))


class MeasuredEvent(unittest.TestCase):
    def test_a_measured_event_is_refused_when_no_round_waits_for_it(self):
        from arena.state import refusal
        st = {"bench_on": True, "bench": [{"id": "b01"}], "champion": None, "rounds": [], "run": "r"}
        self.assertIn("no finished round waits", refusal(st, {"e": "measured", "round": 1, "groups": []}))
        self.assertIn("no finished round waits", refusal(dict(st, bench_on=False), {"e": "measured"}))


if __name__ == "__main__":
    unittest.main()
