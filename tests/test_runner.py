"""tests/run.py, the suite's runner: every module runs, a failure anywhere fails the whole."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import readme

RUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run.py")

MODULES = {
    "test_passes": "import unittest\nclass T(unittest.TestCase):\n    def test_a(self): pass\n    def test_b(self): pass\n",
    "test_skips": "import unittest\nclass T(unittest.TestCase):\n"
                  "    def test_a(self): self.skipTest('no tool')\n    def test_b(self): pass\n",
    "test_fails": "import unittest\nclass T(unittest.TestCase):\n    def test_a(self): self.assertEqual(1, 2)\n",
    "test_broken": "import no_such_module_here\n",
    "test_hangs": "import time, unittest\nclass T(unittest.TestCase):\n    def test_a(self): time.sleep(60)\n",
}


class Runner(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="arena-runner-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        for name, text in MODULES.items():
            with open(os.path.join(self.dir, name + ".py"), "w") as f:
                f.write(text)

    def run_it(self, *args):
        proc = subprocess.run([sys.executable, RUN, "-s", self.dir] + list(args), capture_output=True, text=True,
                              timeout=120)
        return proc.returncode, proc.stdout, proc.stderr

    def test_passing_modules_pass_and_count_skips(self):
        code, out, err = self.run_it("-j", "2", "test_passes", "test_skips.py")
        self.assertEqual(code, 0, out + err)
        self.assertRegex(out, r"\n4 tests in 2 modules, 2 at once: [\d.]+ s, CPU [\d.]+ s ")
        self.assertTrue(out.rstrip().endswith("OK (skipped=1)"), out)
        self.assertIn("==== test_skips: OK, 2 tests, 1 skipped, ", out)
        self.assertIn("test_a (test_skips.T", out)  # each module's own -v lines are kept

    def test_any_failure_or_broken_module_fails_the_run(self):
        code, out, err = self.run_it("test_passes", "test_skips", "test_fails", "test_broken")
        self.assertEqual(code, 1, out + err)
        self.assertEqual(re.findall(r"^FAILED: (.*)$", out, re.M), ["test_broken test_fails"])
        self.assertIn("AssertionError: 1 != 2", out)
        self.assertIn("no_such_module_here", out)
        self.assertRegex(out, r"\n\d+ tests in 4 modules, \d at once")

    def test_a_module_past_its_time_is_killed_and_fails(self):
        code, out, err = self.run_it("-t", "2", "test_hangs", "test_passes")
        self.assertEqual(code, 1, out + err)
        self.assertIn("==== test_hangs: FAILED (killed after the 2 s it may take: -t to change that), ", out)
        self.assertIn("==== test_passes: OK, 2 tests", out)
        self.assertEqual(re.findall(r"^FAILED: (.*)$", out, re.M), ["test_hangs"])

    def test_usage_errors(self):
        for args, why in ((["test_nothere"], "no test module test_nothere in "), (["-j", "0"], "-j must be 1 or more"),
                          (["-t", "0"], "-t must be more than 0 seconds"),
                          (["-s", os.path.join(self.dir, "none")], "no folder ")):
            code, out, err = self.run_it(*args)  # a second -s overrides the first
            self.assertEqual(code, 2, err)
            self.assertIn(why, err)
            self.assertNotIn("Traceback", err)


class CIRunsTheReadmeCommand(unittest.TestCase):
    def test_ci_ends_with_the_readme_test_command(self):
        first = readme.commands(readme.code_blocks(readme.section("Develop and test"))[0])[0]
        self.assertEqual(first, "python3 tests/run.py")
        with open(os.path.join(readme.ROOT, ".ci", "run")) as f:
            lines = [line.strip() for line in f if line.strip() and not line.lstrip().startswith("#")]
        self.assertEqual(lines[-1], first, ".ci/run must end by running the README's test command")


if __name__ == "__main__":
    unittest.main()
