"""Which event is valid when: every event, sent in every phase of real runs, is refused or keeps
the bracket whole (no survivor in two matches, no round paired twice, nothing decided twice).

Two runs are played in process with stand-ins, one whose field is settled (every match equivalent,
so a settle offer waits between rounds) and one that plays the checked merge's match. After every
command the state is kept, and the read-only commands (status, pairings, winner) run on the run as
it is then: none may fail with an internal error, in any phase. Then each kept state is sent
every kind of event, for jobs in every status and matches of every round.
"""

import copy
import unittest

from standin import Orchestrator, StandIn, init_run, run_here, state_of
from arena.base import ArenaError
from arena.jobs import ISSUED, READY, DONE, job_kind, revision_file, agent_of, match_of
from arena.state import VALID_WHEN, apply, deps_done, find_match, refusal


def played(test, n, seed, equal, *extra):
    """(states after every command, the read-only commands' failures) of one whole run."""
    cwd = init_run(test, n, seed, "--direct", *extra, run="e")
    states, problems = [], []

    def runner(args, where, check=True, env=None):
        got = run_here(args, where, check, env)
        states.append(state_of(where, "e"))
        for command in (["status"], ["pairings"], ["winner"]):
            code, out, err = run_here(command + ["--run", "e"], where, check=False)
            if code not in (0, 2) or "internal error" in err or "Traceback" in err:
                problems.append("%s after %s: %s" % (command[0], " ".join(args), err.strip()[:300]))
        return got

    Orchestrator(cwd, StandIn(cwd, seed=seed, equal=equal), "e", runner=runner).play()
    return states, problems


def verdict(st, job):
    m = find_match(st, match_of(job))
    return {"sc": {m["a"]: [9, 9, 9, 9, 9], m["b"]: [5, 5, 5, 5, 5]}, "fat": {m["a"]: False, m["b"]: False},
            "conf": "high", "names": {}}


def output(st, job):
    """A plausible summary of a job's output, as collect would make it."""
    kind = job_kind(job)
    if kind == "spawn":
        return {"sol": "out/%s.md" % job}
    if kind == "atk":
        return {"labels": "M"}
    if kind == "def":
        return {"ans": "C" * len(st["summ"].get(job.replace("-def-", "-atk-"), {}).get("labels", "")),
                "sol": revision_file(match_of(job), agent_of(job))}
    if kind == "judge":
        return verdict(st, job)
    if kind == "final":
        return {"sc": {"winner": [9] * 5, "baseline": [5] * 5}, "fat": {"winner": False, "baseline": False},
                "conf": "high", "names": {}, "why": "x"}
    if kind == "probe":
        alive = [a for a in st["cards"] if a not in st["out"]]
        return {"groups": [alive], "inputs": 5}
    return {"taken": ["a part"], "sol": "out/merge-sol.md"}


def events_for(st):
    """Every kind of event, aimed at jobs in every status and at the matches of every round."""
    by_status = {}
    # ready jobs whose inputs are in first: those an issue may really hand out
    for job, info in sorted(st["jobs"].items(), key=lambda item: (not deps_done(st, item[0]), item[0])):
        by_status.setdefault(info["s"], []).append(job)
    some = [j for s in (READY, ISSUED, DONE, "cancelled", "stuck") for j in by_status.get(s, [])[:3]]
    evs = [{"e": "init", "agents": 2}, {"e": "advance", "round": len(st["rounds"])},
           {"e": "settle", "choice": "continue"}, {"e": "settle", "choice": "finish"},
           {"e": "shown", "wave": len(st["waves"])}, {"e": "shown", "cuts": 0}, {"e": "shown", "cuts": 10 ** 6},
           {"e": "mode", "mode": "direct"}, {"e": "mode", "mode": "nonsense"}, {"e": "batch", "n": 1},
           {"e": "lanes", "n": 1, "k": 2, "budget": 4, "at": 0.0}, {"e": "nope"}, {"e": "done"}]
    for job in some + ["r9-m99-judge"]:
        evs.append({"e": "issue", "jobs": [job], "wave": len(st["waves"]) + 1, "at": 0.0, "labels": {}})
        evs.append({"e": "done", "job": job, "out": output(st, job) if job in st["jobs"] else {}, "at": 0.0})
        evs.append({"e": "fail", "job": job, "why": "x", "at": 0.0})
        evs.append({"e": "shown", "job": job})
    for rnd in st["rounds"]:
        for m in rnd["matches"]:
            evs.append({"e": "record", "match": m["id"], "winner": m["a"], "why": "by hand"})
    return evs


def whole(test, st, what):
    """The bracket's invariants."""
    seen_rounds = set()
    eliminated = {}
    for rnd in st["rounds"]:
        test.assertNotIn(rnd["n"], seen_rounds, "%s: round %d paired twice" % (what, rnd["n"]))
        seen_rounds.add(rnd["n"])
        agents = [a for m in rnd["matches"] for a in (m["a"], m["b"])] + ([rnd["bye"]] if rnd["bye"] else [])
        test.assertEqual(len(agents), len(set(agents)), "%s: an agent in two matches of round %d" % (what, rnd["n"]))
        for a in agents:
            test.assertNotIn(a, eliminated, "%s: %s plays round %d after losing in round %s"
                             % (what, a, rnd["n"], eliminated.get(a)))
        if rnd is not st["rounds"][-1] and not rnd.get("merge"):
            undecided = [m["id"] for m in rnd["matches"] if m["id"] not in st["results"]]
            test.assertEqual(undecided, [], "%s: round %d has undecided matches and a round after it" % (what, rnd["n"]))
        for m in rnd["matches"]:
            res = st["results"].get(m["id"])
            if res and not rnd.get("merge"):
                eliminated[res["l"]] = rnd["n"]
    merge_matches = {m["id"] for rnd in st["rounds"] if rnd.get("merge") for m in rnd["matches"]}
    for a in st["out"]:
        lost = [mid for mid, res in st["results"].items() if res["l"] == a and mid not in merge_matches]
        test.assertEqual(len(lost), 1, "%s: %s decided out %d times" % (what, a, len(lost)))


class EveryEventInEveryPhase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.runs = {}

    def check_run(self, name, n, seed, equal, *extra):
        states, problems = played(self, n, seed, equal, *extra)
        self.assertEqual(problems, [], "a read-only command failed in some phase")
        kinds, refused, applied = set(), 0, 0
        for k, st in enumerate(states):
            whole(self, st, "%s state %d" % (name, k))
            for ev in events_for(st):
                ev = dict(ev, seq=st["seq"] + 1)
                trial = copy.deepcopy(st)
                try:
                    apply(trial, ev)
                except ArenaError:
                    refused += 1
                    self.assertEqual(trial, st, "a refused %s changed the state" % ev["e"])
                    self.assertIsNotNone(refusal(st, ev))
                    continue
                applied += 1
                kinds.add(ev["e"])
                whole(self, trial, "%s state %d after %s" % (name, k, ev))
        return states, kinds, refused, applied

    def test_a_settled_field_and_its_offer(self):
        states, kinds, refused, applied = self.check_run("settled", 8, 3, True, "--settle", "ask")
        self.assertTrue(any(st["settle"] and st["settle"]["choice"] is None for st in states), "no offer waited")
        waiting = next(st for st in states if st["settle"] and st["settle"]["choice"] is None)
        # the case a client once hit: advance while the offer waits, then the answer
        with self.assertRaises(ArenaError) as e:
            apply(copy.deepcopy(waiting), {"e": "advance", "seq": waiting["seq"] + 1})
        self.assertIn("settle offer waiting", str(e.exception))
        self.assertGreater(refused, applied)
        self.assertIn("settle", kinds)

    def test_the_checked_merge_and_its_match(self):
        states, kinds, refused, applied = self.check_run("merge", 4, 1, False, "--merge", "on", "--wave", "2")
        self.assertTrue(any(st["merged"] and st["merged"].get("match") for st in states), "the merge match never came")
        self.assertTrue({"done", "fail", "issue", "record"} <= kinds, kinds)

    def test_every_event_has_a_check(self):
        for name in VALID_WHEN:
            self.assertTrue(callable(VALID_WHEN[name]))
        st = state_of_new(self)
        self.assertIn("not an event", refusal(st, {"e": "what"}))


def state_of_new(test):
    cwd = init_run(test, 4, 1, "--direct", run="e")
    return state_of(cwd, "e")


if __name__ == "__main__":
    unittest.main()
