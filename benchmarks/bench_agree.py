#!/usr/bin/env python3
"""bench_agree.py: a scored gap decided by one bench scorer, or only when scorers agree.

A bench scorer is written by one job on its own instances, so its figures carry an error fixed
for each solution (benchmarks/real-agents.md, run 13: ten scorers of one task ranked fourteen
solutions with rank correlations from 0.07 to 0.88). This plays, in the judging simulator
(benchmarks/judging.py), a bench with up to three scorers written by different jobs, each with
an error of its own (sd per scorer, in units of the field's quality sd), under these rules for
a look's score:

- none: no bench, judges as in judging.py (the same for every scorer set);
- one: the run's first scorer (drawn per run) decides a gap beyond the margin; inside it the judge judges as
  without a bench (the engine before this change);
- agree: a gap is decided when two scorers put the sides beyond the margin the same way and
  none puts them beyond it the other way; otherwise the judge judges as without a bench;
- mean: the scorers' average decides beyond the margin.

It prints P(best), P(top 3) and calls per cell with the change from `one` on the same scorer
set, and, for pairs of solutions drawn from the field at least --decided apart, how often each
rule decides and how often it decides for the better one (the issue's measure of a pick).

    python3 benchmarks/bench_agree.py --runs 400 --agents 16,100
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import judging  # noqa: E402
from arena.base import rng_for  # noqa: E402

RULES = ("none", "one", "agree", "mean")


def scores(q, sds):
    """Each scorer's figure for a solution: its quality plus that scorer's error for it."""
    return [q + sd * judging.normal(rng_for("bench", k, repr(q))) for k, sd in enumerate(sds)]


def lean(sa, sb, margin):
    """+1 when a scorer puts a beyond the margin ahead, -1 for b, 0 inside it."""
    return 0 if abs(sa - sb) <= margin else (1 if sa > sb else -1)


def verdict(rule, qa, qb, sds, margin, first=0):
    """+1 / -1 when the bench decides the look for a / b, 0 when it leaves it to the judge;
    first is the scorer a run's bench took first (which job wrote first is chance)."""
    if rule == "none":
        return 0
    a, b = scores(qa, sds), scores(qb, sds)
    if rule == "one":
        return lean(a[first], b[first], margin)
    if rule == "mean":
        return lean(sum(a) / len(a), sum(b) / len(b), margin)
    leans = [lean(x, y, margin) for x, y in zip(a, b)]
    need = 2 if len(sds) > 1 else 1
    if leans.count(1) >= need and -1 not in leans:
        return 1
    if leans.count(-1) >= need and 1 not in leans:
        return -1
    return 0


def scored_pair(rule, margin, sds, plain, first):
    """judging.judge_pair under the bench's scorers by rule: a decided look goes to the side the
    bench favours, with high confidence; any other look is judged as without a bench."""
    def pair(qa, qb, flawed_a, flawed_b, a_first, judge, rng, shared):
        ca, cb, fa, fb, conf, eq = plain(qa, qb, flawed_a, flawed_b, a_first, judge, rng, shared)
        won = verdict(rule, qa, qb, sds, margin, first)
        if not won:
            return ca, cb, fa, fb, conf, eq
        ta, tb = sum(ca), sum(cb)
        if (ta < tb) == (won > 0) and ta != tb:
            ta, tb = tb, ta
        if ta == tb:
            ta, tb = (min(100, ta + 1), tb) if won > 0 else (ta, min(100, tb + 1))
        return judging.CARDS[ta], judging.CARDS[tb], fa, fb, "high", False
    return pair


def outcome(n, seed, judge, rule, margin, sds):
    saved = judging.judge_pair
    judging.judge_pair = scored_pair(rule, margin, sds, saved, seed % len(sds))
    try:
        return judging.outcome(n, seed, judge, judging.DEFAULT_RECHECK, 1, judging.RULES, judging.PLAIN)
    finally:
        judging.judge_pair = saved


def batch(task):
    n, base, lo, hi, judge, rule, margin, sds = task
    return [outcome(n, judging.run_seed(base, n, i), judge, rule, margin, sds) for i in range(lo, hi)]


def pairs(rule, sds, margin, decided, count, seed):
    """(share of pairs decided, share of the decided ones decided for the better side) over
    `count` pairs of qualities drawn from the field at least `decided` apart."""
    rng = rng_for(seed, "pairs")
    made = right = seen = 0
    while seen < count:
        qa, qb = judging.normal(rng), judging.normal(rng)
        if abs(qa - qb) < decided:
            continue
        seen += 1
        won = verdict(rule, qa, qb, sds, margin, seen % len(sds))
        made += won != 0
        right += won == (1 if qa > qb else -1)
    return made / float(seen), right / float(made or 1)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=400)
    p.add_argument("--agents", default="16,100")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--margin", type=float, default=0.5)
    p.add_argument("--decided", type=float, default=0.3, help="pairs at least this far apart (field sd) count")
    p.add_argument("--scorers", default="0.55/0.55/0.55;0.55/1.1/2.2",
                   help="scorer sets, ';' between sets, '/' between a set's scorers (error sd each)")
    p.add_argument("--settings", default="default,better,noisier")
    args = p.parse_args(argv)
    settings = dict(judging.SETTINGS)
    sets = [tuple(float(x) for x in s.split("/")) for s in args.scorers.split(";")]
    cells = [(n, name, rule, sds) for n in (int(x) for x in args.agents.split(","))
             for name in args.settings.split(",") for sds in sets for rule in RULES]
    start = time.time()
    rows = judging.play_cells(batch, {c: (c[0], args.seed, settings[c[1]], c[2], args.margin, c[3]) for c in cells},
                              args.runs)
    print("bench_agree.py: %d runs per cell, seed %d, margin %g; scorer error sd per scorer in field sd units; "
          "the change from `one` on the same scorers with two standard errors" % (args.runs, args.seed, args.margin))
    print("| agents | judge | scorers | rule | P(best) | P(top 3) | calls | vs one: P(best) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for cell in cells:
        n, name, rule, sds = cell
        base = rows[(n, name, "one", sds)]
        s = judging.summary(rows[cell], n, base)
        print("| %d | %s | %s | %s | %.3f | %.3f | %.1f | %s |" % (
            n, name, "/".join("%g" % x for x in sds), rule, s["best"], s["top3"], s["calls"],
            "-" if rule in ("one", "none") else judging.signed(s["dbest"], s["sebest"])))
    print()
    print("Pairs at least %g field sd apart (20,000 a row): how often the bench decides, and how often for the "
          "better side" % args.decided)
    print("| scorers | rule | decides | right when it decides |")
    print("| --- | --- | --- | --- |")
    for sds in sets:
        for rule in RULES[1:]:
            made, right = pairs(rule, sds, args.margin, args.decided, 20000, args.seed)
            print("| %s | %s | %.2f | %.3f |" % ("/".join("%g" % x for x in sds), rule, made, right))
    print("(%.0f s)" % (time.time() - start))


if __name__ == "__main__":
    main()
