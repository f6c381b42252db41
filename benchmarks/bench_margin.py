#!/usr/bin/env python3
"""bench_margin.py: what a look should do with bench scorer figures inside the scorer's margin.

A bench scorer decides a look when its figures for the two sides are further apart than its
margin. Inside the margin, the engine of run 9 (benchmarks/real-agents.md) let judges call the
difference open, so a look with nothing else decided was an equal vote; the engine after it
leaves those figures to the judge to weigh, as a look without a bench would. This plays both
in the judging simulator (benchmarks/judging.py), beside looks with no bench at all:

- none: judges as in judging.py;
- equal (run 9): the scorer decides beyond --margins, and inside it the look is equal;
- weigh (now): the scorer decides beyond the margin, and inside it the judge judges as in none.

A solution's bench score is its quality plus a fixed error of sd --scorer-sd (the bench's
instances are not the task's); margins and errors are in units of the field's quality sd. A
look the scorer decides goes to the side it favours, with high confidence. It prints P(best),
P(top 3) and calls per cell, and each rule's change from none.

    python3 benchmarks/bench_margin.py --runs 400 --agents 16,100
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import judging  # noqa: E402
from arena.base import rng_for  # noqa: E402

RULES = ("equal", "weigh")


def bench_score(q, sd):
    """A solution's bench score: its quality plus an error fixed for that solution."""
    return q + sd * judging.normal(rng_for("bench", repr(q)))


def scored_pair(rule, margin, sd, plain):
    """judging.judge_pair under a bench scorer, by the rule for figures inside its margin."""
    def pair(qa, qb, flawed_a, flawed_b, a_first, judge, rng, shared):
        ca, cb, fa, fb, conf, eq = plain(qa, qb, flawed_a, flawed_b, a_first, judge, rng, shared)
        sa, sb = bench_score(qa, sd), bench_score(qb, sd)
        if abs(sa - sb) <= margin:
            return ca, cb, fa, fb, conf, eq or rule == "equal"
        ta, tb = sum(ca), sum(cb)
        if (ta < tb) == (sa > sb) and ta != tb:
            ta, tb = tb, ta
        if ta == tb:
            ta, tb = (min(100, ta + 1), tb) if sa > sb else (ta, min(100, tb + 1))
        return judging.CARDS[ta], judging.CARDS[tb], fa, fb, "high", False
    return pair


def outcome(n, seed, judge, rule, margin, sd):
    saved = judging.judge_pair
    if rule != "none":
        judging.judge_pair = scored_pair(rule, margin, sd, saved)
    try:
        return judging.outcome(n, seed, judge, judging.DEFAULT_RECHECK, 1, judging.RULES, judging.PLAIN)
    finally:
        judging.judge_pair = saved


def batch(task):
    n, base, lo, hi, judge, rule, margin, sd = task
    return [outcome(n, judging.run_seed(base, n, i), judge, rule, margin, sd) for i in range(lo, hi)]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=400)
    p.add_argument("--agents", default="16,100")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--margins", default="0.5,1")
    p.add_argument("--scorer-sd", default="0.25,0.55")
    p.add_argument("--settings", default="default,better,noisier")
    args = p.parse_args(argv)
    settings = dict(judging.SETTINGS)
    cells = []
    for n in (int(x) for x in args.agents.split(",")):
        for name in args.settings.split(","):
            cells.append((n, name, "none", 0.0, 0.0))
            cells += [(n, name, rule, float(m), float(sd)) for sd in args.scorer_sd.split(",")
                      for m in args.margins.split(",") for rule in RULES]
    start = time.time()
    rows = judging.play_cells(batch, {cell: (cell[0], args.seed, settings[cell[1]]) + cell[2:] for cell in cells},
                              args.runs)
    print("bench_margin.py: %d runs per cell, seed %d; a bench scorer (its error sd and margin in field sd units) "
          "decides looks beyond its margin; inside it a look is equal (run 9) or judged as without a bench (now); "
          "the change from no bench with two standard errors" % (args.runs, args.seed))
    print("| agents | judge | scorer sd | margin | inside the margin | P(best) | P(top 3) | calls | vs no bench: P(best) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for cell in cells:
        n, name, rule, margin, sd = cell
        base = rows[(n, name, "none", 0.0, 0.0)]
        s = judging.summary(rows[cell], n, base)
        print("| %d | %s | %s | %s | %s | %.3f | %.3f | %.1f | %s |" % (
            n, name, "-" if rule == "none" else "%g" % sd, "-" if rule == "none" else "%g" % margin,
            {"none": "no bench", "equal": "equal look", "weigh": "the judge weighs"}[rule],
            s["best"], s["top3"], s["calls"], "-" if rule == "none" else judging.signed(s["dbest"], s["sebest"])))
    print("(%.0f s)" % (time.time() - start))


if __name__ == "__main__":
    main()
