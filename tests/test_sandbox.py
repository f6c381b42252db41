"""`bracket.py exec` runs model-written code: no secrets, limits, a sandbox where the machine
has bubblewrap, an audit of what it could not prevent, and audit records that show damage.

Every test drives the real CLI the way a sub-agent does. The confined tests need a working
bubblewrap (CI installs it; elsewhere they skip saying why); the unconfined ones run the
engine with a PATH that has no bwrap, as on a machine without the package.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "skills", "arena"))
sys.path.insert(0, HERE)

from arena import sandbox  # noqa: E402
import standin  # noqa: E402

BRACKET = os.path.join(os.path.dirname(HERE), "skills", "arena", "bracket.py")
SECRETS = {"ANTHROPIC_API_KEY": "sk-ant-test-secret", "GITHUB_TOKEN": "ghp_test_token", "MY_SETTING": "on"}
POSIX = os.name == "posix"


def bwrap_works():
    """(True, None) when bubblewrap can sandbox here, else (False, why)."""
    name, why = sandbox.find_confinement()
    return name == "bubblewrap", why


def no_bwrap_path():
    """A PATH like this one without any folder that holds bwrap."""
    return os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if p and not os.path.exists(os.path.join(p, "bwrap")))


class Exec(unittest.TestCase):
    confined = True

    @classmethod
    def setUpClass(cls):
        if not POSIX:
            raise unittest.SkipTest("limits and sandboxes are POSIX's")
        if cls.confined:
            ok, why = bwrap_works()
            if not ok:
                if os.environ.get("CI") == "true":
                    raise AssertionError("CI must test the sandbox, but: %s" % why)
                raise unittest.SkipTest("no working bubblewrap here: %s" % why)

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="arena-sandbox-")
        self.addCleanup(self.tmp.cleanup)
        self.cwd = self.tmp.name
        self.outside = tempfile.mkdtemp(prefix="arena-outside-")
        self.addCleanup(shutil.rmtree, self.outside, True)
        self.env = dict(os.environ, **SECRETS)
        if not self.confined:
            self.env["PATH"] = no_bwrap_path()
        with open(os.path.join(self.cwd, "task.md"), "w") as f:
            f.write("Write a function and test it.\n")
        self.init()

    def init(self, *extra):
        self.cli("init", "--agents", "2", "--seed", "1", "--task-file", "task.md", "--run", "r", "--direct",
                 "--run-code", *extra)
        self.cli("next", "--run", "r")  # hands out the spawns: their agents may run code now
        self.folder = os.path.join(self.cwd, ".arena", "r", "work", "spawn-a001")

    def cli(self, *args, check=True):
        proc = subprocess.run([sys.executable, "-S", BRACKET] + list(args), cwd=self.cwd, env=self.env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
        if check and proc.returncode != 0:
            raise AssertionError("bracket.py %s: %s" % (" ".join(args), proc.stderr))
        return proc.returncode, proc.stdout, proc.stderr

    def exec(self, code, *args):
        os.makedirs(self.folder, exist_ok=True)
        with open(os.path.join(self.folder, "s.py"), "w") as f:
            f.write(code)
        return self.cli("exec", "--run", "r", "--job", "spawn-a001", "--timeout", "30", "s.py", *args)[1]

    # ---- 1. no secrets
    def test_the_script_sees_no_secrets(self):
        out = self.exec("import os, json\nprint(json.dumps(dict(os.environ)))\n")
        env = json.loads(out.splitlines()[0])
        for name in SECRETS:
            self.assertNotIn(name, env)
        self.assertNotIn("sk-ant-test-secret", out)
        self.assertEqual(env["HOME"], os.path.join(os.path.realpath(self.folder), "home"))
        for name in ("TMPDIR", "TEMP", "TMP"):
            self.assertEqual(env[name], os.path.join(os.path.realpath(self.folder), "tmp"))
        self.assertIn("PATH", env)
        self.assertLessEqual(set(env) - {"PATH", "HOME", "TMPDIR", "TEMP", "TMP", "PWD", "PYTHONDONTWRITEBYTECODE",
                                         "PYTHONNOUSERSITE", "LANG", "LANGUAGE", "TZ"},
                             {n for n in env if n.startswith("LC_")})

    def test_a_named_variable_is_passed_on_and_shown(self):
        shutil.rmtree(os.path.join(self.cwd, ".arena"))
        self.init("--run-code-env", "MY_SETTING")
        out = self.exec("import os\nprint(os.environ.get('MY_SETTING'), os.environ.get('GITHUB_TOKEN'))\n")
        self.assertTrue(out.startswith("on None\n"), out)
        _, status, _ = self.cli("status", "--run", "r")
        self.assertIn("also, from yours: MY_SETTING", status)

    # ---- 2. limits
    def test_a_memory_hog_is_stopped_with_one_line(self):
        out = self.exec("x = bytearray(8 * 1024 ** 3)\nprint('allocated')\n")
        self.assertIn("[killed: memory limit 2 GiB]\n", out)
        self.assertNotIn("allocated", out)

    def test_a_fork_bomb_is_stopped_and_leaves_nothing(self):
        out = self.exec("import os, time\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n"
                        "        time.sleep(0.01)\n        raise\n")
        self.assertIn("[killed: process limit %d]\n" % sandbox.PROCESSES, out)
        script = os.path.join(os.path.realpath(self.folder), "s.py")
        left = []
        for pid in os.listdir("/proc"):
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    if script.encode() in f.read():
                        left.append(pid)
            except OSError:
                pass
        self.assertEqual(left, [], "processes of the bomb outlived it")

    def test_a_ten_gib_file_stops_at_the_file_limit(self):
        out = self.exec("chunk = b'x' * (1024 ** 2)\nwith open('big.bin', 'wb') as f:\n"
                        "    for _ in range(10 * 1024):\n        f.write(chunk)\nprint('wrote 10 GiB')\n")
        self.assertIn("[killed: file size limit 256 MiB]\n", out)
        self.assertNotIn("wrote 10 GiB", out)
        self.assertLessEqual(os.path.getsize(os.path.join(self.folder, "big.bin")), sandbox.FILE_SIZE)

    def test_an_ordinary_test_still_runs(self):
        out = self.exec("import json, sqlite3, subprocess, sys, tempfile, threading, unittest\n"
                        "t = [threading.Thread(target=lambda: None) for _ in range(8)]\n"
                        "[x.start() for x in t]; [x.join() for x in t]\n"
                        "print(subprocess.run([sys.executable, '-c', 'print(6 * 7)'], stdout=subprocess.PIPE,"
                        " universal_newlines=True).stdout.strip())\n"
                        "with tempfile.NamedTemporaryFile() as f: f.write(b'x' * 10 ** 7)\n"
                        "x = bytearray(200 * 1024 ** 2); print('ok', len(sys.argv))\n", "a", "b")
        self.assertTrue(out.startswith("42\nok 3\n"), out)
        self.assertIn("[exit status 0 after", out)
        self.assertNotIn("killed:", out)

    # ---- 3. confinement (this class: bubblewrap)
    def test_it_writes_only_its_work_folder_and_has_no_network(self):
        target = os.path.join(self.outside, "escaped.txt")
        project = os.path.join(self.cwd, "planted.txt")
        out = self.exec("import socket\nfor path in %r:\n    try:\n        open(path, 'w').write('x')\n"
                        "        print('wrote', path)\n    except OSError as e:\n        print('refused', e.errno)\n"
                        "open('mine.txt', 'w').write('fine')\n"
                        "try:\n    socket.create_connection(('127.0.0.1', 9), timeout=2)\n    print('connected')\n"
                        "except OSError as e:\n    print('no network', e.errno)\n" % ([target, project],))
        # EROFS (read-only file system), or ENOENT where the path sits in a folder bubblewrap
        # replaces (a temp folder under /dev/shm)
        self.assertEqual(len(re.findall(r"^refused (30|2)$", out, re.M)), 2, out)
        self.assertFalse(os.path.exists(target))
        self.assertFalse(os.path.exists(project))
        self.assertTrue(os.path.exists(os.path.join(self.folder, "mine.txt")))
        self.assertIn("no network", out)
        self.assertNotIn("connected", out)

    def test_the_home_folder_is_hidden_but_the_project_is_readable(self):
        home = os.path.expanduser("~")
        marker = os.path.join(home, ".arena-sandbox-test-%d" % os.getpid())
        with open(marker, "w") as f:
            f.write("a secret in your home\n")
        self.addCleanup(os.remove, marker)
        out = self.exec("import os\nprint(os.path.exists(%r), open(%r).read().strip())\n" % (
            marker, os.path.join(self.cwd, "task.md")))
        inside = os.path.realpath(self.cwd).startswith(os.path.realpath(home) + os.sep)
        self.assertTrue(out.startswith("%s Write a function and test it.\n" % inside), out)

    def test_plan_init_and_status_name_the_sandbox(self):
        for cmd in (["plan", "--agents", "2", "--run-code"], ["status", "--run", "r"]):
            _, out, _ = self.cli(*cmd)
            self.assertIn("  confinement: bubblewrap: scripts see the filesystem read-only except their own work "
                          "folder, your home folder hidden, and no network\n", out)
            self.assertIn("nothing else of yours (no keys or tokens", out)


class Unconfined(Exec):
    """The same engine on a machine without bubblewrap: secrets and limits still hold; the
    sandbox is missing and every place says so; escapes are named."""
    confined = False

    def test_it_writes_only_its_work_folder_and_has_no_network(self):
        self.skipTest("without a sandbox a script can write outside: see the audit test")

    def test_the_home_folder_is_hidden_but_the_project_is_readable(self):
        self.skipTest("without a sandbox the home folder is visible")

    def test_plan_init_and_status_name_the_sandbox(self):
        for cmd in (["plan", "--agents", "2", "--run-code"], ["status", "--run", "r"]):
            _, out, _ = self.cli(*cmd)
            self.assertRegex(out, r"\n  confinement: none; install bubblewrap .*Scripts can then read and write "
                                  r"whatever you can, unless a sandbox around this engine .* holds them\n")

    def test_an_escape_is_named_by_exec_and_status(self):
        env_tmp = tempfile.mkdtemp(prefix="arena-systemp-")
        self.addCleanup(shutil.rmtree, env_tmp, True)
        # a private system temp folder, so nothing else on the machine shows in it
        self.env["TMPDIR"] = env_tmp
        shutil.rmtree(os.path.join(self.cwd, ".arena"))
        self.init()
        out = self.exec("open(%r, 'w').write('escaped')\n" % os.path.join(env_tmp, "escaped-by-exec.txt"))
        self.assertRegex(out, r"\[outside the work folder, these changed while it ran \(by it or by another program\): "
                              r"[^\]]*%s\]" % re.escape(os.path.join(env_tmp, "escaped-by-exec.txt")))
        _, status, _ = self.cli("status", "--run", "r")
        self.assertIn("system temp folder %s: 1 new entries of yours since init, from any program you ran, "
                      "sub-agents included: escaped-by-exec.txt" % env_tmp, status)


class Records(unittest.TestCase):
    """The audit's records are checksummed in the journal: damage is reported, not believed."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="arena-records-")
        self.addCleanup(self.tmp.cleanup)
        self.cwd = self.tmp.name
        with open(os.path.join(self.cwd, "task.md"), "w") as f:
            f.write("Name three prime numbers.\n")
        with open(os.path.join(self.cwd, "notes.txt"), "w") as f:
            f.write("the user's file\n")
        standin.run_cli(["init", "--agents", "2", "--seed", "1", "--task-file", "task.md", "--run", "r"], self.cwd)

    def status(self):
        return standin.run_cli(["status", "--run", "r"], self.cwd)[1]

    def test_a_truncated_or_edited_record_is_reported_as_damaged(self):
        out = self.status()
        self.assertIn("files outside .arena/: none changed since init", out)
        for record, line in (("fingerprint.json", "files outside .arena/: UNKNOWN (its record fingerprint.json"),
                             ("tempdir.json", "system temp folder: UNKNOWN (its record tempdir.json"),
                             ("homedir.json", "home folder: UNKNOWN (its record homedir.json")):
            path = os.path.join(self.cwd, ".arena", "r", record)
            with open(path) as f:
                kept = f.read()
            for damage in ("", '{"complete": true, "files": {}}', kept + " "):
                with self.subTest(record=record, damage=damage[:20]):
                    with open(path, "w") as f:
                        f.write(damage)
                    out = self.status()
                    self.assertIn(line + " was changed after init (its checksum no longer matches the journal's), "
                                  "so it cannot vouch for what changed since; treat it as unknown)", out)
                    self.assertNotIn("not checked (no", out)
            os.remove(path)
            self.assertIn(line + " was removed or made unreadable after init", self.status())
            with open(path, "w") as f:
                f.write(kept)
            self.assertNotIn("UNKNOWN", self.status())

    def test_winner_says_the_same(self):
        os.remove(os.path.join(self.cwd, ".arena", "r", "fingerprint.json"))
        orch = standin.Orchestrator(self.cwd, standin.StandIn(self.cwd, seed=1), "r")
        orch.play()
        _, out, _ = standin.run_cli(["winner", "--run", "r"], self.cwd)
        self.assertIn("files outside .arena/: UNKNOWN (its record fingerprint.json was removed", out)


class Seatbelt(unittest.TestCase):
    """macOS's profile, as text: no macOS machine runs this suite."""

    def test_the_profile_denies_network_and_writes_and_hides_home(self):
        profile = sandbox.seatbelt_profile("/Users/u/p/.arena/r/work/spawn-a001", ["/Users/u/p", "/usr/local"],
                                           "/Users/u")
        lines = profile.splitlines()
        self.assertEqual(lines[:4], ["(version 1)", "(allow default)", "(deny network*)", "(deny file-write*)"])
        self.assertIn('(allow file-write* (subpath "/Users/u/p/.arena/r/work/spawn-a001") (subpath "/dev"))', lines)
        self.assertIn('(deny file-read* (subpath "/Users/u"))', lines)
        self.assertIn('(allow file-read* (subpath "/Users/u/p") (subpath "/Users/u/p/.arena/r/work/spawn-a001"))',
                      lines)
        self.assertEqual(sandbox.seatbelt_profile('/a "b"', [], None).count('"/a \\"b\\""'), 1)

    def test_bubblewrap_gets_the_same_shape(self):
        args = sandbox.bwrap_args("bwrap", "/home/u/p/.arena/r/work/j", ["/home/u/p", "/usr"], "/home/u")
        joined = " ".join(args)
        for part in ("--ro-bind / /", "--unshare-net", "--unshare-pid", "--die-with-parent", "--tmpfs /home/u",
                     "--ro-bind /home/u/p /home/u/p" if os.path.exists("/home/u/p") else "--tmpfs",
                     "--bind /home/u/p/.arena/r/work/j /home/u/p/.arena/r/work/j"):
            self.assertIn(part, joined)
        self.assertLess(joined.index("--tmpfs /home/u"), joined.index("--bind /home/u/p/.arena"))


class PidNamespace(unittest.TestCase):
    """Inside a pid namespace of its own with the outer /proc still mounted (Claude Code
    2.1.332's sandbox), the process watch names the script's processes as exec numbers them:
    the outer numbers would name other processes, or exec's own threads, and a kill sent
    there once killed exec itself."""

    SCRIPT = """
import os, subprocess, sys, time
sys.path.insert(0, %r)
from arena.sandbox import descendants, kill_tree
assert os.readlink("/proc/self") != str(os.getpid()), "not in a pid namespace of its own"
child = subprocess.Popen(["sh", "-c", "sleep 30 & sleep 30 & wait"])
# the shell starts its two sleeps when the machine lets it: wait for them, however long that takes
deadline = time.time() + 50
below = descendants(child.pid)
while len(below) < 2 and time.time() < deadline:
    time.sleep(0.05)
    below = descendants(child.pid)
kill_tree(child.pid)
child.wait()
print(os.getpid(), child.pid, below)
"""

    def test_the_watch_numbers_processes_as_this_namespace_does(self):
        if not sys.platform.startswith("linux") or os.geteuid() != 0 or not shutil.which("unshare"):
            self.skipTest("needs Linux, root and unshare(1) to make a pid namespace without its own /proc")
        engine = os.path.dirname(standin.BRACKET)
        # another sandbox beside it: a pid namespace as deep, whose processes are numbered 1, 2, 3
        # too (the script's child is 2 in its own)
        beside = subprocess.Popen(["unshare", "--pid", "--fork", "sh", "-c", "sleep 60 & sleep 60 & wait"])
        self.addCleanup(lambda: (beside.kill(), beside.wait()))
        deadline = time.time() + 30
        while len(sandbox.descendants(beside.pid)) < 3 and time.time() < deadline:
            time.sleep(0.05)
        self.assertEqual(len(sandbox.descendants(beside.pid)), 3)
        proc = subprocess.run(["unshare", "--pid", "--fork", sys.executable, "-c", self.SCRIPT % engine],
                              capture_output=True, text=True, timeout=60)
        for p in sandbox.descendants(beside.pid):
            try:
                os.kill(p, 9)
            except ProcessLookupError:
                pass  # its namespace's first process went first, and took the rest with it
        self.assertEqual(proc.returncode, 0, proc.stderr)
        own, child, below = proc.stdout.split(" ", 2)
        below = [int(x) for x in re.findall(r"\d+", below)]
        self.assertEqual(own, "1")
        self.assertEqual(len(below), 2, proc.stdout)
        # numbers of this namespace: just after the child's, not the outer ones
        self.assertTrue(all(int(child) < p < int(child) + 50 for p in below), proc.stdout)


class Unit(unittest.TestCase):
    def test_limit_lines(self):
        self.assertEqual(sandbox.limit_hit(1, "Traceback\nMemoryError\n", None, None, 60), "killed: memory limit 2 GiB")
        self.assertEqual(sandbox.limit_hit(1, "OSError: [Errno 27] File too large\n", None, None, 60),
                         "killed: file size limit 256 MiB")
        self.assertEqual(sandbox.limit_hit(-24, "", None, None, 9), "killed: CPU time limit 9 s")
        self.assertEqual(sandbox.limit_hit(1, "OSError: [Errno 24] Too many open files: 'x'\n", None, None, 60),
                         "killed: open files limit 256")
        self.assertIsNone(sandbox.limit_hit(0, "all fine\n", None, None, 60))

    def test_env_names(self):
        self.assertEqual(sandbox.env_names("B,A, B"), ["A", "B"])
        for bad in ("A-B", "1X", "A=1"):
            with self.assertRaises(Exception):
                sandbox.env_names(bad)

    def test_bad_env_names_are_one_line_errors(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "t.md"), "w") as f:
                f.write("x\n")
            for args, words in ((["--run-code", "--run-code-env", "A-B"], "variable names"),
                                (["--run-code-env", "A"], "add --run-code")):
                code, _, err = standin.run_cli(["init", "--agents", "2", "--task-file", "t.md"] + args, d, check=False)
                self.assertEqual(code, 2, err)
                self.assertEqual(len(err.strip().splitlines()), 1, err)
                self.assertIn(words, err)


if __name__ == "__main__":
    unittest.main()
