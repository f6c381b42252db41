"""The early look at the field: with many agents, the first solutions decide whether the rest
are written.

A run of N >= 2K agents (K = max(2W, 8)) hands out its first K spawns and holds the others;
with --run-code a probe groups those K by decided behaviour, without it their round-1 matches
are judged. Most of them alike is an offer: finish stops spawning and plays the bracket among
the solutions written (round 1 paired again where an opponent was withdrawn), continue writes
the whole field. Each test drives the real command line with the stand-ins.
"""

import json
import os
import unittest

import checker
import standin
from standin import Orchestrator, StandIn, init_run, run_here, state_of
from arena.jobs import READY, spawn_id
from arena.state import entered, field_look_for, field_look_size, withdraw


def play(test, n, seed, *extra, answer=("finish", "continue"), **agent_args):
    cwd = init_run(test, n, seed, "--direct", "--wave", "4", *extra, run="f")
    agent = StandIn(cwd, seed=seed, **agent_args)
    orch = Orchestrator(cwd, agent, "f", wave=4, runner=run_here)
    orch.settle_answer = list(answer) if not isinstance(answer, str) else answer
    orch.play()
    return cwd, agent, orch, state_of(cwd, "f")


class WhenItComes(unittest.TestCase):
    def test_the_look_waits_for_two_waves_and_needs_twice_that_many_agents(self):
        self.assertEqual([field_look_size(w) for w in (1, 4, 10)], [8, 8, 20])
        self.assertEqual(field_look_for(32, 4, "ask"), 8)
        self.assertEqual(field_look_for(15, 4, "ask"), None, "8 of 15 would save too little")
        self.assertEqual(field_look_for(16, 4, "auto"), 8)
        self.assertEqual(field_look_for(100, 10, "never"), None)

    def test_plan_says_when_it_comes(self):
        _, out, _ = run_here(["plan", "--agents", "32", "--wave", "4", "--run-code"], ".")
        self.assertIn("early look at the field: after the first 8 solutions (the other 24 wait), a probe runs them",
                      out)
        _, out, _ = run_here(["plan", "--agents", "32", "--wave", "4", "--settle", "never"], ".")
        self.assertIn("early look at the field: none; --settle never", out)


class ProbeOffer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.test = unittest.TestCase()
        cls.cwd, cls.agent, cls.orch, cls.st = play(cls.test, 32, 3, "--run-code", equal=True, run_code=True,
                                                    checks=False)

    @classmethod
    def tearDownClass(cls):
        cls.test.doCleanups()

    def test_only_the_first_k_spawns_ran_then_the_probe_first(self):
        spawns = [j for j in self.agent.calls if j.startswith("spawn-")]
        self.assertEqual(len(spawns), 8)
        first_after = self.agent.calls[len(spawns):][0] if self.agent.calls[8:] else None
        self.assertEqual(self.agent.calls.index("probe-r0") >= 8, True)
        self.assertIn("probe-r0", self.agent.calls)
        # the probe went out in the first wave after the eighth spawn came back
        waves = self.orch.waves
        at = next(i for i, w in enumerate(waves) if "probe-r0" in w)
        self.assertEqual(sum(1 for w in waves[:at] for j in w if j.startswith("spawn-")), 8)
        self.assertTrue(first_after)

    def test_the_offer_names_the_evidence_and_the_cost_of_the_rest(self):
        offer = self.orch.offers[0]
        self.assertIn("The field looks settled before it is written: a probe ran the first 8 solutions", offer)
        self.assertIn("Writing the other 24 solutions and playing their matches would still cost about", offer)
        self.assertIn("settle continue --run f | settle finish --run f", offer)

    def test_finish_withdraws_the_rest_and_plays_the_bracket_among_those_written(self):
        st = self.st
        self.assertEqual(len(st["field"]["withdrawn"]), 24)
        self.assertEqual(entered(st), 8)
        self.assertTrue(all(st["out"][a] == 0 for a in st["field"]["withdrawn"]))
        self.assertTrue(all(st["jobs"][spawn_id(a)]["s"] == "cancelled" for a in st["field"]["withdrawn"]))
        r1 = st["rounds"][0]
        self.assertEqual(sorted(a for m in r1["matches"] for a in (m["a"], m["b"])), sorted(st["field"]["agents"]))
        self.assertEqual(len(st["results"]) - (1 if st["merged"] and st["merged"].get("match") else 0), 7)
        self.assertIsNotNone(st["champion"])

    def test_winner_the_report_and_the_checker_agree(self):
        _, text, _ = run_here(["winner", "--run", "f", "--report"], self.cwd)
        self.assertIn("spawning stopped after the first 8 solutions: a probe ran the first 8 solutions", text)
        self.assertIn("24 agents withdrawn, the bracket played among the 8 written", text)
        checker.check_run(self, self.cwd, "f", self.st, text.split("report: ")[0])
        with open(os.path.join(self.cwd, ".arena", "f", "report.html"), encoding="utf-8") as f:
            page = f.read()
        self.assertIn("withdrawn: spawning stopped before its solution", page)
        self.assertIn("8 of 32 (the rest withdrawn)", page)

    def test_the_spend_is_the_bracket_of_eight(self):
        # 8 spawns, the probe, 7 matches of 5 calls at least, the merge and its match at most
        spent = len(self.agent.calls)
        self.assertGreaterEqual(spent, 8 + 1 + 7 * 5)
        self.assertLess(spent, 100)
        _, out, _ = run_here(["status", "--run", "f"], self.cwd)
        self.assertIn("%d/%d jobs" % (spent, spent), out)


class OtherAnswers(unittest.TestCase):
    def test_continue_writes_the_whole_field(self):
        cwd, agent, orch, st = play(self, 16, 3, "--run-code", answer="continue", equal=True, run_code=True,
                                    checks=False)
        self.assertEqual(len(orch.offers) >= 1, True)
        self.assertEqual(st["field"]["choice"], "continue")
        self.assertEqual(sum(1 for j in agent.calls if j.startswith("spawn-")), 16)
        _, text, _ = run_here(["winner", "--run", "f"], cwd)
        self.assertIn("early look at the first 8 solutions: a probe ran", text)
        self.assertIn("settle continue: the whole field was written", text)
        checker.check_run(self, cwd, "f", st, text)

    def test_a_field_that_differs_makes_no_offer_and_the_spawns_go_on(self):
        cwd, agent, orch, st = play(self, 16, 3, "--run-code", run_code=True, checks=False)
        self.assertEqual(st["field"]["choice"], "no offer")
        self.assertIn("none shared by most", st["field"]["why"])
        self.assertFalse(any("before it is written" in o for o in orch.offers))
        self.assertEqual(sum(1 for j in agent.calls if j.startswith("spawn-")), 16)

    def test_auto_stops_spawning_without_asking(self):
        cwd, agent, orch, st = play(self, 16, 5, "--run-code", "--settle", "auto", equal=True, run_code=True,
                                    checks=False)
        self.assertEqual(st["field"]["choice"], "finish")
        self.assertFalse(any("before it is written" in o for o in orch.offers))
        self.assertEqual(sum(1 for j in agent.calls if j.startswith("spawn-")), 8)

    def test_without_run_code_the_matches_among_the_first_solutions_are_the_evidence(self):
        cwd, agent, orch, st = play(self, 16, 4, equal=True)
        self.assertEqual(st["field"]["how"], "matches")
        self.assertEqual(len(st["field"]["matches"]), 4)
        self.assertIn("of the 4 round-1 matches among the first 8 solutions that a judge decided ended equal",
                      st["field"]["why"])
        self.assertNotIn("probe-r0", agent.calls)
        # the four matches were played while the other eight waited
        first_spawn_after = min(agent.calls.index(j) for j in agent.calls
                                if j.startswith("spawn-") and agent.calls.index(j) >= 8) \
            if len([j for j in agent.calls if j.startswith("spawn-")]) > 8 else None
        self.assertIsNone(first_spawn_after, "finish: no spawn after the first eight")
        _, text, _ = run_here(["winner", "--run", "f"], cwd)
        checker.check_run(self, cwd, "f", st, text)

    def test_a_cap_at_the_floor_leaves_the_probe_out_and_says_so(self):
        cwd, agent, orch, st = play(self, 16, 3, "--run-code", "--max-calls", "91", equal=True, run_code=True,
                                    checks=False)
        self.assertNotIn("probe-r0", agent.calls)
        self.assertEqual(st["field"]["choice"], "no offer")
        self.assertIn("probe-r0: the early look at the field skipped for the budget", st["cuts"])
        self.assertLessEqual(len(agent.calls), 91)

    def test_settle_is_refused_when_nothing_is_offered(self):
        cwd = init_run(self, 32, 3, "--direct", "--wave", "4", "--run-code", run="f")
        code, _, err = run_here(["settle", "finish", "--run", "f"], cwd, check=False)
        self.assertEqual(code, 2)
        self.assertIn("has no settle offer waiting for an answer", err)


class ProbeLists(unittest.TestCase):
    """A probe groups by decided behaviour: more than one group needs a decided difference."""

    def parse(self, **extra):
        from arena.outputs import parse_probe
        v = dict({"job": "probe-r0", "groups": [["S1", "S2"], ["S3"]], "inputs": 40}, **extra)
        return parse_probe(json.dumps(v), "probe-r0", [(["a1", "a2", "a3"], ["S1", "S2", "S3"])], "p.json")

    def test_the_lists_are_checked_and_counted(self):
        from arena.outputs import BadOutput
        self.assertEqual(self.parse()["groups"], [["a1", "a2"], ["a3"]], "a probe without the lists (older brief)")
        got = self.parse(decided=["the empty input: S3 raises"], open=["wording"])
        self.assertEqual(got["dif"], [1, 1])
        with self.assertRaisesRegex(BadOutput, "2 groups but no decided difference"):
            self.parse(decided=[], open=["a space after the prefix"])
        with self.assertRaisesRegex(BadOutput, "'open' must be a list of at most 20 strings"):
            self.parse(decided=["x"], open="wording")


class Withdraw(unittest.TestCase):
    """withdraw() on a state: kept matches stay, orphans are paired again in freed numbers."""

    def state(self, n=13, done=7):
        from arena.state import new_state
        ev = {"e": "init", "seq": 1, "run": "w", "agents": n, "seed": 9, "wave": 4, "at": 0.0, "fence": "F",
              "baseline": False, "pairing": "rated", "most_looks": [3, 5], "sizes": [15, 12, 12], "settle": "ask",
              "field_look": 8, "equal_margin": 2}
        st = new_state(ev, (15, 12, 12))
        order = [a for m in st["rounds"][0]["matches"] for a in (m["a"], m["b"])]
        for a in order[:done]:
            st["jobs"][spawn_id(a)]["s"] = "done"
            st["sol"][a] = "out/spawn-%s.md" % a
        st["field"] = {"at": done, "agents": order[:done], "how": "probe", "why": "x", "choice": "finish",
                       "withdrawn": []}
        return st

    def test_an_odd_number_left_gets_one_bye_and_every_agent_left_plays_once(self):
        st = self.state()
        before = {m["id"]: m for m in st["rounds"][0]["matches"]}
        withdraw(st)
        r1 = st["rounds"][0]
        left = [a for a in st["cards"] if a not in st["field"]["withdrawn"]]
        self.assertEqual(len(left), 7)
        seen = [a for m in r1["matches"] for a in (m["a"], m["b"])] + [r1["bye"]]
        self.assertEqual(sorted(seen), sorted(left))
        self.assertEqual(sum(st["byes"].values()), 1)
        for m in r1["matches"]:
            if m["id"] in before and before[m["id"]]["a"] == m["a"]:
                self.assertEqual(before[m["id"]], m, "a kept match is unchanged")
        self.assertFalse([j for j, info in st["jobs"].items() if info["s"] == READY and j.startswith("spawn-")])
        self.assertEqual(json.dumps(st["rounds"]), json.dumps(self.redo()["rounds"]), "seeded")

    def redo(self):
        st = self.state()
        withdraw(st)
        return st


if __name__ == "__main__":
    unittest.main()
