#!/usr/bin/env python3
"""scored_settle.py: whether a bench scorer's spread over a round's survivors should hold back a settle.

On a task scored by a number every valid solution behaves as the task decides, and they differ
only in their score. Run 12 of benchmarks/real-agents.md showed what follows: judges who found
a match's two sides within the scorer's margin called it equivalent, so the round's share of
equivalent matches asked for a settle probe; the probe called every difference in score open
and found one behaviour, and the run finished with its leader by average score, a guess. This
plays that field in the judging simulator (benchmarks/judging.py), with --run-code and every
settle offer taken, under three rules for the engine's run of the bench on a round's survivors:

- never: no settle at all (the bracket to its final), for reference;
- tests: the survivors are grouped by the bench's tests only, which a field of valid solutions
  all pass: one group, so nothing is held back (the engine before the scorer grouped);
- scorer: the run's scorer groups them too: when its figures for the best and the worst
  survivor are more than the margin apart, the round's offer or probe is held back (a rule
  measured here and in run 13 of benchmarks/real-agents.md, and not adopted: see
  benchmarks/README.md).

A solution's bench score is its quality plus a fixed error of sd --scorer-sd (the bench's
instances are not the task's); the margin is in units of the field's quality sd. A look whose
two sides the scorer puts within the margin is equivalent with chance --eq-inside (else judged
as in judging.py); one beyond it goes to the side the scorer favours. The probe finds one
behaviour (it reads score differences as open). It prints P(best), P(top 3), calls and how
often the run settled, per cell.

    python3 benchmarks/scored_settle.py --runs 400 --agents 16,100
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_margin  # noqa: E402
import judging  # noqa: E402

RULES = ("never", "tests", "scorer")


def scored_pair(margin, sd, eq_inside, plain):
    """judging.judge_pair under a bench scorer: within its margin a look is equivalent with
    chance eq_inside; beyond it the look goes to the side the scorer favours."""
    decided = bench_margin.scored_pair("weigh", margin, sd, plain)

    def pair(qa, qb, flawed_a, flawed_b, a_first, judge, rng, shared):
        ca, cb, fa, fb, conf, eq = decided(qa, qb, flawed_a, flawed_b, a_first, judge, rng, shared)
        sa, sb = bench_margin.bench_score(qa, sd), bench_margin.bench_score(qb, sd)
        if abs(sa - sb) <= margin and not eq:
            eq = judging.uniform(rng) < eq_inside
            if eq:
                ta = (sum(ca) + sum(cb)) // 2
                ca = cb = judging.CARDS[ta]
        return ca, cb, fa, fb, conf, eq
    return pair


def score_groups(margin, sd):
    """The engine's groups by the scorer: from the best bench score down, each group every
    survivor within the margin of its best; one group when best and worst are within it."""
    def groups(alive, world):
        quality = world[0]
        order = sorted(alive, key=lambda a: -bench_margin.bench_score(quality[a], sd))
        score = lambda a: bench_margin.bench_score(quality[a], sd)
        if score(order[0]) - score(order[-1]) <= margin:
            return [order]
        out, head = [], None
        for a in order:
            if head is None or score(head) - score(a) > margin:
                out.append([])
                head = a
            out[-1].append(a)
        return out
    return groups


def blind_probe(plain):
    def output_of(st, job, judge, world):
        if judging.job_kind(job) == "probe":
            return {"groups": [sorted(judging.state.probed_agents(st, job))], "inputs": 1000}
        return plain(st, job, judge, world)
    return output_of


def outcome(n, seed, judge, rule, margin, sd, eq_inside):
    saved = judging.judge_pair, judging.output_of, judging.measured_groups
    judging.judge_pair = scored_pair(margin, sd, eq_inside, saved[0])
    judging.output_of = blind_probe(saved[1])
    judging.measured_groups = score_groups(margin, sd) if rule == "scorer" else (lambda alive, world: [list(alive)])
    extras = dict(judging.PLAIN, settle="never" if rule == "never" else "auto", run_code=True, bench=True)
    try:
        return judging.outcome(n, seed, judge, judging.DEFAULT_RECHECK, 1, judging.RULES, extras)
    finally:
        judging.judge_pair, judging.output_of, judging.measured_groups = saved


def batch(task):
    n, base, lo, hi, judge, rule, margin, sd, eq_inside = task
    return [outcome(n, judging.run_seed(base, n, i), judge, rule, margin, sd, eq_inside) for i in range(lo, hi)]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=400)
    p.add_argument("--agents", default="16,100")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--margin", type=float, default=0.4)
    p.add_argument("--scorer-sd", default="0.25,0.55,1")
    p.add_argument("--eq-inside", type=float, default=0.75)
    p.add_argument("--settings", default="default,better,noisier")
    args = p.parse_args(argv)
    settings = dict(judging.SETTINGS)
    cells = [(n, name, rule, args.margin, float(sd), args.eq_inside) for n in (int(x) for x in args.agents.split(","))
             for name in args.settings.split(",") for sd in args.scorer_sd.split(",") for rule in RULES]
    start = time.time()
    rows = judging.play_cells(batch, {cell: (cell[0], args.seed, settings[cell[1]]) + cell[2:] for cell in cells},
                              args.runs)
    print("scored_settle.py: %d runs per cell, seed %d; a field of valid solutions that differ only in score; a "
          "bench scorer (error sd in field sd units, margin %g); within the margin a look is equivalent with chance "
          "%g; the probe finds one behaviour; every settle offer taken; the change from `tests` with two standard "
          "errors" % (args.runs, args.seed, args.margin, args.eq_inside))
    print("| agents | judge | scorer sd | rule | P(best) | P(top 3) | calls | settled | vs tests: P(best) | P(top 3) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for cell in cells:
        n, name, rule, margin, sd, eq_inside = cell
        base = rows[(n, name, "tests", margin, sd, eq_inside)]
        s = judging.summary(rows[cell], n, base)
        settled = sum(r[12] for r in rows[cell]) / float(len(rows[cell]))
        print("| %d | %s | %g | %s | %.3f | %.3f | %.1f | %.0f%% | %s | %s |" % (
            n, name, sd, rule, s["best"], s["top3"], s["calls"], 100 * settled,
            "-" if rule == "tests" else judging.signed(s["dbest"], s["sebest"]),
            "-" if rule == "tests" else judging.signed(s["dtop3"], s["setop3"])))
    print("(%.0f s)" % (time.time() - start))


if __name__ == "__main__":
    main()
