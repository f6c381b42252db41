#!/usr/bin/env python3
"""wallclock.py: how long a run takes when sub-agents take different times.

Every job's duration is drawn from a lognormal with a median per phase and a
coefficient of variation (CV). The real engine plays the bracket (new_state,
apply, deps_of, round_done: dealing, pairing, byes, second looks) with the
modelled judge of benchmarks/judging.py, so the job graph, its round barriers
and its second looks are the ones a real run has. Four ways to hand out jobs,
all through the engine's own pickers:

- waves     the engine's pick_wave: up to W jobs, the next wave only when every
            job of the last one has returned (what a client that can only wait
            for a whole message of Agent calls gets);
- rolling   the engine's pick_jobs with the free slots, whenever any job returns;
- lanes     rolling as W lane sub-agents do it: a set of lanes takes about
            --lane-jobs jobs each, then hands no more out until every job of the
            set has returned, and the main session starts the next set;
- bound     no schedule can beat max(critical path, total work / W); the critical
            path is the run with unlimited slots (the round barriers included).

Durations are keyed by job id, so every policy sees the same draws, and the bracket
does not depend on timing, so all four play the same job graph.

    python3 benchmarks/wallclock.py                 # the README table (about a minute)
    python3 benchmarks/wallclock.py --runs 3 --agents 8 32
"""

import argparse
import heapq
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "skills", "arena"))

import judging  # noqa: E402  (the modelled judge)
from arena import schedule  # noqa: E402
from arena.base import DEFAULT_LANE_JOBS, DEFAULT_RECHECK, rng_for  # noqa: E402
from arena.jobs import job_kind, parse_job  # noqa: E402
from arena.state import apply, finished, new_state, round_done  # noqa: E402

# Minutes. Spawn: one measured 6-agent run with real model sub-agents (four spawns
# finished after 25 to 37 minutes, the fifth was still working after 55). The
# others are assumptions in proportion to the work each brief asks for: an attack
# and a defence read one or two solutions and write a shorter text, a judge reads
# two revised solutions and writes one JSON object.
MEDIANS = {"spawn": 30.0, "atk": 15.0, "def": 15.0, "judge": 10.0, "final": 10.0}
# Medians measured in benchmarks/real-agents.md (run 2: real model sub-agents on a small
# code task), for --medians measured.
MEASURED = {"spawn": 2.4, "atk": 1.0, "def": 0.4, "judge": 0.6, "final": 0.6}
CVS = (0.3, 0.6, 1.0)
AGENTS = (8, 32, 100)
WAVE = 10
LANE_JOBS = DEFAULT_LANE_JOBS
LANE_START = 0.5   # minutes between one set of lanes returning and the next one working


def duration(seed, cv, job):
    """Minutes one job takes: lognormal with the phase's median and this CV, keyed by job id."""
    rng = rng_for(seed, "duration", cv, job)
    sigma = math.sqrt(math.log(1.0 + cv * cv))
    return MEDIANS[job_kind(job)] * math.exp(sigma * judging.normal(rng))


def pick(st, slots):
    """The engine's rolling picker; pick_wave with a smaller wave where it has none."""
    if hasattr(schedule, "pick_jobs"):
        return schedule.pick_jobs(st, slots)
    wave = st["wave"]
    st["wave"] = slots
    try:
        return schedule.pick_wave(st)
    finally:
        st["wave"] = wave


class Sim:
    """One run of the real engine on a clock. policy: waves | rolling | lanes | unlimited."""

    def __init__(self, n, seed, cv, policy, wave=WAVE, lane_jobs=LANE_JOBS):
        ev = judging.init_event(n, seed, DEFAULT_RECHECK, 1)
        ev["wave"] = wave
        self.st = new_state(ev, judging.SIZES)
        self.st["seq"] = 1
        self.world = (judging.field(n, seed), judging.fatal_line(judging.DEFAULT), seed, 0.0)
        self.seed, self.cv, self.policy = seed, cv, policy
        self.wave = wave if policy != "unlimited" else 10 ** 6
        self.lane_budget = lane_jobs * wave
        self.clock = 0.0
        self.running = []          # heap of (finish time, job)
        self.work = 0.0            # minutes of sub-agent work in all
        self.max_in_flight = 0
        self.handed = 0
        self.set_handed = 0        # jobs handed out to the current set of lanes
        self.waves = 0
        self.advances = []         # clock at each round change
        self.work_by_round = {}    # round -> minutes of work of its jobs (spawns are round 0)

    def event(self, ev):
        ev["seq"] = self.st["seq"] + 1
        apply(self.st, ev)

    def hand_out(self, jobs):
        if not jobs:
            return
        self.waves += 1
        self.event({"e": "issue", "wave": self.waves, "jobs": jobs, "at": self.clock, "labels": {}})
        for job in jobs:
            took = duration(self.seed, self.cv, job)
            self.work += took
            rnd = parse_job(job)[1] if job != "final" else len(self.st["rounds"]) + 1
            self.work_by_round[rnd] = self.work_by_round.get(rnd, 0.0) + took
            heapq.heappush(self.running, (self.clock + took, job))
        self.handed += len(jobs)
        self.set_handed += len(jobs)
        self.max_in_flight = max(self.max_in_flight, len(self.running))

    def settle(self):
        while round_done(self.st) and self.st["champion"] is None:
            self.event({"e": "advance", "round": len(self.st["rounds"])})
            self.advances.append(self.clock)

    def returned(self, jobs):
        """Like collect: every output is read against the same state, then applied in order."""
        outs = [(j, judging.output_of(self.st, j, judging.DEFAULT, self.world)) for j in sorted(jobs)]
        for job, out in outs:
            self.event({"e": "done", "job": job, "out": out})
        self.settle()

    def play(self):
        self.settle()
        while True:
            free = self.wave - len(self.running)
            if self.policy == "waves":
                if not self.running:
                    self.hand_out(schedule.pick_wave(self.st))
            elif self.policy == "lanes":
                if self.set_handed >= self.lane_budget and not self.running:
                    self.set_handed = 0
                    self.clock += LANE_START
                if self.set_handed < self.lane_budget:
                    self.hand_out(pick(self.st, min(free, self.lane_budget - self.set_handed)))
            else:
                self.hand_out(pick(self.st, free))
            if not self.running:
                if finished(self.st):
                    return self
                if self.policy == "lanes" and self.set_handed >= self.lane_budget:
                    continue
                raise RuntimeError("nothing runs and the run is not finished")
            if self.policy == "waves":
                done = [heapq.heappop(self.running) for _ in range(len(self.running))]
            else:
                done = [heapq.heappop(self.running)]
                while self.running and self.running[0][0] == done[0][0]:
                    done.append(heapq.heappop(self.running))
            self.clock = done[-1][0]
            self.returned([j for _, j in done])


def measure(n, cv, seeds, wave=WAVE, lane_jobs=LANE_JOBS):
    """{policy: [minutes per seed]} plus the bound, critical path and work per seed."""
    out = {k: [] for k in ("waves", "rolling", "lanes", "bound", "barrier", "path", "work", "in_flight")}
    for seed in seeds:
        runs = {p: Sim(n, seed, cv, p, wave, lane_jobs).play() for p in ("waves", "rolling", "lanes", "unlimited")}
        work = runs["rolling"].work
        assert all(abs(r.work - work) < 1e-6 for r in runs.values()), "the policies played different job graphs"
        path = runs["unlimited"].clock
        for p in ("waves", "rolling", "lanes"):
            out[p].append(runs[p].clock)
        out["path"].append(path)
        out["work"].append(work)
        out["bound"].append(max(path, work / wave))
        out["barrier"].append(barrier_bound(runs["unlimited"], wave))
        out["in_flight"].append(max(runs[p].max_in_flight for p in ("waves", "rolling", "lanes")))
    return out


def barrier_bound(unlimited, wave):
    """A tighter bound that keeps the round barriers: for every round k, the work of
    rounds up to k (spawns included) needs work / W, and every later round can only
    start once round k is over, taking at least its own critical path.

    unlimited is the run with unlimited slots: there each round takes exactly its
    critical path, so the time left after its k-th round change is the sum of the
    later rounds' critical paths. k = 0 gives the critical path, the last k work / W.
    """
    best = unlimited.clock
    done = unlimited.work_by_round.get(0, 0.0)
    for k, at in enumerate(unlimited.advances, 1):
        done += unlimited.work_by_round.get(k, 0.0)
        best = max(best, done / wave + unlimited.clock - at)
    return max(best, unlimited.work / wave)


def hours(minutes):
    return "%.1f h" % (minutes / 60.0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--agents", type=int, nargs="+", default=list(AGENTS))
    ap.add_argument("--cv", type=float, nargs="+", default=list(CVS))
    ap.add_argument("--runs", type=int, default=20, help="seeds per cell (means are shown)")
    ap.add_argument("--wave", type=int, default=WAVE)
    ap.add_argument("--lane-jobs", type=int, default=LANE_JOBS, help="jobs per lane before the lanes return")
    ap.add_argument("--medians", choices=("assumed", "measured"), default="assumed",
                    help="minutes per phase: the assumed ones (spawn 30) or those of benchmarks/real-agents.md")
    args = ap.parse_args(argv)
    if args.medians == "measured":
        MEDIANS.update(MEASURED)
    seeds = list(range(1, args.runs + 1))
    print("# Wall-clock of a run: waves vs rolling vs the lower bound\n")
    print("W = %d; job minutes lognormal, medians %s; %d seeds per row (means); lanes: about %d jobs "
          "per lane per set, %.1f min to start the next set.\n" % (
              args.wave, ", ".join("%s %g" % kv for kv in MEDIANS.items()), len(seeds), args.lane_jobs, LANE_START))
    print("| agents | CV | bound | waves | rolling | lanes | waves / bound | rolling / bound | lanes / bound "
          "| critical path | work / W | bound with round barriers | rolling / that bound |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in args.agents:
        for cv in args.cv:
            r = measure(n, cv, seeds, args.wave, args.lane_jobs)
            mean = {k: statistics.mean(v) for k, v in r.items()}
            ratio = {p: statistics.mean(a / b for a, b in zip(r[p], r["bound"])) for p in ("waves", "rolling", "lanes")}
            tight = statistics.mean(a / b for a, b in zip(r["rolling"], r["barrier"]))
            print("| %d | %.1f | %s | %s | %s | %s | %.2fx | %.2fx | %.2fx | %s | %s | %s | %.2fx |" % (
                n, cv, hours(mean["bound"]), hours(mean["waves"]), hours(mean["rolling"]), hours(mean["lanes"]),
                ratio["waves"], ratio["rolling"], ratio["lanes"], hours(mean["path"]), hours(mean["work"] / args.wave),
                hours(mean["barrier"]), tight))
            assert max(r["in_flight"]) <= args.wave, "more than W jobs in flight"
    print("\nRatios are means of the per-seed ratios. No policy ever had more than W jobs in flight.")


if __name__ == "__main__":
    main()
