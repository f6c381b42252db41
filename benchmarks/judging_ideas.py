#!/usr/bin/env python3
"""judging_ideas.py: judging ideas tried in the simulator before (or instead of) the engine.

Each idea is a policy that replaces two engine functions for the run (state.start_round
for pairing, state.judge_arrived for looks and decisions) on top of the pre-rated rules
(random pairing, at most two looks: judging.OLD_RULES), then judging.py's modelled judge
plays the brackets.
The ideas the engine adopted (rated pairing, looks to a majority) are measured on the
engine itself by judging.py; this file keeps the measurements of the ones it did not
adopt reproducible, next to this file's own versions of the adopted ones for comparison:

- seed: rated pairing, strongest with weakest (unjudged agents rated 0);
  seed-top: the bye to the strongest; seed-adj: 1st v 2nd, 3rd v 4th, ...;
  seed-halves: 1st v (n/2+1)th, ...; seed-margin: rated by average margin, not total;
- third: a third look when two split; -maj: decided by majority of looks, not summed;
  late5 / bo5-last2 / bo5-last3 / bo7f: three of five (seven) in the last rounds;
  m2early: a tighter second-look margin in the first two rounds;
- carry1 / carry.5: a match's decision also weighs every earlier look at both agents.

    python3 benchmarks/judging_ideas.py --runs 1500 b seed seed+third carry1
"""

import multiprocessing
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import judging  # noqa: E402
from arena import base, estimate, jobs, pairing, state  # noqa: E402
from arena import judging as rules  # noqa: E402


# the engine's functions under one name, as the policies below were written against them
bracket = types.SimpleNamespace(**{k: getattr(m, k) for m in (base, estimate, jobs, rules, pairing, state)
                                   for k in dir(m) if not k.startswith("_")})

ORIG_START = bracket.start_round
ORIG_ARRIVED = bracket.judge_arrived
POLICY = {}


def looks_of(st):
    """{agent: [totals of every look at it]}."""
    out = {}
    for rnd in st["rounds"]:
        for m in rnd["matches"]:
            res = st["results"].get(m["id"])
            if not res or res["how"] not in ("judge", "panel"):
                continue
            k = 1
            while bracket.judge_id(m["id"], k) in st["jobs"]:
                v = st["summ"].get(bracket.judge_id(m["id"], k))
                if v and "sc" in v:
                    for a in (m["a"], m["b"]):
                        out.setdefault(a, []).append(sum(v["sc"][a]))
                k += 1
    return out


def margins_of(st):
    """{agent: [own total - opponent total per look]}."""
    out = {}
    for rnd in st["rounds"]:
        for m in rnd["matches"]:
            res = st["results"].get(m["id"])
            if not res or res["how"] not in ("judge", "panel"):
                continue
            k = 1
            while bracket.judge_id(m["id"], k) in st["jobs"]:
                v = st["summ"].get(bracket.judge_id(m["id"], k))
                if v and "sc" in v:
                    a, b = m["a"], m["b"]
                    d = sum(v["sc"][a]) - sum(v["sc"][b])
                    out.setdefault(a, []).append(d)
                    out.setdefault(b, []).append(-d)
                k += 1
    return out


def rating(st, alive):
    how = POLICY.get("rate", "mean")
    if how == "margin":
        src = margins_of(st)
    else:
        src = looks_of(st)
    return {a: (sum(src[a]) / float(len(src[a])) if src.get(a) else 0.0) for a in alive}


def seeded_round(number, alive, byes, modes, seed, score):
    rng = bracket.rng_for(seed, "round", number)
    alive = sorted(alive)
    bye = None
    if len(alive) % 2:
        fewest = min(byes.get(a, 0) for a in alive)
        eligible = [a for a in alive if byes.get(a, 0) == fewest]
        if POLICY.get("bye") == "top":
            bye = max(eligible, key=lambda a: (score[a], a))
        else:
            bye = bracket.pick_bye(alive, byes, modes, rng)
        alive.remove(bye)
    order = sorted(alive, key=lambda a: (-score[a], a))
    style = POLICY.get("pair", "fold")
    pairs = []
    if style == "fold":
        rest = list(order)
        while rest:
            a = rest.pop(0)
            # weakest of another mode if any, else weakest
            pick = None
            for b in reversed(rest):
                if modes[b] != modes[a]:
                    pick = b
                    break
            if pick is None:
                pick = rest[-1]
            rest.remove(pick)
            pairs.append((a, pick))
    elif style == "adjacent":
        for i in range(0, len(order), 2):
            pairs.append((order[i], order[i + 1]))
    elif style == "halves":  # top half vs bottom half in order: 1 v n/2+1
        h = len(order) // 2
        pairs = [(order[i], order[h + i]) for i in range(h)]
    width = max(2, len(str(len(pairs))))
    matches = []
    for k, (a, b) in enumerate(pairs, 1):
        if bracket.below(rng, 2):
            a, b = b, a
        coin = a if bracket.below(rng, 2) else b
        matches.append({"id": "r%d-m%0*d" % (number, width, k), "a": a, "b": b, "coin": coin})
    return {"n": number, "matches": matches, "bye": bye}


def start_round(st, alive):
    number = len(st["rounds"]) + 1
    if number == 1 or not POLICY.get("seed"):
        return ORIG_START(st, alive)
    modes = {a: st["cards"][a][0] for a in alive}
    rnd = seeded_round(number, alive, st["byes"], modes, st["seed"], rating(st, alive))
    st["rounds"].append(rnd)
    if rnd["bye"]:
        st["byes"][rnd["bye"]] = st["byes"].get(rnd["bye"], 0) + 1
    for m in rnd["matches"]:
        mid, a, b = m["id"], m["a"], m["b"]
        if bracket.no_solution(st, a) or bracket.no_solution(st, b):
            bracket.forfeit(st, m)
            continue
        for step in ("atk", "def"):
            bracket.add_job(st, "%s-%s-%s" % (mid, step, a))
            bracket.add_job(st, "%s-%s-%s" % (mid, step, b))
        judges = initial_judges(st, len(alive), len(rnd["matches"]))
        for k in range(1, judges + 1):
            bracket.add_job(st, bracket.judge_id(mid, k))


def initial_judges(st, alive, matches):
    judges = st["final_judges"] if alive == 2 else 1
    if judges == 1 and st["recheck"] is not None and 2 * matches <= st["wave"]:
        judges = 2
    return judges


def start_round_any(st, alive):
    if POLICY.get("seed") or POLICY.get("pack_first") is not None:
        return start_round(st, alive)
    return ORIG_START(st, alive)


def rounds_left(st):
    """Rounds still to play after the current one (0 in the final)."""
    alive = len(bracket.alive_agents(st)) + 0
    rnd = st["rounds"][-1]
    field = 2 * len(rnd["matches"]) + (1 if rnd["bye"] else 0)
    return len(estimate.field_sizes(field)) - 2


def judge_arrived(st, mid):
    m = bracket.find_match(st, mid)
    verdicts = []
    k = 1
    while bracket.judge_id(mid, k) in st["jobs"]:
        j = bracket.judge_id(mid, k)
        if st["jobs"][j]["s"] != "done":
            return
        verdicts.append(st["summ"][j])
        k += 1
    crit = len(verdicts[0]["sc"][m["a"]])
    a, b = m["a"], m["b"]
    picks = [bracket.decide(v, m, crit)[0] for v in verdicts]
    left = rounds_left(st)
    maxlooks = POLICY.get("max_looks", 2)
    if callable(maxlooks):
        maxlooks = maxlooks(left)
    n = len(verdicts)
    merged = merge(verdicts, m)
    if n == 1:
        if st["recheck"] is not None and maxlooks >= 2 and bracket.is_close(merged, m, margin_for(st, left)):
            bracket.add_job(st, bracket.judge_id(mid, 2))
            return
    elif n < maxlooks:
        # more looks while the looks so far are split (or the majority is not yet reached)
        need = maxlooks // 2 + 1
        top = max(picks.count(a), picks.count(b))
        split = top < need and (top + (maxlooks - n)) >= need
        if POLICY.get("third") == "split":
            split = top < need
        if split:
            bracket.add_job(st, bracket.judge_id(mid, n + 1))
            return
    rule_how = POLICY.get("decide", "sum")
    if n >= 3 and rule_how == "majority":
        winner = max((a, b), key=lambda x: (picks.count(x), x == picks[0]))
        tot = {x: sum(sum(v["sc"][x]) for v in verdicts) for x in (a, b)}
        bracket.close_match(st, m, winner, {"how": "panel", "n": n, "tot": tot, "agree": len(set(picks)) == 1,
                                       "votes": picks.count(winner)})
        return
    winner, rule = bracket.decide(merged, m, crit)
    if POLICY.get("carry") and merged["fat"][a] == merged["fat"][b]:
        winner = carry_decide(st, m, verdicts, winner)
    tot = {x: sum(merged["sc"][x]) for x in (a, b)}
    info = {"how": "judge", "n": n, "tot": tot, "fatal": merged["fat"], "rule": rule}
    if n >= 2:
        info["agree"] = len(set(picks)) == 1
    bracket.close_match(st, m, winner, info)


def carry_decide(st, m, verdicts, winner):
    """Pool this match's looks with every earlier look at the two agents (weight w for the past)."""
    a, b = m["a"], m["b"]
    w = POLICY["carry"]
    past = looks_of(st)
    cur = {x: [sum(v["sc"][x]) for v in verdicts] for x in (a, b)}
    n = len(verdicts)
    cur_diff = (sum(cur[a]) - sum(cur[b])) / float(n)
    pa, pb = past.get(a, []), past.get(b, [])
    if not pa or not pb:
        return winner
    past_diff = sum(pa) / float(len(pa)) - sum(pb) / float(len(pb))
    # weights ~ number of looks behind each estimate
    kp = w * 1.0 / (1.0 / len(pa) + 1.0 / len(pb))
    kc = n / 2.0
    score = (kc * cur_diff + kp * past_diff) / (kc + kp)
    if abs(score) < 1e-9:
        return winner
    return a if score > 0 else b


def merge(verdicts, m):
    if len(verdicts) == 1:
        return verdicts[0]
    sides = (m["a"], m["b"])
    sc = {x: [sum(v["sc"][x][i] for v in verdicts) for i in range(len(verdicts[0]["sc"][x]))] for x in sides}
    fat = {x: sum(1 for v in verdicts if v["fat"][x]) * 2 > len(verdicts) or all(v["fat"][x] for v in verdicts)
           for x in sides}
    return {"sc": sc, "fat": fat, "conf": "high"}


def margin_for(st, left):
    mfn = POLICY.get("margin")
    if mfn is None:
        return st["recheck"]
    return mfn(left) if callable(mfn) else mfn


def install(policy):
    POLICY.clear()
    POLICY.update(policy)
    state.start_round = start_round_any
    state.ARRIVALS["judge_arrived"] = lambda st, job, out=None: judge_arrived(st, jobs.match_of(job))


POLICIES = {
    "a": None,
    "b": {},
    "seed": {"seed": True},
    "seed-top": {"seed": True, "bye": "top"},
    "seed-margin": {"seed": True, "rate": "margin"},
    "seed-adj": {"seed": True, "pair": "adjacent"},
    "seed-halves": {"seed": True, "pair": "halves"},
    "third": {"max_looks": 3},
    "third-maj": {"max_looks": 3, "decide": "majority"},
    "seed+third": {"seed": True, "max_looks": 3},
    "seed+third-maj": {"seed": True, "max_looks": 3, "decide": "majority"},
    "seed+late5": {"seed": True, "max_looks": lambda left: 5 if left == 0 else 3},
    "seed+late5-maj": {"seed": True, "max_looks": lambda left: 5 if left == 0 else 3, "decide": "majority"},
    "carry1": {"carry": 1.0},
    "carry.5": {"carry": 0.5},
    "seed+carry1": {"seed": True, "carry": 1.0},
    "seed+third+carry1": {"seed": True, "max_looks": 3, "carry": 1.0},
    "seed+third+carry.5": {"seed": True, "max_looks": 3, "carry": 0.5},
}


def batch(task):
    n, base, lo, hi, judge, recheck, fj, pol = task
    if pol is None:
        recheck = None
        pol = {}
    pol = POLICIES[pol] if isinstance(pol, str) else pol
    install(pol if pol is not None else {})
    return [judging.outcome(n, judging.run_seed(base, n, i), judge, recheck, fj) for i in range(lo, hi)]


def main():
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=400)
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--settings", default="default")
    p.add_argument("policies", nargs="+", choices=sorted(POLICIES))
    args = p.parse_args()
    print("$ python3 benchmarks/judging_ideas.py " + " ".join(sys.argv[1:]))
    print()
    print("| judge | policy | P(best wins) | vs plain | P(top 3) | vs plain | calls vs plain | matches with 2+ looks |")
    print("|---|---|---|---|---|---|---|---|")
    settings = dict(judging.SETTINGS)
    tasks, owners = [], []
    for sname in args.settings.split(","):
        for pol in ["a"] + args.policies:
            for lo in range(0, args.runs, 50):
                tasks.append((args.n, 1, lo, min(args.runs, lo + 50), settings[sname], bracket.DEFAULT_RECHECK, 1,
                              None if pol == "a" else pol))
                owners.append((sname, pol))
    with multiprocessing.Pool(2) as pool:
        res = pool.map(batch, tasks, 1)
    data = {}
    for o, r in zip(owners, res):
        data.setdefault(o, []).extend(r)
    for sname in args.settings.split(","):
        plain = data[(sname, "a")]
        for pol in ["a"] + args.policies:
            s = judging.summary(data[(sname, pol)], args.n, plain)
            print("| %s | %s | %.3f | %s | %.3f | %s | %.3fx | %.2f |" % (
                sname, pol, s["best"], judging.signed(s["dbest"], s["sebest"]), s["top3"],
                judging.signed(s["dtop3"], s["setop3"]), s["ratio"], s["looks"]))


POLICIES.update({
    "seed+bo5-last2": {"seed": True, "max_looks": lambda left: 5 if left <= 1 else 3},
    "seed+bo5-last3": {"seed": True, "max_looks": lambda left: 5 if left <= 2 else 3},
    "seed+bo7f": {"seed": True, "max_looks": lambda left: 7 if left == 0 else 5 if left == 1 else 3},
    "seed+third+m2early": {"seed": True, "max_looks": 3, "margin": lambda left: 2 if left >= 5 else 4},
    "seed+bo5-last2+carry1": {"seed": True, "max_looks": lambda left: 5 if left <= 1 else 3, "carry": 1.0},
    "seed-top+bo5-last2": {"seed": True, "bye": "top", "max_looks": lambda left: 5 if left <= 1 else 3},
})


if __name__ == "__main__":
    main()
