"""What a new user meets first: plan's table and errors, --help, counts in plain English,
and the README's figures agreeing with the command that prints them."""

import os
import re
import tempfile
import unittest

import readme
import standin
from standin import run_cli


class FirstUse(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.cwd = self.tmp.name
        with open(os.path.join(self.cwd, "task.md"), "w", encoding="utf-8") as f:
            f.write("Write a function that adds two numbers.\n")

    def tearDown(self):
        self.tmp.cleanup()

    def refused(self, *args):
        code, out, err = run_cli(list(args), self.cwd, check=False)
        self.assertEqual(code, 2, (args, out, err))
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        return out, err.strip()

    def test_a_missing_task_file_is_refused_before_anything_is_printed(self):
        out, err = self.refused("plan", "--agents", "16", "--task-file", "missing.md")
        self.assertEqual(out, "")
        self.assertIn("missing.md", err)

    def test_a_stray_option_points_to_the_commands_own_help(self):
        for command, *needed in (("plan",), ("init", "--task-file", "task.md"), ("next",), ("winner",)):
            with self.subTest(command=command):
                _, err = self.refused(command, *needed, "--bogus")
                self.assertTrue(err.endswith("see 'bracket.py %s --help'" % command), err)
                self.assertIn("--bogus", err)
        for args in (("bogus",), ()):
            with self.subTest(args=args):
                _, err = self.refused(*args)
                self.assertTrue(err.endswith("see 'bracket.py --help'"), err)
        self.assertNotIn("  ", self.refused("plan", "--agents", "many")[1])

    def test_help_gives_the_range_and_default_of_agents_and_wave(self):
        for command in ("plan", "init"):
            with self.subTest(command=command):
                _, out, _ = run_cli([command, "--help"], self.cwd)
                flat = " ".join(out.split())
                self.assertIn("--agents N competitors, 1 to 2160 (default 100)", flat)
                self.assertIn("--wave W sub-agents running at once, 1 to 20 (default 10)", flat)

    def test_the_total_row_lines_up_with_the_rows_above(self):
        for n in (1, 2, 7, 100, 2160):
            with self.subTest(n=n):
                _, out, _ = run_cli(["plan", "--agents", str(n)], self.cwd)
                table = out.split("\nalive per round")[0].splitlines()
                self.assertTrue(table[-1].startswith("total"))
                self.assertEqual({len(line) for line in table[1:]}, {len(table[0])}, "\n" + "\n".join(table))
                # each number ends where its column's heading ends
                head = table[0]
                for line in table[1:]:
                    self.assertEqual(line[head.index("waves") + len("waves") - 1], line.rstrip()[-1])

    def test_one_of_a_thing_is_singular(self):
        _, out, _ = run_cli(["plan", "--agents", "2"], self.cwd)
        # the final and the checked merge's match each play to three of five looks
        self.assertIn("about 5 more judge calls,", out)
        run_cli(["init", "--agents", "2", "--seed", "1", "--task-file", "task.md", "--run", "r"], self.cwd)
        said = []
        for args in (["pairings"], ["status"]):
            said.append(run_cli(args + ["--run", "r"], self.cwd)[1])
        text = "\n".join(said)
        self.assertIn("round 1: 1 match", text)
        self.assertNotRegex(text + out, r"\b1 (matches|agents|rounds|second looks|more judge calls)\b")
        # a wave or a set of lanes of one call
        for run, mode in (("w", ["--direct"]), ("l", [])):
            run_cli(["init", "--agents", "2", "--seed", "1", "--wave", "1", "--task-file", "task.md", "--run", run]
                    + mode, self.cwd)
            _, first, _ = run_cli(["next", "--run", run], self.cwd)
            self.assertRegex(first, r"\n(Wave 1|Start 1 lanes): 1 Agent call in ONE message")

    def test_a_finished_run_counts_the_waves_it_took(self):
        # seed 4 needs fewer looks than the plan expects: the run takes 15 waves (10 for the bracket,
        # 5 for the checked merge) where the plan said 18
        with open(os.path.join(self.cwd, "old.md"), "w") as f:
            f.write("old\n")
        run_cli(["init", "--agents", "4", "--wave", "4", "--seed", "4", "--task-file", "task.md", "--baseline-file",
                 "old.md", "--run", "r", "--direct"], self.cwd)
        self.assertIn("wave 0/18\n", run_cli(["status", "--run", "r"], self.cwd)[1])
        standin.Orchestrator(self.cwd, standin.StandIn(self.cwd, seed=4), "r", runner=standin.run_here).play()
        line = run_cli(["status", "--run", "r"], self.cwd)[1].splitlines()[0]
        self.assertRegex(line, r" finished, (\d+)/\1 jobs, wave 15/15, ")

    def test_plan_and_the_readme_simulator_table_give_the_same_calls(self):
        # the simulator's row is a mean over its runs; plan's the expectation from the judge calls
        # per match the simulator measured: both round to the same whole number of calls
        text = readme.section("Judging: the simulator", readme.BENCHMARKS)
        rows = {m.group(1).strip(): int(m.group(2).replace(",", ""))
                for m in re.finditer(r"^\| ([^|]+) \|(?: [^|]+ \|){3} ([\d,]+) \(", text, re.M)}
        # the simulator plays the bracket: plan without the checked merge's match
        _, out, _ = run_cli(["plan", "--agents", "100", "--merge", "off"], self.cwd)
        plain = int(re.search(r"^total +(\d+) ", out, re.M).group(1))
        looked = int(re.search(r"(\d+) calls in all", out).group(1))
        self.assertEqual(rows["plain, one judge per match"], plain, rows)
        self.assertEqual(rows["rated pairing and looks to a majority (default)"], looked, rows)
        _, off, _ = run_cli(["plan", "--agents", "100", "--merge", "off", "--recheck", "off"], self.cwd)
        self.assertNotIn("calls in all", off)

    def test_the_readme_token_estimate_is_what_plan_prints(self):
        shown = readme.block_with(readme.section("Try it in ten seconds (offline, no Claude Code needed)"),
                                  "tokens (estimate)").strip()
        with open(os.path.join(self.cwd, "haiku.md"), "w") as f:
            f.write("Write a haiku about rain.\n")
        _, out, _ = run_cli(["plan", "--agents", "100", "--task-file", "haiku.md"], self.cwd)
        self.assertIn(shown, out.splitlines())


class FlagsDocumented(unittest.TestCase):
    """Every option of `init` a user may pass to /arena is in the README's flag table and in SKILL.md."""

    # set by the skill itself (files, run name) or tuning knobs for tests and benchmarks
    INTERNAL = {"--task-file", "--baseline-file", "--run", "--no-pack", "--batch-waves", "--lane-jobs", "--help"}
    # the engine's own spellings of a skill flag (--budget): the README names them, SKILL.md need not
    SPELLINGS = {"--max-calls", "--max-tokens"}

    def test_init_options(self):
        _, out, _ = run_cli(["init", "--help"], tempfile.gettempdir())
        options = set(re.findall(r"^  (--[a-z-]+)", out, re.M)) - self.INTERNAL
        self.assertIn("--recheck", options)
        table = readme.section("Use")
        with open(os.path.join(readme.ROOT, "skills", "arena", "SKILL.md"), encoding="utf-8") as f:
            arguments = readme.section("Arguments", f.name)
        for option in sorted(options):
            with self.subTest(option=option):
                self.assertRegex(table, r"\n\| [^|]*`%s\b" % option)
                if option not in self.SPELLINGS:
                    self.assertIn("`%s" % option, arguments)


class ReadmePlan(unittest.TestCase):
    def test_the_readme_shows_what_plan_prints(self):
        blocks = readme.code_blocks(readme.section("Try it in ten seconds (offline, no Claude Code needed)"))
        command = [b for b in blocks if b.startswith("python3 skills/arena/bracket.py plan")][0].strip()
        shown = blocks[blocks.index(command + "\n") + 1].splitlines()
        _, out, _ = run_cli(command.split()[2:], tempfile.gettempdir())
        self.assertEqual(out.splitlines()[:len(shown)], shown)
