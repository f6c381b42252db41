"""Spend measured and capped: the floor, caps that are never exceeded, usage reports, plan and init.

The floor (budget.floor_calls) is checked against every state small runs can reach: from each,
a run whose first looks all find the two equivalent finishes in exactly the floor, no run
needs fewer, and with the cap set to what was spent plus the floor, any run finishes there.
Whole scripted runs under caps, with outputs refused on the way, never go over and always end
with a winner.
"""

import json
import os
import random
import unittest

import standin
from standin import Orchestrator, StandIn, card, init_run, run_cli, run_here, state_of
from arena import budget
from arena.base import MOST_LOOKS
from arena.estimate import least_calls, per_call
from arena.jobs import ISSUED, READY, job_kind
from arena.state import apply, deps_done, finished, find_match, new_state, round_done

SIZES = [15, 12, 12]
EACH = per_call(10)


def init_event(n, baseline=False, max_calls=None, wave=10, seed=1):
    return {"e": "init", "seq": 1, "run": "b", "agents": n, "seed": seed, "wave": wave, "at": 0.0,
            "fence": "F", "baseline": baseline, "recheck": 4, "final_judges": 1, "pack": True, "batch_waves": 10,
            "mode": "direct", "sizes": SIZES, "pairing": "rated", "most_looks": list(MOST_LOOKS),
            "per_call": EACH, "max_calls": max_calls, "max_tokens": None}


def fresh(ev):
    st = new_state(ev, tuple(ev["sizes"]))
    st["seq"] = 1
    return st


def put(st, ev):
    ev["seq"] = st["seq"] + 1
    apply(st, ev)


def output(st, job, verdict):
    """A well-formed output summary of job; verdict: 'eq', 'a', 'b' or 'close' for judges."""
    kind = job_kind(job)
    if kind == "spawn":
        return {"sol": "out/%s.md" % job}
    if kind == "atk":
        return {"labels": ""}
    if kind == "def":
        return {"ans": "", "sol": "out/%s-sol.md" % job}
    if kind == "final":
        return {"sc": {"winner": card(70), "baseline": card(60)}, "fat": {"winner": False, "baseline": False},
                "conf": "high"}
    m = find_match(st, "-".join(job.split("-")[:2]))
    if verdict == "least":
        # the fewest looks: a first look that finds the two equivalent; a later one agreeing with the first
        first = st["summ"].get(m["id"] + "-judge")
        verdict = "eq" if not first else "a" if sum(first["sc"][m["a"]]) >= sum(first["sc"][m["b"]]) else "b"
    ta, tb = {"eq": (70, 70), "a": (80, 50), "b": (50, 80), "close": (70, 68)}[verdict]
    v = {"sc": {m["a"]: card(ta), m["b"]: card(tb)}, "fat": {m["a"]: False, m["b"]: False}, "conf": "high"}
    if verdict == "eq":
        v["eq"] = True
    return v


def outcomes(st):
    """{match: the ways its looks came back, in any order}: what of the verdicts decides the rest."""
    found = {}
    for job, v in st["summ"].items():
        if "sc" in v and "-judge" in job:
            m = find_match(st, "-".join(job.split("-")[:2]))
            found.setdefault(m["id"], []).append("eq" if v.get("eq") else max(v["sc"], key=lambda a: sum(v["sc"][a])))
    return {mid: sorted(x) for mid, x in found.items()}


def ready(st):
    return sorted(j for j, i in st["jobs"].items() if i["s"] == READY and deps_done(st, j))


def step(st, choose):
    """One event of a run: advance a finished round, or hand out a ready job, or bring one back.
    choose(options) picks among the possible events; returns False when the run is over."""
    if finished(st):
        return False
    if round_done(st) and st["champion"] is None:
        put(st, {"e": "advance", "round": len(st["rounds"])})
        return True
    options = [("issue", j) for j in ready(st)]
    options += [("done", j) for j, i in sorted(st["jobs"].items()) if i["s"] == ISSUED]
    options += [("fail", j) for j, i in sorted(st["jobs"].items()) if i["s"] == ISSUED]
    what, job, verdict = choose(st, options)
    if what == "issue":
        put(st, {"e": "issue", "jobs": [job], "at": 0.0, "labels": {}, "wave": len(st["waves"]) + 1})
    elif what == "done":
        put(st, {"e": "done", "job": job, "out": output(st, job, verdict), "at": 1.0})
    else:
        put(st, {"e": "fail", "job": job, "why": "refused", "at": 1.0})
    return True


def finish(st, verdict="eq", fail=0.0, rng=None):
    """Play st to the end with every job succeeding (or, with fail > 0, failing that often);
    returns the calls handed out on the way."""
    before = budget.spent_calls(st)

    def choose(st, options):
        issue = [o for o in options if o[0] == "issue"]
        if issue:
            return issue[0] + (None,)
        back = [o for o in options if o[0] == "done"]
        job = back[0][1]
        if rng and rng.random() < fail:
            return ("fail", job, None)
        pick = verdict if verdict != "random" else rng.choice(["eq", "a", "b", "close"])
        return ("done", job, pick)
    while step(st, choose):
        pass
    return budget.spent_calls(st) - before


def copy(st):
    return json.loads(json.dumps(st))


class Floor(unittest.TestCase):
    def reachable(self, n, baseline, failures, limit=10 ** 6):
        """Every state a run of n agents can reach with at most `failures` refused outputs in it
        (a first solution refused twice forfeits), every look coming back equivalent or for either
        side. The order jobs go out and come back in changes no count: every ready job is handed
        out together and the first one out comes back, in each way it can, before the next."""
        seen, frontier, states = set(), [(fresh(init_event(n, baseline)), failures)], []
        while frontier and len(states) < limit:
            st, left = frontier.pop()
            # states that differ only in their bookkeeping (wave numbers, event count) are one
            key = json.dumps([{k: st[k] for k in ("jobs", "results", "rounds", "sol", "champion", "final", "manual",
                                                  "out")}, outcomes(st), left], sort_keys=True)
            if key in seen:
                continue
            seen.add(key)
            states.append(st)
            if finished(st):
                continue
            if round_done(st) and st["champion"] is None:
                nxt = copy(st)
                put(nxt, {"e": "advance", "round": len(nxt["rounds"])})
                frontier.append((nxt, left))
                continue
            if ready(st):
                nxt = copy(st)
                put(nxt, {"e": "issue", "jobs": ready(st), "at": 0.0, "labels": {}, "wave": len(nxt["waves"]) + 1})
                frontier.append((nxt, left))
                continue
            job = [j for j, i in sorted(st["jobs"].items()) if i["s"] == ISSUED][0]
            # a close look and a decisive one differ only in rounds too big to judge twice in half a
            # wave, which small runs do not have
            for verdict in (["eq", "a", "b"] if job_kind(job) == "judge" else [None]):
                nxt = copy(st)
                put(nxt, {"e": "done", "job": job, "out": output(nxt, job, verdict), "at": 1.0})
                frontier.append((nxt, left))
            if left:
                nxt = copy(st)
                put(nxt, {"e": "fail", "job": job, "why": "refused", "at": 1.0})
                frontier.append((nxt, left - 1))
        return states, not frontier

    def test_the_floor_is_exact_in_every_reachable_state(self):
        checked = 0
        for n, baseline, failures in ((1, True, 2), (2, False, 2), (2, True, 1), (3, False, 1), (3, True, 0)):
            states, complete = self.reachable(n, baseline, failures)
            self.assertTrue(complete, "the states of %d agents were not all reached" % n)
            for st in states:
                floor = budget.floor_calls(st)
                if finished(st):
                    self.assertEqual(floor, 0)
                    continue
                # capped at what was spent plus the floor, the run ends there with a winner, whatever
                # the looks say: every required call made, every optional one left out
                for verdict in ("least", "random"):
                    capped = copy(st)
                    capped["max_calls"] = budget.spent_calls(capped) + floor
                    got = finish(capped, verdict, rng=random.Random(st["seq"]))
                    self.assertEqual(got, floor, (n, baseline, st["seq"], verdict))
                    self.assertIsNotNone(capped["champion"])
                # and no run from here needs fewer
                self.assertGreaterEqual(finish(copy(st), "random", rng=random.Random(st["seq"] + 1)), floor)
                checked += 1
        self.assertGreater(checked, 20000)

    def test_a_fresh_run_needs_the_plan_s_least_calls(self):
        for n in (1, 2, 3, 7, 16, 100):
            for baseline in (False, True):
                self.assertEqual(budget.floor_calls(fresh(init_event(n, baseline))), least_calls(n, baseline), n)


class Caps(unittest.TestCase):
    def capped_run(self, n, cap, seed, baseline=False, misbehave=None, tokens=None):
        extra = ["--max-calls", str(cap)] if cap else []
        extra += ["--max-tokens", str(tokens)] if tokens else []
        if baseline:
            extra += ["--baseline-file", "task.md"]
        cwd = init_run(self, n, seed, "--direct", *extra, run="t")
        agent = StandIn(cwd, seed=seed, misbehave=misbehave)
        Orchestrator(cwd, agent, "t", runner=run_here).play()
        return cwd, state_of(cwd, "t"), agent

    def test_a_run_never_exceeds_its_cap_and_ends_with_a_winner(self):
        for n, baseline in ((8, True), (16, False)):
            least = least_calls(n, baseline)
            for cap in (least, least + 3, least + 12):
                for seed in (1, 2):
                    cwd, st, agent = self.capped_run(n, cap, seed, baseline,
                                                     misbehave={"spawn-a002": "empty", "spawn-a005": "missing"})
                    self.assertIsNotNone(st["champion"])
                    self.assertLessEqual(len(agent.calls), cap, (n, cap, seed))
                    self.assertEqual(budget.spent_calls(st), len(agent.calls))
                    if cap == least:
                        self.assertTrue(st["cuts"], "a cap at the floor leaves something out")
                    _, out, _ = run_cli(["status", "--run", "t"], cwd)
                    self.assertIn("budget: at most %d calls (--max-calls): %d spent" % (cap, len(agent.calls)), out)

    def test_a_token_cap_keeps_the_estimate_under_it(self):
        each = per_call(len("Name three prime numbers.\n") // 4)
        least = sum(each[k][2] * c for k, c in (("spawn", 8), ("atk", 14), ("def", 14), ("judge", 7)))
        cwd, st, agent = self.capped_run(8, None, 3, tokens=least + 200000)
        self.assertIsNotNone(st["champion"])
        self.assertLessEqual(budget.spent_tokens(st), least + 200000)
        self.assertTrue(st["cuts"])

    def test_skipped_work_is_said_once_in_next_and_always_in_status(self):
        cwd = init_run(self, 4, 2, "--direct", "--max-calls", str(least_calls(4)), run="t")
        agent = StandIn(cwd, seed=2)
        orch = Orchestrator(cwd, agent, "t", runner=run_here)
        orch.play()
        said = [line for out in orch.outputs for line in out.splitlines() if line.startswith("left out: ")]
        st = state_of(cwd, "t")
        self.assertEqual(said, ["left out: " + c for c in st["cuts"]])
        self.assertEqual(st["cuts_shown"], len(st["cuts"]))
        _, out, _ = run_cli(["status", "--run", "t"], cwd)
        for c in st["cuts"]:
            self.assertIn("  " + c, out)

    def test_init_refuses_a_cap_below_the_floor_and_says_what_fits(self):
        cwd = init_run(self, 2, 1, run="x")
        code, out, err = run_cli(["init", "--agents", "100", "--max-calls", "300", "--task-file", "task.md"], cwd,
                                 check=False)
        self.assertEqual((code, out), (2, ""))
        self.assertIn("at most 50 agents fit (295 calls)", err)
        self.assertEqual(err.count("\n"), 1)
        _, out, _ = run_cli(["plan", "--agents", "100", "--max-calls", "300"], cwd)
        self.assertIn("at most 50 agents fit (295 calls)", out)
        _, out, _ = run_cli(["plan", "--agents", "100", "--max-calls", "620"], cwd)
        self.assertIn("the bracket's 595 fit; of the about 46 later looks about 25 fit", out)
        code, _, err = run_cli(["plan", "--max-tokens", "lots"], cwd, check=False)
        self.assertEqual(code, 2)


class Usage(unittest.TestCase):
    def test_usage_passed_with_the_receipt_is_journaled_and_shown(self):
        cwd = init_run(self, 2, 1, run="t")
        agent = StandIn(cwd, seed=1)
        _, out, _ = run_here(["next", "--run", "t"], cwd)
        lanes = [line.split("= ")[1].split() for line in out.splitlines() if line.startswith("<n> = ")][0]
        reported = 0
        for _ in range(60):
            live = False
            for lane in lanes:
                args = ["lane", "--run", "t", "--lane", lane, "--wait", "0"]
                st = state_of(cwd, "t")
                mine = [j for j, i in st["jobs"].items() if i["s"] == ISSUED and i.get("ln") == lane]
                if mine:
                    args += ["--used", "subagent_tokens: 20000\ntool_uses: 3\nduration_ms: 4000"]
                    reported += 1
                _, got, _ = run_here(args, cwd)
                if "LANE OVER" in got:
                    continue
                live = True
                if "make this one Agent call" in got:
                    prompt = got.split('prompt "')[1].split('"')[0]
                    agent({"prompt": prompt})
            if not live:
                break
        st = state_of(cwd, "t")
        rows = [v for k, v in st["spend"].items() if k not in budget.ORCHESTRATION]
        self.assertEqual(sum(r["rep"] for r in rows), reported)
        self.assertEqual(sum(r["tools"] for r in rows), 3 * reported)
        self.assertEqual(sum(r["ms"] for r in rows), 4000 * reported)
        with open(os.path.join(cwd, ".arena", "t", "journal.jsonl")) as f:
            events = [json.loads(line) for line in f]
        self.assertEqual(sum(1 for ev in events if ev.get("used") == [20000, 3, 4000]), reported)
        _, out, _ = run_cli(["status", "--run", "t"], cwd)
        self.assertEqual(reported, budget.spent_calls(st), "every call's usage was passed on")
        self.assertIn("all %d from Claude Code's usage reports" % reported, out)

    def test_reported_tokens_replace_the_estimate_call_for_call(self):
        # a whole run whose every call reports a context far below the assumed size: the spend
        # must be the sum of the reports, never drift below it (nor below zero), job for job
        cwd = init_run(self, 16, 2, run="t")
        Orchestrator(cwd, StandIn(cwd, seed=2), "t", usage=True).play()
        st = state_of(cwd, "t")
        with open(os.path.join(cwd, ".arena", "t", "journal.jsonl")) as f:
            events = [json.loads(line) for line in f]
        want = {}
        for ev in events:
            if ev.get("e") in ("done", "fail") and ev.get("used"):
                kind = job_kind(ev["job"])
                want[kind] = want.get(kind, 0) + budget.reported_tokens(st, kind, ev["used"])
        for kind, total in want.items():
            self.assertEqual(st["spend"][kind]["rep"], st["spend"][kind]["calls"], kind)
            self.assertEqual(st["spend"][kind]["tok"], total, kind)
            self.assertGreater(budget.call_tokens(st, kind), 0, kind)
        self.assertNotIn("about -", run_cli(["winner", "--run", "t"], cwd)[1])

    def test_a_usage_report_that_is_not_one_is_refused(self):
        cwd = init_run(self, 2, 1, "--direct", run="t")
        code, _, err = run_cli(["next", "--run", "t", "--used", "spawn-a001=lots"], cwd, check=False)
        self.assertEqual(code, 2)
        self.assertIn("is not a usage report", err)


if __name__ == "__main__":
    unittest.main()
