"""Locate the pinned Claude Code CLIs and run them offline against a fake API.

    from tests.e2e.run_claude import find_claude_bins, run_claude, make_home
    bins = find_claude_bins()            # {"2.1.197": "/.../claude", ...}
    res = run_claude(bins["2.1.332"], "/demo hi", base_url=api.base_url,
                     home=home, cwd=cwd, timeout=60)
    res.returncode, res.stdout, res.stderr, res.timed_out

Everything has a timeout; a run that overstays is killed (whole process group).
See tests/e2e/NOTES.md for why each environment variable is set.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS_DIR = os.path.join(REPO_ROOT, ".tools", "claude-code")
VERSIONS = ("2.1.197", "2.1.332")


def _ver_key(v: str):
    return tuple(int(x) if x.isdigit() else 0 for x in v.split("."))


def find_claude_bins() -> Dict[str, str]:
    """{version: path} of usable claude binaries.

    CLAUDE_BIN (a path, or several separated by os.pathsep) wins; its version is read
    from `claude --version`. Otherwise every .tools/claude-code/<ver>/node_modules/.bin/claude.
    """
    out: Dict[str, str] = {}
    env_bin = os.environ.get("CLAUDE_BIN")
    if env_bin:
        for p in env_bin.split(os.pathsep):
            if p and os.path.isfile(p) and os.access(p, os.X_OK):
                out[claude_version(p) or p] = p
        return out
    if os.path.isdir(TOOLS_DIR):
        for v in sorted(os.listdir(TOOLS_DIR), key=_ver_key):
            p = os.path.join(TOOLS_DIR, v, "node_modules", ".bin", "claude")
            if os.path.isfile(p) and os.access(p, os.X_OK):
                out[v] = p
    return out


def claude_version(bin_path: str) -> Optional[str]:
    try:
        r = subprocess.run([bin_path, "--version"], capture_output=True, text=True, timeout=60,
                           env=offline_env(tempfile.gettempdir(), None))
        return r.stdout.split()[0] if r.returncode == 0 and r.stdout.strip() else None
    except (OSError, subprocess.TimeoutExpired):
        return None


def offline_env(home: str, base_url: Optional[str], extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """A minimal environment: nothing of the caller's Claude/Anthropic settings leaks in."""
    env = {
        # `python3` in the client's Bash is the interpreter running the tests, found directly
        # (a version manager's shim in front, such as pyenv's, costs ~60 ms a call)
        "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin")]),
        "HOME": home,
        "USER": os.environ.get("USER", "tester"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "SHELL": "/bin/bash",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        "XDG_CONFIG_HOME": os.path.join(home, ".config"),
        "CLAUDE_CONFIG_DIR": os.path.join(home, ".claude"),
        "ANTHROPIC_API_KEY": "dummy",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_BUG_COMMAND": "1",
        "DISABLE_NON_ESSENTIAL_MODEL_CALLS": "1",
        "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
        "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
        "CLAUDE_CODE_ENABLE_TELEMETRY": "0",
        "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
        "CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL": "1",
        "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "0",
        "NO_COLOR": "1",
        "CI": "true",
    }
    if base_url:
        env["ANTHROPIC_BASE_URL"] = base_url
    if extra:
        env.update(extra)
    return env


def make_home(root: Optional[str] = None) -> str:
    """A throwaway HOME with the onboarding already marked done."""
    home = tempfile.mkdtemp(prefix="cc-home-", dir=root)
    os.makedirs(os.path.join(home, ".claude"), exist_ok=True)
    cfg = {
        "hasCompletedOnboarding": True,
        "lastOnboardingVersion": "9.9.9",
        "hasTrustDialogAccepted": True,
        "bypassPermissionsModeAccepted": True,
        "autoUpdates": False,
        "customApiKeyResponses": {"approved": ["dummy"], "rejected": []},
        "numStartups": 5,
    }
    for p in (os.path.join(home, ".claude.json"), os.path.join(home, ".claude", ".claude.json")):
        with open(p, "w") as f:
            json.dump(cfg, f)
    return home


@dataclass
class Result:
    args: List[str]
    returncode: Optional[int]
    stdout: str
    stderr: str
    timed_out: bool
    seconds: float
    env: Dict[str, str] = field(default_factory=dict)

    def json(self):
        """stdout parsed as JSON (for --output-format json)."""
        return json.loads(self.stdout)


def run(bin_path: str, args: Sequence[str], *, home: str, cwd: str, base_url: Optional[str] = None,
        timeout: float = 60, extra_env: Optional[Dict[str, str]] = None, stdin: str = "",
        stop_when: Optional[Callable[[], bool]] = None) -> Result:
    """Run `claude <args>` in its own process group; kill the group on timeout, or as
    soon as stop_when() turns true (polled every 0.1 s: a user pressing Ctrl-C twice)."""
    env = offline_env(home, base_url, extra_env)
    argv = [bin_path, *args]
    t0 = time.time()
    timed_out = False
    if stop_when is not None:
        # poll instead of communicate(); output goes to files so a full pipe cannot block the child
        with tempfile.TemporaryFile("w+") as fo, tempfile.TemporaryFile("w+") as fe:
            p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=fo, stderr=fe,
                                 text=True, start_new_session=True)
            while p.poll() is None and not stop_when():
                if time.time() - t0 > timeout:
                    timed_out = True
                    break
                time.sleep(0.1)
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
            fo.seek(0)
            fe.seek(0)
            out, err = fo.read(), fe.read()
        return Result(argv, p.returncode, out, err, timed_out, time.time() - t0, env)
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            out, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            out, err = "", ""
    return Result(argv, p.returncode, out or "", err or "", timed_out, time.time() - t0, env)


def run_claude(bin_path: str, prompt: str, *, base_url: str, home: str, cwd: str, timeout: float = 60,
               extra_args: Sequence[str] = (), extra_env: Optional[Dict[str, str]] = None,
               output_format: str = "text", stop_when: Optional[Callable[[], bool]] = None) -> Result:
    """`claude -p <prompt>` against the fake API at base_url."""
    args = ["-p", prompt, "--output-format", output_format, *extra_args]
    if output_format == "stream-json":
        args.append("--verbose")
    return run(bin_path, args, home=home, cwd=cwd, base_url=base_url, timeout=timeout, extra_env=extra_env,
               stop_when=stop_when)


SKIP_MSG = ("no claude binary found: run `bash .ci/install-claude.sh` "
            "(installs into .tools/claude-code/<version>/) or set CLAUDE_BIN")


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require_claude(testcase) -> Dict[str, str]:
    """The installed binaries; skip the test when there are none, but fail under CI."""
    bins = find_claude_bins()
    if not bins:
        if in_ci():
            testcase.fail("CI is set but " + SKIP_MSG)
        testcase.skipTest(SKIP_MSG)
    return bins


def side_by_side(testcase, cases: Dict, fn: Callable) -> Dict:
    """fn(*case) for every case at once, one thread each; then each reported as its own subtest.

    cases maps a subtest's parameters (a dict, as a sorted tuple of items) to fn's arguments,
    e.g. {(("version", "2.1.332"),): (ver, binp)}. A run spends its time waiting on its own
    client process and fake API, so the Claude Code versions share the wall clock instead of
    adding to it. Assertions raised in a thread are raised again in its subtest.
    """
    import threading
    results = {}

    def go(key, args):
        try:
            results[key] = (None, fn(*args))
        except BaseException as e:  # noqa: B902 - re-raised below, in the test's own thread
            results[key] = (e, None)
    threads = [threading.Thread(target=go, args=(key, args), daemon=True) for key, args in cases.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for key in cases:
        with testcase.subTest(**dict(key)):
            error, _ = results[key]
            if error is not None:
                raise error
    return {key: value for key, (error, value) in results.items() if error is None}


def each_version(testcase, bins: Dict[str, str], fn: Callable) -> Dict:
    """fn(version, binary) for every Claude Code version side by side (see side_by_side)."""
    return side_by_side(testcase, {(("version", v),): (v, b) for v, b in bins.items()}, fn)


def copy_plugin(dst: str) -> str:
    """The repo as a fresh clone would have it, in dst; returns dst.

    `plugin install` copies the whole marketplace source ("./") into the plugin cache
    (2.1.197 copies it all, .tools/ included: 1.3 GB here), so tests install from a copy
    without the untracked tool and cache folders.
    """
    import shutil
    skip = shutil.ignore_patterns(".tools", ".git", "__pycache__", ".pytest_cache", ".benchmarks", ".arena",
                                  "*.pyc")
    shutil.copytree(REPO_ROOT, dst, ignore=skip)
    return dst
