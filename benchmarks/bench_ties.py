#!/usr/bin/env python3
"""bench_ties.py: when a bench scorer's margin makes judges call close solutions equal, who should
decide the match: the looks' totals (the engine's rule) or the scorer's figures?

In real runs with the bench (benchmarks/real-agents.md, run 9) a look that found the scorer's
figures within its margin, and nothing else decided, was an equal vote, and the match ended on
that look's totals, a point or two apart, or on the coin. This plays the engine's bracket in the
judging simulator (benchmarks/judging.py) with such judges: a look at two solutions whose
qualities differ by less than --bands (in units of the field's quality sd) is equal, its totals
left as the judge saw them. Each cell then decides a match that ends equal either as the engine
does (summed totals, then the coin) or by a bench score: the agent's quality plus a fixed error
of sd --scorer-sd. It prints P(best), P(top 3) and calls per cell.

    python3 benchmarks/bench_ties.py --runs 400 --agents 16,100
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


def banded_pair(band, plain, level=False):
    """judging.judge_pair, with a look equal whenever the qualities are within band; level: such
    a look gives both sides one scorecard, as real judges who find two solutions level do."""
    def pair(qa, qb, flawed_a, flawed_b, a_first, judge, rng, shared):
        ca, cb, fa, fb, conf, eq = plain(qa, qb, flawed_a, flawed_b, a_first, judge, rng, shared)
        if level and abs(qa - qb) < band:
            ca = cb = judging.CARDS[(sum(ca) + sum(cb)) // 2]
        return ca, cb, fa, fb, conf, eq or abs(qa - qb) < band
    return pair


def scored_close(sd, plain, coin_only=False):
    """state.close_match, with a match that ended equal (equivalent, or a tie of equal votes)
    going to the side with the better bench score; coin_only: only a match the coin would
    decide (level on every criterion)."""
    def close(st, m, winner, info):
        if info.get("how") == "judge" and (info.get("eq") or info.get("tie")) and info.get("rule") != "fatal" \
                and (not coin_only or info.get("rule") == "coin"):
            quality = judging.field(st["agents"], st["seed"])
            score = {a: quality[a] + sd * judging.normal(rng_for(st["seed"], "bench", a)) for a in (m["a"], m["b"])}
            winner = max((m["a"], m["b"]), key=lambda a: (score[a], a))
            info = dict(info, rule="bench")
        return plain(st, m, winner, info)
    return close


def outcome(n, seed, judge, band, sd, coin_only=False):
    saved = judging.judge_pair, state.close_match
    judging.judge_pair = banded_pair(band, saved[0], level=coin_only)
    if sd is not None:
        state.close_match = scored_close(sd, saved[1], coin_only)
    try:
        return judging.outcome(n, seed, judge, judging.DEFAULT_RECHECK, 1, judging.RULES, judging.PLAIN)
    finally:
        judging.judge_pair, state.close_match = saved


def batch(task):
    n, base, lo, hi, judge, band, sd, coin_only = task
    return [outcome(n, judging.run_seed(base, n, i), judge, band, sd, coin_only) for i in range(lo, hi)]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=400)
    p.add_argument("--agents", default="16,100")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--bands", default="0,0.5,1,2")
    p.add_argument("--scorer-sd", default="0.25,0.55")
    p.add_argument("--settings", default="default,better,noisier")
    p.add_argument("--coin-only", action="store_true",
                   help="equal looks give both sides one scorecard, and the bench score decides only matches "
                   "level on every criterion (measured, not adopted)")
    args = p.parse_args(argv)
    settings = dict(judging.SETTINGS)
    deciders = [None] + [float(x) for x in args.scorer_sd.split(",")]
    cells = [(int(n), name, float(band), sd) for n in args.agents.split(",") for name in args.settings.split(",")
             for band in args.bands.split(",") for sd in deciders]
    start = time.time()
    rows = judging.play_cells(batch, {cell: (cell[0], args.seed, settings[cell[1]], cell[2], cell[3], args.coin_only)
                                      for cell in cells}, args.runs)
    print("bench_ties.py: %d runs per cell, seed %d; a look is equal when the qualities are within the band "
          "(field sd units); an equal match goes to the summed totals (the engine) or to the bench score%s; "
          "the change from the totals with two standard errors"
          % (args.runs, args.seed, " when level on every criterion (else the coin)" if args.coin_only else ""))
    print("| agents | judge | band | equal matches go to | P(best) | P(top 3) | calls | vs totals: P(best) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for cell in cells:
        n, name, band, sd = cell
        base = rows[(n, name, band, None)]
        s = judging.summary(rows[cell], n, base)
        print("| %d | %s | %g | %s | %.3f | %.3f | %.1f | %s |" % (
            n, name, band, "totals" if sd is None else "bench score, sd %g" % sd, s["best"], s["top3"], s["calls"],
            "-" if sd is None else judging.signed(s["dbest"], s["sebest"])))
    print("(%.0f s)" % (time.time() - start))


if __name__ == "__main__":
    main()
