"""/arena end to end through the real Claude Code CLI, offline.

The model is tests/e2e/arena_policy.py: a scripted policy, not a language model,
that does only what SKILL.md and the briefs tell each role (main session,
conductor, competitor, judge), deciding from each request alone. The client is
real: slash-command expansion, the skill's allowed-tools in the default
permission mode, the Agent tool, concurrency, files on disk. For every installed
version it checks that a run finishes with one winner, that every sub-agent went
through the Agent tool, that no more than W competitors/judges run at once, that
nothing outside .arena/ changes, and that the winner is the same with a conductor
or without, after the session is killed and continued, and after a conductor is
lost mid-batch. Skipped without a claude binary, except under CI (then it fails).
"""

import json
import os
import re
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.e2e.arena_policy import ArenaPolicy, role_of, steps  # noqa: E402
from tests.e2e.arena_run import TASK, Setup, analyse, bracket, play, rolling_run, tree, winner_of  # noqa: E402
from tests.e2e.fake_api import FakeAPI  # noqa: E402
from tests.e2e.run_claude import each_version, require_claude, run_claude, side_by_side  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "skills", "arena"))
from arena.state import job_model, model_of  # noqa: E402

N, SEED = 8, 3
ARGS = "--agents %d --seed %d %s" % (N, SEED, TASK)
TIMEOUT = 150


def agent_prompts(api):
    """Job ids of every Agent tool_use the main session and the conductors made."""
    seen = set()
    for r in api.messages_requests():
        for m in r["json"].get("messages") or []:
            if m.get("role") == "assistant" and isinstance(m.get("content"), list):
                for b in m["content"]:
                    if b.get("type") == "tool_use" and b.get("name") == "Agent":
                        mm = re.search(r"/b/(\S+)\.md and follow", b["input"].get("prompt", ""))
                        if mm:
                            seen.add(mm.group(1))
    return seen


class ClaudeArenaE2E(unittest.TestCase):
    reference = {}   # version -> winner of the plain conductor run
    lanes_w3 = {}    # version -> winner of the 8-agent run in lanes at W=3 (test_5, test_6)

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="cc-arena-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, True)

    def setUp(self):
        self.bins = require_claude(self)

    def new_setup(self, install="copy"):
        return Setup(tempfile.mkdtemp(dir=self.tmp), install)

    def finished_run(self, ver, setup, res, api, wave=10, resumed=False, full=True):
        """The checks every finished run must pass; returns the winner."""
        msg = "claude %s rc=%s timed_out=%s\nstdout=%s\nstderr=%s\nerrors=%s" % (
            ver, res.returncode, res.timed_out, res.stdout[-1500:], res.stderr[-1500:], api.errors[:1])
        self.assertFalse(res.timed_out, msg)
        self.assertEqual(res.returncode, 0, msg)
        self.assertEqual(api.errors, [], msg)
        winner, wout = winner_of(setup)
        self.assertIsNotNone(winner, wout)
        named = set(re.findall(r"FINAL: winner (a\d+) of ", res.stdout))
        self.assertEqual(named, {winner}, msg)
        code, status = bracket(setup, "status")
        self.assertEqual(code, 0, status)
        self.assertRegex(status.splitlines()[0], r"finished, (\d+)/\1 jobs")
        self.assertIn("alive: 1 (%s)" % winner, status)
        self.assertIn("files outside .arena/: none changed", status)
        total = int(re.search(r"finished, (\d+)/", status).group(1))
        run_dir = os.path.join(setup.cwd, ".arena", re.search(r"^run (\S+): ", status, re.M).group(1))
        briefs = {f[:-3] for f in os.listdir(os.path.join(run_dir, "b"))}
        if not resumed:
            m = analyse(api)
            jobs = m["jobs"]
            # every job ran as a sub-agent started by an Agent call, once: 8 spawns, 5 per match
            # (7 matches), plus the second looks
            self.assertEqual(set(jobs), briefs)
            self.assertEqual(len(jobs), total)
            self.assertTrue(all(len(v) == 1 for v in jobs.values()), jobs)
            kinds = [re.sub(r"^r\d+-m\d+-|-a\d+$", "", j) for j in jobs]
            self.assertEqual(kinds.count("spawn"), N)
            # the bracket's 7 matches, and the checked merge's match when its challenger took something
            with open(os.path.join(run_dir, "state.json"), encoding="utf-8") as f:
                merged = json.load(f)["state"]["merged"] or {}
            match = 1 if merged.get("match") else 0
            self.assertEqual(kinds.count("merge"), 1 if merged else 0)
            self.assertEqual((kinds.count("atk"), kinds.count("def"), kinds.count("judge")),
                             (14 + 2 * match, 14 + 2 * match, 7 + match))
            # every look after a match's first (second looks, and third ones to a majority)
            self.assertEqual(len(jobs), N + 5 * (N - 1) + kinds.count("merge") + 5 * match +
                             sum(1 for k in kinds if re.match(r"judge\d+$", k)))
            self.assertEqual(set(jobs), agent_prompts(api))
            self.assertLessEqual(m["max_subagents"], wave, "more than W competitors/judges at once")
            if full:  # every slot was used at some point (not so when the client refuses calls)
                self.assertGreaterEqual(m["max_subagents"], min(wave, N), "a wave did not run concurrently")
        return winner

    def conductor_run(self, ver, binp):
        setup = self.new_setup()
        before = tree(setup.cwd)
        res, api = play(binp, "/arena " + ARGS, setup, ArenaPolicy(init_flags="--waves"), timeout=TIMEOUT)
        winner = self.finished_run(ver, setup, res, api)
        self.assertEqual(tree(setup.cwd), before, "files outside .arena/ changed")
        m = analyse(api)
        self.assertGreaterEqual(m["conductor_calls"], 1)
        # the main session itself started only conductors
        main_agents = sum(1 for r in m_main_requests(api) for u in last_uses(r) if u["name"] == "Agent")
        self.assertEqual(main_agents, m["conductor_calls"])
        return winner

    def reference_winner(self, ver, binp):
        if ver not in self.reference:
            self.reference[ver] = self.conductor_run(ver, binp)
        return self.reference[ver]

    # The skill copied to ~/.claude/skills/arena, default permission mode (no acceptEdits):
    # the skill's allowed-tools let the main session and its sub-agents write under .arena/.
    def test_1_copied_skill_with_conductor(self):
        def one(ver, binp):
            self.reference_winner(ver, binp)
        each_version(self, self.bins, one)

    # Installed through the marketplace (/arena-skill:arena), direct mode, W=4.
    def test_2_plugin_direct_same_winner(self):
        def one(ver, binp):
            want = self.reference_winner(ver, binp)
            setup = self.new_setup("plugin")
            before = tree(setup.cwd)
            res, api = play(binp, "%s --wave 4 %s" % (setup.command, ARGS), setup, ArenaPolicy(direct=True),
                            timeout=TIMEOUT)
            self.assertIn("<command-name>/arena-skill:arena</command-name>",
                          str(api.messages_requests()[0]["json"]["messages"]))
            self.assertEqual(self.finished_run(ver, setup, res, api, wave=4), want)
            self.assertEqual(tree(setup.cwd), before)
            self.assertEqual(analyse(api)["conductor_calls"], 0)
        each_version(self, self.bins, one)

    # Kill claude mid-run, then a new session: "continue the arena run".
    def test_3_resume_after_kill(self):
        def one(ver, binp):
            want = self.reference_winner(ver, binp)
            setup = self.new_setup()
            pol = ArenaPolicy()
            res, api = play(binp, "/arena " + ARGS, setup, pol, timeout=TIMEOUT,
                            stop_when=lambda api: pol.counts.get("job", 0) >= 80)
            self.assertEqual(res.returncode, -9, "the first session should have been killed mid-run")
            code, status = bracket(setup, "status")
            self.assertNotIn("finished", status.splitlines()[0])
            # A plain prompt does not load the skill: the model must call the Skill tool,
            # which -p refuses unless allowed. 2.1.197 also does not apply the skill's
            # allowed-tools to a Skill-tool invocation, so the user allows them too.
            allow = ["Skill(arena)", "Bash(python3 *bracket.py*)", "Edit(.arena/**)"]
            pol2 = ArenaPolicy()
            res, api = play(binp, "continue the arena run", setup, pol2, timeout=TIMEOUT,
                            extra_args=["--allowedTools"] + allow)
            first = api.messages_requests()[0]["json"]
            self.assertNotIn("Base directory for this skill", str(first["messages"]))
            self.assertIn("- arena: ", str(first["messages"]))  # only the listing
            self.assertEqual(self.finished_run(ver, setup, res, api, resumed=True), want)
            self.assertLess(pol2.counts.get("job", 0), 178, "the resumed run redid finished work")
        each_version(self, self.bins, one)

    # Conductors lost mid-batch, both ways in one run: the one that issued wave 3 replies
    # nonsense, and the one that issued wave 6 has its API call fail (no retries).
    def test_4_conductor_lost_mid_batch(self):
        def one(ver, binp):
            want = self.reference_winner(ver, binp)
            setup = self.new_setup()
            pol = ArenaPolicy(init_flags="--waves", conductor_gives_up=3, conductor_http_error=6)
            res, api = play(binp, "/arena " + ARGS, setup, pol, timeout=TIMEOUT,
                            extra_env={"CLAUDE_CODE_MAX_RETRIES": "0"})
            self.assertEqual(pol.sabotaged, ["gives_up", "http_error"])
            self.assertEqual(self.finished_run(ver, setup, res, api), want)
            self.assertGreaterEqual(analyse(api)["conductor_calls"], 3, "a lost conductor was not replaced")
        each_version(self, self.bins, one)

    # Lanes (the default) against a conductor running waves, with sub-agents that take
    # different times (one job in four 5x slower): the same winner, never more than W
    # sub-agents at once, and the lanes keep all W busy. The two runs share the machine, so
    # their wall clocks say nothing here: benchmarks/rolling_e2e.py measures them alone.
    def test_5_lanes_refill_slots(self):
        ver = sorted(self.bins)[-1]

        def one(mode):
            setup = self.new_setup()
            m, _, res, api = rolling_run(self.bins[ver], setup, mode, fast=0.2, slow=1.0)
            winner = self.finished_run(ver, setup, res, api, wave=3)
            self.assertEqual(m["max_subagents"], 3)
            if mode == "lanes":
                self.assertEqual(m["conductor_calls"], 0)
                self.lanes_w3[ver] = winner
            return winner
        winners = side_by_side(self, {(("mode", mode), ("version", ver)): (mode,) for mode in ("lanes", "waves")}, one)
        self.assertEqual(len(set(winners.values())), 1, winners)

    # A user who lowered 2.1.332's cap on sub-agents at once: lanes and their jobs no longer
    # fit, Claude Code refuses some jobs' Agent calls, those lanes report it (`lane --refused`)
    # and stop; the run still ends with the same winner, every job run once, no try spent.
    def test_6_refused_agent_calls(self):
        ver = sorted(self.bins)[-1]
        if ver != "2.1.332":
            self.skipTest("the sub-agent cap was measured in 2.1.332 only")
        setup = self.new_setup()
        res, api = play(self.bins[ver], "/arena --agents 8 --seed 3 --wave 3 " + TASK, setup, ArenaPolicy(),
                        timeout=TIMEOUT, extra_env={"CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS": "4"})
        winner = self.finished_run(ver, setup, res, api, wave=3, full=False)
        refused = 0
        for path in os.listdir(os.path.join(setup.cwd, ".arena")):
            journal = os.path.join(setup.cwd, ".arena", path, "journal.jsonl")
            if os.path.exists(journal):
                with open(journal) as f:
                    refused += sum(1 for line in f if '"never_ran":true' in line)
        self.assertGreaterEqual(refused, 1, "no Agent call was refused: the cap did not bite")
        self.assertEqual(self.lanes_winner(ver), winner)

    # A mixed field (--models): the client sends every competitor job's requests to that
    # competitor's model, as the Agent call named it (through a lane), and the judges' to
    # the session's own model; the stand-ins play by the model they were sent to.
    def test_7_mixed_field_reaches_the_api_by_model(self):
        def one(ver, binp):
            setup = self.new_setup()
            res, api = play(binp, "/arena --agents 8 --seed 3 --wave 3 " + TASK, setup,
                            ArenaPolicy(init_flags="--models opus,haiku", model_edge=True), timeout=TIMEOUT)
            self.finished_run(ver, setup, res, api, wave=3)
            run_dir = os.path.join(setup.cwd, ".arena", re.search(r"^run (\S+): ", bracket(setup, "status")[1],
                                                                  re.M).group(1))
            with open(os.path.join(run_dir, "state.json"), encoding="utf-8") as f:
                st = json.load(f)["state"]
            self.assertEqual(sorted({model_of(st, a) for a in st["cards"]}), ["haiku", "opus"])
            session = [r["json"].get("model") for r in m_main_requests(api)]
            self.assertEqual(len(set(session)), 1, session)
            seen = {}
            for r in api.messages_requests():
                role, job = role_of(r["json"])
                if role == "job":
                    seen.setdefault(job, set()).add(r["json"].get("model"))
            self.assertEqual(set(seen), set(st["jobs"]))
            for job, models in sorted(seen.items()):
                self.assertEqual(len(models), 1, (job, models))
                sent = models.pop()
                want = job_model(st, job)
                if want:
                    self.assertIn(want, sent.lower(), job)
                else:
                    self.assertEqual(sent, session[0], job)
            # both models played, and the judges never ran on a competitor's model by mistake
            competitor = {job_model(st, j) for j in seen if job_model(st, j)}
            self.assertEqual(competitor, {"opus", "haiku"})
        each_version(self, self.bins, one)

    def lanes_winner(self, ver):
        """The winner of the same run with no cap: test_5's lanes run, or one played now."""
        if ver not in self.lanes_w3:
            setup = self.new_setup()
            res, api = play(self.bins[ver], "/arena --agents 8 --seed 3 --wave 3 " + TASK, setup, ArenaPolicy(),
                            timeout=TIMEOUT)
            self.lanes_w3[ver] = self.finished_run(ver, setup, res, api, wave=3)
        return self.lanes_w3[ver]


def m_main_requests(api):
    return [r for r in api.messages_requests() if role_of(r["json"])[0] == "main"]


def last_uses(r):
    """The tool_uses of the reply the fake gave to this request."""
    return [b for b in r.get("reply") or [] if isinstance(b, dict) and b.get("type") == "tool_use"]


class AllowedToolsAreNarrow(unittest.TestCase):
    """The skill's allowed-tools (SKILL.md) let bracket.py and writes under .arena/ through,
    in the main session and in sub-agents, and nothing else."""

    def setUp(self):
        self.bins = require_claude(self)

    def test_grant(self):
        def one(ver, binp):
            tmp = tempfile.mkdtemp(prefix="cc-grant-")
            self.addCleanup(shutil.rmtree, tmp, True)
            setup = Setup(tmp)
            b = 'python3 -S "%s/bracket.py"' % setup.skill_dir
            cwd = setup.cwd

            def probe(prefix):
                return [
                    {"type": "tool_use", "name": "Write", "input": {"file_path": cwd + "/.arena/%s-in.txt" % prefix, "content": "x"}},
                    {"type": "tool_use", "name": "Write", "input": {"file_path": cwd + "/%s-out.txt" % prefix, "content": "x"}},
                    {"type": "tool_use", "name": "Bash", "input": {"command": b + " plan --agents 2"}},
                    {"type": "tool_use", "name": "Bash", "input": {"command": "python3 -c \"open('%s-py.txt','w')\"" % prefix}},
                    {"type": "tool_use", "name": "Bash", "input": {"command": "touch %s-touch.txt" % prefix}},
                ]

            def policy(req):
                sub = role_of(req)[0] != "main"
                done = steps(req)
                if sub:
                    return probe("sub") if not done else [{"type": "text", "text": "probed"}]
                if not done:
                    return probe("main")
                if len(done) == 1:
                    return [{"type": "tool_use", "name": "Agent", "input": {
                        "description": "probe", "prompt": "probe the grant", "subagent_type": "general-purpose",
                        "run_in_background": False}}]
                return [{"type": "text", "text": "FINAL"}]

            os.makedirs(os.path.join(cwd, ".arena"))
            with FakeAPI(policy) as api:
                res = run_claude(binp, "/arena --agents 2 probe", base_url=api.base_url, home=setup.home,
                                 cwd=cwd, timeout=60)
            self.assertEqual(res.returncode, 0, res.stderr)
            self.assertEqual(api.errors, [])
            for who in ("main", "sub"):
                self.assertTrue(os.path.exists(os.path.join(cwd, ".arena", who + "-in.txt")), who)
                for stray in ("-out.txt", "-py.txt", "-touch.txt"):
                    self.assertFalse(os.path.exists(os.path.join(cwd, who + stray)), who + stray)
            plan_ok = [r for r in api.messages_requests() if "sub-agent calls" in str(r["json"]["messages"])]
            self.assertTrue(plan_ok, "bracket.py plan did not run")
        each_version(self, self.bins, one)


if __name__ == "__main__":
    unittest.main()
