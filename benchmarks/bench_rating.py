#!/usr/bin/env python3
"""bench_rating.py: does pairing later rounds by a bench score pair better than by judges' totals?

Rated pairing (the engine's rule from round 2) orders the survivors by their average judge
total per look and folds the field: the strongest meets the weakest. Totals from different
matches are not comparable when each look measured on its own instances; a bench scorer
scores every solution on the same instances, so its figures are. This plays the engine's own
bracket in the judging simulator (benchmarks/judging.py) with round_ratings replaced by a bench
score: each agent's latent quality plus a fixed error of sd --bench-sd (in units of the
field's quality sd; the same error on every look, as the same instances give the same score),
and compares P(best), P(top 3) and calls with the engine's rule (totals) and with drawn pairs.

A bench sd of 0 is a scorer that ranks exactly as the hidden check; real scorers are noisier
(benchmarks/real-agents.md run 9 measures one against a hidden check).

    python3 benchmarks/bench_rating.py --runs 1000 --agents 100
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import judging  # noqa: E402
from arena import state  # noqa: E402
from arena.base import rng_for  # noqa: E402


def bench_ratings(sd):
    """A stand-in for state.round_ratings: every alive agent's bench score, as [points, 1]
    (rating_values reads points per look), from round 2 on."""
    def rate(st, number, alive):
        if number == 1:
            return None
        quality = judging.field(st["agents"], st["seed"])
        out = {}
        for a in alive:
            error = judging.normal(rng_for(st["seed"], "bench", a))
            out[a] = [int(round(1000 * (quality[a] + sd * error))), 1]
        return out
    return rate


def outcome(n, seed, judge, pairing):
    """judging.outcome under the engine's rules, its ratings replaced when pairing is a bench sd."""
    saved = state.round_ratings
    if pairing == "drawn":
        state.round_ratings = lambda st, number, alive: None
    elif pairing != "totals":
        state.round_ratings = bench_ratings(pairing)
    try:
        return judging.outcome(n, seed, judge, judging.DEFAULT_RECHECK, 1, judging.RULES, judging.PLAIN)
    finally:
        state.round_ratings = saved


def batch(task):
    n, base, lo, hi, judge, pairing = task
    return [outcome(n, judging.run_seed(base, n, i), judge, pairing) for i in range(lo, hi)]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=1000)
    p.add_argument("--agents", type=int, default=100)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--bench-sd", default="0,0.25,0.5,1", help="bench errors to play, comma-separated")
    p.add_argument("--settings", default=",".join(name for name, _ in judging.SETTINGS))
    args = p.parse_args(argv)
    settings = dict(judging.SETTINGS)
    pairings = ["totals", "drawn"] + [float(x) for x in args.bench_sd.split(",")]
    start = time.time()
    rows = judging.play_cells(batch, {(name, pairing): (args.agents, args.seed, settings[name], pairing)
                                      for name in args.settings.split(",") for pairing in pairings}, args.runs)
    print("bench_rating.py: %d agents, %d runs per cell, seed %d; P(best), P(top 3), calls; the change from "
          "rating by totals (the engine's rule) with two standard errors" % (args.agents, args.runs, args.seed))
    print("| judge | pairing | P(best) | P(top 3) | calls | vs totals: P(best) | P(top 3) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name in args.settings.split(","):
        base = rows[(name, "totals")]
        for pairing in pairings:
            s = judging.summary(rows[(name, pairing)], args.agents, base)
            label = pairing if isinstance(pairing, str) else "bench, sd %g" % pairing
            print("| %s | %s | %.3f | %.3f | %.1f | %s | %s |" % (
                name, label, s["best"], s["top3"], s["calls"],
                judging.signed(s["dbest"], s["sebest"]) if pairing != "totals" else "-",
                judging.signed(s["dtop3"], s["setop3"]) if pairing != "totals" else "-"))
    print("(%.0f s)" % (time.time() - start))


if __name__ == "__main__":
    main()
