"""The bench (init --run-code --bench): what bench.json may list, and what an entry decides."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "skills", "arena"))

from arena import bench  # noqa: E402

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

    def test_the_scorer_decides_only_beyond_its_margin(self):
        low = {"kind": "scorer", "better": "lower"}
        self.assertEqual(bench.decision(low, {"A": {"score": 100.0}, "B": {"score": 101.0}}, ["A", "B"]), "A")
        self.assertIsNone(bench.decision(low, {"A": {"score": 100.0}, "B": {"score": 100.4}}, ["A", "B"]))
        high = dict(low, better="higher")
        self.assertEqual(bench.decision(high, {"A": {"score": 100.0}, "B": {"score": 101.0}}, ["A", "B"]), "B")

    def test_a_run_prints_what_its_kind_says_or_an_error(self):
        entry = {"kind": "test"}
        said = lambda text: bench.read_result(entry, {"status": 0, "limit": None, "text": text})
        self.assertEqual(said('{"cases": 2, "failed": ["x"]}')["failed"], 1)
        self.assertIn("error", said("no json"))
        self.assertIn("error", bench.read_result({"kind": "scorer"}, {"status": 0, "limit": None,
                                                                       "text": '{"score": NaN}'}))


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


if __name__ == "__main__":
    unittest.main()
