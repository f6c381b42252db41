"""What a sub-agent of /arena may run, measured in the real Claude Code CLI, offline.

A scripted sub-agent (started by the main session under the skill's allowed-tools)
sends a batch of Bash commands; each command that actually runs prints RAN-OK. The
tests pin down, for every installed version:
- the shipped grant lets the engine run and nothing else: not a script in a work
  folder, not `python3 x.py bracket.py` (which the older wildcard grant let through);
- the one permission rule a user may add to let sub-agents run scripts under
  .arena/ directly, `Bash(python3 .arena/*)`, and what it does and does not match;
- in a run started with `--run-code`, a sub-agent runs a script in its work folder
  through `bracket.py exec` under the shipped grant alone; without `--run-code` the
  engine refuses, and running it directly is refused by Claude Code unless the user
  added that rule.
Skipped without a claude binary, except under CI (then it fails).
See tests/e2e/NOTES.md section 9 for the whole table.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.e2e.arena_policy import role_of, steps  # noqa: E402
from tests.e2e.arena_run import Setup  # noqa: E402
from tests.e2e.fake_api import FakeAPI  # noqa: E402
from tests.e2e.run_claude import each_version, require_claude, run_claude  # noqa: E402

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
        def one(ver, binp):
            ran, stray = probe(binp)
            self.assertEqual(sorted(n for n, r in ran.items() if r), ["engine"], ran)
            self.assertFalse(stray)
        each_version(self, self.bins, one)

    def test_documented_rule(self):
        def one(ver, binp):
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
        each_version(self, self.bins, one)


SCRIPT = ("import os, sys\n"
          "open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'ran-' + sys.argv[1]), 'w').close()\n"
          "print('%s', sys.argv[1], 'key' if 'ARENA_TEST_KEY' in os.environ else 'no key')\n" % MARK)


class ExecInTheRealClient(unittest.TestCase):
    """A competitor with a spawn job handed out writes t.py in its work folder, then runs it
    twice: through the engine as its brief says, and directly."""

    def setUp(self):
        self.bins = require_claude(self)

    def job_run(self, binp, run_code, extra_args=(), client_files=()):
        tmp = tempfile.mkdtemp(prefix="cc-exec-")
        self.addCleanup(shutil.rmtree, tmp, True)
        setup = Setup(tmp)
        cwd = setup.cwd
        engine = [sys.executable, "-S", os.path.join(setup.skill_dir, "bracket.py")]
        with open(os.path.join(cwd, "task.md"), "w") as f:
            f.write("Write calc.py.\n")
        os.makedirs(os.path.join(cwd, ".arena"))
        init = ["init", "--agents", "2", "--seed", "1", "--task-file", "task.md", "--run", "r"]
        for args in (init + (["--run-code"] if run_code else []), ["next", "--run", "r", "--direct"]):
            subprocess.run(engine + args, cwd=cwd, check=True, capture_output=True, timeout=60)
        os.remove(os.path.join(cwd, "task.md"))
        job = "spawn-a001"
        with open(os.path.join(cwd, ".arena", "r", "b", job + ".md")) as f:
            brief = f.read()
        named = re.search(r"`(python3 -S \"[^\"]+\" exec --run r --job %s) <file>" % job, brief)
        self.assertEqual(bool(named), run_code)
        # without --run-code the brief names no command; a sub-agent that tries the engine anyway
        exec_cmd = named.group(1) if named else 'python3 -S "%s/bracket.py" exec --run r --job %s' % (
            setup.skill_dir, job)
        work = ".arena/r/work/%s" % job
        results = {}

        def policy(req):
            done = steps(req)
            if role_of(req)[0] != "main":
                if not done:
                    return [{"type": "tool_use", "name": "Write", "input": {
                        "file_path": os.path.join(cwd, work, "t.py"), "content": SCRIPT}}]
                if len(done) == 1:
                    return [{"type": "tool_use", "name": "Bash", "input": {"command": c, "description": n}}
                            for n, c in (("engine", exec_cmd + " t.py engine"),
                                         ("direct", "python3 %s/t.py direct" % work))]
                uses, res = done[1]
                for u in uses:
                    results[u["input"]["description"]] = res.get(u["id"])
                return [{"type": "text", "text": "done " + job}]
            if not done:
                return [{"type": "tool_use", "name": "Agent", "input": {
                    "description": job, "prompt": "Read .arena/r/b/%s.md and follow it." % job,
                    "run_in_background": False}}]
            return [{"type": "text", "text": "FINAL"}]

        # a temp folder of its own: with its sandbox on, the client binds
        # $TMPDIR/claude-<uid>/claude-settings-<hash>.json, named after the settings alone, and
        # deletes it when it exits, so a client with the same settings started beside it (this
        # module run twice at once) fails with "bwrap: Can't find source path"
        client_tmp = os.path.join(tmp, "tmp")
        os.makedirs(client_tmp)
        with FakeAPI(policy) as api:
            # a key in the session's environment, which a script must not see
            res = run_claude(binp, "/arena --agents 2 calc", base_url=api.base_url, home=setup.home, cwd=cwd,
                             timeout=90, extra_args=extra_args,
                             extra_env={"ARENA_TEST_KEY": "sk-test", "TMPDIR": client_tmp})
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertEqual(api.errors, [])
        ran = {how: os.path.exists(os.path.join(cwd, work, "ran-" + how)) for how in ("engine", "direct")}
        # client_files: what Claude Code itself writes there (2.1.332 makes .claude/ when its sandbox is on)
        self.assertLessEqual(set(os.listdir(cwd)) - set(client_files), {".arena", "README.txt"},
                             "nothing may appear outside .arena/")
        return ran, results

    def test_with_run_code_the_engine_runs_it_and_claude_code_refuses_it_directly(self):
        for ver, binp in self.bins.items():
            with self.subTest(version=ver):
                ran, results = self.job_run(binp, run_code=True)
                self.assertEqual(ran, {"engine": True, "direct": False}, results)
                text, is_error = results["engine"]
                self.assertFalse(is_error, text)
                self.assertIn(MARK + " engine no key", text)
                self.assertIn("[exit status 0 after", text)
                self.assertTrue(results["direct"][1], results["direct"])

    # The user turned on Claude Code's own Bash sandbox (bubblewrap and socat on Linux): exec
    # still runs the script, with no secrets; 2.1.197 lets the engine's bubblewrap nest inside
    # its sandbox, 2.1.332 does not, and the engine then says so (tests/e2e/NOTES.md section 12).
    def test_exec_under_claude_codes_own_sandbox(self):
        if not (shutil.which("bwrap") and shutil.which("socat")):
            if os.environ.get("CI") == "true":
                self.fail("CI must install bubblewrap and socat (.ci/install-bubblewrap.sh)")
            self.skipTest("Claude Code's sandbox needs bubblewrap and socat")
        settings = json.dumps({"sandbox": {"enabled": True, "failIfUnavailable": True}})
        for ver, binp in self.bins.items():
            with self.subTest(version=ver):
                ran, results = self.job_run(binp, run_code=True, extra_args=["--settings", settings],
                                            client_files=(".claude",))
                self.assertTrue(ran["engine"], results)
                text, is_error = results["engine"]
                self.assertFalse(is_error, text)
                self.assertIn(MARK + " engine no key", text)
                self.assertIn("[exit status 0 after", text)

    def test_without_run_code_nothing_runs_unless_the_rule_is_added(self):
        for ver, binp in self.bins.items():
            with self.subTest(version=ver):
                ran, results = self.job_run(binp, run_code=False)
                self.assertEqual(ran, {"engine": False, "direct": False}, results)
                text, is_error = results["engine"]
                self.assertTrue(is_error)
                self.assertIn("without --run-code", text)
                ran, results = self.job_run(binp, run_code=False, extra_args=["--allowedTools", DOCUMENTED_RULE])
                self.assertEqual(ran, {"engine": False, "direct": True}, results)


if __name__ == "__main__":
    unittest.main()
