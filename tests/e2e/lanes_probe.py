"""Scripted roles for probing how Claude Code can keep W sub-agents busy.

Two ways are probed (tests/test_claude_probe.py, findings in tests/e2e/NOTES.md):

- background: a conductor sub-agent launches jobs with `run_in_background: true`
  and tries to learn of each completion (task notifications) while it keeps working,
  or after it ends its turn.
- lanes: the main session starts W lane sub-agents in one message; each lane loops
  `python3 lanectl.py claim LANE` (a tiny file-locked queue standing in for the
  engine), one foreground Agent call for the job it got, then claims again, until
  the queue says NO-MORE.

Job sub-agents sleep (inside the fake API) for the seconds their prompt names, so
their one request spans the job; the intervals come from the fake's log.
"""

import json
import os
import re
import threading
import time

from tests.e2e.fake_api import first_user_text, system_text, tool_results

LANE_MARK = "LANE-PROBE"
JOB_MARK = "JOB-PROBE"
BG_MARK = "BG-CONDUCTOR-PROBE"
NOTICE = "<task-notification>"

# The queue: jobs.json holds [[job, seconds], ...]; claims.jsonl records who took what.
LANECTL = r'''
import fcntl, json, os, sys, time
here = os.path.dirname(os.path.abspath(__file__))
lane = sys.argv[2]
with open(os.path.join(here, "queue.lock"), "w") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    with open(os.path.join(here, "jobs.json")) as f:
        jobs = json.load(f)
    if not jobs:
        print("NO-MORE")
        sys.exit(0)
    job, secs = jobs.pop(0)
    with open(os.path.join(here, "jobs.json"), "w") as f:
        json.dump(jobs, f)
    with open(os.path.join(here, "claims.jsonl"), "a") as f:
        f.write(json.dumps({"lane": lane, "job": job, "t": time.time()}) + "\n")
print("JOB %s %s" % (job, secs))
'''


def write_queue(cwd, jobs):
    with open(os.path.join(cwd, "lanectl.py"), "w") as f:
        f.write(LANECTL)
    with open(os.path.join(cwd, "jobs.json"), "w") as f:
        json.dump(jobs, f)


def read_claims(cwd):
    p = os.path.join(cwd, "claims.jsonl")
    if not os.path.exists(p):
        return []
    with open(p) as f:
        return [json.loads(line) for line in f if line.strip()]


def _sub(req):
    return "cc_is_subagent=true" in system_text(req)[:600]


def _all_text(req):
    out = []
    for m in req.get("messages") or []:
        c = m.get("content")
        if isinstance(c, str):
            out.append(c)
        elif isinstance(c, list):
            for b in c:
                if isinstance(b, dict) and b.get("type") == "text":
                    out.append(b.get("text", ""))
                elif isinstance(b, dict) and b.get("type") == "tool_result":
                    t = b.get("content")
                    out.append(t if isinstance(t, str) else json.dumps(t))
    return "\n".join(out)


def _last_uses(req):
    """tool_use blocks of the last assistant message."""
    for m in reversed(req.get("messages") or []):
        if m.get("role") == "assistant" and isinstance(m.get("content"), list):
            return [b for b in m["content"] if b.get("type") == "tool_use"]
    return []


def _result_text(tr):
    c = tr.get("content")
    if isinstance(c, str):
        return c
    return "\n".join(b.get("text", "") for b in c or [] if isinstance(b, dict))


class LanesPolicy:
    """main: W lane Agent calls in one message; lane: claim / one Agent / claim ...; job: sleep, reply."""

    def __init__(self, lanes, skill_mark):
        self.lanes = lanes
        self.skill_mark = skill_mark
        self.lock = threading.Lock()
        self.job_spans = {}       # job -> (start, end) of the job sub-agent's request
        self.lane_errors = []     # Agent results a lane got back as errors
        self.lane_tools = {}      # lane -> whether its tools included Agent

    def __call__(self, req):
        first = first_user_text(req)
        if _sub(req) and JOB_MARK in first:
            m = re.search(JOB_MARK + r" (\S+) sleep ([\d.]+)", first)
            t0 = time.time()
            time.sleep(float(m.group(2)))
            with self.lock:
                self.job_spans[m.group(1)] = (t0, time.time())
            return [{"type": "text", "text": "done " + m.group(1)}]
        if _sub(req) and LANE_MARK in first:
            return self.lane(req, first)
        if self.skill_mark in _all_text(req):
            if not tool_results(req, last_only=False):
                return [{"type": "tool_use", "name": "Agent", "input": {
                    "description": "lane %d" % i, "subagent_type": "general-purpose",
                    "prompt": "%s %d: loop on `python3 lanectl.py claim %d`" % (LANE_MARK, i, i),
                    "run_in_background": False}} for i in range(1, self.lanes + 1)]
            return [{"type": "text", "text": "FINAL: lanes returned"}]
        return [{"type": "text", "text": "ok"}]

    def lane(self, req, first):
        lane = re.search(LANE_MARK + r" (\d+)", first).group(1)
        with self.lock:
            self.lane_tools[lane] = "Agent" in [t.get("name") for t in req.get("tools") or []]
        cwd = re.search(r"(?:Primary working directory|^Working directory): (\S+)",
                        _all_text(req) + "\n" + system_text(req), re.M).group(1)
        claim = {"type": "tool_use", "name": "Bash", "input": {
            "command": "python3 %s/lanectl.py claim %s" % (cwd, lane), "description": "claim a job"}}
        uses = _last_uses(req)
        if not uses:
            return [claim]
        res = {tr.get("tool_use_id"): tr for tr in tool_results(req)}
        use = uses[0]
        out = _result_text(res.get(use.get("id"), {}))
        if use["name"] == "Agent":
            if res.get(use.get("id"), {}).get("is_error"):
                with self.lock:
                    self.lane_errors.append(out[:300])
            return [claim]
        if "NO-MORE" in out:
            return [{"type": "text", "text": "lane %s over" % lane}]
        m = re.search(r"JOB (\S+) ([\d.]+)", out)
        if not m:
            raise ValueError("lane %s: unexpected claim output %r" % (lane, out[:300]))
        return [{"type": "tool_use", "name": "Agent", "input": {
            "description": "job " + m.group(1), "subagent_type": "general-purpose",
            "prompt": "%s %s sleep %s" % (JOB_MARK, m.group(1), m.group(2)),
            "run_in_background": False}}]


class BackgroundPolicy:
    """main: one foreground conductor. conductor: launches jobs with run_in_background true,
    then either keeps polling with Bash `sleep 1` (mode "poll") or ends its turn at once
    (mode "end"). Records every conductor request and whether it carried task notifications."""

    def __init__(self, jobs, mode, skill_mark, polls=8):
        self.jobs = jobs
        self.mode = mode
        self.polls = polls
        self.skill_mark = skill_mark
        self.lock = threading.Lock()
        self.conductor_requests = []   # number of task notifications visible in each conductor request
        self.main_notices = 0          # max task notifications seen in one main request
        self.job_spans = {}
        self.launch_results = []

    def __call__(self, req):
        first = first_user_text(req)
        if _sub(req) and JOB_MARK in first:
            m = re.search(JOB_MARK + r" (\S+) sleep ([\d.]+)", first)
            t0 = time.time()
            time.sleep(float(m.group(2)))
            with self.lock:
                self.job_spans[m.group(1)] = (t0, time.time())
            return [{"type": "text", "text": "done " + m.group(1)}]
        if _sub(req) and BG_MARK in first:
            return self.conductor(req)
        if self.skill_mark in _all_text(req):
            with self.lock:
                self.main_notices = max(self.main_notices, _all_text(req).count(NOTICE))
            if not tool_results(req, last_only=False):
                return [{"type": "tool_use", "name": "Agent", "input": {
                    "description": "bg conductor", "subagent_type": "general-purpose",
                    "prompt": BG_MARK, "run_in_background": False}}]
            return [{"type": "text", "text": "FINAL: main done"}]
        return [{"type": "text", "text": "ok"}]

    def conductor(self, req):
        text = _all_text(req)
        with self.lock:
            self.conductor_requests.append(text.count(NOTICE))
        uses = _last_uses(req)
        if not uses:
            return [{"type": "tool_use", "name": "Agent", "input": {
                "description": "job " + j, "subagent_type": "general-purpose",
                "prompt": "%s %s sleep %s" % (JOB_MARK, j, s), "run_in_background": True}}
                for j, s in self.jobs]
        if uses[0]["name"] == "Agent":
            with self.lock:
                self.launch_results = [_result_text(tr)[:200] for tr in tool_results(req)]
        polls = sum(1 for m in req.get("messages") or [] if m.get("role") == "assistant"
                    and any(b.get("type") == "tool_use" and b.get("name") == "Bash" for b in m.get("content") or []
                            if isinstance(b, dict)))
        if self.mode == "poll" and polls < self.polls and text.count(NOTICE) < len(self.jobs):
            return [{"type": "tool_use", "name": "Bash", "input": {"command": "sleep 1", "description": "wait"}}]
        return [{"type": "text", "text": "conductor saw %d notifications" % text.count(NOTICE)}]
