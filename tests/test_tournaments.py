"""Whole tournaments with stand-in sub-agents, driven the way SKILL.md says."""

import glob
import os
import re
import tempfile
import unittest

import checker
import standin
from standin import run_cli
from arena import report  # noqa: E402
from arena.cards import load_cards  # noqa: E402
from arena.jobs import job_kind  # noqa: E402
from arena.context import Context  # noqa: E402
from arena.storage import Run  # noqa: E402

TASK = standin.TASK
SIZES = (1, 2, 3, 7, 16, 100)
MODES = {"lanes": (), "conductor": ("--waves",), "direct": ("--direct",)}


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def with_baseline(n, mode):
    """Half the runs carry a baseline: conductor runs of even sizes, direct runs of odd ones (and 100 direct)."""
    return (n % 2 == 0) == (mode == "conductor") if n != 100 else mode == "conductor"


class TournamentTest(unittest.TestCase):
    def play(self, n, baseline, mode=(), seed=9, misbehave=None, always=None, runner=None):
        if misbehave is None and always is None:
            fin = standin.finished(n, seed, mode, baseline, runner=runner)
            self.assertEqual(standin.tree(fin.cwd), fin.before, "a file outside .arena/ changed")
            return fin.cwd, fin.agent, fin.orch
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        cwd = tmp.name
        with open(os.path.join(cwd, "task.md"), "w", encoding="utf-8", newline="") as f:
            f.write(TASK)
        with open(os.path.join(cwd, "notes.txt"), "w") as f:
            f.write("the user's own file\n")
        args = ["init", "--agents", str(n), "--seed", str(seed), "--task-file", "task.md", "--run", "t"] + list(mode)
        if baseline:
            with open(os.path.join(cwd, "old.md"), "w") as f:
                f.write(standin.BASELINE)
            args += ["--baseline-file", "old.md"]
        before = standin.tree(cwd)
        run = runner or standin.run_here
        run(args, cwd)
        agent = standin.StandIn(cwd, seed=seed, misbehave=misbehave, always=always)
        orch = standin.Orchestrator(cwd, agent, "t", runner=run)
        orch.play()
        self.assertEqual(standin.tree(cwd), before, "a file outside .arena/ changed")
        return cwd, agent, orch

    def check_finished(self, cwd, agent, orch, n, baseline):
        _, out, _ = standin.run_here(["winner", "--run", "t"], cwd)
        self.assertRegex(out, r"^winner a\d+ of %d agents?\b" % n)
        st = Run("t", os.path.join(cwd, ".arena"))
        state = load(cwd)
        alive = [a for a in state["cards"] if a not in state["out"]]
        self.assertEqual(len(alive), 1)
        self.assertEqual(alive[0], state["champion"])
        kinds = {job_kind(j) for j in agent.calls}
        expected = {"spawn"} | ({"atk", "def", "judge"} if n > 1 else set()) | ({"final"} if baseline else set())
        # the checked merge, unless the finalists were judged equivalent
        final = [m for r in state["rounds"] if not r.get("merge") for m in r["matches"]][-1:] if n > 1 else []
        if final and not state["results"][final[0]["id"]].get("eq"):
            expected.add("merge")
        self.assertEqual(kinds, expected)
        if baseline:
            self.assertRegex(out, r"baseline check \(blind\): arena answer \d+, old answer \d+")
        # every brief holds the task byte for byte, between two fence lines
        briefs = glob.glob(os.path.join(cwd, ".arena", "t", "b", "*.md"))
        self.assertEqual(len(briefs), len(set(agent.calls)))
        cards = load_cards()
        instructions = [text for part in cards.values() for _, text in part]
        for path in briefs:
            text = read(path)
            self.assertEqual(text.count(TASK), 1, path)
            fence = state["fence"]
            self.assertIn("%s\n%s%s" % (fence, TASK, fence), text)
            if "judge" in path or path.endswith("final.md"):
                self.assertIsNone(re.search(r"\ba\d{3}\b", text), "agent id in judge brief " + path)
                for ins in instructions:
                    self.assertNotIn(ins, text, "card text in judge brief " + path)
        for path in glob.glob(os.path.join(cwd, ".arena", "t", "j", "*", "*")):
            self.assertIsNone(re.search(r"\ba\d{3}\b", read(path)), "agent id in judge input " + path)
        for wave in orch.waves:
            self.assertLessEqual(len(wave), 10)
        # the progress line's total was right: every planned call happened, no more
        done, total = re.search(r"(\d+)/(\d+) jobs", orch.outputs[-1]).groups()
        self.assertEqual(done, total)
        self.assertEqual(int(done), len(set(agent.calls)))
        del st
        return state

    def test_every_size_and_mode_recomputed_from_the_files(self):
        """1, 2, 3, 7, 16 and 100 agents, lanes, conductor and direct: every match the judges
        decided is recomputed from the verdict files and rubric.md by the referee in
        checker.py and must match the state, `winner` and the report."""
        rules, looks, matches = {}, 0, 0
        for n in SIZES:
            for mode, flags in sorted(MODES.items()):
                baseline = with_baseline(n, mode)
                with self.subTest(n=n, mode=mode, baseline=baseline):
                    cwd, agent, orch = self.play(n, baseline, mode=flags)
                    state = self.check_finished(cwd, agent, orch, n, baseline)
                    _, text, _ = standin.run_here(["winner", "--run", "t"], cwd)
                    self.assertNotIn("changed after the judges", text)  # every file is as judged
                    html = report.render(Context(Run("t", os.path.join(cwd, ".arena")), state))
                    mine = checker.check_run(self, cwd, "t", state, text, html)
                    for r in mine.values():
                        rules[r.get("rule", "panel")] = rules.get(r.get("rule", "panel"), 0) + 1
                        looks += r["n"] - 1
                    matches += len(mine)
        # the stand-ins make the rules matter: margins, FATAL flags and close calls all occur
        self.assertGreater(rules.get("total", 0), 0, rules)
        self.assertGreater(rules.get("fatal", 0), 0, rules)
        self.assertGreater(looks, 0)
        self.assertLess(looks, matches, "every match took a second look: the judge stand-in sees no difference")

    def test_the_real_command_plays_a_whole_run(self):
        """Once through `python3 -S bracket.py` processes, as the main session and its lanes
        run it: 7 agents with a baseline, so a bye and the baseline's judge are in it too."""
        cwd, agent, orch = self.play(7, True, mode=(), seed=9, runner=standin.run_cli)
        state = self.check_finished(cwd, agent, orch, 7, True)
        _, text, _ = run_cli(["winner", "--run", "t"], cwd)
        checker.check_run(self, cwd, "t", state, text)
        self.assertTrue(state["byes"], "no bye")
        # the same run in-process (the sweep above plays it) ends the same way
        self.assertEqual(standin.finished(7, 9, (), True).state()["results"], state["results"])

    def test_hundred_agents(self):
        cwd, agent, orch = self.play(100, True, mode=["--waves"])
        state = self.check_finished(cwd, agent, orch, 100, True)
        self.assertEqual([2 * len(r["matches"]) + bool(r["bye"]) for r in state["rounds"] if not r.get("merge")],
                         [100, 50, 25, 13, 7, 4, 2])
        self.assertEqual(agent.calls.count("final"), 1)
        self.assertGreater(orch.conductors, 1)
        # the main session read only conductor launches and progress lines
        self.assertLess(orch.main_bytes, 12000)

    def test_misbehaving_sub_agents(self):
        bad = {"r1-m01-judge": "not-json", "spawn-a003": "missing", "r1-m02-judge": "over-max",
               "r1-m01-atk-a001": "too-many", "r1-m02-judge2": "fields", "spawn-a005": "wrong-job",
               "spawn-a002": "empty", "r1-m03-atk-a006": "bad-label"}
        cwd, agent, orch = self.play(8, False, mode=["--direct", "--recheck", "100"], seed=4, misbehave=bad)
        joined = "\n".join(orch.outputs)
        for pattern in (r"r1-m01-judge: .* is not valid JSON", r"spawn-a003: no output",
                        r"r1-m02-judge: .*max is", r"spawn-a002: .* holds no solution",
                        r"spawn-a005: .* names job spawn-a999, expected spawn-a005",
                        r"r1-m02-judge2: .*'fatal' must map"):
            self.assertRegex(joined, pattern)
        run_jobs = [j for j in bad if j in agent.calls]
        for job in run_jobs:
            self.assertGreaterEqual(agent.calls.count(job), 2, job + " was not re-issued")
        self.check_finished(cwd, agent, orch, 8, False)

    def test_final_of_three_looks_or_more(self):
        """--final-judges 3: the final starts with three looks side by side; their scorecards
        are summed and more looks follow until one side has three of five."""
        cwd, agent, orch = self.play(4, False, mode=["--direct", "--final-judges", "3"], seed=6)
        state = load(cwd)
        final = state["rounds"][-1]["matches"][0]["id"]
        judges = sorted(j for j in agent.calls if j.startswith(final + "-judge"))
        self.assertEqual(judges[:3], [final + "-judge", final + "-judge2", final + "-judge3"])
        result = state["results"][final]
        self.assertEqual((result["how"], result["n"]), ("judge", len(judges)))
        self.assertTrue(3 <= result["n"] <= 5, result)
        self.assertGreaterEqual(result["n"] - result["votes"], 0)
        _, out, _ = run_cli(["winner", "--run", "t"], cwd)
        self.assertRegex(out, r"judge .*, %d looks: " % result["n"])
        self.check_finished(cwd, agent, orch, 4, False)

    def test_spawn_that_fails_twice_forfeits(self):
        cwd, agent, orch = self.play(4, False, mode=["--direct"], seed=2, always={"spawn-a002": "missing"})
        self.assertEqual(agent.calls.count("spawn-a002"), 2)
        state = load(cwd)
        forfeits = [r for r in state["results"].values() if r["how"] == "forfeit"]
        self.assertEqual(len(forfeits), 1)
        self.assertEqual(forfeits[0]["l"], "a002")
        self.assertNotEqual(state["champion"], "a002")

    def test_judge_that_keeps_failing_asks_for_record(self):
        cwd, agent, orch = self.play(2, False, mode=["--direct", "--recheck", "off"], seed=2,
                                     always={"r1-m01-judge": "not-json"})
        self.assertEqual(agent.calls.count("r1-m01-judge"), 3)
        joined = "\n".join(orch.outputs)
        self.assertIn("r1-m01 needs a decision by hand", joined)
        self.assertRegex(joined, r'run: record r1-m01 <a\d+\|a\d+> --reason "..."')
        self.assertEqual(load(cwd)["results"]["r1-m01"]["how"], "record")


def load(cwd):
    return Run("t", os.path.join(cwd, ".arena")).load()


if __name__ == "__main__":
    unittest.main()
