#!/usr/bin/env python3
"""equal_votes.py: what equal votes and the early look at the field buy, in the judging simulator.

A look is an *equal vote* when it found no decided difference (equivalent) or its totals are
within the run's equal margin (base.EQUAL_MARGIN) with FATAL flagged alike; equal votes that
outnumber the rest end a match as a tie (judging.wants_more). The engine records the margin in
each run's init event, so this plays the engine's own rules with the margin of each cell: none
(the rules before equal votes: a look counts only for a side), then each of --margins (the
engine's is 2). Per judge setting and field (all different; all equal at the top) it prints
P(best), P(top 3), calls, and the looks per match in the last two rounds.

--field-look plays the early look at the field instead: N agents, W = 10, --run-code, every
offer taken (--settle auto), with and without the look, on fields with more or less of it equal.

    python3 benchmarks/equal_votes.py --runs 400 --margins 0,2,4
    python3 benchmarks/equal_votes.py --field-look --runs 400
"""

import argparse
import multiprocessing
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import judging  # noqa: E402
from arena.state import field_look_size  # noqa: E402


def batch(task):
    n, base, lo, hi, judge, extras = task
    return [judging.outcome(n, judging.run_seed(base, n, i), judge, judging.DEFAULT_RECHECK, 1, judging.RULES,
                            extras) for i in range(lo, hi)]


def cells_of(args):
    """[((judge setting, field, rule), extras)]: the cells the arguments ask for; the first rule
    of each (setting, field) is what the others are compared with."""
    settings = args.settings.split(",")
    if args.field_look:
        look = field_look_size(10)
        fields = [("all different", 0.0, 0), ("50% equal", 0.5, 0), ("90% equal", 0.9, 0), ("100% equal", 1.0, 0),
                  ("3 better above an 80% equal", 0.8, 3)]
        return [((s, f, name), dict(judging.PLAIN, equal=e, above=above, settle="auto", run_code=True, field_look=k))
                for s in settings for f, e, above in fields for name, k in (("whole field", None),
                                                                             ("early look", look))]
    margins = [None] + [int(x) for x in args.margins.split(",")]
    fields = [(f, e) for f, e in (("all different", 0.0), ("100% equal", 1.0)) if not args.different_only or not e]
    return [((s, f, m), dict(judging.PLAIN, equal=e, margin=m)) for s in settings for f, e in fields for m in margins]


def main(argv=None):
    p = argparse.ArgumentParser(prog="equal_votes.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=400)
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--margins", default="0,2,4", help="margins to try, in rubric points (comma-separated)")
    p.add_argument("--settings", default=",".join(name for name, _ in judging.SETTINGS))
    p.add_argument("--field-look", action="store_true", help="the early look at the field instead of the margins")
    p.add_argument("--different-only", action="store_true", help="only the all-different field")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = p.parse_args(argv)
    started = time.time()
    settings = dict(judging.SETTINGS)
    cells = cells_of(args)
    tasks, owners = [], []
    for owner, extras in cells:
        for lo in range(0, args.runs, 25):
            tasks.append((args.n, args.seed, lo, min(args.runs, lo + 25), settings[owner[0]], extras))
            owners.append(owner)
    with multiprocessing.Pool(args.jobs) as pool:
        results = pool.map(batch, tasks, 1)
    data = {}
    for owner, rows in zip(owners, results):
        data.setdefault(owner, []).extend(rows)
    first = {}
    for owner, _ in cells:
        first.setdefault(owner[:2], owner[2])
    print("$ python3 benchmarks/equal_votes.py " + " ".join(argv if argv is not None else sys.argv[1:]))
    print()
    if args.field_look:
        print("%d runs per cell, N = %d, W = 10, seed %d, --run-code, every offer taken; the early look waits for "
              "the first %d solutions." % (args.runs, args.n, args.seed, field_look_size(10)))
        print()
        print("| judge | field | rule | P(best) | vs whole field | P(top 3) | calls | calls vs whole field | "
              "agents withdrawn |")
    else:
        print("%d runs per cell, N = %d, seed %d; 'none' is the rule before equal votes. Looks per match: in the "
              "last two rounds (at most 4 alive)." % (args.runs, args.n, args.seed))
        print()
        print("| judge | field | equal margin | P(best) | vs none | P(top 3) | calls | calls vs none | looks per "
              "match, last two rounds |")
    print("|---|---|---|---|---|---|---|---|---|")
    for owner, _ in cells:
        rows = data[owner]
        ref = data[owner[:2] + (first[owner[:2]],)]
        s = judging.summary(rows, args.n, ref)
        same = owner[2] == first[owner[:2]]
        if args.field_look:
            label, last = owner[2], "%.1f" % (sum(r[17] for r in rows) / float(len(rows)))
        else:
            label = "none" if owner[2] is None else str(owner[2])
            last = "%.2f" % (sum(r[10] for r in rows) / float(max(1, sum(r[11] for r in rows))))
        print("| %s | %s | %s | %.3f | %s | %.3f | %.1f | %.3fx | %s |" % (
            owner[0], owner[1], label, s["best"], "-" if same else judging.signed(s["dbest"], s["sebest"]),
            s["top3"], s["calls"], s["ratio"], last))
    print()
    print("Finished in %.0f s with %d worker process(es)." % (time.time() - started, args.jobs))


if __name__ == "__main__":
    main()
