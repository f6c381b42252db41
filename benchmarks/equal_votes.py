#!/usr/bin/env python3
"""equal_votes.py: what if a look that finds the two sides equal counted toward ending a match?

Today a first look that says "equivalent" ends a match, but a look whose totals are level or
nearly so counts for nobody: in the last two rounds a match between two equal solutions that
no judge calls equivalent takes three to five looks. This tries, in the judging simulator
(judging.py's modelled judge and the engine's own bracket), a rule that counts such looks:

- a look is an *equal vote* when it found the two equivalent (no FATAL flag), or its totals are
  within MARGIN points and neither side has a FATAL flag the other lacks;
- after a first look that is an equal vote (but not equivalent), one more look, not two;
- the match ends when equal votes are more than half of the looks taken (two or more), or when
  no side can still reach a majority of the most looks the match may take; otherwise as today.
  However it ends, the summed looks and the tie rules decide it, as today.

It replaces state.more_looks for the run and changes nothing in the engine. Per judge setting
and field (all different; all equal at the top), it prints P(best), P(top 3), calls, and the
looks per match in the last two rounds, for today's rule and each margin.

    python3 benchmarks/equal_votes.py --runs 400 --margins 0,2,4
"""

import argparse
import multiprocessing
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import judging  # noqa: E402
from arena import state  # noqa: E402
from arena.judging import decide, is_equivalent, looks_after_first, round_kind  # noqa: E402

TODAY = state.more_looks


def equal_vote(v, m, margin):
    a, b = m["a"], m["b"]
    if is_equivalent(v, m):
        return True
    return v["fat"][a] == v["fat"][b] and abs(sum(v["sc"][a]) - sum(v["sc"][b])) <= margin


def more_looks_counting_equal(margin):
    def more_looks(st, m, verdicts, merged, picks):
        if st["recheck"] is None or is_equivalent(verdicts[0], m):
            return 0
        rnd = state.round_of_match(st, m)
        most = state.most_looks(st, rnd)
        crit = len(verdicts[0]["sc"][m["a"]])
        votes = [None if equal_vote(v, m, margin) else decide(v, m, crit)[0] for v in verdicts]
        taken, equal = len(votes), votes.count(None)
        if taken >= 2 and 2 * equal > taken:
            return 0
        if taken == 1:
            if votes[0] is None:
                return state.affordable_looks(st, m, 1 if most >= 2 else 0)
            kind = round_kind(len(rnd["matches"]), state.field_of(rnd), st["wave"])
            wanted = looks_after_first(kind, state.is_close(merged, m, st["recheck"]), most)
            return state.affordable_looks(st, m, wanted)
        if taken >= most:
            return 0
        need = most // 2 + 1
        left = most - taken
        # a side can still reach a majority of the most looks: one more look
        reach = any(votes.count(side) + left >= need for side in (m["a"], m["b"]))
        won = any(votes.count(side) >= need for side in (m["a"], m["b"]))
        return state.affordable_looks(st, m, 1) if reach and not won else 0
    return more_looks


def batch(task):
    margin, n, base, lo, hi, judge, extras = task
    state.more_looks = TODAY if margin is None else more_looks_counting_equal(margin)
    return [judging.outcome(n, judging.run_seed(base, n, i), judge, judging.DEFAULT_RECHECK, 1, judging.RULES,
                            extras) for i in range(lo, hi)]


def main(argv=None):
    p = argparse.ArgumentParser(prog="equal_votes.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=400)
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--margins", default="0,2,4", help="margins to try, in rubric points (comma-separated)")
    p.add_argument("--settings", default="default,blind to equivalence,noisier,better")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = p.parse_args(argv)
    started = time.time()
    margins = [None] + [int(x) for x in args.margins.split(",")]
    settings = dict(judging.SETTINGS)
    fields = [("all different", dict(judging.PLAIN)), ("100% equal", dict(judging.PLAIN, equal=1.0))]
    tasks, owners = [], []
    for sname in args.settings.split(","):
        for fname, extras in fields:
            for margin in margins:
                for lo in range(0, args.runs, 25):
                    tasks.append((margin, args.n, args.seed, lo, min(args.runs, lo + 25), settings[sname], extras))
                    owners.append((sname, fname, margin))
    with multiprocessing.Pool(args.jobs) as pool:
        results = pool.map(batch, tasks, 1)
    data = {}
    for owner, rows in zip(owners, results):
        data.setdefault(owner, []).extend(rows)
    print("$ python3 benchmarks/equal_votes.py " + " ".join(argv if argv is not None else sys.argv[1:]))
    print()
    print("%d runs per cell, N = %d, seed %d; 'today' is the engine's rule. Looks per match: in the last two "
          "rounds (at most 4 alive)." % (args.runs, args.n, args.seed))
    print()
    print("| judge | field | rule | P(best) | vs today | P(top 3) | calls | calls vs today | looks per match, "
          "last two rounds |")
    print("|---|---|---|---|---|---|---|---|---|")
    for sname in args.settings.split(","):
        for fname, _ in fields:
            today = data[(sname, fname, None)]
            for margin in margins:
                rows = data[(sname, fname, margin)]
                s = judging.summary(rows, args.n, today)
                late = sum(r[10] for r in rows) / float(max(1, sum(r[11] for r in rows)))
                print("| %s | %s | %s | %.3f | %s | %.3f | %.1f | %.3fx | %.2f |" % (
                    sname, fname, "today" if margin is None else "equal votes, margin %d" % margin, s["best"],
                    "-" if margin is None else judging.signed(s["dbest"], s["sebest"]), s["top3"], s["calls"],
                    s["ratio"], late))
    print()
    print("Finished in %.0f s with %d worker process(es)." % (time.time() - started, args.jobs))


if __name__ == "__main__":
    main()
