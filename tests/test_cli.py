"""bracket.py through its command line, as an orchestrator or a user drives it."""

import json
import os
import random
import re
import tempfile
import unittest

import standin
from standin import run_cli, state_bytes, state_of
from arena.estimate import field_sizes
from arena.cli import build_parser
import readme


class Workspace(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.cwd = self.tmp.name
        with open(os.path.join(self.cwd, "task.md"), "w", encoding="utf-8") as f:
            f.write("Write a function that adds two numbers.\n")

    def tearDown(self):
        self.tmp.cleanup()

    def init(self, n, run="r", seed=11, *extra):
        run_cli(["init", "--agents", str(n), "--seed", str(seed), "--task-file", "task.md", "--run", run] + list(extra),
                self.cwd)


class RecordTournamentTest(Workspace):
    """Whole brackets decided by hand with `record`, random winners, through the CLI."""

    def play_by_record(self, n):
        self.init(n)
        rng = random.Random(n)
        rounds = 0
        while True:
            st = state_of(self.cwd, "r")
            if st["champion"]:
                break
            _, out, _ = run_cli(["pairings", "--run", "r"], self.cwd)
            ids = re.findall(r"^(r\d+-m\d+)  (a\d+) .* vs (a\d+) ", out, re.M)
            self.assertEqual(len(ids), len(st["rounds"][-1]["matches"]))
            for k, (mid, a, b) in enumerate(ids):
                # the first record of a round through a real process, the rest through main in this process
                (run_cli if k == 0 else standin.run_here)(["record", mid, rng.choice([a, b]), "--reason", "random",
                                                          "--run", "r"], self.cwd)
            run_cli(["advance", "--run", "r"], self.cwd)
            rounds += 1
        st = state_of(self.cwd, "r")
        alive = [a for a in st["cards"] if a not in st["out"]]
        self.assertEqual(alive, [st["champion"]])
        self.assertEqual(len(st["out"]), n - 1)
        self.assertEqual(rounds, len(field_sizes(n)) - 1)
        return st

    def test_sizes(self):
        for n in (1, 2, 3, 7, 16, 100):
            with self.subTest(n=n):
                self.tearDown()
                self.setUp()
                st = self.play_by_record(n)
                if n == 100:
                    self.assertEqual([2 * len(r["matches"]) + bool(r["bye"]) for r in st["rounds"]],
                                     [100, 50, 25, 13, 7, 4, 2])


class PlanCommandTest(Workspace):
    def test_plan_100_prints_the_spec_table(self):
        # the spec's table is the bracket's; the checked merge's row is tested in test_schedule
        _, out, _ = run_cli(["plan", "--agents", "100", "--merge", "off"], self.cwd)
        spec_path = os.path.join(standin.ROOT, "..", "shared", "spec", "arena.md")
        if os.path.exists(spec_path):  # the published table, where the spec sits beside the repo
            with open(spec_path, encoding="utf-8") as f:
                table = re.search(r"```\n(round  alive.*?)\n(total[^\n]*)\n```", f.read(), re.S)
            self.assertIsNotNone(table)
            self.assertIn(table.group(1), out)
            # the spec's total row sits one column right of its numbers; plan lines it up
            self.assertEqual(re.search(r"^total .*$", out, re.M).group(0).split(), table.group(2).split())
        self.assertIn("alive per round: 100 50 25 13 7 4 2 1", out)
        self.assertIn("total                                   595     70", out)
        self.assertEqual(os.listdir(self.cwd), ["task.md"], "plan must write nothing")

    def test_plan_baseline_and_totals(self):
        for n, calls, waves in ((1, 1, 1), (2, 7, 4), (7, 37, 10), (8, 43, 10), (16, 91, 16), (32, 187, 28),
                                (144, 859, 100), (2160, 12955, 1309)):
            _, out, _ = run_cli(["plan", "--agents", str(n), "--recheck", "off", "--merge", "off"], self.cwd)
            self.assertRegex(out, r"\ntotal +%d +%d\n" % (calls, waves))
        _, out, _ = run_cli(["plan", "--agents", "16", "--baseline", "--merge", "off"], self.cwd)
        self.assertRegex(out, r"\ntotal +92 +17\n")
        _, out, _ = run_cli(["plan", "--agents", "16", "--baseline"], self.cwd)
        self.assertRegex(out, r"\ntotal +98 +21\n")  # and the checked merge: 6 calls, 4 waves

    def test_plan_token_estimate(self):
        _, out, _ = run_cli(["plan", "--quick", "--task-file", "task.md"], self.cwd)
        self.assertRegex(out, r"tokens \(estimate\): about [\d.]+[kM] input")


class ReadmeFlagsTest(unittest.TestCase):
    """Every flag of the README's table is taken by the engine commands the README says take it."""

    VALUES = {"--agents": "8", "--seed": "3", "--wave": "4", "--model": "haiku", "--judge-model": "haiku",
              "--models": "opus,sonnet", "--recheck": "off", "--final-judges": "3", "--run-code-env": "HOME",
              "--job-minutes": "15", "--budget": "50", "--settle": "ask", "--merge": "on", "--max-calls": "50",
              "--max-tokens": "2M"}

    def test_the_table_flags_parse_as_the_readme_says(self):
        with open(readme.README, encoding="utf-8") as f:
            text = f.read()
        table = text[text.index("| flag | meaning |"):]
        table = table[:table.index("\n\n")]
        flags = list(dict.fromkeys(re.findall(r"`(--[a-z-]+)", table)))
        self.assertIn("--budget", flags)
        not_plan = re.search(r"`bracket\.py plan` all but (.*?) \(", text, re.S).group(1)
        skipped = re.findall(r"`(--[a-z-]+)`", not_plan)
        parser = build_parser.real() if hasattr(build_parser, "real") else build_parser()
        for flag in flags:
            value = [self.VALUES[flag]] if flag in self.VALUES else []
            for command in ["init"] + ([] if flag in skipped else ["plan"]):
                argv = [command, flag] + value + (["--task-file", "t.md"] if command == "init" else [])
                if flag == "--run-code-env":
                    argv.append("--run-code")
                try:
                    parser.parse_args(argv)
                except SystemExit:
                    self.fail("bracket.py %s does not take %s, which the README's table lists" % (command, flag))


class BadInputTest(Workspace):
    """Wrong arguments and bad data: exit 2, one line, no traceback, state untouched."""

    def assertRefused(self, args, pattern=None, run="r"):
        before = state_bytes(self.cwd, run) if os.path.exists(os.path.join(self.cwd, ".arena", run)) else None
        code, out, err = run_cli(args, self.cwd, check=False)
        self.assertEqual(code, 2, "%s -> %d %s %s" % (args, code, out, err))
        self.assertNotIn("Traceback", err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertTrue(err.startswith("bracket.py: "), err)
        if pattern:
            self.assertRegex(err, pattern)
        if before is not None:
            self.assertEqual(state_bytes(self.cwd, run), before, "state changed by a refused command")
        return err

    def test_usage_errors(self):
        self.init(4)
        for args, pattern in (
                ([], "command"),
                (["bogus"], "invalid choice"),
                (["plan", "--agents", "0"], "1 to 2160"),
                (["plan", "--agents", "2161"], "1 to 2160"),
                (["plan", "--agents", "ten"], "not a whole number"),
                (["plan", "--wave", "21"], "1 to 20"),
                (["plan", "--wave", "0"], "1 to 20"),
                (["init", "--agents", "4", "--task-file", "task.md", "--wave", "25"], "1 to 20"),
                (["init", "--agents", "4"], "task-file"),
                (["init", "--agents", "4", "--task-file", "missing.md"], "missing.md"),
                (["init", "--agents", "4", "--task-file", "task.md", "--run", "r"], "already exists"),
                (["init", "--agents", "4", "--task-file", "task.md", "--run", "../x"], "not allowed"),
                (["init", "--agents", "4", "--task-file", "task.md", "--seed", "-1"], "seed"),
                (["next", "--run", "nope"], "no run"),
                (["next", "--run", "a/b"], "not allowed"),
                (["status", "--run", "../.."], "not allowed"),
                (["record", "r9-m01", "a001", "--reason", "x", "--run", "r"], "not a match"),
                (["record", "r1-m01", "a999", "--reason", "x", "--run", "r"], "is not in r1-m01"),
                (["record", "r1-m01", "a001", "--run", "r"], "reason"),
                (["advance", "--run", "r"], "undecided"),
                (["winner", "--run", "r"], "no winner yet"),
                (["prompts", "sideways", "--run", "r"], "invalid choice"),
                (["prompts", "final", "--run", "r"], "no final jobs"),
        ):
            with self.subTest(args=args):
                self.assertRefused(args, pattern)

    def test_empty_and_binary_task(self):
        with open(os.path.join(self.cwd, "empty.md"), "w") as f:
            f.write("  \n")
        with open(os.path.join(self.cwd, "bin.md"), "wb") as f:
            f.write(b"\xff\xfe\x00bad")
        self.assertRefused(["init", "--task-file", "empty.md"], "empty")
        self.assertRefused(["init", "--task-file", "bin.md"], "UTF-8")
        self.assertFalse(os.path.exists(os.path.join(self.cwd, ".arena")))

    def test_bad_verdicts_are_refused_and_reissued(self):
        self.init(2, "v", 3, "--direct", "--recheck", "off")
        agent = standin.StandIn(self.cwd, misbehave={"r1-m01-judge": "over-max"})
        orch = standin.Orchestrator(self.cwd, agent, "v")
        orch.play()
        joined = "\n".join(orch.outputs)
        self.assertRegex(joined, r"invalid, will be re-issued: r1-m01-judge: .*correctness is \d+, max is 30")
        self.assertEqual(agent.calls.count("r1-m01-judge"), 2)
        st = state_of(self.cwd, "v")
        self.assertIsNotNone(st["champion"])

    def test_verdict_for_unknown_match(self):
        self.init(2)
        self.assertRefused(["record", "r1-m07", "a001", "--reason", "x", "--run", "r"], "not a match")


class NextContractTest(Workspace):
    def test_next_is_idempotent_and_waits(self):
        self.init(4, "i", 2, "--direct")
        _, first, _ = run_cli(["next", "--run", "i"], self.cwd)
        self.assertIn("Wave 1:", first)
        _, second, _ = run_cli(["next", "--run", "i"], self.cwd)
        before = state_bytes(self.cwd, "i")
        _, third, _ = run_cli(["next", "--run", "i"], self.cwd)
        self.assertIn("Waiting for 4 job(s) of wave 1", second)
        self.assertEqual(second.splitlines()[1:], third.splitlines()[1:])
        self.assertEqual(state_bytes(self.cwd, "i"), before, "a repeated next changed the state")
        # --retry hands the same jobs out again, as a new wave
        _, retry, _ = run_cli(["next", "--run", "i", "--retry"], self.cwd)
        self.assertIn("Wave 2:", retry)
        self.assertEqual(sorted(standin.parse_wave(retry), key=str), sorted(standin.parse_wave(first), key=str))

    def test_json_schema(self):
        self.init(3, "j", 2, "--direct", "--model", "sonnet", "--judge-model", "haiku")
        _, out, _ = run_cli(["next", "--run", "j", "--json"], self.cwd)
        act = json.loads(out)
        self.assertEqual(act["action"], "wave")
        self.assertEqual(act["wave"], 1)
        for call in act["calls"]:
            self.assertEqual(set(call), {"job", "run_in_background", "description", "prompt", "model"})
            self.assertIs(call["run_in_background"], False)
            self.assertEqual(call["model"], "sonnet")
        self.assertEqual(set(act["progress"]), {"round", "rounds", "phase", "done", "total", "wave", "waves",
                                                "retrying", "elapsed", "eta", "running", "lanes", "spent", "tokens"})

    def test_bytes_per_job_printed_by_next(self):
        self.init(100, "b", 4, "--direct")
        _, out, _ = run_cli(["next", "--run", "b"], self.cwd)
        per_job = len(out.encode()) / 10.0
        self.assertLess(per_job, 60, "next prints %.0f bytes per job" % per_job)

    def test_direct_fallback_sticks(self):
        # a lane replied NO-AGENT-TOOL: the main session switches once, for the rest of the run
        self.init(4, "f", 2)
        _, out, _ = run_cli(["next", "--run", "f"], self.cwd)
        self.assertRegex(out, r"Start \d+ lanes: ")
        _, out, _ = run_cli(["next", "--run", "f", "--direct"], self.cwd)
        self.assertIn("Wave 1: 4 Agent calls", out)
        agent = standin.StandIn(self.cwd, seed=2)
        for call in standin.parse_wave(out):
            agent(call)
        _, out, _ = run_cli(["next", "--run", "f"], self.cwd)
        self.assertIn("Wave 2:", out)
        self.assertNotIn("conductor", out)
        self.assertEqual(state_of(self.cwd, "f")["mode"], "direct")

    def test_lanes_are_the_default(self):
        self.init(4, "l", 2)
        _, out, _ = run_cli(["next", "--run", "l"], self.cwd)
        self.assertIn("Start 10 lanes: 10 Agent calls in ONE message", out)
        self.assertIn('prompt "Read .arena/l/lane.md and follow it as lane <n>."', out)
        self.assertIn("<n> = 1.1 1.2 1.3 1.4 1.5 1.6 1.7 1.8 1.9 1.10", out)
        with open(os.path.join(self.cwd, ".arena", "l", "lane.md"), encoding="utf-8") as f:
            brief = f.read()
        self.assertIn("lane --run l --lane <lane>", brief)
        self.assertIn(standin.BRACKET, brief)

    def test_waves_keep_the_conductor(self):
        self.init(4, "c", 2, "--waves")
        _, out, _ = run_cli(["next", "--run", "c"], self.cwd)
        self.assertIn("Start the conductor", out)
        self.assertIn("conductor.md", out)
        with open(os.path.join(self.cwd, ".arena", "c", "conductor.md"), encoding="utf-8") as f:
            brief = f.read()
        self.assertIn("next --run c --conductor", brief)
        self.assertIn(standin.BRACKET, brief)


if __name__ == "__main__":
    unittest.main()
