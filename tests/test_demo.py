"""`bracket.py demo`: a whole run offline with the stand-ins of arena.demo, the README's
picture made from it, and what the report shows a reader of a run (title, judges' reasons)."""

import importlib.util
import json
import os
import re
import shutil
import struct
import tempfile
import unittest

import standin
from standin import run_cli
from arena import report
from arena.base import LABELS

spec = importlib.util.spec_from_file_location("report_picture", os.path.join(standin.ROOT, "scripts",
                                                                             "report_picture.py"))
report_picture = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report_picture)


def state_of(cwd, run):
    with open(os.path.join(cwd, ".arena", run, "state.json"), encoding="utf-8") as f:
        return json.load(f)["state"]


class Demo(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="arena-demo-")
        with open(os.path.join(cls.tmp, "notes.txt"), "w", encoding="utf-8") as f:
            f.write("the user's own file\n")
        cls.before = standin.tree(cls.tmp)
        _, cls.out, _ = run_cli(["demo", "--agents", "16", "--seed", "5"], cls.tmp)
        cls.st = state_of(cls.tmp, "demo-16-s5")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, True)

    def test_a_whole_run_written_like_a_real_one(self):
        run = os.path.join(self.tmp, ".arena", "demo-16-s5")
        for name in ("state.json", "journal.jsonl", "task.md", "report.html"):
            self.assertTrue(os.path.exists(os.path.join(run, name)), name)
        # the bracket's 15 matches, and the checked merge's
        self.assertEqual(len(self.st["results"]), 16)
        self.assertEqual(self.st["merged"]["match"], "r5-m01")
        self.assertIsNotNone(self.st["champion"])
        self.assertEqual(standin.tree(self.tmp), self.before, "the demo wrote outside .arena/")
        # `status` and `winner` work on it afterwards, as on any run
        run_cli(["status"], self.tmp)
        run_cli(["winner", "--run", "demo-16-s5"], self.tmp)

    def test_it_ends_with_the_winner_summary_and_the_report_path(self):
        lines = self.out.splitlines()
        self.assertTrue(lines[0].startswith("demo: a whole run offline with 16 stand-in agents"), lines[0])
        self.assertIn("winner %s of 16 agents after 4 rounds (seed 5)" % self.st["champion"], lines)
        self.assertEqual(lines[-1], "report: .arena/demo-16-s5/report.html")
        self.assertRegex(self.out, r"hidden quality, known only to the demo: the winner a\d+ started as #\d+ of 16; "
                                   r"the weaker side won \d+ of 15 matches")

    def test_matches_have_margins_upsets_and_second_looks(self):
        results = list(self.st["results"].values())
        margins = [abs(r["tot"][r["w"]] - r["tot"][r["l"]]) for r in results if r.get("tot")]
        self.assertGreater(len(set(margins)), 5, margins)
        self.assertTrue(any(r.get("n") == 2 for r in results), "no second look")
        upsets = int(re.search(r"the weaker side won (\d+)", self.out).group(1))
        self.assertGreater(upsets, 0)

    def test_same_seed_same_run_under_a_new_name(self):
        _, again, _ = run_cli(["demo", "--agents", "16", "--seed", "5"], self.tmp)
        self.assertEqual(again.splitlines()[-1], "report: .arena/demo-16-s5-2/report.html")
        other = state_of(self.tmp, "demo-16-s5-2")
        self.assertEqual(other["results"], self.st["results"])
        self.assertEqual(other["cards"], self.st["cards"])

    def test_bad_numbers_are_refused_in_one_line(self):
        for args in (["--agents", "0"], ["--agents", "9999"], ["--seed", "-1"], ["--wave", "21"], ["--bogus"]):
            with self.subTest(args=args):
                code, out, err = run_cli(["demo"] + args, self.tmp, check=False)
                self.assertEqual(code, 2, err)
                self.assertEqual(len(err.strip().splitlines()), 1, err)

    def test_the_judges_reasons_name_agents_not_blind_labels(self):
        with open(os.path.join(self.tmp, ".arena", "demo-16-s5", "report.html"), encoding="utf-8") as f:
            page = f.read()
        reasons = re.findall(r'<p class="why">(.*?)</p>', page)
        self.assertTrue(reasons)
        labels = re.compile(r"\b(%s)\b" % "|".join(LABELS))
        for why in reasons:
            self.assertIsNone(labels.search(why), why)
        self.assertTrue(any(re.search(r"\ba\d{3} holds up better", why) for why in reasons), reasons)
        # the labels behind each verdict stay in the state after the match is decided
        judged = [s for job, s in self.st["summ"].items() if "-judge" in job]
        self.assertTrue(judged and all(set(s["names"]) <= set(LABELS) for s in judged))


class Picture(unittest.TestCase):
    def test_the_readme_picture_is_of_the_report_the_code_makes_now(self):
        folder = tempfile.mkdtemp(prefix="arena-picture-")
        try:
            with open(report_picture.play_demo(folder), encoding="utf-8") as f:
                now = report_picture.digest(f.read())
        finally:
            shutil.rmtree(folder, True)
        self.assertEqual(report_picture.recorded(), now,
                         "docs/report.png shows an older report: run python3 scripts/report_picture.py")
        with open(report_picture.PICTURE, "rb") as f:
            head = f.read(24)
        self.assertEqual(head[:8], b"\x89PNG\r\n\x1a\n")
        self.assertEqual(struct.unpack(">II", head[16:24]), report_picture.SIZE)

    def test_the_readme_shows_the_picture_and_the_demo_first(self):
        with open(os.path.join(standin.ROOT, "README.md"), encoding="utf-8") as f:
            text = f.read()
        self.assertIn("](docs/report.png)", text)
        first = re.search(r"^```\n(.*?)\n", text, re.M | re.S).group(1)
        self.assertEqual(first, "python3 skills/arena/bracket.py " + " ".join(report_picture.DEMO))


    def test_the_readme_shows_what_the_demo_prints(self):
        with open(os.path.join(standin.ROOT, "README.md"), encoding="utf-8") as f:
            shown = re.findall(r"^```\n(.*?)\n```", f.read(), re.M | re.S)[1].splitlines()
        folder = tempfile.mkdtemp(prefix="arena-demo-readme-")
        try:
            _, out, _ = run_cli(report_picture.DEMO, folder)
        finally:
            shutil.rmtree(folder, True)
        printed = iter(out.splitlines())
        for line in shown:
            if not line.startswith("[..."):
                self.assertIn(line, printed, "the README shows a line the demo does not print (in this order)")


class Report(unittest.TestCase):
    def test_a_long_title_is_cut_at_a_word(self):
        task = "Refactor the billing module so that every invoice path, including refunds, must end with one simple call"
        short = report.shortened(task, 80)
        self.assertLessEqual(len(short), 80)
        self.assertTrue(short.endswith("\u2026"))
        self.assertTrue(task.startswith(short[:-1]))
        self.assertEqual(task[len(short) - 1], " ", short)
        self.assertEqual(report.shortened("short enough", 80), "short enough")
        self.assertEqual(report.shortened("x" * 100, 80), "x" * 79 + "\u2026")

    def test_labels_back_to_agents(self):
        names = {"Gannet": "a017", "Robin": "a042"}
        self.assertEqual(report.unblind("Gannet still only explains; Robin's revision fixes it. Gannets", names),
                         "a017 still only explains; a042's revision fixes it. Gannets")
        self.assertEqual(report.unblind("Heron is better", {"Heron": "baseline", "Tern": "winner"}),
                         "the old answer is better")
        self.assertEqual(report.unblind("Gannet wins", None), "Gannet wins")

