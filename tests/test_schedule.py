"""The packed scheduler: never early, never over W, same tournament as phase by phase.

Whole stand-in tournaments run as SKILL.md's direct loop does: `init` through
the command line, then `next` with the same arguments through main in
this process (a subprocess per `next` would make this suite take minutes;
test_tournaments drives the subprocess path). The waves the orchestrator saw
are checked against the job ids alone. Stand-ins here answer as a function of the job id only (a fresh
StandIn per call), so a packed run and a phase-by-phase run of the same seed
see the same outputs and must reach the same results.
"""

import collections
import contextlib
import io
import itertools
import json
import os
import re
import tempfile
import unittest
from unittest import mock

import standin
from standin import run_cli
from arena.jobs import job_kind, judge_id, match_of, parse_job  # noqa: E402
from arena.estimate import field_sizes, list_schedule, packed_waves, plan_rows, round_bound, round_jobs  # noqa: E402
from arena.cli import main  # noqa: E402

SEED, STANDIN_SEED = 5, 3
SIZES = (2, 7, 16, 100)
# the spec's totals at W=10: agents -> (sub-agent calls, waves)
SPEC = {1: (1, 1), 2: (7, 4), 7: (37, 10), 8: (43, 10), 16: (91, 16), 32: (187, 28), 100: (595, 70),
        144: (859, 100), 2160: (12955, 1309)}
# (agents, W) of extra packed runs checked against packed_waves; 11 at W=10
# is a case where round 1's bye spawn must wait for the judges' wave
EXTRA = ((7, 3), (11, 10), (16, 4), (25, 6), (13, 20), (5, 1))


class PerJob:
    """A stand-in whose output depends on the job id only, not on the call order."""

    def __init__(self, cwd):
        self.cwd, self.calls = cwd, []

    def __call__(self, call):
        receipt = standin.StandIn(self.cwd, seed=STANDIN_SEED)(call)
        self.calls.append(receipt.split()[1])
        return receipt


class InProcess(standin.Orchestrator):
    """The stand-in orchestrator, with `next` run by main in this process."""

    def next(self, *extra):
        here, out = os.getcwd(), io.StringIO()
        os.chdir(self.cwd)
        try:
            with contextlib.redirect_stdout(out):
                code = main(["next", "--run", self.run] + list(extra))
        finally:
            os.chdir(here)
        assert code == 0, "next %s failed with %d" % (" ".join(extra), code)
        self.outputs.append(out.getvalue())
        return out.getvalue()


def tournament(n, wave=10, pack=True, recheck=True):
    """Play one run; returns (waves the orchestrator saw, jobs called, final state)."""
    with tempfile.TemporaryDirectory() as cwd:
        with open(os.path.join(cwd, "task.md"), "w") as f:
            f.write("Write a limerick about queues.\n")
        # the bracket's own schedule, which plan counts: the checked merge after it is tested apart
        args = ["init", "--agents", str(n), "--seed", str(SEED), "--task-file", "task.md", "--run", "s",
                "--wave", str(wave), "--direct", "--merge", "off"]
        args += [] if pack else ["--no-pack"]
        args += [] if recheck else ["--recheck", "off"]
        run_cli(args, cwd)
        agent = PerJob(cwd)
        orch = InProcess(cwd, agent, "s", wave=wave)
        orch.play()
        with open(os.path.join(cwd, ".arena", "s", "state.json"), encoding="utf-8") as f:
            state = json.load(f)["state"]
        return orch.waves, agent.calls, state


RUNS = {}


def setUpModule():
    todo = [(n, 10, pack, recheck) for n in SIZES for pack in (True, False) for recheck in (True, False)]
    todo += [(n, w, True, False) for n, w in EXTRA]
    # durability has its own tests; here fsync would only make a busy disk the bottleneck
    with mock.patch.object(os, "fsync", lambda fd: None):
        for key in todo:
            RUNS[key] = tournament(*key)


lower_bound = round_bound


class PackedScheduleTest(unittest.TestCase):
    def check_order(self, waves, wave, recheck, n):
        """Every job starts after its inputs exist, judged from the job ids alone."""
        at = {}
        for k, jobs in enumerate(waves):
            self.assertLessEqual(len(jobs), wave, "wave %d is larger than W" % (k + 1))
            for j in jobs:
                self.assertNotIn(j, at, "%s issued twice without a failure" % j)
                at[j] = k
        sides = collections.defaultdict(set)
        per_round = collections.defaultdict(list)
        for j in at:
            kind, rnd, _, who = parse_job(j)
            if kind in ("atk", "def"):
                sides[match_of(j)].add(who)
            if kind != "final":
                per_round[rnd].append(j)
        for j, k in at.items():
            kind, rnd, _, who = parse_job(j)
            mid = match_of(j)
            if kind == "atk" and rnd == 1:
                for a in sides[mid]:
                    self.assertLess(at["spawn-" + a], k, "%s before the spawn of %s" % (j, a))
            elif kind == "def":
                (other,) = sides[mid] - {who}
                self.assertLess(at["%s-atk-%s" % (mid, other)], k, "%s before the attack on it" % j)
            elif kind == "judge":
                for a in sides[mid]:
                    self.assertLess(at["%s-def-%s" % (mid, a)], k, "%s before the defence of %s" % (j, a))
                if who > 1:
                    matches = len({match_of(x) for x in per_round[rnd]})
                    side_by_side = recheck and 2 * matches <= wave
                    first = at[judge_id(mid, 1)]
                    if side_by_side:
                        self.assertLessEqual(first, k)
                    else:
                        self.assertLess(first, k, "%s before the first look" % j)
            elif kind == "final":
                self.assertEqual(k, len(waves) - 1, "the baseline check must come last")
        for rnd in sorted(per_round):
            if rnd < 2:
                continue
            gate = [at[j] for j in per_round[rnd - 1] if job_kind(j) == "judge"]
            gate += [at[j] for j in per_round[0]]  # every spawn, the bye's too
            start = min(at[j] for j in per_round[rnd])
            self.assertGreater(start, max(gate), "round %d started before round %d was decided" % (rnd, rnd - 1))
        self.assertEqual(len(per_round[0]), n)

    def test_never_early_and_never_over_w(self):
        for (n, wave, pack, recheck), (waves, _, _) in RUNS.items():
            with self.subTest(n=n, wave=wave, pack=pack, recheck=recheck):
                self.check_order(waves, wave, recheck, n)

    def test_packed_and_unpacked_play_the_same_tournament(self):
        for n, recheck in itertools.product(SIZES, (True, False)):
            with self.subTest(n=n, recheck=recheck):
                pw, pcalls, pst = RUNS[(n, 10, True, recheck)]
                uw, ucalls, ust = RUNS[(n, 10, False, recheck)]
                self.assertEqual(collections.Counter(pcalls), collections.Counter(ucalls))
                self.assertEqual(sorted(pcalls), sorted(j for w in uw for j in w))
                self.assertEqual(pst["champion"], ust["champion"])
                self.assertEqual(pst["results"], ust["results"])
                self.assertEqual(pst["out"], ust["out"])
                self.assertLessEqual(len(pw), len(uw))
        # second looks happened somewhere, or the default-recheck half proves nothing new
        looks = sum(1 for j in RUNS[(100, 10, True, True)][1] if j.endswith("-judge2"))
        self.assertGreater(looks, 0)

    def test_plan_is_what_the_scheduler_does(self):
        runs = [(n, 10) for n in SIZES] + list(EXTRA)
        for n, wave in runs:
            with self.subTest(n=n, wave=wave):
                self.assertEqual(len(RUNS[(n, wave, True, False)][0]), packed_waves(n, wave)[0])
        for n in SIZES:
            self.assertEqual(len(RUNS[(n, 10, False, False)][0]), SPEC[n][1], "unpacked n=%d" % n)

    def test_hundred_agents_round_by_round(self):
        waves = RUNS[(100, 10, True, False)][0]
        per_round = collections.Counter()
        for jobs in waves:
            rounds = {parse_job(j)[1] or 1 for j in jobs}
            self.assertEqual(len(rounds), 1, "a wave mixes rounds: %s" % jobs)
            per_round[rounds.pop()] += 1
        # round 3 (25 alive) takes 6 waves; round 4 (13 alive: 12 attacks > W) needs 4
        self.assertEqual([per_round[r] for r in range(1, 8)], [35, 13, 6, 4, 3, 3, 3])
        self.assertEqual(len(waves), 67)


class PlanNumbersTest(unittest.TestCase):
    def test_plan_matches_the_spec(self):
        for n, (calls, waves) in SPEC.items():
            # the spec's table counts the bracket; the checked merge adds its own row
            _, out, _ = run_cli(["plan", "--agents", str(n), "--merge", "off"], os.getcwd())
            total = re.search(r"^total\s+(\d+)\s+(\d+)$", out, re.M)
            self.assertEqual((int(total.group(1)), int(total.group(2))), (calls, waves), "n=%d" % n)
            packed = re.search(r"^packed waves .*?: (\d+) ", out, re.M)
            self.assertEqual(int(packed.group(1)), packed_waves(n, 10)[0])

    def test_the_checked_merge_adds_its_row(self):
        for n, (calls, waves) in SPEC.items():
            _, out, _ = run_cli(["plan", "--agents", str(n)], os.getcwd())
            row = re.search(r"^merge\s+2\s+1\s+-\s+(\d+)\s+(\d+)$", out, re.M)
            total = re.search(r"^total\s+(\d+)\s+(\d+)$", out, re.M)
            if n == 1:
                self.assertIsNone(row, out)  # no final, nothing to merge
                continue
            # the merge job, then a full match: two attacks, two defences, a judge
            self.assertEqual((int(row.group(1)), int(row.group(2))), (6, 4), out)
            self.assertEqual((int(total.group(1)), int(total.group(2))), (calls + 6, waves + 4), "n=%d" % n)
            packed = re.search(r"^packed waves .*?: (\d+) ", out, re.M)
            self.assertEqual(int(packed.group(1)), packed_waves(n, 10, merge=True)[0])
            self.assertEqual(packed_waves(n, 10, merge=True)[0], packed_waves(n, 10)[0] + 4)

    def test_packed_never_worse_than_phase_by_phase(self):
        for n, wave in itertools.product(list(range(1, 70)) + [100, 144, 257, 1000, 2160], (1, 2, 3, 5, 7, 10, 13, 20)):
            packed, bound = packed_waves(n, wave)
            unpacked = sum(r[5] for r in plan_rows(n, wave))
            self.assertLessEqual(packed, unpacked, "n=%d W=%d" % (n, wave))
            self.assertGreaterEqual(packed, bound, "n=%d W=%d" % (n, wave))

    def test_packing_is_optimal_under_round_barriers(self):
        """Each round's packed waves meet a lower bound, so no in-round priority does better.

        For 100 agents at W=10 that is 67: round 4 has 12 attacks for 10 slots.
        """
        for n, wave in itertools.product(list(range(2, 60)) + [100, 144, 2160], (1, 3, 6, 10, 20)):
            for r, alive in enumerate(field_sizes(n)[:-1], 1):
                jobs = round_jobs(r, alive // 2, list(range(n)) if r == 1 else None, wave)
                got = len(list_schedule(jobs, wave))
                self.assertEqual(got, lower_bound(jobs, wave), "n=%d W=%d round %d" % (n, wave, r))

    def test_bye_spawn_fills_the_judges_wave(self):
        # 11 agents at W=10: 10 spawns, 10 attacks, 10 defences, 5 judges + the bye's spawn
        self.assertEqual(len(list_schedule(round_jobs(1, 5, list(range(11))), 10)), 4)


if __name__ == "__main__":
    unittest.main()
