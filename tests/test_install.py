"""The README's copy install, run exactly as written, on a machine where ~/.claude/skills does not exist yet.

The commands are read from README.md's Install section (so this fails when the README changes
without the test), run by bash in a copy of the repository with a temporary HOME, with the
README's placeholder for "your repository" replaced by a temporary folder. A second
run checks that installing over an existing copy gives the same tree, not a copy inside it.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import readme

SKILL = os.path.join(readme.ROOT, "skills", "arena")
REPO_PLACEHOLDER = "/path/to/repo"


def tree(top):
    """Relative paths of the files under top, caches left out."""
    out = set()
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            if not name.endswith(".pyc"):
                out.add(os.path.relpath(os.path.join(dirpath, name), top))
    return out


class CopyInstall(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="arena-install-")
        self.home = os.path.join(self.tmp, "home")
        self.clone = os.path.join(self.tmp, "arena-skill")
        self.project = os.path.join(self.tmp, "project")
        os.makedirs(self.home)
        os.makedirs(self.project)
        shutil.copytree(SKILL, os.path.join(self.clone, "skills", "arena"),
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        self.lines = readme.commands(readme.block_with(readme.section("Install"), "cp -r skills/arena"))

    def tearDown(self):
        shutil.rmtree(self.tmp, True)

    def run_readme(self):
        script = "set -eu\n" + "\n".join(line.replace(REPO_PLACEHOLDER, self.project) for line in self.lines)
        env = dict(os.environ, HOME=self.home)
        r = subprocess.run(["bash", "-c", script], cwd=self.clone, env=env, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, "README install failed:\n%s\n%s" % (script, r.stderr))

    def check_skill(self, folder):
        self.assertEqual(tree(folder), tree(SKILL), folder)
        out = subprocess.run([sys.executable, "-S", os.path.join(folder, "bracket.py"), "plan", "--agents", "8"],
                             cwd=self.tmp, capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("total", out.stdout)

    def test_readme_names_both_targets(self):
        text = "\n".join(self.lines)
        self.assertIn("~/.claude/skills", text)
        self.assertIn(REPO_PLACEHOLDER + "/.claude/skills", text)

    def test_fresh_home_then_again_over_the_copy(self):
        targets = [os.path.join(self.home, ".claude", "skills", "arena"),
                   os.path.join(self.project, ".claude", "skills", "arena")]
        self.assertFalse(os.path.exists(os.path.join(self.home, ".claude")))
        for attempt in ("fresh", "over an existing copy"):
            with self.subTest(attempt=attempt):
                self.run_readme()
                for folder in targets:
                    self.check_skill(folder)
