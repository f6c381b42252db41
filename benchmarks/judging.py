#!/usr/bin/env python3
"""judging.py: how often does the truly best solution win an arena bracket?

Runs the real engine (new_state / apply: dealing, pairing,
byes, second looks, scoring) many times in memory, with a modelled judge in
place of sub-agents:

- every agent has a latent quality q ~ Normal(0, 1); the bottom FATAL_SHARE of
  the quality distribution has a real fatal flaw;
- a judge sees q + noise (sd sigma) + a position bias for the side shown
  first, puts it on the 100-point rubric (65 + 10 points per unit of quality,
  split over the criteria in proportion to their maxima), flags a real FATAL
  unless it misses it, flags a false one now and then, and says "low"
  confidence when the totals it gives are very close;
- the side shown first is the engine's own choice (judge_sides), so a
  second look sees the pair in the swapped order, as in a real run.

Every sub-agent call counts: spawns, attacks, defences, judges, second looks.
Only getrandbits is used, so a seed gives the same numbers on Python 3.8+.

    python3 benchmarks/judging.py            # the full report (see --help)
    python3 benchmarks/judging.py --quick    # a rough look in about a minute
"""

import argparse
import contextlib
import math
import multiprocessing
import os
import statistics
import sys
import time
from collections import namedtuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "skills", "arena"))

from arena import state  # noqa: E402
from arena.base import DEFAULT_RECHECK, EQUAL_MARGIN, JUDGES_PER_MATCH, LATE_FIELD, MOST_LOOKS, below, rng_for  # noqa: E402
from arena.jobs import agent_ids, job_kind, judge_id, match_of  # noqa: E402
from arena.judging import PROBE_SHARE, SETTLE_SHARE, decide  # noqa: E402
from arena.schedule import priority, spawn_positions  # noqa: E402
from arena.state import apply, deps_done, find_match, judge_sides, new_state, round_done  # noqa: E402

SIZES = (15, 12, 12)
RUBRIC_MAX = (30, 25, 20, 15, 10)
CENTRE = 65.0
POINTS_PER_UNIT = 10.0
TWO_53 = float(1 << 53)

# sigma: sd of a judge's error in units of quality (x10 = rubric points);
# bias: added to the side shown first; false_fatal: chance of flagging a
# FATAL on a solution without one; miss_fatal: chance of missing a real one;
# fatal_share: share of the field with a real fatal flaw (the worst ones);
# low_conf: the judge says "low" when its totals differ by less than this;
# corr: share of the error variance that every judge of a match repeats
# (0 = each look is an independent opinion).
# eq_miss: chance a judge fails to call two truly equal solutions equivalent; eq_false:
# chance it calls a pair equivalent that differs by less than EQ_CLOSE (half a rubric point).
Judge = namedtuple("Judge", "sigma bias false_fatal miss_fatal fatal_share low_conf corr eq_miss eq_false")
EQ_CLOSE = 0.05

# Calibrated with consistency(): the same pair judged in both orders gets the
# same winner about 80% (DEFAULT), 70% (NOISY) and 90% (BETTER) of the time.
DEFAULT = Judge(sigma=0.42, bias=0.2, false_fatal=0.02, miss_fatal=0.2, fatal_share=0.2, low_conf=2, corr=0.0,
                eq_miss=0.1, eq_false=0.3)
SETTINGS = [
    ("default", DEFAULT),
    ("noisier", DEFAULT._replace(sigma=1.0)),
    ("better", DEFAULT._replace(sigma=0.17, bias=0.1, false_fatal=0.01, miss_fatal=0.1)),
    ("no position bias", DEFAULT._replace(bias=0.0)),
    ("correlated errors", DEFAULT._replace(sigma=0.74, corr=0.5)),
    ("blind to equivalence", DEFAULT._replace(eq_miss=1.0, eq_false=0.0)),
    ("equivalence-happy", DEFAULT._replace(eq_miss=0.0, eq_false=1.0)),
]
PERFECT = Judge(sigma=0.0, bias=0.0, false_fatal=0.0, miss_fatal=0.0, fatal_share=0.2, low_conf=0, corr=0.0,
                eq_miss=0.0, eq_false=0.0)

# How later rounds are paired and how many looks a match may take: RULES are the engine's
# (rated pairing from round 2, looks to a majority); OLD_RULES the ones before them
# (random pairing every round, at most two looks), which only this simulator still
# plays, by standing in for two engine functions (old_rules below).
OLD_RULES = ("drawn", None)
RULES = ("rated", list(MOST_LOOKS))


@contextlib.contextmanager
def playing(rules):
    """The engine with rules in force: the old ones replace state.round_ratings (drawn:
    every round paired at random) and state.most_looks (at most two looks a match)."""
    pairing, most = rules
    saved = state.round_ratings, state.most_looks
    if pairing == "drawn":
        state.round_ratings = lambda st, number, alive: None
    if most is None:
        state.most_looks = lambda st, rnd: 0 if st["recheck"] is None else 2
    try:
        yield
    finally:
        state.round_ratings, state.most_looks = saved

# (key, label, second-look margin or None, judges in the final, rules)
VARIANTS = [
    ("a", "plain bracket", None, 1, OLD_RULES),
    ("b", "second look at close matches, margin %d (the default until rated pairing)" % DEFAULT_RECHECK,
     DEFAULT_RECHECK, 1, OLD_RULES),
    ("c", "every match judged in both orders", 100, 1, OLD_RULES),
    ("e", "(b) + rated pairing from round 2", DEFAULT_RECHECK, 1, ("rated", None)),
    ("f", "(b) + looks to a majority: a third look when two split, three of five in the last two rounds",
     DEFAULT_RECHECK, 1, ("drawn", list(MOST_LOOKS))),
    ("g", "(e) + (f): rated pairing and looks to a majority (the default)", DEFAULT_RECHECK, 1, RULES),
]
# every judge setting plays these; the default judge plays them all
EVERY_SETTING = ("a", "b", "g")


# ---------------------------------------------------------------- seeded draws

def uniform(rng):
    return rng.getrandbits(53) / TWO_53


def normal(rng):
    """A standard normal from getrandbits only (Box-Muller)."""
    u1 = (rng.getrandbits(53) + 0.5) / TWO_53
    u2 = rng.getrandbits(53) / TWO_53
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


def fatal_line(judge):
    """Qualities below this have a real fatal flaw."""
    if judge.fatal_share <= 0:
        return -math.inf
    return statistics.NormalDist().inv_cdf(judge.fatal_share)


def field(n, seed, equal=0.0, above=0):
    """{agent: latent quality}, the same for every judge setting and variant. equal: the share
    of the field whose solutions are the same answer (all correct and interchangeable): below
    the best `above` agents, the next round(equal * n) qualities are set to the best of them,
    so they tie, and the rest of the field keeps its draws."""
    rng = rng_for(seed, "quality")
    quality = {a: normal(rng) for a in agent_ids(n)}
    k = int(round(equal * n))
    if k >= 2:
        group = sorted(quality, key=lambda a: -quality[a])[above:above + k]
        best = quality[group[0]]
        for a in group:
            quality[a] = best
    return quality


# ---------------------------------------------------------------- the modelled judge

def split_total(total):
    """A rubric scorecard summing to total (0..100), each criterion in proportion to its maximum."""
    raw = [total * top / 100.0 for top in RUBRIC_MAX]
    card = [int(x) for x in raw]
    # largest remainders get the points lost to rounding down
    order = sorted(range(len(raw)), key=lambda i: (card[i] - raw[i], i))
    for i in order[:total - sum(card)]:
        card[i] += 1
    return card


CARDS = [split_total(t) for t in range(101)]


def seen_total(seen):
    """The integer total a judge gives for a perceived quality."""
    return min(100, max(0, int(math.floor(CENTRE + POINTS_PER_UNIT * seen + 0.5))))


def judge_pair(qa, qb, flawed_a, flawed_b, a_first, judge, rng, shared):
    """(card a, card b, fatal a, fatal b, conf) of one look at a pair.

    rng draws this look's own error; shared is the pair of error terms every
    look at this match repeats (used when judge.corr > 0).
    """
    own = math.sqrt(1.0 - judge.corr)
    rep = math.sqrt(judge.corr)
    out = []
    for k, (q, flawed) in enumerate(((qa, flawed_a), (qb, flawed_b))):
        noise = judge.sigma * (own * normal(rng) + rep * shared[k]) if judge.sigma else 0.0
        first = (k == 0) == a_first
        u = uniform(rng)
        fat = (u >= judge.miss_fatal) if flawed else (u < judge.false_fatal)
        out.append((seen_total(q + noise + (judge.bias if first else 0.0)), fat))
    (ta, fa), (tb, fb) = out
    conf = "low" if abs(ta - tb) < judge.low_conf else "high"
    # a judge that finds the two equivalent gives them one scorecard (and the engine drops
    # the claim when either side is flagged FATAL)
    # (drawn only for pairs that can be equivalent, so other looks draw what they always did)
    eq = False
    if qa == qb and judge.eq_miss < 1:
        eq = uniform(rng) >= judge.eq_miss
    elif abs(qa - qb) < EQ_CLOSE and judge.eq_false > 0:
        eq = uniform(rng) < judge.eq_false
    if eq:
        ta = tb = (ta + tb) // 2
    return CARDS[ta], CARDS[tb], fa, fb, conf, eq


def verdict(st, job, judge, world):
    """The judge job's "out", as check_output would summarise a real verdict."""
    quality, line, seed = world[:3]
    m = find_match(st, match_of(job))
    a, b = m["a"], m["b"]
    sides, names = judge_sides(st, job, 1)
    rng = rng_for(seed, "judge", job)
    shared = (0.0, 0.0)
    if judge.corr:
        srng = rng_for(seed, "shared", m["id"], a, b)
        shared = (normal(srng), normal(srng))
    ca, cb, fa, fb, conf, eq = judge_pair(quality[a], quality[b], quality[a] < line, quality[b] < line,
                                          sides[0] == a, judge, rng, shared)
    out = {"sc": {a: list(ca), b: list(cb)}, "fat": {a: fa, b: fb}, "conf": conf, "why": "",
           "order": sides, "names": names}
    if eq:
        out["eq"] = True
    return out


# ---------------------------------------------------------------- one tournament

# What the engine does around the bracket, per cell: equal (the share of the field that
# tied at the top, see field), settle ("never", or "auto": finish whenever a settle offer
# comes), merge (the checked merge after the final), run_code (a probe when half a round's
# matches were equivalent). PLAIN is the bracket alone, as the variants above play it.
PLAIN = {"equal": 0.0, "above": 0, "settle": "never", "merge": False, "run_code": False, "gain": 0.0,
         "margin": EQUAL_MARGIN, "field_look": None}

# The checked merge's challenger: the winner's quality plus a draw from Normal(gain, sd), in
# quality units (0.1 = a rubric point; a cell's extras give the gain): it may come out better
# or worse than the winner.
MERGE_SD = 0.2


def init_event(n, seed, recheck, final_judges, extras=PLAIN):
    """The init event cmd_init would journal, minus the files."""
    return {"e": "init", "seq": 1, "run": "sim-%d" % seed, "agents": n, "seed": seed, "wave": 10, "at": 0.0,
            "fence": "=====ARENA-DATA-000000000000=====", "baseline": False, "model": None, "judge_model": None,
            "recheck": recheck, "final_judges": final_judges, "pack": True, "batch_waves": 10,
            "mode": "direct", "sizes": list(SIZES), "pairing": RULES[0], "most_looks": RULES[1],
            "settle": extras["settle"], "merge": extras["merge"], "run_code": extras["run_code"],
            "equal_margin": extras.get("margin", EQUAL_MARGIN), "field_look": extras.get("field_look")}


def output_of(st, job, judge, world):
    kind = job_kind(job)
    if kind == "spawn":
        return {"sol": "out/%s.md" % job}
    if kind == "atk":
        return {"labels": ""}
    if kind == "def":
        return {"ans": "", "sol": "out/%s-sol-%s.md" % (match_of(job), job.split("-")[3])}
    quality, _, seed, gain = world
    if kind == "probe":
        # the survivors' code run on the same inputs: one group per distinct quality
        groups = {}
        for a in state.probed_agents(st, job):
            groups.setdefault(quality[a], []).append(a)
        return {"groups": [sorted(g) for g in groups.values()], "inputs": 1000}
    if kind == "merge":
        info = st["merged"]
        quality[info["challenger"]] = quality[info["base"]] + gain + MERGE_SD * normal(rng_for(seed, "merge-gain"))
        return {"taken": ["a part of the runner-up's"], "sol": "out/merge-sol.md"}
    return verdict(st, job, judge, world)


def measured_groups(alive, world):
    """The survivors as the engine's run of the bench groups them: one group per distinct
    quality (other benchmarks replace this with a bench that sees less)."""
    groups = {}
    for a in alive:
        groups.setdefault(world[0][a], []).append(a)
    return list(groups.values())


def tournament(n, seed, judge, recheck=None, final_judges=1, rules=OLD_RULES, extras=PLAIN):
    """Run one tournament; returns (champion, state, calls, qualities)."""
    with playing(rules):
        return play_tournament(n, seed, judge, recheck, final_judges, extras)


def play_tournament(n, seed, judge, recheck, final_judges, extras=PLAIN):
    st = new_state(init_event(n, seed, recheck, final_judges, extras), SIZES)
    st["seq"] = 1
    world = (field(n, seed, extras["equal"], extras["above"]), fatal_line(judge), seed, extras["gain"])
    if extras.get("bench"):
        # a bench whose tests tell every two survivors of different quality apart (an upper
        # bound: a real bench holds only what its jobs added), measured before a round closes
        st["bench_on"], st["bench"] = True, [{"id": "b01", "kind": "test"}]
    jobs = st["jobs"]
    pending, calls = list(jobs), 0
    seen = set(jobs)
    while st["ship"] is None:
        # (an early finish of the field deletes the withdrawn agents' match jobs)
        ready = sorted(j for j in pending if j in jobs and jobs[j]["s"] == "ready" and deps_done(st, j))
        if st["field_look"]:
            # the early look counts spawns handed out: they go a wave at a time, in the engine's order
            positions = spawn_positions(st)
            spawns = sorted((j for j in ready if job_kind(j) == "spawn"), key=lambda j: priority(st, j, positions))
            ready = [j for j in ready if job_kind(j) != "spawn"] + spawns[:st["wave"]]
        if ready:
            # like collect: every output of a wave is read against the same state, then applied in order
            outs = [(j, output_of(st, j, judge, world)) for j in ready]
            for j, out in outs:
                apply(st, {"e": "done", "job": j, "out": out, "seq": st["seq"] + 1}, checked=False)
                calls += 1
        elif round_done(st):
            if state.measure_due(st):
                groups = measured_groups(state.alive_agents(st), world)
                apply(st, {"e": "measured", "round": len(st["rounds"]), "res": {}, "tests": ["b01"],
                           "split": ["b01"] if len(groups) > 1 else [],
                           "groups": sorted(sorted(g) for g in groups), "seq": st["seq"] + 1}, checked=False)
            apply(st, {"e": "advance", "round": len(st["rounds"]), "seq": st["seq"] + 1}, checked=False)
        else:
            raise RuntimeError("seed %d: nothing ready and the round is not done" % seed)
        pending = [j for j in pending if j in jobs and jobs[j]["s"] == "ready"]
        if len(jobs) != len(seen) or any(j not in seen for j in jobs):
            new = [j for j in jobs if j not in seen]
            pending += new
            seen.update(new)
    return st["ship"], st, calls, world[0]


def round_kind(st, rnd):
    """big: judged once unless close; small: two looks side by side; late: the last two rounds."""
    if 2 * len(rnd["matches"]) + (1 if rnd["bye"] else 0) <= LATE_FIELD:
        return "late"
    return "small" if 2 * len(rnd["matches"]) <= st["wave"] else "big"


def outcome(n, seed, judge, recheck=None, final_judges=1, rules=OLD_RULES, extras=PLAIN):
    """One tournament as numbers: (rank of the text that ships, 1 = as good as the best
    competitor; calls; matches with more than one look; matches; second looks for being close
    in rounds too big to judge twice up front; matches of those rounds; then judge calls and
    matches in big, small, late rounds; then whether it finished early on a settle offer,
    whether the checked merge shipped, looks that said equivalent, of those the ones whose
    two sides were truly equal, and the regret: rubric points between the best competitor and
    the text that ships; and the agents an early look at the field withdrew)."""
    shipped, st, calls, quality = tournament(n, seed, judge, recheck, final_judges, rules, extras)
    field_ids = agent_ids(n)
    rank = 1 + sum(1 for a in field_ids if quality[a] > quality[shipped])
    looks = sum(1 for r in st["results"].values() if r.get("how") == "judge" and r.get("n", 1) >= 2)
    # rounds too big to judge twice up front give a second look only to close matches
    big = [m["id"] for r in st["rounds"] if 2 * len(r["matches"]) > st["wave"] for m in r["matches"]]
    close = sum(1 for mid in big if judge_id(mid, 2) in st["jobs"])
    per_kind = {"big": [0, 0], "small": [0, 0], "late": [0, 0]}
    for r in st["rounds"]:
        count = per_kind[round_kind(st, r)]
        for m in r["matches"]:
            count[0] += sum(1 for k in range(1, 10) if judge_id(m["id"], k) in st["jobs"])
            count[1] += 1
    settled = 1 if st["settle"] and st["settle"]["choice"] == "finish" else 0
    merged = 1 if st["merged"] and shipped == st["merged"]["challenger"] else 0
    eq_looks = eq_right = 0
    for job, summ in st["summ"].items():
        if summ.get("eq"):
            m = find_match(st, match_of(job))
            eq_looks += 1
            eq_right += quality[m["a"]] == quality[m["b"]]
    # how far the text that ships falls short of the best competitor, in rubric points (a
    # merged challenger may beat every competitor: a negative regret)
    regret = POINTS_PER_UNIT * (max(quality[a] for a in field_ids) - quality[shipped])
    withdrawn = len((st["field"] or {}).get("withdrawn", []))
    return (rank, calls, looks, len(st["results"]), close, len(big)) + tuple(
        x for kind in ("big", "small", "late") for x in per_kind[kind]) + (settled, merged, eq_looks, eq_right,
                                                                           regret, withdrawn)


# ---------------------------------------------------------------- position consistency

def consistency(judge, pairs=40000, seed=1):
    """Chance that one pair, judged once in each order, gets the same winner."""
    rng = rng_for(seed, "consistency")
    line = fatal_line(judge)
    judge = judge._replace(eq_miss=1.0, eq_false=0.0)  # the order's effect on scores, not equivalence calls
    m = {"a": "x", "b": "y", "coin": "x"}
    same = 0
    for _ in range(pairs):
        qa, qb = normal(rng), normal(rng)
        shared = (normal(rng), normal(rng))
        picks = []
        for a_first in (True, False):
            ca, cb, fa, fb, _, _ = judge_pair(qa, qb, qa < line, qb < line, a_first, judge, rng, shared)
            picks.append(decide({"sc": {"x": ca, "y": cb}, "fat": {"x": fa, "y": fb}}, m, 5)[0])
        same += picks[0] == picks[1]
    return same / float(pairs)


# ---------------------------------------------------------------- many tournaments

def run_seed(base, n, i):
    """The seed of run i; every variant and judge setting plays the same fields and brackets."""
    return below(rng_for(base, "run", n, i), 10 ** 9)


def batch(task):
    """[outcome tuple] of runs lo..hi-1 of one cell (a worker's unit)."""
    n, base, lo, hi, judge, recheck, final_judges, rules, extras = task
    return [outcome(n, run_seed(base, n, i), judge, recheck, final_judges, rules, extras) for i in range(lo, hi)]


def measure(cells, runs, base, pool=None, chunk=50):
    """{key: [outcome tuple] per run} for cells {key: (n, judge, recheck, final_judges[, rules[, extras]])}."""
    tasks, owners = [], []
    for key, cell in cells.items():
        n, judge, recheck, fj = cell[:4]
        rules = cell[4] if len(cell) > 4 else OLD_RULES
        extras = cell[5] if len(cell) > 5 else PLAIN
        for lo in range(0, runs, chunk):
            tasks.append((n, base, lo, min(runs, lo + chunk), judge, recheck, fj, rules, extras))
            owners.append(key)
    results = pool.map(batch, tasks, 1) if pool else [batch(t) for t in tasks]
    out = {key: [] for key in cells}
    for key, part in zip(owners, results):
        out[key].extend(part)
    return out


def play_cells(batch, cells, runs, chunk=50):
    """{key: [outcome per run]}: cells {key: (n, seed, more...)} played in chunks of runs on every
    core, each chunk as batch((n, seed, lo, hi, more...)); for scripts with cells of their own."""
    tasks, owners = [], []
    for key, (n, seed, *more) in cells.items():
        for lo in range(0, runs, chunk):
            tasks.append((n, seed, lo, min(runs, lo + chunk)) + tuple(more))
            owners.append(key)
    with multiprocessing.Pool(os.cpu_count() or 1) as pool:
        parts = pool.map(batch, tasks, 1)
    rows = {key: [] for key in cells}
    for owner, part in zip(owners, parts):
        rows[owner].extend(part)
    return rows


def summary(rows, n, plain=None):
    """Rates and means of one cell; plain is the (a) cell for paired differences."""
    runs = float(len(rows))
    s = {
        "best": sum(r[0] == 1 for r in rows) / runs,
        "top3": sum(r[0] <= 3 for r in rows) / runs,
        "top10": sum(r[0] <= 10 for r in rows) / runs,
        "pct": sum(100.0 * (n - r[0]) / (n - 1) for r in rows) / runs,
        "calls": sum(r[1] for r in rows) / runs,
        "looks": sum(r[2] for r in rows) / float(sum(r[3] for r in rows)),
        "close": sum(r[4] for r in rows) / float(max(1, sum(r[5] for r in rows))),
    }
    if plain is not None:
        s["ratio"] = s["calls"] / (sum(r[1] for r in plain) / runs)
        for name, hit in (("best", lambda r: r[0] == 1), ("top3", lambda r: r[0] <= 3)):
            d = [hit(x) - hit(y) for x, y in zip(rows, plain)]
            mean = sum(d) / runs
            sd = math.sqrt(max(0.0, sum((x - mean) ** 2 for x in d) / max(1.0, runs - 1)))
            s["d" + name], s["se" + name] = mean, sd / math.sqrt(runs)
    return s


def per_match(rows):
    """Mean judge calls per match in big / small / last-two rounds (see outcome)."""
    out = []
    for i in (6, 8, 10):
        matches = sum(r[i + 1] for r in rows)
        out.append("%.2f" % (sum(r[i] for r in rows) / float(matches)) if matches else "-")
    return " / ".join(out)


def signed(d, se):
    return "%+.3f ± %.3f" % (d, 2 * se)


# ---------------------------------------------------------------- the report

def report(args, out=sys.stdout):
    started = time.time()
    runs = args.runs
    pool = multiprocessing.Pool(args.jobs) if args.jobs > 1 else None
    try:
        say = lambda text="": out.write(text + "\n")
        say("# Does the best solution win? Arena bracket with a modelled judge")
        say()
        if args.equivalence_only:
            equivalence_report(args, pool, say)
            say("Finished in %.0f s with %d worker process(es)." % (time.time() - started, max(1, args.jobs)))
            return
        say("Each run: N agents with latent quality ~ Normal(0,1), the bottom %d%% with a real fatal flaw; "
            "the real engine (bracket.py new_state/apply) plays the bracket; %d runs per cell, seed %d, "
            "same fields and brackets for every variant (differences are paired; ± is 2 standard errors)."
            % (round(100 * DEFAULT.fatal_share), runs, args.seed))
        say()
        say("## Judge settings")
        say()
        say("| setting | sigma (quality sd) | position bias | false FATAL | missed FATAL | low conf below | "
            "shared error | position consistency |")
        say("|---|---|---|---|---|---|---|---|")
        for name, j in SETTINGS:
            say("| %s | %.2f (%.1f pts) | %.2f (%.1f pts) | %.0f%% | %.0f%% | %d pts | %.0f%% | %.3f |" % (
                name, j.sigma, 10 * j.sigma, j.bias, 10 * j.bias, 100 * j.false_fatal, 100 * j.miss_fatal,
                j.low_conf, 100 * j.corr, consistency(j)))
        say()
        say("Position consistency: chance that a pair of random agents, judged once in each order, gets the same "
            "winner (40,000 pairs).")
        say()
        say("Variants: " + "; ".join("(%s) %s" % (v[0], v[1]) for v in VARIANTS) + ".")
        say()
        say("(b): every match of a round is judged twice (in swapped orders) when the round's judges fit in half "
            "a wave (2 x matches <= wave = 10); in bigger rounds a match gets its second look only when the first "
            "verdict is close; two looks are summed. (f) and (g) add: when two looks pick different winners a "
            "third is asked, and in the last two rounds (at most %d alive; three looks side by side) looks go on "
            "until one side has three of five; looks are always summed. (e) and (g) pair rounds 2 on by each "
            "survivor's average total over all its looks so far, strongest with weakest (round 1 stays drawn)."
            % LATE_FIELD)
        say()
        say("Judge calls per match: big rounds (judged once unless close) / small rounds (two looks side by side) "
            "/ the last two rounds. `plan` estimates them with arena.base.JUDGES_PER_MATCH = %s."
            % ", ".join("%s %.2f" % (k, JUDGES_PER_MATCH[k]) for k in ("big", "small", "late")))
        cells = {}
        for n in (100, 16):
            for name, j in SETTINGS:
                for v in VARIANTS:
                    if name == "default" or v[0] in EVERY_SETTING:
                        cells[(n, name, v[0])] = (n, j, v[2], v[3], v[4])
        data = measure(cells, runs, args.seed, pool)
        table_head = ("| variant | P(best wins) | vs (a) | vs (b) | P(top 3) | vs (b) | P(top 10) | mean percentile | "
                      "calls | calls vs (a) | judge calls per match |")
        for n in (100, 16):
            for name, _ in SETTINGS:
                say()
                say("## N = %d, %s judge" % (n, name))
                say()
                say(table_head)
                say("|---|---|---|---|---|---|---|---|---|---|---|")
                plain, old = data[(n, name, "a")], data[(n, name, "b")]
                for v in VARIANTS:
                    if (n, name, v[0]) not in data:
                        continue
                    rows = data[(n, name, v[0])]
                    s, t = summary(rows, n, plain), summary(rows, n, old)
                    say("| (%s) %s | %.3f | %s | %s | %.3f | %s | %.3f | %.1f | %.1f | %.3fx | %s |" % (
                        v[0], v[1], s["best"], signed(s["dbest"], s["sebest"]) if v[0] != "a" else "-",
                        signed(t["dbest"], t["sebest"]) if v[0] not in "ab" else "-",
                        s["top3"], signed(t["dtop3"], t["setop3"]) if v[0] not in "ab" else "-", s["top10"],
                        s["pct"], s["calls"], s["ratio"], per_match(rows)))
        say()
        say("## The goal")
        say()
        for n in (100, 16):
            a = summary(data[(n, "default", "a")], n)
            g = summary(data[(n, "default", "g")], n, data[(n, "default", "a")])
            ok = g["best"] >= 0.72 and g["top3"] >= 0.95 and g["ratio"] <= 1.10
            say("N = %d, default judge, (g): P(best) %.3f (target >= 0.72), P(top 3) %.3f (target >= 0.95), "
                "calls %.3fx the plain bracket (target <= 1.10x): %s." % (
                    n, g["best"], g["top3"], g["ratio"], "holds" if ok else "does NOT hold"))
            say()
        worse = []
        for n in (100, 16):
            for name, _ in SETTINGS:
                s = summary(data[(n, name, "g")], n, data[(n, name, "b")])
                for what in ("best", "top3"):
                    if s["d" + what] < 0:
                        worse.append("N=%d %s %s %s%s" % (n, name, what, signed(s["d" + what], s["se" + what]),
                                                          " (significant)" if s["d" + what] < -2 * s["se" + what]
                                                          else " (within noise)"))
        say("Settings where (g) is below (b): %s." % ("; ".join(worse) if worse else "none"))
        say()
        if args.equivalence_runs:
            equivalence_report(args, pool, say)
        say("Finished in %.0f s with %d worker process(es)." % (time.time() - started, max(1, args.jobs)))
    finally:
        if pool:
            pool.close()
            pool.join()


# ---------------------------------------------------------------- equivalent solutions

# Fields from all different (today's default) to all equal: the share of the field whose
# solutions tie at the top (field's equal), and one where three different, better solutions
# sit above an equal 80% (ABOVE: the settle rule must not lose them).
EQUAL_FIELDS = (0.0, 0.25, 0.5, 0.75, 0.9, 1.0)
ABOVE = 3
# (key, label, extras, equivalence on): what the engine does around the bracket
EQ_VARIANTS = [
    ("n", "judges never say equivalent (as before)", PLAIN, False),
    ("q", "equivalent verdicts", PLAIN, True),
    ("s", "equivalent verdicts, settle offers taken (--settle auto)", dict(PLAIN, settle="auto"), True),
    ("p", "(s) in a --run-code run: a probe when half a round or more was equivalent", dict(PLAIN, settle="auto",
                                                                                    run_code=True), True),
    ("b", "(p) with a bench whose tests tell apart every two survivors of different quality", dict(
        PLAIN, settle="auto", run_code=True, bench=True), True),
    ("m", "(q) + the checked merge, challenger no better on average", dict(PLAIN, merge=True), True),
    ("M", "(q) + the checked merge, challenger 1 point better on average", dict(PLAIN, merge=True, gain=0.1), True),
]


def eq_judge(judge, on):
    return judge if on else judge._replace(eq_miss=1.0, eq_false=0.0)


def equivalence_report(args, pool, say):
    runs = args.equivalence_runs
    say()
    say("## Equivalent solutions, a settled field, the checked merge")
    say()
    say("Fields from all different to all equal: a share of the field ties at the top (the same best answer, "
        "as when every agent solves a well-specified task); `80%% + %d above` puts %d different, better "
        "solutions above an equal 80%%. A judge calls two truly equal solutions equivalent unless it misses it "
        "(%d%% of the time by default), and calls a pair less than half a rubric point apart equivalent %d%% of "
        "the time; an equivalent look gives both sides one scorecard and ends the match (a FATAL flag on either "
        "side overrides it). A settle offer comes when every judged match of a round was equivalent or, "
        "without --run-code, at least %d/%d were (with --run-code, a probe is asked when not all but at least "
        "%d/%d were, and finds one behaviour when every survivor ties); (s) and (p) take every offer, which finishes with the leader by average score. The "
        "merge's challenger is the winner's quality plus Normal(mean, %.1f points). %d runs per cell, N = 100, "
        "rated pairing and looks to a majority, seed %d; P(best) counts the text that ships as best when no "
        "competitor is better; regret is the rubric points the text that ships falls short of the best "
        "competitor." % (ABOVE, ABOVE, round(100 * DEFAULT.eq_miss), round(100 * DEFAULT.eq_false),
                         SETTLE_SHARE[0], SETTLE_SHARE[1], PROBE_SHARE[0], PROBE_SHARE[1],
                         POINTS_PER_UNIT * MERGE_SD, runs, args.seed))
    fields = [(("%d%% equal" % round(100 * e)) if e else "all different", e, 0) for e in EQUAL_FIELDS]
    fields.append(("80%% + %d above" % ABOVE, 0.8, ABOVE))
    cells = {}
    for fname, equal, above in fields:
        for key, _, extras, on in EQ_VARIANTS:
            cells[("default", fname, key)] = (100, eq_judge(DEFAULT, on), DEFAULT_RECHECK, 1, RULES,
                                              dict(extras, equal=equal, above=above))
    for name, judge in SETTINGS[1:]:
        for fname, equal, above in (fields[0], fields[4], fields[6]):
            for key, _, extras, on in [v for v in EQ_VARIANTS if v[0] in ("n", "q", "s", "p", "b")]:
                cells[(name, fname, key)] = (100, eq_judge(judge, on), DEFAULT_RECHECK, 1, RULES,
                                             dict(extras, equal=equal, above=above))
    data = measure(cells, runs, args.seed, pool)
    say()
    say("Variants: " + "; ".join("(%s) %s" % (k, label) for k, label, _, _ in EQ_VARIANTS) + ".")
    for name, _ in SETTINGS:
        rows_of = [(f, k) for f, _, _ in fields for k, _, _, _ in EQ_VARIANTS if (name, f, k) in data]
        if not rows_of:
            continue
        say()
        say("### %s judge" % name)
        say()
        say("| field | variant | P(best) | P(top 3) | regret (points) | calls | calls vs (n) | finished early | "
            "merge shipped | equivalent looks (right) |")
        say("|---|---|---|---|---|---|---|---|---|---|")
        for fname, key in rows_of:
            rows = data[(name, fname, key)]
            base = data[(name, fname, "n")]
            s = summary(rows, 100)
            calls_n = sum(r[1] for r in base) / float(len(base))
            say("| %s | (%s) | %.3f | %.3f | %.2f | %.1f | %s | %.0f%% | %.0f%% | %.1f (%.1f) |" % (
                fname, key, s["best"], s["top3"], sum(r[16] for r in rows) / float(len(rows)), s["calls"],
                "%+.0f%%" % (100.0 * (s["calls"] / calls_n - 1)) if key != "n" else "-",
                100.0 * sum(r[12] for r in rows) / len(rows), 100.0 * sum(r[13] for r in rows) / len(rows),
                sum(r[14] for r in rows) / float(len(rows)), sum(r[15] for r in rows) / float(len(rows))))
    say()
    d0 = summary(data[("default", "all different", "s")], 100, data[("default", "all different", "n")])
    d9 = [summary(data[("default", f, "s")], 100, data[("default", f, "n")]) for f in ("90% equal", "100% equal")]
    say("Targets, default judge: on the all-different field, (s) P(best) %.3f against (n) %s (no loss: %s); "
        "when 90%% and 100%% of the field is equivalent, (s) makes %.0f%% and %.0f%% fewer calls than (n) "
        "(target: at least 35%%): %s." % (
            d0["best"], signed(d0["dbest"], d0["sebest"]), "holds" if d0["dbest"] >= -2 * d0["sebest"] else "does NOT hold",
            100 * (1 - d9[0]["ratio"]), 100 * (1 - d9[1]["ratio"]),
            "holds" if min(1 - d9[0]["ratio"], 1 - d9[1]["ratio"]) >= 0.35 else "does NOT hold"))
    say()


def main(argv=None):
    p = argparse.ArgumentParser(prog="judging.py", description="Measure how often the best solution wins the "
                                "arena bracket under a modelled judge, with and without more looks and rated pairing.")
    p.add_argument("--runs", type=int, default=1500,
                   help="tournaments per cell (default 1500: about 8 CPU-minutes, so about 5 minutes "
                   "on 2 idle cores; much longer on a busy machine)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--quick", action="store_true", help="200 runs per cell, for a rough look")
    p.add_argument("--equivalence-runs", type=int, default=400,
                   help="runs per cell of the section on equivalent solutions (0 leaves it out; default 400)")
    p.add_argument("--equivalence-only", action="store_true", help="only that section")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: all cores)")
    args = p.parse_args(argv)
    if args.quick:
        args.runs = 200
        args.equivalence_runs = min(args.equivalence_runs, 100)
    if args.runs < 2 or args.jobs < 1:
        p.error("--runs must be 2 or more and --jobs 1 or more")
    print(" ".join(["$ python3 benchmarks/judging.py"] + list(sys.argv[1:] if argv is None else argv)))
    print()
    try:
        report(args)
    except BrokenPipeError:  # the reader (head, less) went away: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
