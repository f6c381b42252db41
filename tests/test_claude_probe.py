"""End-to-end probe: the real Claude Code CLI, offline, against tests/e2e/fake_api.py.

Skipped (with a message) when no claude binary is installed and CI is not set
(under CI a missing binary fails); install them with
`bash .ci/install-claude.sh` (into .tools/claude-code/<version>/) or point CLAUDE_BIN
at one. See tests/e2e/NOTES.md for what these tests rely on.
"""

import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.e2e.arena_run import max_overlap  # noqa: E402
from tests.e2e.fake_api import FakeAPI, first_user_text, system_text, tool_results  # noqa: E402
from tests.e2e.lanes_probe import (BackgroundPolicy, JOB_MARK, LANE_MARK, LanesPolicy, read_claims,  # noqa: E402
                                   write_queue)
from tests.e2e.run_claude import each_version, make_home, require_claude, run, run_claude  # noqa: E402

DEMO_SKILL = """---
name: demo
description: Demo skill that fans out two sub-agents which write files.
allowed-tools: Bash(python3:*) Write Edit Read Agent
---
DEMO-SKILL-BODY. Arguments: $ARGUMENTS
Skill dir: ${CLAUDE_SKILL_DIR}
"""

SUB_MARK = "SUBAGENT-TASK"

# How long a scripted reply waits for the event a test is about before giving up: far
# more than any machine needs, so a wait that runs out means the event never came.
HOLD_SECONDS = 60


def is_sub(req):
    return "cc_is_subagent=true" in system_text(req)[:600]


def make_toy_plugin(root):
    """A tiny plugin + marketplace (source "./") with one skill `demo`."""
    os.makedirs(os.path.join(root, ".claude-plugin"))
    os.makedirs(os.path.join(root, "skills", "demo"))
    with open(os.path.join(root, ".claude-plugin", "plugin.json"), "w") as f:
        json.dump({"name": "toy", "version": "0.1.0", "description": "Toy plugin for probing",
                   "author": {"name": "Tester"}, "license": "MIT"}, f)
    with open(os.path.join(root, ".claude-plugin", "marketplace.json"), "w") as f:
        json.dump({"name": "toy-market", "owner": {"name": "Tester"},
                   "plugins": [{"name": "toy", "source": "./", "description": "Toy plugin"}]}, f)
    with open(os.path.join(root, "skills", "demo", "SKILL.md"), "w") as f:
        f.write(DEMO_SKILL)


class FanOutPolicy:
    """Main session: 2 Agent calls in one message, then a final text.
    Sub-agent (recognised by its request): Write <cwd>/<file>, then "done"."""

    def __init__(self, cwd):
        self.cwd = cwd
        self.roles = []
        self.arrived = set()      # sub-agents whose first request came in
        self.cond = threading.Condition()
        self.met = []             # per first request: whether the other sub-agent's came while it waited

    def __call__(self, req):
        first = first_user_text(req)
        if is_sub(req) and SUB_MARK in first:
            self.roles.append("subagent")
            if not tool_results(req):
                fn = re.search(r"file (\S+\.txt)", first).group(1)
                # each first request waits for the other's: both are in flight at once if and
                # only if the client runs the two Agent calls side by side, however slow it is
                with self.cond:
                    self.arrived.add(fn)
                    self.cond.notify_all()
                    self.met.append(self.cond.wait_for(lambda: len(self.arrived) >= 2, HOLD_SECONDS))
                return [{"type": "tool_use", "name": "Write",
                         "input": {"file_path": os.path.join(self.cwd, fn), "content": "written by " + fn + "\n"}}]
            return [{"type": "text", "text": "done"}]
        users = json.dumps([m for m in req.get("messages", []) if m.get("role") == "user"])
        if "DEMO-SKILL-BODY" in users:
            self.roles.append("main")
            if not tool_results(req, last_only=False):
                return [{"type": "tool_use", "name": "Agent", "input": {
                    "description": "write file %d" % i, "subagent_type": "general-purpose",
                    "prompt": "%s: write file sub%d.txt then reply done" % (SUB_MARK, i),
                    "run_in_background": False}} for i in (1, 2)]
            return [{"type": "text", "text": "FINAL: both sub-agents reported"}]
        self.roles.append("other")
        return [{"type": "text", "text": "ok"}]


class ClaudeSkillFanOut(unittest.TestCase):
    def setUp(self):
        self.bins = require_claude(self)  # skip without claude, fail under CI

    def _run(self, ver, binp):
        tmp = tempfile.mkdtemp(prefix="cc-probe-")
        self.addCleanup(shutil.rmtree, tmp, True)
        home = make_home(tmp)
        cwd = os.path.join(tmp, "work")
        os.makedirs(cwd)
        skill_dir = os.path.join(home, ".claude", "skills", "demo")
        os.makedirs(skill_dir)
        with open(os.path.join(skill_dir, "SKILL.md"), "w") as f:
            f.write(DEMO_SKILL)
        policy = FanOutPolicy(cwd)
        with FakeAPI(policy, os.path.join(tmp, "log"), latency=0.3) as api:
            res = run_claude(binp, "/demo alpha beta", base_url=api.base_url, home=home, cwd=cwd, timeout=60)
        msg = "claude %s rc=%s timed_out=%s\nstdout=%s\nstderr=%s\nerrors=%s" % (
            ver, res.returncode, res.timed_out, res.stdout[-2000:], res.stderr[-2000:], api.errors)
        self.assertFalse(res.timed_out, msg)
        self.assertEqual(res.returncode, 0, msg)
        self.assertEqual(api.errors, [], msg)
        self.assertIn("FINAL: both sub-agents reported", res.stdout, msg)
        for i in (1, 2):
            p = os.path.join(cwd, "sub%d.txt" % i)
            self.assertTrue(os.path.isfile(p), msg)
            with open(p) as f:
                self.assertEqual(f.read(), "written by sub%d.txt\n" % i)
        reqs = api.messages_requests()
        first = reqs[0]["json"]
        # the skill body is inlined with $ARGUMENTS and ${CLAUDE_SKILL_DIR} expanded
        body = json.dumps(first["messages"])
        self.assertIn("<command-name>/demo</command-name>", body)
        self.assertIn("DEMO-SKILL-BODY. Arguments: alpha beta", body)
        self.assertIn("Skill dir: " + skill_dir, body)
        self.assertIn("Agent", [t["name"] for t in first["tools"]])
        self.assertIn("main", policy.roles)
        self.assertGreaterEqual(policy.roles.count("subagent"), 4)  # 2 agents x (Write, done)
        self.assertEqual({r.get("role") for r in reqs} & {"main", "subagent"}, {"main", "subagent"})
        self.assertEqual(policy.arrived, {"sub1.txt", "sub2.txt"}, msg)
        self.assertEqual(set(policy.met), {True}, "the two Agent calls should run concurrently: " + msg)
        self.assertGreaterEqual(api.max_inflight, 2, "the two Agent calls should run concurrently")
        # the main session got both hand-backs, each carrying the sub-agent's "done"
        last_main = [r for r in reqs if r.get("role") == "main"][-1]["json"]
        results = tool_results(last_main)
        self.assertEqual(len(results), 2)
        for tr in results:
            self.assertIn("done", json.dumps(tr["content"]))

    def test_fanout(self):
        def one(ver, binp):
            self._run(ver, binp)
        each_version(self, self.bins, one)


class ClaudePluginCommands(unittest.TestCase):
    def setUp(self):
        self.bins = require_claude(self)

    def _run(self, ver, binp):
        tmp = tempfile.mkdtemp(prefix="cc-plugin-")
        self.addCleanup(shutil.rmtree, tmp, True)
        plugin = os.path.join(tmp, "toy")
        make_toy_plugin(plugin)
        home = make_home(tmp)
        cwd = os.path.join(tmp, "work")
        os.makedirs(cwd)
        # ANTHROPIC_BASE_URL must point somewhere local: without it 2.1.332's
        # marketplace add / install / details wait ~18 s on DNS for api.anthropic.com.
        with FakeAPI(None, os.path.join(tmp, "log")) as api:
            def cc(*args):
                r = run(binp, list(args), home=home, cwd=cwd, base_url=api.base_url, timeout=60)
                self.assertFalse(r.timed_out, "%s timed out" % (args,))
                self.assertEqual(r.returncode, 0, "claude %s: %s\n%s" % (" ".join(args), r.stdout, r.stderr))
                return r.stdout
            out = cc("plugin", "validate", plugin)
            self.assertIn("Validation passed", out)
            out = cc("plugin", "marketplace", "add", plugin)
            self.assertIn("toy-market", out)
            out = cc("plugin", "install", "toy@toy-market")
            self.assertIn("Successfully installed plugin: toy@toy-market", out)
            out = cc("plugin", "list")
            self.assertIn("toy@toy-market", out)
            out = cc("plugin", "details", "toy@toy-market")
            self.assertIn("Skills (1)", out)
            self.assertIn("Always-on:", out)
            self.assertRegex(out, r"demo\s+\S.*\S\s+\S")  # per-component always-on / on-invoke row

            # the installed skill is namespaced /toy:demo
            def pol(req):
                return [{"type": "text", "text": "PLUGIN-SKILL-SEEN"}]
            api.policy = pol
            res = run_claude(binp, "/toy:demo x y", base_url=api.base_url, home=home, cwd=cwd, timeout=60)
            self.assertEqual(res.returncode, 0, res.stderr)
            self.assertIn("PLUGIN-SKILL-SEEN", res.stdout)
            first = api.messages_requests()[-1]["json"]
            body = json.dumps(first["messages"])
            self.assertIn("<command-name>/toy:demo</command-name>", body)
            self.assertIn("DEMO-SKILL-BODY. Arguments: x y", body)

    def test_plugin_commands(self):
        def one(ver, binp):
            self._run(ver, binp)
        each_version(self, self.bins, one)


PROBE_SKILL = """---
name: probe
description: Probe skill for sub-agent scheduling.
allowed-tools: Bash(python3:*) Bash(sleep:*) Write Edit Read Agent
---
PROBE-SKILL-BODY $ARGUMENTS
"""


def probe_setup(test):
    tmp = tempfile.mkdtemp(prefix="cc-lanes-")
    test.addCleanup(shutil.rmtree, tmp, True)
    home = make_home(tmp)
    cwd = os.path.join(tmp, "work")
    os.makedirs(cwd)
    skill = os.path.join(home, ".claude", "skills", "probe")
    os.makedirs(skill)
    with open(os.path.join(skill, "SKILL.md"), "w") as f:
        f.write(PROBE_SKILL)
    return tmp, home, cwd


# whether a version caps the sub-agents of a session at 20 (measured; see tests/e2e/NOTES.md)
CONCURRENCY_CAP = {"2.1.197": False, "2.1.332": True}
SUBAGENT_CAP = 20

JOB_PROMPT = re.compile(JOB_MARK + r" (\S+) sleep ([\d.]+)")
LANE_PROMPT = re.compile(LANE_MARK + r" (\d+)")


class Holding:
    """Mixed in before a lanes_probe policy: a job sub-agent's reply, after its sleep, waits
    until released(job) holds. The waits tie the order of events to what a test asserts, so
    the outcome does not depend on how fast the machine runs the client; a wait that runs
    out (HOLD_SECONDS) is recorded in held_too_long instead of hanging the run."""

    def hold_setup(self):
        self.cond = threading.Condition()
        self.starts = {}          # job -> when its sub-agent's request came in
        self.ends = {}            # job -> when its reply went out
        self.held_too_long = []

    def released(self, job):
        return True

    def __call__(self, req):
        m = JOB_PROMPT.search(first_user_text(req)) if is_sub(req) else None
        if not m:
            out = super().__call__(req)
            with self.cond:
                self.cond.notify_all()  # what the policy just recorded may release a job
            return out
        job = m.group(1)
        t0 = time.time()
        with self.cond:
            self.starts.setdefault(job, t0)
            self.cond.notify_all()
        time.sleep(float(m.group(2)))
        with self.cond:
            if not self.cond.wait_for(lambda: self.released(job), HOLD_SECONDS):
                self.held_too_long.append(job)
            self.ends[job] = time.time()
            self.job_spans[job] = (t0, self.ends[job])
            self.cond.notify_all()
        return [{"type": "text", "text": "done " + job}]


class RefillLanes(Holding, LanesPolicy):
    """The job `held` does not return until a lane has started a job after another job
    (not the held one) returned: with lanes that happens, with waves it never does."""

    def __init__(self, lanes, skill_mark, held):
        LanesPolicy.__init__(self, lanes, skill_mark)
        self.hold_setup()
        self.held = held

    def refilled(self):
        return any(start > end for job, start in self.starts.items() for done, end in self.ends.items()
                   if self.held not in (job, done) and job != done)

    def released(self, job):
        return job != self.held or self.refilled()


class CappedLanes(Holding, LanesPolicy):
    """No job returns until every job of the queue has started or had its Agent call
    refused: all that can run at once does run at once."""

    def __init__(self, lanes, skill_mark, jobs):
        LanesPolicy.__init__(self, lanes, skill_mark)
        self.hold_setup()
        self.jobs = jobs

    def released(self, job):
        return len(self.starts) + len(self.lane_errors) >= self.jobs


def lane_spans(api):
    """[(first request's start, last request's end)] of each lane sub-agent, from the fake's log:
    within the time the client counts it as running."""
    spans = {}
    for r in api.messages_requests():
        req = r.get("json") or {}
        m = LANE_PROMPT.search(first_user_text(req)) if is_sub(req) else None
        if m:
            a, b = spans.get(m.group(1), (r["t_start"], r["t_end"]))
            spans[m.group(1)] = (min(a, r["t_start"]), max(b, r["t_end"]))
    return list(spans.values())


class ClaudeLanes(unittest.TestCase):
    """W lane sub-agents in one message, each looping claim -> one foreground Agent call."""

    def setUp(self):
        self.bins = require_claude(self)

    def lanes(self, binp, policy, jobs):
        tmp, home, cwd = probe_setup(self)
        write_queue(cwd, jobs)
        with FakeAPI(policy, os.path.join(tmp, "log")) as api:
            res = run_claude(binp, "/probe go", base_url=api.base_url, home=home, cwd=cwd, timeout=240)
        msg = "rc=%s timed_out=%s\nstdout=%s\nstderr=%s\nerrors=%s\nheld too long=%s" % (
            res.returncode, res.timed_out, res.stdout[-1500:], res.stderr[-1500:], api.errors[:1],
            policy.held_too_long)
        self.assertFalse(res.timed_out, msg)
        self.assertEqual(res.returncode, 0, msg)
        self.assertEqual(api.errors, [], msg)
        self.assertIn("FINAL: lanes returned", res.stdout, msg)
        return read_claims(cwd), api, msg

    def test_lanes_refill_one_slot_at_a_time(self):
        # one slow job per lane's worth of quick ones: with waves the quick lanes would sit idle
        jobs = [["j%02d" % i, 2.5 if i % 4 == 0 else 0.5] for i in range(12)]
        def one(ver, binp):
            # j00, the first job handed out, stays open until a job has started after another
            # one returned; under waves that never happens while j00 runs
            policy = RefillLanes(3, "PROBE-SKILL-BODY", "j00")
            claims, api, msg = self.lanes(binp, policy, jobs)
            self.assertEqual(sorted(c["job"] for c in claims), [j for j, _ in jobs], msg)
            self.assertEqual(sorted(policy.job_spans), [j for j, _ in jobs], "every job ran once: " + msg)
            self.assertEqual(policy.lane_errors, [], msg)
            self.assertEqual(set(policy.lane_tools.values()), {True}, "lanes are offered Agent: " + msg)
            spans = policy.job_spans
            # never more than the lanes at once
            self.assertLessEqual(max_overlap(list(spans.values())), 3, msg)
            # a lane claims its next job only after its last one returned: each lane is one
            # slot, and the lane itself refills it
            per_lane = {}
            for c in sorted(claims, key=lambda c: c["t"]):
                per_lane.setdefault(c["lane"], []).append(c)
            for lane, got in per_lane.items():
                for prev, nxt in zip(got, got[1:]):
                    self.assertGreater(nxt["t"], spans[prev["job"]][1], "lane %s: %s\n%s" % (lane, got, msg))
            # the slot of a quick job was refilled while the slow j00 still ran: a lane that got
            # a slow job does not hold the others back
            self.assertEqual(policy.held_too_long, [], "no lane refilled while j00 ran: " + msg)
            refills = [j for j, (s, e) in spans.items() if j != "j00" and s < spans["j00"][1] and
                       any(e2 < s for k, (s2, e2) in spans.items() if k not in ("j00", j))]
            self.assertTrue(refills, msg)
        each_version(self, self.bins, one)

    def test_concurrent_limit_counts_lanes_and_jobs(self):
        # 11 lanes + 11 jobs = 22 sub-agents: 2.1.332 refuses past 20, 2.1.197 has no limit
        jobs = [["j%02d" % i, 1.5] for i in range(11)]
        def one(ver, binp):
            # every job is held open until each one has started or been refused, so all the
            # sub-agents the client allows are running at one moment
            policy = CappedLanes(11, "PROBE-SKILL-BODY", len(jobs))
            claims, api, msg = self.lanes(binp, policy, jobs)
            self.assertEqual(policy.held_too_long, [], "some job neither started nor was refused: " + msg)
            self.assertEqual(sorted(c["job"] for c in claims), [j for j, _ in jobs], msg)
            # a refused call is a claimed job that never ran
            self.assertEqual(len(policy.job_spans) + len(policy.lane_errors), len(jobs), msg)
            job_spans = list(policy.job_spans.values())
            subagents = max_overlap(job_spans + lane_spans(api))
            limited = CONCURRENCY_CAP.get(ver)
            if limited is None:
                self.assertLessEqual(max_overlap(job_spans), 11, msg)
            elif limited:
                self.assertTrue(policy.lane_errors, msg)
                self.assertIn("Concurrent subagent limit reached. You can run %d subagents at once." % SUBAGENT_CAP,
                              policy.lane_errors[0], msg)
                # the lanes count: never more than the cap, lanes and jobs together
                self.assertLessEqual(subagents, SUBAGENT_CAP, msg)
            else:
                self.assertEqual(policy.lane_errors, [], msg)
                self.assertEqual(max_overlap(job_spans), 11, msg)
                self.assertEqual(subagents, 22, msg)
        each_version(self, self.bins, one)


class HeldBackground(Holding, BackgroundPolicy):
    """Background jobs that return in an order tied to what the conductor has seen.

    poll: job k (from 0) returns only once the conductor has seen k notifications, so each
          completion can come only after the one before it was told.
    end:  no job returns before the main session has the conductor's hand-back, so every
          completion comes after the conductor ended its turn."""

    def __init__(self, jobs, mode, skill_mark):
        # the conductor polls until it has seen every notification; a poll sleeps 1 s, so
        # this cap outlasts any hold and only ends a run whose notifications never come
        BackgroundPolicy.__init__(self, jobs, mode, skill_mark, polls=HOLD_SECONDS)
        self.hold_setup()
        self.handed_back = False

    def __call__(self, req):
        if not is_sub(req) and tool_results(req, last_only=False):
            self.handed_back = True
        return Holding.__call__(self, req)

    def released(self, job):
        if self.mode == "end":
            return self.handed_back
        k = [j for j, _ in self.jobs].index(job)
        return max(self.conductor_requests, default=0) >= k


class ClaudeBackgroundWakeUps(unittest.TestCase):
    """A conductor sub-agent launching jobs with run_in_background true."""

    def setUp(self):
        self.bins = require_claude(self)

    def conduct(self, binp, mode):
        tmp, home, cwd = probe_setup(self)
        policy = HeldBackground([("j1", 0.5), ("j2", 2), ("j3", 4)], mode, "PROBE-SKILL-BODY")
        with FakeAPI(policy, os.path.join(tmp, "log")) as api:
            res = run_claude(binp, "/probe go", base_url=api.base_url, home=home, cwd=cwd, timeout=240)
        msg = "rc=%s stdout=%s stderr=%s errors=%s requests=%s held too long=%s" % (
            res.returncode, res.stdout[-800:], res.stderr[-800:], api.errors[:1], policy.conductor_requests,
            policy.held_too_long)
        self.assertFalse(res.timed_out, msg)
        self.assertEqual(res.returncode, 0, msg)
        self.assertEqual(api.errors, [], msg)
        self.assertEqual(policy.held_too_long, [], msg)
        self.assertEqual(sorted(policy.job_spans), ["j1", "j2", "j3"], msg)
        for r in policy.launch_results:
            self.assertIn("Async agent launched successfully.", r, msg)
        return policy, res, msg

    def test_a_busy_conductor_is_told_of_each_completion(self):
        def one(ver, binp):
            policy, res, msg = self.conduct(binp, "poll")
            # each completion shows up in the conductor's next request, one at a time
            seen = policy.conductor_requests
            self.assertEqual(seen[-1], 3, msg)
            self.assertEqual(sorted(set(seen)), [0, 1, 2, 3], msg)
            self.assertEqual(policy.main_notices, 0, "the main session saw none: " + msg)
        each_version(self, self.bins, one)

    def test_a_conductor_that_ends_its_turn_hands_the_notices_to_the_main_session(self):
        def one(ver, binp):
            policy, res, msg = self.conduct(binp, "end")
            self.assertEqual(policy.conductor_requests, [0, 0], "the conductor is never woken: " + msg)
            self.assertEqual(policy.main_notices, 3, msg)
        each_version(self, self.bins, one)


if __name__ == "__main__":
    unittest.main()
