"""SKILL.md: frontmatter limits, and every command, flag and path it names exists."""

import os
import re
import unittest

import standin
from standin import run_cli

SKILL_DIR = os.path.join(standin.ROOT, "skills", "arena")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def frontmatter(text):
    m = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    assert m, "no frontmatter"
    fields = {}
    for line in m.group(1).splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return fields, text[m.end():]


class SkillMdTest(unittest.TestCase):
    def setUp(self):
        self.text = read(os.path.join(SKILL_DIR, "SKILL.md"))
        self.fields, self.body = frontmatter(self.text)

    def test_frontmatter(self):
        self.assertEqual(self.fields["name"], "arena")
        desc = self.fields["description"]
        self.assertLessEqual(len(desc), 1024)
        self.assertNotIn("<", desc)
        self.assertNotIn(">", desc)
        self.assertIn("Use when", desc)
        self.assertIn("argument-hint", self.fields)
        # path-limited grants, checked in the real client by test_claude_e2e
        self.assertIn("Edit(.arena/**)", self.fields["allowed-tools"])
        self.assertIn("bracket.py", self.fields["allowed-tools"])

    def test_body_is_short(self):
        # about 4 characters a token; the budget is 2,000 tokens
        self.assertLess(len(self.body) / 4, 2000)
        self.assertLess(len(self.text.splitlines()), 120)

    def test_commands_and_flags_exist(self):
        uses = re.findall(r"`B ([a-z]+)([^`]*)`", self.body)
        self.assertGreater(len(uses), 5)
        seen = set()
        for cmd, rest in uses:
            seen.add(cmd)
            code, out, err = run_cli([cmd, "--help"], standin.ROOT)
            self.assertEqual(code, 0, cmd)
            for flag in re.findall(r"--[a-z][a-z-]*", rest):
                self.assertIn(flag, out, "%s has no %s" % (cmd, flag))
        self.assertTrue({"plan", "init", "next", "winner"} <= seen)
        self.assertIn("`B winner --run RUN --report`", self.body, "the result and the report in one command")
        # the record command next prints, and the arguments the skill parses
        _, out, _ = run_cli(["record", "--help"], standin.ROOT)
        self.assertIn("--reason", out)
        _, out, _ = run_cli(["init", "--help"], standin.ROOT)
        for flag in ("--quick", "--agents", "--seed", "--wave", "--model", "--judge-model"):
            self.assertIn(flag, self.text)
            self.assertIn(flag, out)

    def test_engine_reached_through_skill_dir(self):
        self.assertIn('python3 -S "${CLAUDE_SKILL_DIR}/bracket.py"', self.body)
        for rel in re.findall(r"\$\{CLAUDE_SKILL_DIR\}/([\w./-]+)", self.text):
            self.assertTrue(os.path.exists(os.path.join(SKILL_DIR, rel)), rel)

    def test_folder_is_self_contained(self):
        for name in ("bracket.py", "cards.md", "rubric.md", "arena/cli.py", "arena/report.py"):
            self.assertTrue(os.path.exists(os.path.join(SKILL_DIR, name)), name)
        for kind in ("spawn", "attack", "defend", "judge", "final", "conductor"):
            self.assertTrue(os.path.exists(os.path.join(SKILL_DIR, "briefs", kind + ".md")), kind)

    def test_copied_folder_works_alone(self):
        import shutil
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "arena")
            shutil.copytree(SKILL_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
            work = os.path.join(tmp, "project")
            os.mkdir(work)
            with open(os.path.join(work, "task.md"), "w") as f:
                f.write("task\n")
            import subprocess
            import sys
            env = dict(os.environ, PYTHONPATH="")
            for args in (["plan", "--agents", "100"], ["init", "--quick", "--seed", "1", "--task-file", "task.md"],
                         ["next", "--direct"]):
                proc = subprocess.run([sys.executable, "-S", os.path.join(copy, "bracket.py")] + args, cwd=work,
                                      capture_output=True, text=True, env=env, timeout=60)
                self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("Wave 1: 8 Agent calls", proc.stdout)


if __name__ == "__main__":
    unittest.main()
