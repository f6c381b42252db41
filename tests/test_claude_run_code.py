"""What a sub-agent of /arena may run, measured in the real Claude Code CLI, offline.

A scripted sub-agent (started by the main session under the skill's allowed-tools)
sends a batch of Bash commands; each command that actually runs prints RAN-OK. The
tests pin down, for every installed version:
- the shipped grant lets the engine run and nothing else: not a script in a work
  folder, not `python3 x.py bracket.py` (which the older wildcard grant let through);
- the one permission rule a user may add to let sub-agents run scripts under
  .arena/ directly, `Bash(python3 .arena/*)`, and what it does and does not match.
Skipped without a claude binary, except under CI (then it fails).
See tests/e2e/NOTES.md section 9 for the whole table.
"""

import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.e2e.arena_policy import role_of, steps  # noqa: E402
from tests.e2e.arena_run import Setup  # noqa: E402
from tests.e2e.fake_api import FakeAPI  # noqa: E402
from tests.e2e.run_claude import require_claude, run_claude  # noqa: E402

WORK = ".arena/r/work/j"          # a job's work folder, relative to the project
MARK = "RAN-OK"
DOCUMENTED_RULE = "Bash(python3 .arena/*)"


def commands(cwd, skill_dir):
    """(name, command) pairs; every one prints MARK if it runs."""
    engine = 'python3 -S "%s/bracket.py"' % skill_dir
    return [
        ("script", "python3 %s/t.py" % WORK),
        ("script-absolute", "python3 %s/%s/t.py" % (cwd, WORK)),
        ("script-then-bracket", "python3 %s/t.py bracket.py" % WORK),
        ("inline-then-bracket", "python3 -c \"print('%s')\" bracket.py" % MARK),
        ("inline", "python3 -c \"print('%s')\"" % MARK),
        ("cd-and-run", "cd %s && python3 t.py" % WORK),
        ("script-twice", "python3 %s/t.py && python3 %s/t.py" % (WORK, WORK)),
        ("script-then-touch", "python3 %s/t.py; touch stray.txt" % WORK),
        ("script-piped", "python3 %s/t.py | head -5" % WORK),
        ("under-timeout", "timeout 60 python3 %s/t.py" % WORK),
        ("dot-dot-escape", "python3 %s/../../../../outside.py" % WORK),
        ("engine", engine + " --help"),
        ("engine-then-script", engine + " --help; python3 %s/t.py" % WORK),
    ]


def probe(binp, extra_args=()):
    """{name: True if it ran}, plus whether stray.txt appeared, for one sub-agent."""
    tmp = tempfile.mkdtemp(prefix="cc-runcode-")
    try:
        setup = Setup(tmp)
        cwd = setup.cwd
        os.makedirs(os.path.join(cwd, WORK))
        for path in (os.path.join(cwd, WORK, "t.py"), os.path.join(cwd, "outside.py")):
            with open(path, "w") as f:
                f.write("print('%s')\n" % MARK)
        cmds = commands(cwd, setup.skill_dir)
        seen = {}

        def policy(req):
            done = steps(req)
            if role_of(req)[0] != "main":
                if not done:
                    return [{"type": "tool_use", "name": "Bash", "input": {"command": c, "description": n}}
                            for n, c in cmds]
                uses, results = done[0]
                for u in uses:
                    seen[u["input"]["description"]] = results.get(u["id"])
                return [{"type": "text", "text": "probed"}]
            if not done:
                return [{"type": "tool_use", "name": "Agent", "input": {
                    "description": "probe", "prompt": "probe", "subagent_type": "general-purpose",
                    "run_in_background": False}}]
            return [{"type": "text", "text": "FINAL"}]

        with FakeAPI(policy) as api:
            res = run_claude(binp, "/arena --agents 2 probe", base_url=api.base_url, home=setup.home,
                             cwd=cwd, timeout=90, extra_args=extra_args)
        if res.returncode != 0 or api.errors:
            raise AssertionError("claude failed: %s %s %s" % (res.returncode, res.stderr[-500:], api.errors))
        ran = {}
        for name, _ in cmds:
            text, is_error = seen.get(name) or ("", True)
            usage = name.startswith("engine") and "usage:" in text
            ran[name] = not is_error and (MARK in text or usage)
        return ran, os.path.exists(os.path.join(cwd, "stray.txt"))
    finally:
        shutil.rmtree(tmp, True)


class ShippedGrantRunsOnlyTheEngine(unittest.TestCase):
    def setUp(self):
        self.bins = require_claude(self)

    def test_shipped_grant(self):
        for ver, binp in self.bins.items():
            with self.subTest(version=ver):
                ran, stray = probe(binp)
                self.assertEqual(sorted(n for n, r in ran.items() if r), ["engine"], ran)
                self.assertFalse(stray)

    def test_documented_rule(self):
        for ver, binp in self.bins.items():
            with self.subTest(version=ver):
                ran, stray = probe(binp, ["--allowedTools", DOCUMENTED_RULE])
                # what the rule lets through: a script named by a path that starts with .arena/,
                # alone, chained with another allowed command, piped to head, under timeout;
                # and (a string match, not a path check) a .. that climbs out of .arena/
                for name in ("script", "script-twice", "script-piped", "under-timeout", "dot-dot-escape",
                             "engine", "engine-then-script", "script-then-bracket"):
                    self.assertTrue(ran[name], name)
                # what it does not: absolute paths, cd first, python3 -c, an unlisted command in a chain
                for name in ("script-absolute", "cd-and-run", "inline", "inline-then-bracket",
                             "script-then-touch"):
                    self.assertFalse(ran[name], name)
                self.assertFalse(stray)


if __name__ == "__main__":
    unittest.main()
