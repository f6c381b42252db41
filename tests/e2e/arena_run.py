"""Run /arena through the real claude binary against the scripted policy, and measure it.

Shared by tests/test_claude_e2e.py and benchmarks/main_context.py.

    setup = make_setup(tmp)                       # HOME with the skill copied, a work dir
    res, api = play(bin, "/arena --agents 8 --seed 3 Write ...", setup, ArenaPolicy())
    m = analyse(api)                              # roles, jobs, concurrency, main-context sizes
"""

import json
import os
import re
import shutil
import subprocess
import sys

from tests.e2e.arena_policy import role_of, steps
from tests.e2e.fake_api import FakeAPI
from tests.e2e.run_claude import REPO_ROOT, make_home, run, run_claude

SKILL_SRC = os.path.join(REPO_ROOT, "skills", "arena")
TASK = "Write a three-line poem about flaky tests that a tired engineer would pin above their desk."


class Setup:
    def __init__(self, tmp, install="copy", allowed_tools=None):
        """install: "copy" (~/.claude/skills/arena) or "plugin" (marketplace add + install)."""
        self.tmp = tmp
        self.home = make_home(tmp)
        self.cwd = os.path.join(tmp, "work")
        os.makedirs(self.cwd)
        with open(os.path.join(self.cwd, "README.txt"), "w") as f:
            f.write("the user's project; nothing here may change\n")
        self.install = install
        self.skill_dir = None
        if install == "copy":
            self.skill_dir = os.path.join(self.home, ".claude", "skills", "arena")
            shutil.copytree(SKILL_SRC, self.skill_dir, ignore=shutil.ignore_patterns("__pycache__"))
            if allowed_tools is not None:
                set_allowed_tools(os.path.join(self.skill_dir, "SKILL.md"), allowed_tools)
        self.command = "/arena" if install == "copy" else "/arena-skill:arena"

    def install_plugin(self, bin_path, base_url):
        for args in (["plugin", "marketplace", "add", REPO_ROOT], ["plugin", "install", "arena-skill@arena-skill"]):
            r = run(bin_path, args, home=self.home, cwd=self.cwd, base_url=base_url, timeout=60)
            if r.returncode != 0 or r.timed_out:
                raise AssertionError("claude %s failed: %s %s" % (" ".join(args), r.stdout, r.stderr))


def set_allowed_tools(skill_md, line):
    with open(skill_md, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"^allowed-tools:.*$", "allowed-tools: " + line, text, count=1, flags=re.M)
    with open(skill_md, "w", encoding="utf-8") as f:
        f.write(text)


def play(bin_path, prompt, setup, policy, log_dir=None, timeout=240, extra_args=(),
         stop_when=None, api=None, latency=0.0, max_requests=3000, extra_env=None):
    """One `claude -p` session. Pass api= to reuse a running FakeAPI (resume)."""
    own = api is None
    if own:
        api = FakeAPI(policy, log_dir, latency=latency).start()
    try:
        if own and setup.install == "plugin":
            setup.install_plugin(bin_path, api.base_url)
        # a policy error means the script lost the plot: stop rather than loop until the timeout
        stop = lambda: (bool(api.errors) or len(api.requests) > max_requests
                        or bool(stop_when and stop_when(api)))
        res = run_claude(bin_path, prompt, base_url=api.base_url, home=setup.home, cwd=setup.cwd,
                         timeout=timeout, extra_args=list(extra_args), stop_when=stop, extra_env=extra_env)
    finally:
        if own:
            api.stop()
    return res, api


def bracket(setup, *args):
    """bracket.py of the installed skill (or the repo's), run in the work dir."""
    p = subprocess.run([sys.executable, "-S", os.path.join(SKILL_SRC, "bracket.py")] + list(args), cwd=setup.cwd,
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


def max_overlap(intervals):
    ev = sorted([(a, 1) for a, b in intervals] + [(b, -1) for a, b in intervals], key=lambda x: (x[0], x[1]))
    cur = best = 0
    for _, d in ev:
        cur += d
        best = max(best, cur)
    return best


def analyse(api, since=0):
    """What the fake API saw: sub-agent jobs, concurrency, and the main session's growth."""
    jobs, conductors, main = {}, {}, []
    for r in api.messages_requests()[since:]:
        req = r.get("json") or {}
        role, key = role_of(req)
        span = (r["t_start"], r.get("t_end", r["t_start"]))
        if role == "job":
            # one sub-agent call = one first request (no tool results yet); a retry starts a new one
            if not steps(req):
                jobs.setdefault(key, []).append([span[0], span[1]])
            elif key in jobs:
                jobs[key][-1][1] = max(jobs[key][-1][1], span[1])
        elif role == "conductor":
            if not steps(req):
                conductors.setdefault(key, []).append([span[0], span[1]])
            elif key in conductors:
                conductors[key][-1][1] = max(conductors[key][-1][1], span[1])
        elif role == "main":
            main.append(r)
    calls = [iv for ivs in jobs.values() for iv in ivs]
    return {"jobs": jobs, "calls": len(calls), "conductor_calls": sum(len(v) for v in conductors.values()),
            "max_subagents": max_overlap(calls), "main": main_context(main)}


def main_context(main_reqs):
    """Bytes the main session's context grew by, split into arena's text and Claude Code's framing.

    arena:   bracket.py output in Bash results and the Bash commands, Agent call inputs,
             the sub-agents' replies (receipts, conductor lines) inside Agent results,
             the Write of the task file
    framing: everything else the client added (tool_use/tool_result JSON, hand-back
             wrappers, agent ids and usage, reminders, system messages)
    """
    if not main_reqs:
        return {}
    sizes = [r["bytes"] for r in main_reqs]
    last = main_reqs[-1]["json"]
    first_len = len(main_reqs[0]["json"]["messages"])
    added = last["messages"][first_len:]
    total = sum(len(json.dumps(m, ensure_ascii=False).encode()) for m in added)
    arena = {"bash": 0, "agent_inputs": 0, "replies": 0, "other": 0}
    agent_ids, bash_ids = set(), set()
    n_agent = 0
    for m in added:
        if not isinstance(m.get("content"), list):
            continue
        for b in m["content"]:
            if b.get("type") == "tool_use":
                inp = b.get("input") or {}
                if b["name"] == "Bash":
                    arena["bash"] += len(inp.get("command", "").encode())
                    bash_ids.add(b["id"])
                elif b["name"] == "Agent":
                    arena["agent_inputs"] += len(json.dumps(inp, ensure_ascii=False).encode())
                    agent_ids.add(b["id"])
                    n_agent += 1
                else:
                    arena["other"] += len(json.dumps(inp, ensure_ascii=False).encode())
    for m in added:
        if not isinstance(m.get("content"), list):
            continue
        for b in m["content"]:
            if b.get("type") != "tool_result":
                continue
            t = b.get("content")
            t = t if isinstance(t, str) else "\n".join(x.get("text", "") for x in t or [] if isinstance(x, dict))
            if b.get("tool_use_id") in agent_ids:
                arena["replies"] += len(reply_of(t).encode())
            elif b.get("tool_use_id") in bash_ids:
                arena["bash"] += len(t.encode())
    own = sum(arena.values())
    return {"turns": len(main_reqs), "first": sizes[0], "last": sizes[-1], "added": total, "arena": own,
            "arena_parts": arena, "framing": total - own, "agent_calls": n_agent}


def reply_of(result_text):
    """The sub-agent's own reply inside an Agent tool_result (hand-back framing removed)."""
    t = result_text
    m = re.search(r"The report follows:\n(.*?)\nagentId: ", t, re.S)
    if m:
        return "\n".join(line[2:] if line.startswith("  ") else line for line in m.group(1).splitlines())
    return re.split(r"\n?agentId: ", t)[0].strip()


def winner_of(setup):
    code, out = bracket(setup, "winner")
    m = re.search(r"^winner (a\d+) of ", out, re.M)
    return m.group(1) if m else None, out


def tree(top):
    """{relative path: bytes} of everything outside .arena/."""
    files = {}
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if not (dirpath == top and d == ".arena")]
        for name in filenames:
            p = os.path.join(dirpath, name)
            with open(p, "rb") as f:
                files[os.path.relpath(p, top)] = f.read()
    return files


def slow_jobs(fast, slow):
    """Seconds per job: one job in four (by a hash of its id) takes `slow`, the rest `fast`."""
    import hashlib

    def seconds(job):
        return slow if int(hashlib.sha256(job.encode()).hexdigest()[:4], 16) % 4 == 0 else fast
    return seconds


def rolling_run(bin_path, setup, mode, fast, slow, agents=8, wave=3, seed=3, timeout=400):
    """/arena with sub-agents of uneven duration, in lanes (the default) or waves (--waves).
    Returns (analyse(api), wall seconds of the claude session, result, api)."""
    import time
    from tests.e2e.arena_policy import ArenaPolicy
    pol = ArenaPolicy(init_flags="--waves" if mode == "waves" else "", job_seconds=slow_jobs(fast, slow))
    start = time.time()
    res, api = play(bin_path, "/arena --agents %d --seed %d --wave %d %s" % (agents, seed, wave, TASK), setup, pol,
                    timeout=timeout)
    return analyse(api), time.time() - start, res, api
