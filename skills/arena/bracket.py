#!/usr/bin/env python3
"""bracket.py: the bookkeeping engine of the /arena skill.

One run lives in .arena/<run>/: state.json (the truth), journal.jsonl (every
change, in order, from which state.json can be rebuilt), the task, the briefs
sub-agents read (b/), the files they write (out/) and the judges' blinded
inputs (j/). Every command is "lock, load, decide, journal, save".

Standard library only, Python 3.8 or newer. Run `bracket.py -h` for the commands.
"""

import argparse
import hashlib
import heapq
import json
import os
import random
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FORMAT = 1
MAX_WAVE = 20
DEFAULT_AGENTS = 100
DEFAULT_WAVE = 10
QUICK_AGENTS = 8
MAX_ATTACKS = 7
# A close match gets a second judge when the totals are this near: the
# cheapest margin that keeps the gain, measured by benchmarks/judging.py.
DEFAULT_RECHECK = 4
# Waves a conductor runs before it hands back to the main session.
DEFAULT_BATCH = 10
# How many times a job is handed out before its fallback applies; judges get
# a fresh pair of labels on every try.
TRIES = {"spawn": 2, "atk": 2, "def": 2, "judge": 3, "final": 2}
MAX_SOLUTION_BYTES = 512 * 1024
MAX_OTHER_BYTES = 256 * 1024
# Jobs left on the longest path from a job to its round's end; round 1's bye
# spawns feed nothing in round 1, so they fill the judges' waves (Hu's rule).
CHAIN = {"spawn": 4, "bye": 1, "atk": 3, "def": 2, "judge": 1, "final": 1}
LABELS = ("Kestrel", "Heron", "Osprey", "Plover", "Wren", "Finch", "Lark",
          "Egret", "Swift", "Tern", "Merlin", "Robin", "Curlew", "Dunlin",
          "Gannet", "Avocet")
MODELS = ("opus", "sonnet", "haiku")
RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
JOB_ID = re.compile(r"^(?:spawn-(a\d+)|r(\d+)-m(\d+)-(atk|def)-(a\d+)|r(\d+)-m(\d+)-judge(\d?)|final)$")


EVENTS = ("init", "issue", "shown", "done", "fail", "record", "advance", "mode", "batch")


class ArenaError(Exception):
    """A problem the user or a sub-agent caused: one line, exit code 2."""


# ---------------------------------------------------------------- seeded randomness
# Only getrandbits is used, so the same seed gives the same draws on every
# Python from 3.8 on (shuffle/choice/sample are not promised to stay stable).

def rng_for(seed, *labels):
    text = ":".join([str(seed)] + [str(x) for x in labels])
    return random.Random(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big"))


def below(rng, n):
    """A uniform integer in [0, n)."""
    if n <= 1:
        return 0
    k = n.bit_length()
    while True:
        r = rng.getrandbits(k)
        if r < n:
            return r


def shuffled(rng, items):
    items = list(items)
    for i in range(len(items) - 1, 0, -1):
        j = below(rng, i + 1)
        items[i], items[j] = items[j], items[i]
    return items


# ---------------------------------------------------------------- editable data

def read_text(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise ArenaError("cannot read %s (%s)" % (path, e.strerror or e))
    except UnicodeDecodeError:
        raise ArenaError("%s is not UTF-8 text" % path)


def load_cards(path=None):
    """The card parts from cards.md: {"reasoning": [(name, text)], "workflow": ..., "strategy": ...}."""
    path = path or os.path.join(HERE, "cards.md")
    parts, current = {}, None
    for line in read_text(path).splitlines():
        head = re.match(r"^## (\w+)\s*$", line)
        if head:
            current = parts.setdefault(head.group(1), [])
            continue
        entry = re.match(r"^- ([a-z0-9-]+): (.+)$", line)
        if entry and current is not None:
            current.append((entry.group(1), entry.group(2).strip()))
    for part in ("reasoning", "workflow", "strategy"):
        names = [n for n, _ in parts.get(part, [])]
        if not names:
            raise ArenaError("cards.md has no '## %s' entries; restore it or add '- name: instruction' lines" % part)
        if len(set(names)) != len(names):
            raise ArenaError("cards.md lists a %s name twice; names must be unique" % part)
    m, w, s = (len(parts[p]) for p in ("reasoning", "workflow", "strategy"))
    # The dealer's pair guarantee is an edge colouring of the workflow x strategy
    # grid with one colour per reasoning mode: it needs a square grid and enough colours.
    if w != s or m < w:
        raise ArenaError("cards.md has %d reasoning modes, %d workflows, %d strategies; the dealer needs as many "
                         "workflows as strategies and at least that many reasoning modes" % (m, w, s))
    return parts


def load_rubric(path=None):
    """[(criterion, max, description)] from rubric.md."""
    path = path or os.path.join(HERE, "rubric.md")
    rubric = []
    for line in read_text(path).splitlines():
        m = re.match(r"^- ([a-z]+) \((\d+)\): (.+)$", line)
        if m:
            rubric.append((m.group(1), int(m.group(2)), m.group(3).strip()))
    if not rubric or len({c for c, _, _ in rubric}) != len(rubric):
        raise ArenaError("rubric.md needs one line per criterion, '- name (max): description', names unique")
    return rubric


def load_template(kind):
    return read_text(os.path.join(HERE, "briefs", kind + ".md"))


# ---------------------------------------------------------------- the dealer

def pick_grid_cells(n, size, rng):
    """n distinct cells of a size x size grid, every row and column used q or q+1 times.

    Cells come diagonal by diagonal (row i, column i+d), so a partial last
    diagonal still touches each row and column at most once.
    """
    diagonals = shuffled(rng, range(size))
    rows = shuffled(rng, range(size))
    cells = []
    for k in range(n):
        d, i = diagonals[k // size], rows[k % size]
        cells.append((i, (i + d) % size, k // size))
    return cells


def balance_colours(cells, colours, ncolours, rng):
    """Make colour counts differ by at most one, keeping each colour a matching.

    Edges coloured a or b form paths and even cycles; a path with one more
    a-edge than b-edges exists while a is used 2+ times more than b, and
    swapping its colours moves one edge from a to b (the standard equitable
    edge-colouring argument for bipartite graphs).
    """
    while True:
        counts = [0] * ncolours
        for c in colours:
            counts[c] += 1
        hi = max(range(ncolours), key=lambda c: (counts[c], -c))
        lo = min(range(ncolours), key=lambda c: (counts[c], c))
        if counts[hi] - counts[lo] <= 1:
            return colours
        at = {}
        for e, (r, s, _) in enumerate(cells):
            if colours[e] in (hi, lo):
                at.setdefault(("r", r), []).append(e)
                at.setdefault(("s", s), []).append(e)
        seen, paths = set(), []
        for e in range(len(cells)):
            if colours[e] not in (hi, lo) or e in seen:
                continue
            comp, stack = [], [e]
            seen.add(e)
            while stack:
                x = stack.pop()
                comp.append(x)
                r, s, _ = cells[x]
                for y in at[("r", r)] + at[("s", s)]:
                    if y not in seen:
                        seen.add(y)
                        stack.append(y)
            if sum(1 for x in comp if colours[x] == hi) > sum(1 for x in comp if colours[x] == lo):
                paths.append(comp)
        comp = paths[below(rng, len(paths))]
        for x in comp:
            colours[x] = lo if colours[x] == hi else hi


def deal_cards(n, sizes, rng):
    """n distinct cards (mode, workflow, strategy), each part dealt evenly.

    Up to workflows x strategies agents, no two cards share two parts: each
    (workflow, strategy) cell is used once, and modes colour the cells so that
    no row or column repeats a mode. Above that, each cell takes q or q+1
    different modes from one running cycle, which keeps modes balanced.
    """
    nm, nw, ns = sizes
    if not 1 <= n <= nm * nw * ns:
        raise ArenaError("--agents must be 1 to %d (the number of distinct cards), not %d" % (nm * nw * ns, n))
    grid = nw * ns
    if n <= grid:
        cells = pick_grid_cells(n, nw, rng)
        colours = balance_colours(cells, [d for _, _, d in cells], nm, rng)
        raw = [(colours[k], r, s) for k, (r, s, _) in enumerate(cells)]
    else:
        q, extra = divmod(n, grid)
        fat = {(r, s) for r, s, _ in pick_grid_cells(extra, nw, rng)} if extra else set()
        order = sorted(fat) + sorted((r, s) for r in range(nw) for s in range(ns) if (r, s) not in fat)
        raw, t = [], below(rng, nm)
        for r, s in order:
            for _ in range(q + 1 if (r, s) in fat else q):
                raw.append((t % nm, r, s))
                t += 1
    pm, pw, ps = shuffled(rng, range(nm)), shuffled(rng, range(nw)), shuffled(rng, range(ns))
    return shuffled(rng, [[pm[m], pw[w], ps[s]] for m, w, s in raw])


def card_names(cards, card):
    return [cards[p][i][0] for p, i in zip(("reasoning", "workflow", "strategy"), card)]


# ---------------------------------------------------------------- pairing and byes

def pick_bye(alive, byes, modes, rng):
    """The agent sitting out an odd round.

    Only agents with the fewest byes so far are eligible (the Swiss rule);
    among them one from the largest reasoning-mode group, since taking it out
    leaves the fewest forced same-mode matches.
    """
    fewest = min(byes.get(a, 0) for a in alive)
    eligible = [a for a in alive if byes.get(a, 0) == fewest]
    group = {}
    for a in alive:
        group[modes[a]] = group.get(modes[a], 0) + 1
    biggest = max(group[modes[a]] for a in eligible)
    eligible = [a for a in eligible if group[modes[a]] == biggest]
    return eligible[below(rng, len(eligible))]


def pair_survivors(alive, modes, rng):
    """Pairs with as few same-mode matches as possible.

    Repeatedly matching one agent of the largest mode group with one of the
    second largest leaves same-mode pairs only when one group outnumbers all
    the others together, which is the unavoidable minimum.
    """
    groups = {}
    for a in shuffled(rng, sorted(alive)):
        groups.setdefault(modes[a], []).append(a)
    pairs = []
    while groups:
        order = sorted(groups, key=lambda m: (-len(groups[m]), m))
        first = groups[order[0]]
        second = groups[order[1]] if len(order) > 1 else first
        a = first.pop()
        b = second.pop()
        pairs.append((a, b) if below(rng, 2) else (b, a))
        for m in order[:2]:
            if not groups[m]:
                del groups[m]
    return shuffled(rng, pairs)


def make_round(number, alive, byes, modes, seed):
    """Pairings of one round: matches (id, a, b, coin) and the bye."""
    rng = rng_for(seed, "round", number)
    alive = sorted(alive)
    bye = None
    if len(alive) % 2:
        bye = pick_bye(alive, byes, modes, rng)
        alive.remove(bye)
    pairs = pair_survivors(alive, modes, rng)
    width = max(2, len(str(len(pairs))))
    matches = []
    for k, (a, b) in enumerate(pairs, 1):
        coin = a if below(rng, 2) else b
        matches.append({"id": "r%d-m%0*d" % (number, width, k), "a": a, "b": b, "coin": coin})
    return {"n": number, "matches": matches, "bye": bye}


# ---------------------------------------------------------------- plan arithmetic

def field_sizes(n):
    """Agents alive at the start of each round, ending with 1."""
    sizes = [n]
    while sizes[-1] > 1:
        sizes.append((sizes[-1] + 1) // 2)
    return sizes


def plan_rows(n, wave, baseline=False):
    """The per-phase table: (label, alive, matches, bye, calls, waves)."""
    def waves(k):
        return -(-k // wave) if k else 0
    rows = [("spawn", n, None, None, n, waves(n))]
    for r, alive in enumerate(field_sizes(n)[:-1], 1):
        m = alive // 2
        rows.append((str(r), alive, m, alive % 2 == 1, 5 * m, 2 * waves(2 * m) + waves(m)))
    if baseline:
        rows.append(("check", 1, None, None, 1, 1))
    return rows


def list_schedule(jobs, wave):
    """Waves of greedy list scheduling: jobs is {id: (priority key, [deps])}.

    Every wave takes the W ready jobs with the smallest keys; a job is ready
    once all its deps finished in earlier waves. Returns a list of waves.
    """
    waiting = {j: len(d) for j, (_, d) in jobs.items()}
    users = {}
    for j, (_, deps) in jobs.items():
        for d in deps:
            users.setdefault(d, []).append(j)
    # a heap of (key, id): the same picks as re-sorting every wave, in O(log n) each
    ready = [(jobs[j][0], j) for j, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    out = []
    while ready:
        now = [heapq.heappop(ready) for _ in range(min(wave, len(ready)))]
        out.append([j for _, j in now])
        for _, j in now:
            for u in users.get(j, ()):
                waiting[u] -= 1
                if waiting[u] == 0:
                    heapq.heappush(ready, (jobs[u][0], u))
    return out


def job_key(kind, rnd, match, side):
    """Scheduling priority: longest remaining chain first, then round, match, side."""
    return (-CHAIN[kind], rnd, match, side)


def round_jobs(rnd, matches, spawn_order=None, looks=0.0, wave=DEFAULT_WAVE):
    """The job graph of one round in the scheduler's terms (for `plan` and tests).

    looks: the share of matches that get a second look after their first
    judge; a round whose judges fit in half a wave gets both looks side by side.
    """
    jobs = {}
    if spawn_order is not None:
        for pos, a in enumerate(spawn_order):
            jobs["s%d" % a] = (job_key("spawn" if pos < 2 * matches else "bye", 0, pos, 0), [])
    side_by_side = looks > 0 and 2 * matches <= wave
    later = int(round(looks * matches)) if looks and not side_by_side else 0
    rechecked = {int(k * matches / later) for k in range(later)} if later else set()
    for k in range(matches):
        a, b = 2 * k, 2 * k + 1
        first = spawn_order is not None
        jobs["a%d" % a] = (job_key("atk", rnd, k, 0), ["s%d" % a, "s%d" % b] if first else [])
        jobs["a%d" % b] = (job_key("atk", rnd, k, 1), ["s%d" % a, "s%d" % b] if first else [])
        jobs["d%d" % a] = (job_key("def", rnd, k, 0), ["a%d" % b])
        jobs["d%d" % b] = (job_key("def", rnd, k, 1), ["a%d" % a])
        jobs["j%d" % k] = (job_key("judge", rnd, k, 1), ["d%d" % a, "d%d" % b])
        if side_by_side:
            jobs["k%d" % k] = (job_key("judge", rnd, k, 2), ["d%d" % a, "d%d" % b])
        elif k in rechecked:
            jobs["k%d" % k] = (job_key("judge", rnd, k, 2), ["j%d" % k])
    return jobs


def round_bound(jobs, wave):
    """Waves no schedule of one round's job graph can beat.

    A job with k-1 jobs chained after it (or before it) leaves k-1 waves to
    go after its own, so the jobs at level k or deeper need ceil(count / W)
    waves plus k-1.
    """
    users = {}
    for j, (_, deps) in jobs.items():
        for d in deps:
            users.setdefault(d, []).append(j)
    after, before = {}, {}

    def tail(j):
        if j not in after:
            after[j] = 1 + max([tail(u) for u in users.get(j, ())] or [0])
        return after[j]

    def head(j):
        if j not in before:
            before[j] = 1 + max([head(d) for d in jobs[j][1]] or [0])
        return before[j]

    best = 0
    for depth in (tail, head):
        levels = [depth(j) for j in jobs]
        for k in range(1, max(levels) + 1):
            best = max(best, k - 1 + -(-sum(1 for x in levels if x >= k) // wave))
    return best


def packed_waves(n, wave, baseline=False, looks=0.0):
    """(waves with packing, lower bound) for n agents, W at a time.

    Rounds stay barriers: pairing a round needs all its winners. Within a
    round the bound is max(ceil(calls / W), length of the dependency chain).
    """
    total = bound = 0
    sizes = field_sizes(n)
    for r, alive in enumerate(sizes[:-1], 1):
        m = alive // 2
        jobs = round_jobs(r, m, list(range(n)) if r == 1 else None, looks, wave)
        total += len(list_schedule(jobs, wave))
        bound += round_bound(jobs, wave)
    if n == 1:
        total = bound = 1
    if baseline:
        total += 1
        bound += 1
    return total, bound


# ---------------------------------------------------------------- job ids

def parse_job(job):
    """(kind, round, match number, agent or judge index) from a job id."""
    m = JOB_ID.match(job or "")
    if not m:
        raise ArenaError("%r is not a job id (spawn-a007, r2-m03-atk-a007, r2-m03-judge, final)" % job)
    g = m.groups()
    if g[0]:
        return "spawn", 0, 0, g[0]
    if g[1]:
        return g[3], int(g[1]), int(g[2]), g[4]
    if g[5]:
        return "judge", int(g[5]), int(g[6]), int(g[7] or 1)
    return "final", 0, 0, None


def job_kind(job):
    if job.startswith("spawn-"):
        return "spawn"
    if job == "final":
        return "final"
    return "judge" if "-judge" in job else job.split("-")[2]


def match_of(job):
    """'r2-m03' for any job of that match."""
    return "-".join(job.split("-")[:2])


def judge_id(mid, k):
    return "%s-judge%s" % (mid, "" if k == 1 else k)


def agent_ids(n):
    width = max(3, len(str(n)))
    return ["a%0*d" % (width, i) for i in range(1, n + 1)]


# ---------------------------------------------------------------- the state machine
# The state changes only through apply(state, event). Commands decide which
# events happen, append them to the journal, then apply them; replaying the
# journal from the start rebuilds the same state.

def new_state(ev, sizes):
    n, seed = ev["agents"], ev["seed"]
    ids = agent_ids(n)
    cards = deal_cards(n, sizes, rng_for(seed, "deal"))
    st = {
        "run": ev["run"], "seed": seed, "agents": n, "wave": ev["wave"],
        "created": ev["at"], "fence": ev["fence"], "baseline": ev["baseline"],
        "model": ev.get("model"), "judge_model": ev.get("judge_model"),
        "recheck": ev.get("recheck", DEFAULT_RECHECK), "final_judges": ev.get("final_judges", 1),
        "pack": ev.get("pack", True), "batch_waves": ev.get("batch_waves", DEFAULT_BATCH),
        "mode": ev.get("mode", "conductor"), "sizes": list(sizes), "plan_waves": ev.get("plan_waves"),
        "cards": {a: c for a, c in zip(ids, cards)},
        "byes": {}, "out": {}, "sol": {}, "rounds": [], "results": {},
        "jobs": {}, "summ": {}, "waves": [], "batch": None, "champion": None,
        "final": None, "manual": {}, "seq": 0,
    }
    for pos, a in enumerate(ids):
        add_job(st, "spawn-" + a)
    if n == 1:
        st["champion"] = ids[0]
        if st["baseline"]:
            add_job(st, "final")
    else:
        start_round(st, ids)
    return st


def add_job(st, job):
    """A job waiting to be handed out: status, tries so far, last wave (deps: deps_of)."""
    st["jobs"][job] = {"s": "ready", "t": 0, "w": None}


def alive_agents(st):
    return sorted(a for a in st["cards"] if a not in st["out"])


def start_round(st, alive):
    number = len(st["rounds"]) + 1
    modes = {a: st["cards"][a][0] for a in alive}
    rnd = make_round(number, alive, st["byes"], modes, st["seed"])
    st["rounds"].append(rnd)
    if rnd["bye"]:
        st["byes"][rnd["bye"]] = st["byes"].get(rnd["bye"], 0) + 1
    for m in rnd["matches"]:
        mid, a, b = m["id"], m["a"], m["b"]
        if number > 1 and (no_solution(st, a) or no_solution(st, b)):
            forfeit(st, m)
            continue
        for step in ("atk", "def"):
            add_job(st, "%s-%s-%s" % (mid, step, a))
            add_job(st, "%s-%s-%s" % (mid, step, b))
        judges = st["final_judges"] if len(alive) == 2 else 1
        # When a round's judges leave half a wave empty anyway, both looks run
        # side by side: a second opinion for no extra wave, where it matters most.
        if judges == 1 and st["recheck"] is not None and 2 * len(rnd["matches"]) <= st["wave"]:
            judges = 2
        for k in range(1, judges + 1):
            add_job(st, judge_id(mid, k))


def deps_of(st, job):
    """The jobs whose outputs a job reads; derived from its id, never stored."""
    kind = job_kind(job)
    if kind == "spawn":
        return []
    if kind == "final":
        return ["spawn-" + st["champion"]]
    m = find_match(st, match_of(job))
    if kind == "atk":
        return ["spawn-" + m["a"], "spawn-" + m["b"]]
    if kind == "def":
        return ["%s-atk-%s" % (m["id"], opponent(m, job.split("-")[3]))]
    return ["%s-def-%s" % (m["id"], m["a"]), "%s-def-%s" % (m["id"], m["b"])]


def no_solution(st, agent):
    """The agent's spawn ended without a usable solution (it forfeits its matches)."""
    return st["jobs"]["spawn-" + agent]["s"] == "done" and st["sol"].get(agent) is None


# (rounds list, its length, {match id: match}): an index of the state in hand.
# Holding the list keeps its id from being reused by another state.
MATCH_INDEX = [None, 0, {}]


def find_match(st, mid):
    rounds = st["rounds"]
    if MATCH_INDEX[0] is not rounds or MATCH_INDEX[1] != len(rounds):
        MATCH_INDEX[:] = [rounds, len(rounds), {m["id"]: m for rnd in rounds for m in rnd["matches"]}]
    # a round's matches never change once paired, so the index is stale only when a round is added
    return MATCH_INDEX[2].get(mid)


def forfeit(st, m, why="no solution"):
    """Decide a match without a judge: the side with a solution goes through."""
    a, b = m["a"], m["b"]
    has_a, has_b = not no_solution(st, a), not no_solution(st, b)
    winner = a if has_a and not has_b else b if has_b and not has_a else m["coin"]
    settle(st, m, winner, {"how": "forfeit", "why": why})


def settle(st, m, winner, info):
    """Decide a match: its open jobs are cancelled (a forfeit or a decision by hand)
    and its judges' labels dropped, which matter only while it is open."""
    mid = m["id"]
    ids = ["%s-%s-%s" % (mid, step, x) for step in ("atk", "def") for x in (m["a"], m["b"])]
    for job in ids + [judge_id(mid, k) for k in (1, 2, 3)]:
        job_info = st["jobs"].get(job)
        if job_info is None:
            continue
        job_info.pop("lab", None)
        if job_info["s"] in ("ready", "issued"):
            job_info["s"] = "cancelled"
    loser = m["b"] if winner == m["a"] else m["a"]
    info.update({"w": winner, "l": loser})
    st["results"][m["id"]] = info
    st["out"][loser] = int(m["id"].split("-")[0][1:])
    st["manual"].pop(m["id"], None)


def matches_decided(st):
    rnd = st["rounds"][-1] if st["rounds"] else None
    return rnd is not None and all(m["id"] in st["results"] for m in rnd["matches"])


def round_done(st):
    """The current round may be closed by next: every match decided, and in round 1
    the bye's spawn in too, so the scheduler counts it in the round it belongs to."""
    rnd = st["rounds"][-1] if st["rounds"] else None
    bye_ready = rnd is None or rnd["n"] > 1 or not rnd["bye"] or st["jobs"]["spawn-" + rnd["bye"]]["s"] == "done"
    return bye_ready and matches_decided(st)


def apply(st, ev):
    kind = ev["e"]
    if kind == "issue":
        # a wave's jobs are the jobs whose "w" is its number; the journal keeps the full list
        st["waves"].append({"n": ev["wave"], "at": ev["at"], "size": len(ev["jobs"]), "shown": False})
        for j in ev["jobs"]:
            job = st["jobs"][j]
            job["s"], job["t"], job["w"] = "issued", job["t"] + 1, ev["wave"]
            if j in ev.get("labels", {}):
                job["lab"] = ev["labels"][j]
    elif kind == "done":
        on_done(st, ev["job"], ev["out"])
    elif kind == "fail":
        on_fail(st, ev["job"], ev["why"])
    elif kind == "record":
        m = find_match(st, ev["match"])
        settle(st, m, ev["winner"], {"how": "record", "why": ev["why"]})
    elif kind == "advance":
        alive = alive_agents(st)
        if len(alive) == 1:
            st["champion"] = alive[0]
            if st["baseline"] and st["sol"].get(alive[0]):
                add_job(st, "final")
        else:
            start_round(st, alive)
    elif kind == "shown":
        st["waves"][-1]["shown"] = True
    elif kind == "mode":
        st["mode"] = ev["mode"]
    elif kind == "batch":
        st["batch"] = {"n": ev["n"], "from": len(st["waves"])}
    else:
        raise ArenaError("journal event %r is unknown to this bracket.py" % kind)
    st["seq"] = ev["seq"]


def on_done(st, job, out):
    info = st["jobs"][job]
    info["s"] = "done"
    info.pop("w", None)  # only handed-out jobs need their wave
    if info.get("t") == 1:
        del info["t"]  # done at the first try: the common case stays small
    kind = job_kind(job)
    # solution paths live in st["sol"]; the summary keeps what the report and winner need
    keep = {k: v for k, v in out.items() if k != "sol"}
    if keep:
        st["summ"][job] = keep
    if kind == "spawn":
        st["sol"][job[6:]] = out.get("sol")
        spawn_settled(st, job[6:])
        if out.get("sol") is None and "final" in st["jobs"]:
            st["jobs"]["final"]["s"] = "cancelled"
    elif kind == "def":
        st["sol"][job.split("-")[3]] = out.get("sol") or st["sol"].get(job.split("-")[3])
    elif kind == "judge":
        judge_arrived(st, match_of(job))
    elif kind == "final":
        st["final"] = out


def on_fail(st, job, why):
    """A job's output was missing or invalid: hand it out again, or fall back."""
    info = st["jobs"][job]
    info["why"] = why[:200]
    kind = job_kind(job)
    if info["t"] < TRIES[kind]:
        info["s"] = "ready"
        return
    # Fallbacks, one per kind, so that no failure can stall the run.
    if kind == "spawn":
        on_done(st, job, {"sol": None, "why": "forfeit: " + why[:120]})
    elif kind == "atk":
        on_done(st, job, {"labels": "", "missing": True})
    elif kind == "def":
        on_done(st, job, {"ans": "", "missing": True})
    elif kind == "final":
        on_done(st, job, {"missing": True, "why": why[:200]})
    else:
        info["s"] = "stuck"
        st["manual"][match_of(job)] = "its judge failed %d times (%s)" % (info["t"], why[:120])


def spawn_settled(st, agent):
    """Once both spawns of a round-1 match are in, a side with no solution forfeits."""
    for m in st["rounds"][0]["matches"] if st["rounds"] else []:
        if agent not in (m["a"], m["b"]) or m["id"] in st["results"]:
            continue
        pair = (m["a"], m["b"])
        if all(st["jobs"]["spawn-" + a]["s"] == "done" for a in pair):
            if any(st["sol"].get(a) is None for a in pair):
                forfeit(st, m, "no solution from " + " and ".join(a for a in pair if st["sol"].get(a) is None))


def judge_arrived(st, mid):
    """Decide the match once its judges are in, or ask for a second look."""
    m = find_match(st, mid)
    verdicts = []
    k = 1
    while judge_id(mid, k) in st["jobs"]:
        j = judge_id(mid, k)
        if st["jobs"][j]["s"] != "done":
            return
        verdicts.append(st["summ"][j])
        k += 1
    crit = len(verdicts[0]["sc"][m["a"]])
    if len(verdicts) >= 3:
        picks = [decide(v, m, crit)[0] for v in verdicts]
        winner = max((m["a"], m["b"]), key=lambda a: (picks.count(a), a == picks[0]))
        tot = {a: sum(sum(v["sc"][a]) for v in verdicts) for a in (m["a"], m["b"])}
        settle(st, m, winner, {"how": "panel", "n": len(verdicts), "tot": tot,
                               "agree": len(set(picks)) == 1, "votes": picks.count(winner)})
        return
    merged = merge_verdicts(verdicts, m)
    winner, rule = decide(merged, m, crit)
    tot = {a: sum(merged["sc"][a]) for a in (m["a"], m["b"])}
    if len(verdicts) == 1 and st["recheck"] is not None and is_close(merged, m, st["recheck"]):
        add_job(st, judge_id(mid, 2))
        return
    info = {"how": "judge", "n": len(verdicts), "tot": tot, "fatal": merged["fat"], "rule": rule}
    if len(verdicts) == 2:
        info["agree"] = decide(verdicts[0], m, crit)[0] == decide(verdicts[1], m, crit)[0]
    settle(st, m, winner, info)


def merge_verdicts(verdicts, m):
    """Two looks combine by summing scorecards; a FATAL stands only if both saw it."""
    if len(verdicts) == 1:
        return verdicts[0]
    sides = (m["a"], m["b"])
    sc = {a: [sum(v["sc"][a][i] for v in verdicts) for i in range(len(verdicts[0]["sc"][a]))] for a in sides}
    fat = {a: all(v["fat"][a] for v in verdicts) for a in sides}
    return {"sc": sc, "fat": fat, "conf": "high"}


def decide(v, m, ncrit):
    """(winner, rule) for one match from one (merged) verdict.

    A verified FATAL loses to a solution without one; otherwise the higher
    total; then correctness, completeness, ... in rubric order; then the
    match's seeded coin.
    """
    a, b = m["a"], m["b"]
    fa, fb = v["fat"][a], v["fat"][b]
    if fa != fb:
        return (b if fa else a), "fatal"
    ta, tb = sum(v["sc"][a]), sum(v["sc"][b])
    if ta != tb:
        return (a if ta > tb else b), "total"
    for i in range(ncrit):
        if v["sc"][a][i] != v["sc"][b][i]:
            return (a if v["sc"][a][i] > v["sc"][b][i] else b), "criterion %d" % (i + 1)
    return m["coin"], "coin"


def is_close(v, m, margin):
    """A match worth a second judge: near totals, low confidence, or a FATAL
    flag that overturned the totals."""
    a, b = m["a"], m["b"]
    ta, tb = sum(v["sc"][a]), sum(v["sc"][b])
    if v.get("conf") == "low" or abs(ta - tb) <= margin:
        return True
    if v["fat"][a] != v["fat"][b]:
        flagged_total = ta if v["fat"][a] else tb
        return flagged_total == max(ta, tb)
    return False


# ---------------------------------------------------------------- files on disk

KILLS = [0]


def kill_point(torn=None):
    """Test hook: with ARENA_KILL_AT=n the n-th point reached dies by SIGKILL (after calling torn)."""
    at = os.environ.get("ARENA_KILL_AT")
    if not at:
        return
    KILLS[0] += 1
    if str(KILLS[0]) == at:
        if torn:
            torn()
        os.kill(os.getpid(), 9)


def atomic_write(path, data, durable=True):
    """Write, flush, fsync, rename: a reader sees the old file or the new one.

    Briefs and judge copies are made again from the state if lost, so they
    skip the fsyncs (durable=False) and keep only the all-or-nothing rename.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    tmp = "%s.tmp-%d" % (path, os.getpid())
    with open(tmp, "wb") as f:
        f.write(data)
        if durable:
            f.flush()
            os.fsync(f.fileno())
    kill_point()
    os.replace(tmp, path)
    if not durable:
        return
    try:
        fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass


class RunLock:
    """An exclusive lock on one run, released by the kernel if the holder dies."""

    def __init__(self, path, wait=10.0):
        self.path, self.wait, self.fd = path, wait, None

    def __enter__(self):
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.time() + self.wait
        while not self._try():
            if time.time() >= deadline:
                os.close(self.fd)
                holder = read_text(self.path).strip() if os.path.exists(self.path) else "?"
                raise ArenaError("another bracket.py (%s) is working on this run; wait for it to finish, "
                                 "then run the command again" % (holder or "pid unknown"))
            time.sleep(0.05)
        os.ftruncate(self.fd, 0)
        os.write(self.fd, ("pid %d" % os.getpid()).encode())
        return self

    def _try(self):
        try:
            import fcntl
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except ImportError:
            try:
                import msvcrt
                msvcrt.locking(self.fd, msvcrt.LK_NBLCK, 1)
                return True
            except OSError:
                return False
        except OSError:
            return False

    def __exit__(self, *exc):
        os.close(self.fd)


STATE_HEAD = re.compile(r'^\{"format": (\d+), "sum": "([0-9a-f]{64})", "state": ')


class Run:
    """One run folder and its state, journal and lock."""

    def __init__(self, name, root=".arena"):
        if not RUN_NAME.match(name or ""):
            raise ArenaError("run name %r is not allowed: use letters, digits, '.', '_' or '-' (no '/' or '..')" % name)
        self.name, self.root = name, root
        self.dir = os.path.join(root, name)
        self.state_path = os.path.join(self.dir, "state.json")
        self.journal_path = os.path.join(self.dir, "journal.jsonl")

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def lock(self):
        if not os.path.isdir(self.dir):
            raise ArenaError("no run %r under %s/; start one with init, or pass --run NAME" % (self.name, self.root))
        return RunLock(self.path("lock"))

    # -- state
    def check_folder(self):
        """The run folder exists and neither it nor .arena leads elsewhere through a link."""
        for path in (self.root, self.dir, self.path("b"), self.path("j"), self.path("out")):
            if os.path.islink(path):
                raise ArenaError("%s is a symbolic link; a run must stay inside a plain .arena/ folder here" % path)
        if not os.path.isdir(self.dir):
            raise ArenaError("no run %r under %s/; start one with init, or pass --run NAME" % (self.name, self.root))

    def load(self):
        self.check_folder()
        if not os.path.exists(self.state_path):
            if os.path.exists(self.journal_path):
                st = self.rebuild()
                self.save(st)
                sys.stderr.write("bracket.py: run %s had no state.json (init was cut short, or it was deleted); "
                                 "rebuilt it from journal.jsonl\n" % self.name)
                return st
            raise ArenaError("run %r has no state.json and no journal; start a new run with init" % self.name)
        with open(self.state_path, "rb") as f:
            raw = f.read()
        text = raw.decode("utf-8", "replace")
        head = STATE_HEAD.match(text)
        if head and int(head.group(1)) != FORMAT:
            raise ArenaError("state.json is format %s but this bracket.py reads format %d; use the bracket.py "
                             "that started the run" % (head.group(1), FORMAT))
        body = text[head.end():].rstrip()[:-1] if head else ""
        if not head or hashlib.sha256(body.encode("utf-8")).hexdigest() != head.group(2):
            raise ArenaError("state.json of run %s is damaged or was edited by hand (checksum mismatch); run "
                             "'bracket.py repair --run %s' to rebuild it from journal.jsonl" % (self.name, self.name))
        st = json.loads(body)
        last = self.journal_tail()
        if last > st["seq"]:
            # a command died after journaling and before saving: finish its work
            for ev in self.events():
                if ev["seq"] > st["seq"]:
                    apply(st, ev)
            self.save(st)
        elif last < st["seq"]:
            raise ArenaError("state.json is ahead of journal.jsonl (event %d vs %d); run 'bracket.py repair --run %s'"
                             % (st["seq"], last, self.name))
        return st

    def save(self, st):
        body = json.dumps(st, separators=(",", ":"), sort_keys=True)
        head = '{"format": %d, "sum": "%s", "state": ' % (FORMAT, hashlib.sha256(body.encode("utf-8")).hexdigest())
        atomic_write(self.state_path, head + body + "}\n")
        kill_point()

    # -- journal
    def journal_tail(self):
        """The seq of the last complete journal line; a torn last line is cut off."""
        try:
            size = os.path.getsize(self.journal_path)
        except OSError:
            return 0
        with open(self.journal_path, "rb+") as f:
            f.seek(max(0, size - 65536))
            tail = f.read()
            if tail and not tail.endswith(b"\n"):
                cut = tail.rfind(b"\n") + 1
                f.truncate(size - len(tail) + cut)
                tail = tail[:cut]
        lines = [x for x in tail.split(b"\n") if x.strip()]
        for line in reversed(lines):
            try:
                return json.loads(line.decode("utf-8"))["seq"]
            except (ValueError, KeyError, TypeError):
                continue
        return 0

    def events(self):
        if not os.path.isfile(self.journal_path):
            raise ArenaError("run %s has no journal.jsonl, so state.json cannot be rebuilt; start a new run with init"
                             % self.name)
        with open(self.journal_path, "rb") as f:
            for n, line in enumerate(f, 1):
                if not line.endswith(b"\n"):
                    break
                try:
                    ev = json.loads(line.decode("utf-8"))
                    if ev["e"] not in EVENTS or not isinstance(ev["seq"], int):
                        raise ValueError(ev["e"])
                except (ValueError, KeyError, TypeError):
                    raise ArenaError("journal.jsonl line %d is damaged; the run cannot be rebuilt past it" % n)
                yield ev

    def append(self, events):
        data = "".join(json.dumps(ev, separators=(",", ":"), sort_keys=True) + "\n" for ev in events)
        fd = os.open(self.journal_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            kill_point()
            kill_point(torn=lambda: os.write(fd, data.encode("utf-8")[:len(data) // 2]))
            os.write(fd, data.encode("utf-8"))
            os.fsync(fd)
            kill_point()
        finally:
            os.close(fd)

    def commit(self, st, events):
        """Journal first, then apply and save: a crash in between is replayed on load."""
        if not events:
            return
        for k, ev in enumerate(events):
            ev["seq"] = st["seq"] + 1 + k
        self.append(events)
        for ev in events:
            apply(st, ev)
        # saved once at the end of the command (flush); until then the journal holds it
        self.dirty = True

    def flush(self, st):
        if getattr(self, "dirty", False):
            self.save(st)
            self.dirty = False

    def rebuild(self):
        st = None
        for ev in self.events():
            if ev["e"] == "init":
                st = new_state(ev, tuple(ev["sizes"]))
                st["seq"] = ev["seq"]
            elif st is None:
                raise ArenaError("journal.jsonl does not start with init; the run cannot be rebuilt")
            else:
                apply(st, ev)
        if st is None:
            raise ArenaError("journal.jsonl of run %s is empty; start a new run with init" % self.name)
        return st


def find_run(name, root=".arena"):
    """The run named, or the one init made last in this folder."""
    if name:
        return Run(name, root)
    current = os.path.join(root, "current")
    if os.path.exists(current):
        return Run(read_text(current).strip(), root)
    raise ArenaError("no run found under %s/; start one with init (or pass --run NAME)" % root)


# ---------------------------------------------------------------- reading sub-agent output

class BadOutput(Exception):
    pass


def read_output(path, limit):
    """The text of an output file, None if it is not there yet."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if os.path.islink(path):
        raise BadOutput("%s is a symbolic link; write a plain file" % path)
    if not os.path.isfile(path):
        raise BadOutput("%s is not a plain file" % path)
    if info.st_size > limit:
        raise BadOutput("%s is %d bytes, over the %d-byte limit" % (path, info.st_size, limit))
    with open(path, "rb") as f:
        raw = f.read(limit + 1)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadOutput("%s is not UTF-8 text" % path)


HEADER = re.compile(r"^\ufeff?<!-- arena job: ([A-Za-z0-9-]+) -->[ \t]*\r?\n?")


def strip_header(text, job, path):
    m = HEADER.match(text)
    if not m:
        raise BadOutput("%s must start with the line '<!-- arena job: %s -->'" % (path, job))
    if m.group(1) != job:
        raise BadOutput("%s names job %s, expected %s" % (path, m.group(1), job))
    return text[m.end():]


def parse_attacks(body, path):
    """The labels of the attacks in an attack file, e.g. 'FMm'."""
    found = re.findall(r"^## ATTACK (\S+) (\S+?):", body, re.M)
    stray = [line for line in body.splitlines() if line.startswith("## ") and not re.match(r"## ATTACK \S+ \S+?:", line)]
    if stray:
        raise BadOutput("%s has a heading that is not '## ATTACK <n> <FATAL|MAJOR|MINOR>: ...': %r" % (path, stray[0][:60]))
    if len(found) > MAX_ATTACKS:
        raise BadOutput("%s has %d attacks; at most %d are allowed" % (path, len(found), MAX_ATTACKS))
    labels = ""
    for k, (num, label) in enumerate(found, 1):
        if num != str(k):
            raise BadOutput("%s: attack %s should be numbered %d" % (path, num, k))
        if label not in ("FATAL", "MAJOR", "MINOR"):
            raise BadOutput("%s: attack %d is labelled %r; use FATAL, MAJOR or MINOR" % (path, k, label[:20]))
        labels += {"FATAL": "F", "MAJOR": "M", "MINOR": "m"}[label]
    return labels


def parse_answers(body, attacks, path):
    """'CR..' for the answers of a defence file; every attack answered once, in order."""
    found = re.findall(r"^## ANSWER (\S+) (\S+?):", body, re.M)
    if len(found) != attacks:
        raise BadOutput("%s answers %d attacks but %d were made; answer each exactly once" % (path, len(found), attacks))
    ans = ""
    for k, (num, word) in enumerate(found, 1):
        if num != str(k):
            raise BadOutput("%s: answer %s should be numbered %d" % (path, num, k))
        if word not in ("CONCEDE", "REBUT"):
            raise BadOutput("%s: answer %d says %r; use CONCEDE or REBUT" % (path, k, word[:20]))
        ans += word[0]
    return ans


def check_solution(text, job, path):
    body = strip_header(text, job, path)
    if not body.strip():
        raise BadOutput("%s holds no solution" % path)
    return body


def parse_verdict(text, job, labels, rubric, path):
    """Per-label scores and FATAL flags, each score checked against its maximum."""
    try:
        v = json.loads(text)
    except ValueError as e:
        raise BadOutput("%s is not valid JSON (%s)" % (path, str(e)[:80]))
    except RecursionError:
        raise BadOutput("%s nests too deeply to be a verdict" % path)
    if not isinstance(v, dict):
        raise BadOutput("%s must hold one JSON object" % path)
    if v.get("job") != job:
        raise BadOutput("%s names job %r, expected %s" % (path, str(v.get("job"))[:40], job))
    scores, fatal = v.get("scores"), v.get("fatal")
    if not isinstance(scores, dict) or set(scores) != set(labels):
        raise BadOutput("%s: 'scores' must have exactly the labels %s" % (path, " and ".join(labels)))
    if not isinstance(fatal, dict) or set(fatal) != set(labels) or not all(isinstance(x, bool) for x in fatal.values()):
        raise BadOutput("%s: 'fatal' must map %s to true or false" % (path, " and ".join(labels)))
    out = {}
    for label in labels:
        card = scores[label]
        if not isinstance(card, dict) or set(card) != {c for c, _, _ in rubric}:
            raise BadOutput("%s: scores for %s must have exactly %s" % (path, label, ", ".join(c for c, _, _ in rubric)))
        row = []
        for crit, top, _ in rubric:
            x = card[crit]
            if isinstance(x, bool) or not isinstance(x, int):
                raise BadOutput("%s: %s %s is %r, not a whole number" % (path, label, crit, x))
            if not 0 <= x <= top:
                raise BadOutput("%s: %s %s is %d, max is %d" % (path, label, crit, x, top))
            row.append(x)
        out[label] = row
    conf = v.get("confidence", "high")
    if conf not in ("high", "low"):
        raise BadOutput("%s: confidence must be \"high\" or \"low\"" % path)
    reason = v.get("reason", "")
    return {"sc": out, "fat": {k: fatal[k] for k in labels}, "conf": conf,
            "why": (reason if isinstance(reason, str) else "")[:300]}


# ---------------------------------------------------------------- what each job reads and writes

def outputs_of(job):
    """Paths (relative to the run folder) a job must write."""
    kind = job_kind(job)
    if kind in ("judge", "final"):
        return ["out/%s.json" % job]
    if kind == "def":
        mid, agent = match_of(job), job.split("-")[3]
        return ["out/%s.md" % job, "out/%s-sol-%s.md" % (mid, agent)]
    return ["out/%s.md" % job]


def opponent(m, agent):
    return m["b"] if agent == m["a"] else m["a"]


def judge_sides(st, job, attempt):
    """(agents in presentation order, their neutral labels) for one try of a judge.

    The order is drawn from the seed and the job, so a retried first look keeps
    it and a second look always sees it swapped; labels are fresh on every try.
    """
    rng = rng_for(st["seed"], "labels", job, attempt)
    if job == "final":
        sides = ["winner", "baseline"]
    else:
        m = find_match(st, match_of(job))
        sides = [m["a"], m["b"]]
    pool = list(LABELS)
    if job.endswith("-judge2"):
        first = judge_id(match_of(job), 1)
        prior = st["summ"].get(first)
        if prior and st["jobs"][first].get("lab"):
            order, used = st["jobs"][first]["lab"]
        else:  # both looks run side by side
            order, used = judge_sides(st, first, 1)
        sides = [order[1], order[0]]
        pool = [x for x in pool if x not in used]
    else:
        sides = shuffled(rng_for(st["seed"], "order", job), sides)
    names = shuffled(rng, pool)[:2]
    return sides, names


def card_text(st, agent, cards):
    lines = []
    for part, i in zip(("reasoning", "workflow", "strategy"), st["cards"][agent]):
        name, text = cards[part][i]
        lines.append("- %s (%s): %s" % (part, name, text))
    return "\n".join(lines)


def fenced(st, task):
    return "%s\n%s%s%s" % (st["fence"], task, "" if task.endswith("\n") else "\n", st["fence"])


def fill(template, values):
    """Replace {{name}} in one pass, so text put in is never scanned again."""
    return re.sub(r"\{\{(\w+)\}\}", lambda m: values.get(m.group(1), m.group(0)), template)


def blind_copy(run, src, dst, agents, labels, fence=None):
    """Copy a file for a judge without its job header, the agents' ids or the run's fence."""
    try:
        # an output that fell back after failing its checks must not stall the judge
        text = read_output(run.path(src), MAX_SOLUTION_BYTES) if src else None
    except BadOutput:
        text = None
    if text is None:
        text = "(nothing was received for this part)\n"
    text = HEADER.sub("", text, count=1)
    if fence:
        # a copied fence line could pass data off as the end of the task
        text = text.replace(fence, "(fence line removed)")
    for agent, label in zip(agents, labels):
        text = re.sub(r"\b%s\b" % agent, label, text)
    atomic_write(run.path(dst), text, durable=False)


def write_brief(run, st, job, attempt, cards, rubric, task):
    """Write b/<job>.md (and a judge's blinded inputs) for one try of a job."""
    kind, rnd, _, who = parse_job(job)
    rel = lambda p: os.path.join(run.dir, p)
    outs = outputs_of(job)
    for p in outs:
        # a link left by a failed try would make the next agent write through it, outside .arena/
        if os.path.islink(run.path(p)):
            os.unlink(run.path(p))
    values = {"job": job, "task": fenced(st, task), "fence": st["fence"], "output": rel(outs[0]),
              "receipt": "done " + job, "max_attacks": str(MAX_ATTACKS)}
    if kind in ("spawn", "atk", "def"):
        values["card"] = card_text(st, who, cards)
    if kind == "atk":
        m = find_match(st, match_of(job))
        values["own_solution"] = rel(st["sol"][who])
        values["target"] = rel(st["sol"][opponent(m, who)])
    elif kind == "def":
        m = find_match(st, match_of(job))
        values["own_solution"] = rel(st["sol"][who])
        values["attacks"] = rel(outputs_of("%s-atk-%s" % (match_of(job), opponent(m, who)))[0])
        values["solution_output"] = rel(outs[1])
    elif kind in ("judge", "final"):
        sides, names = judge_sides(st, job, attempt)
        folder = "j/%s" % job
        os.makedirs(run.path(folder), exist_ok=True)
        inputs = []
        if kind == "judge":
            m = find_match(st, match_of(job))
            agents = [m["a"], m["b"]]
            labels = [names[sides.index(a)] for a in agents]
            for agent, label in zip(sides, names):
                mid = match_of(job)
                parts = [("revised solution", st["sol"].get(agent), "solution"),
                         ("attacks against it", outputs_of("%s-atk-%s" % (mid, opponent(m, agent)))[0], "attacks"),
                         ("its defence", outputs_of("%s-def-%s" % (mid, agent))[0], "defence")]
                inputs.append("- %s" % label)
                for what, src, tag in parts:
                    dst = "%s/%s-%s.md" % (folder, label, tag)
                    blind_copy(run, src, dst, agents, labels, st["fence"])
                    inputs.append("  - %s: %s" % (what, rel(dst)))
        else:
            for side, label in zip(sides, names):
                src = st["sol"][st["champion"]] if side == "winner" else "baseline.md"
                dst = "%s/%s-solution.md" % (folder, label)
                blind_copy(run, src, dst, [st["champion"]], [label], st["fence"])
                inputs.append("- %s: %s" % (label, rel(dst)))
        values.update({"label_a": names[0], "label_b": names[1], "inputs": "\n".join(inputs),
                       "rubric": "\n".join("- %s (%d): %s" % r for r in rubric),
                       "criteria": ", ".join(c for c, _, _ in rubric)})
    template = load_template({"atk": "attack", "def": "defend"}.get(kind, kind))
    atomic_write(run.path("b", job + ".md"), fill(template, values), durable=False)


def check_output(run, st, job, rubric):
    """('done', summary) or ('fail', reason) or (None, None) when not written yet."""
    kind, rnd, _, who = parse_job(job)
    outs = outputs_of(job)
    try:
        limit = MAX_SOLUTION_BYTES if kind == "spawn" else MAX_OTHER_BYTES
        texts = [read_output(run.path(p), MAX_SOLUTION_BYTES if p.endswith("-sol-%s.md" % who) else limit)
                 for p in outs]
        if any(t is None for t in texts):
            return None, None
        shown = [os.path.join(run.dir, p) for p in outs]
        if kind == "spawn":
            check_solution(texts[0], job, shown[0])
            return "done", {"sol": outs[0]}
        if kind == "atk":
            return "done", {"labels": parse_attacks(strip_header(texts[0], job, shown[0]), shown[0])}
        if kind == "def":
            m = find_match(st, match_of(job))
            attacks = len(st["summ"].get("%s-atk-%s" % (match_of(job), opponent(m, who)), {}).get("labels", ""))
            ans = parse_answers(strip_header(texts[0], job, shown[0]), attacks, shown[0])
            check_solution(texts[1], job, shown[1])
            return "done", {"ans": ans, "sol": outs[1]}
        sides, names = st["jobs"][job].get("lab") or judge_sides(st, job, st["jobs"][job]["t"])
        v = parse_verdict(texts[0], job, names, rubric, shown[0])
        by_side = {"sc": {s: v["sc"][n] for s, n in zip(sides, names)},
                   "fat": {s: v["fat"][n] for s, n in zip(sides, names)},
                   "conf": v["conf"]}
        if kind == "final":  # judges' reasons stay in their files; the one final reason is shown by winner
            by_side["why"] = v["why"]
        return "done", by_side
    except BadOutput as e:
        return "fail", str(e)


def collect_events(run, st, rubric, retry=False):
    """Events for every handed-out job whose output arrived (or, with retry, never will)."""
    events, notes = [], []
    for job, info in sorted(st["jobs"].items()):
        if info["s"] != "issued":
            continue
        verdict, detail = check_output(run, st, job, rubric)
        if verdict == "done":
            events.append({"e": "done", "job": job, "out": detail})
        elif verdict == "fail":
            events.append({"e": "fail", "job": job, "why": detail})
            notes.append("%s: %s" % (job, detail))
        elif retry:
            events.append({"e": "fail", "job": job, "why": "no output after its agent returned"})
            notes.append("%s: no output" % job)
    # a judge's verdict is read in the context of the state after the others
    return events, notes


# ---------------------------------------------------------------- the scheduler

def spawn_positions(st):
    order = []
    if st["rounds"]:
        for m in st["rounds"][0]["matches"]:
            order += [m["a"], m["b"]]
    placed = set(order)
    rest = [a for a in sorted(st["cards"]) if a not in placed]
    return {a: i for i, a in enumerate(order + rest)}


def priority(st, job, positions):
    kind, rnd, mno, who = parse_job(job)
    if kind == "spawn":
        paired = 2 * len(st["rounds"][0]["matches"]) if st["rounds"] else 0
        return job_key("spawn" if positions[who] < paired else "bye", 0, positions[who], 0)
    if kind == "final":
        return (0, 10 ** 6, 0, 0)
    if kind == "judge":
        return job_key("judge", rnd, mno, who)
    m = find_match(st, match_of(job))
    return job_key(kind, rnd, mno, 0 if who == m["a"] else 1)


def phase_of(job):
    """(round, step) of a job, the unit the unpacked, phase-by-phase schedule waits on.

    Split by hand, not parse_job: progress() calls this on every open job.
    """
    if job.startswith("spawn-"):
        return (0, 0)
    if job == "final":
        return (10 ** 6, 0)
    part = job.split("-")
    kind = part[2]
    return (int(part[0][1:]), 1 if kind == "atk" else 2 if kind == "def" else 2 + int(kind[5:] or 1))


def pick_wave(st):
    """The next wave: up to W ready jobs, longest remaining chain first."""
    jobs = st["jobs"]
    ready = [j for j, info in jobs.items()
             if info["s"] == "ready" and all(jobs[d]["s"] == "done" for d in deps_of(st, j))]
    if not st["pack"] and ready:
        open_phases = [phase_of(j) for j, info in jobs.items() if info["s"] in ("ready", "issued")]
        first = min(open_phases)
        ready = [j for j in ready if phase_of(j) == first]
    positions = spawn_positions(st)
    return heapq.nsmallest(st["wave"], ready, key=lambda j: (priority(st, j, positions), j))


# ---------------------------------------------------------------- progress

def planned_calls(st):
    """Sub-agent calls of the whole run: the base plan, the extra judges made so far,
    the final's panel while it is still to come, minus jobs a forfeit cancelled."""
    n = st["agents"]
    extra = sum(1 for j in st["jobs"] if j.endswith(("-judge2", "-judge3")))
    cancelled = sum(1 for info in st["jobs"].values() if info["s"] == "cancelled")
    final_paired = len(st["rounds"]) == len(field_sizes(n)) - 1
    panel = st["final_judges"] - 1 if n > 1 and not final_paired else 0
    return 6 * n - 5 + panel + extra + (1 if st["baseline"] else 0) - cancelled


def planned_waves(st):
    """Waves the run should take; init computes it once into the init event (older runs: here)."""
    if st.get("plan_waves"):
        return st["plan_waves"]
    looks = RECHECK_SHARE if st["recheck"] is not None else 0.0
    if st["pack"]:
        return packed_waves(st["agents"], st["wave"], st["baseline"], looks)[0]
    return sum(r[5] for r in plan_rows(st["agents"], st["wave"], st["baseline"]))


def progress(st):
    """Numbers for the progress line: round, phase, jobs, waves, times."""
    done = sum(1 for info in st["jobs"].values() if info["s"] == "done")
    retry = sum(1 for info in st["jobs"].values() if info["s"] == "ready" and info["t"] > 0)
    waves_plan = max(planned_waves(st), len(st["waves"]))
    open_jobs = [j for j, info in st["jobs"].items() if info["s"] in ("ready", "issued")]
    phase = "finished"
    if open_jobs:
        kind, rnd, _, _ = parse_job(min(open_jobs, key=phase_of))
        phase = {"spawn": "spawn", "atk": "attack", "def": "defend", "judge": "judge", "final": "baseline check"}[kind]
    elapsed = eta = None
    if st["waves"]:
        first = st["waves"][0]["at"]
        elapsed = max(0.0, time.time() - first)
        done_waves = len(st["waves"]) - (1 if any(i["s"] == "issued" for i in st["jobs"].values()) else 0)
        if done_waves >= 1:
            per = elapsed / max(1, len(st["waves"]))
            eta = per * max(0, waves_plan - len(st["waves"]))
    return {"round": len(st["rounds"]), "rounds": len(field_sizes(st["agents"])) - 1, "phase": phase,
            "done": done, "total": planned_calls(st), "wave": len(st["waves"]), "waves": waves_plan,
            "retrying": retry, "elapsed": elapsed, "eta": eta}


def minutes(seconds):
    if seconds is None:
        return "-"
    seconds = int(seconds)
    return "%dm%02ds" % (seconds // 60, seconds % 60) if seconds >= 60 else "%ds" % seconds


def progress_line(st, p=None):
    p = p or progress(st)
    text = "arena %s: round %d/%d %s, %d/%d jobs, wave %d/%d" % (
        st["run"], p["round"], p["rounds"], p["phase"], p["done"], p["total"], p["wave"], p["waves"])
    if p["elapsed"] is not None:
        text += ", %s elapsed" % minutes(p["elapsed"])
    if p["eta"] is not None and p["phase"] != "finished":
        text += ", ETA %s" % minutes(p["eta"])
    if p["retrying"]:
        text += ", %d to retry" % p["retrying"]
    return text


def finished(st):
    return st["champion"] is not None and not any(
        info["s"] in ("ready", "issued") for info in st["jobs"].values())


# ---------------------------------------------------------------- next: the orchestrator's one entry point

def advance_events(st):
    return [{"e": "advance", "round": len(st["rounds"])}] if round_done(st) and st["champion"] is None else []


def settle_state(run, st, rubric, retry=False):
    """Collect what arrived and advance finished rounds; returns the notes."""
    events, notes = collect_events(run, st, rubric, retry)
    run.commit(st, events)
    while True:
        adv = advance_events(st)
        if not adv:
            break
        run.commit(st, adv)
    return notes


def call_template(run, model):
    extra = ', model "%s"' % model if model else ""
    return 'run_in_background false%s, description "<id>", prompt "Read %s/b/<id>.md and follow it."' % (
        extra, run.dir)


def plan_next(run, st, rubric, cards, task, retry=False, conductor=False):
    """Decide and do the next step; returns the action as plain data."""
    notes = settle_state(run, st, rubric, retry)
    act = {"run": st["run"], "mode": st["mode"], "notes": notes}
    outstanding = sorted(j for j, info in st["jobs"].items() if info["s"] == "issued")
    last = st["waves"][-1] if st["waves"] else None
    if finished(st):
        act.update(action="finished", command="winner --run %s" % st["run"])
    elif last and not last.get("shown", True) and outstanding and len(outstanding) == last["size"] \
            and all(st["jobs"][j]["w"] == last["n"] for j in outstanding):
        # handed out but never printed (the command was killed in between): show the same wave again
        act.update(action="wave", wave=last["n"], calls=wave_calls(run, st, sorted(outstanding, key=lambda j: (
            priority(st, j, spawn_positions(st)), j))))
    elif outstanding:
        act.update(action="wait", waiting=outstanding, wave=len(st["waves"]))
    elif st["manual"]:
        act.update(action="manual", matches=[{
            "match": mid, "why": why, "agents": [find_match(st, mid)["a"], find_match(st, mid)["b"]],
            "solutions": [os.path.join(run.dir, st["sol"].get(a) or "") for a in
                          (find_match(st, mid)["a"], find_match(st, mid)["b"])]}
            for mid, why in sorted(st["manual"].items())])
    elif st["mode"] == "conductor" and not conductor:
        run.commit(st, [{"e": "batch", "n": (st["batch"] or {}).get("n", 0) + 1}])
        act.update(action="conductor", description="arena conductor " + st["run"],
                   prompt="Read %s and follow it." % run.path("conductor.md"))
    elif conductor and st["batch"] and len(st["waves"]) - st["batch"]["from"] >= st["batch_waves"]:
        act.update(action="batch-over")
    else:
        wave = pick_wave(st)
        if not wave:
            raise ArenaError("nothing can run and nothing is finished; run 'bracket.py status --run %s' and report "
                             "this as a bug" % st["run"])
        for job in wave:
            write_brief(run, st, job, st["jobs"][job]["t"] + 1, cards, rubric, task)
        # the judges' labels are fixed when handed out, so the verdict is read as the brief was written
        labels = {j: list(judge_sides(st, j, st["jobs"][j]["t"] + 1)) for j in wave if job_kind(j) in ("judge", "final")}
        run.commit(st, [{"e": "issue", "wave": len(st["waves"]) + 1, "jobs": wave, "at": round(time.time(), 3),
                         "labels": labels}])
        act.update(action="wave", wave=len(st["waves"]), calls=wave_calls(run, st, wave))
    act["progress"] = progress(st)
    act["line"] = progress_line(st, act["progress"])
    return act


def wave_calls(run, st, jobs):
    """The Agent calls of a wave, with every parameter the orchestrator passes."""
    calls = []
    for job in jobs:
        model = st["judge_model"] if job_kind(job) in ("judge", "final") else st["model"]
        # no subagent_type: general-purpose is the default, and every byte here is paid per call
        call = {"job": job, "run_in_background": False, "description": job,
                "prompt": "Read %s/b/%s.md and follow it." % (run.dir, job)}
        if model:
            call["model"] = model
        calls.append(call)
    return calls


def render_next(act, run):
    """The few lines the orchestrator reads."""
    out = [act["line"]]
    for note in act["notes"][:10]:
        out.append("invalid, will be re-issued: " + note[:160])
    if len(act["notes"]) > 10:
        out.append("(%d more invalid outputs; see status)" % (len(act["notes"]) - 10))
    a = act["action"]
    if a == "finished":
        out.append("Finished. Run: winner --run %s" % act["run"])
    elif a == "wait":
        out.append("Waiting for %d job(s) of wave %d with no output yet: %s" % (
            len(act["waiting"]), act["wave"], " ".join(act["waiting"][:20]) + (" ..." if len(act["waiting"]) > 20 else "")))
        out.append("If every Agent call of that wave has returned (or was never made), run: next --retry")
    elif a == "manual":
        for m in act["matches"]:
            out.append("%s needs a decision by hand: %s." % (m["match"], m["why"]))
            out.append("  solutions: %s" % " ".join(m["solutions"]))
            out.append('  run: record %s <%s> --reason "..."' % (m["match"], "|".join(m["agents"])))
    elif a == "conductor":
        out.append('Start the conductor: one Agent call, subagent_type "general-purpose", run_in_background false, '
                   'description "%s", prompt "%s"' % (act["description"], act["prompt"]))
        out.append("When it replies, run next. If it replies NO-AGENT-TOOL, run next --direct instead.")
    elif a == "batch-over":
        out.append("BATCH OVER. Reply with exactly this line and stop: %s; run next" % act["line"])
    else:
        groups = {}
        for c in act["calls"]:
            groups.setdefault(c.get("model"), []).append(c["job"])
        out.append("Wave %d: %d Agent calls in ONE message, then run next. Each call:" % (act["wave"], len(act["calls"])))
        for model, jobs in groups.items():
            out.append(call_template(run, model))
            out.append("<id> = " + " ".join(jobs))
    return "\n".join(out)


# ---------------------------------------------------------------- the user's files

FINGERPRINT_FILES = 20000
FINGERPRINT_HASH = 1024 * 1024
FINGERPRINT_SKIP = (".arena", ".git")


def fingerprint(top="."):
    """{path: [size, mtime_ns, sha256 or None]} of the tree outside .arena/ and .git/.

    Files up to 1 MiB are hashed; larger ones are compared by size and time.
    Stops after 20,000 files and says so.
    """
    files, complete = {}, True
    for dirpath, dirnames, filenames in os.walk(top):
        if dirpath == top:
            dirnames[:] = [d for d in dirnames if d not in FINGERPRINT_SKIP]
        dirnames.sort()
        for name in sorted(filenames):
            if len(files) >= FINGERPRINT_FILES:
                return files, False
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, top)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            digest = None
            if os.path.isfile(path) and not os.path.islink(path) and info.st_size <= FINGERPRINT_HASH:
                try:
                    with open(path, "rb") as f:
                        digest = hashlib.sha256(f.read()).hexdigest()
                except OSError:
                    pass
            files[rel] = [info.st_size, info.st_mtime_ns, digest]
    return files, complete


def tree_changes(run):
    """Paths created, changed or deleted outside .arena/ since init."""
    try:
        before = json.loads(read_text(run.path("fingerprint.json")))
    except (ArenaError, ValueError):
        return None, "no fingerprint was recorded at init"
    now, complete = fingerprint(".")
    old = before["files"]
    changes = []
    for path in sorted(set(old) | set(now)):
        if path not in now:
            changes.append("deleted " + path)
        elif path not in old:
            changes.append("created " + path)
        elif old[path][0] != now[path][0] or old[path][2] != now[path][2] or (
                old[path][2] is None and old[path][1] != now[path][1]):
            changes.append("changed " + path)
    note = "" if before.get("complete") and complete else " (only the first %d files are watched)" % FINGERPRINT_FILES
    return changes, note


# ---------------------------------------------------------------- commands

def cmd_plan(args):
    n = 8 if args.quick else args.agents
    check_numbers(n, args.wave)
    print(plan_table(n, args.wave, args.baseline, args.recheck != "off"))
    if args.task_file:
        task = read_input(args.task_file, "--task-file")
        calls = job_counts(n, args.wave, args.baseline, args.recheck != "off")
        print(format_estimate(estimate_tokens(calls, tokens_of(task), ASSUMED), "assumed"))


# Token arithmetic. Sizes in tokens (about 4 characters each); the assumed
# sizes are printed with the estimate, and `status` redoes it with real sizes.
ASSUMED = {"solution": 1500, "attack": 600, "defence": 500, "verdict": 250}
BRIEF_TOKENS = 900        # a brief's own text, without the task
CLIENT_TOKENS = 12000     # Claude Code's system prompt and tool definitions, per sub-agent
TURNS = 4                 # model turns per sub-agent call: read, read inputs, write, reply


def tokens_of(text_or_bytes):
    return max(1, len(text_or_bytes) // 4)


def job_counts(n, wave, baseline, recheck):
    matches = n - 1
    judges = matches + (expected_looks(n, wave) if recheck and n > 1 else 0)
    return {"spawn": n, "atk": 2 * matches, "def": 2 * matches, "judge": judges, "final": 1 if baseline else 0}


def estimate_tokens(calls, task, size):
    """(input tokens, output tokens) for a whole run.

    Each call reads the client's prompt, its brief and the task on every turn
    (mostly served from the prompt cache), plus the files the brief names.
    """
    s, a, d, v = size["solution"], size["attack"], size["defence"], size["verdict"]
    fixed = TURNS * (CLIENT_TOKENS + BRIEF_TOKENS + task)
    reads = {"spawn": 0, "atk": 2 * s, "def": s + a, "judge": 2 * (s + a + d), "final": 2 * s}
    writes = {"spawn": s, "atk": a, "def": d + s, "judge": v, "final": v}
    tin = sum(k * (fixed + reads[kind]) for kind, k in calls.items())
    tout = sum(k * writes[kind] for kind, k in calls.items())
    return tin, tout, size


def format_estimate(est, how):
    tin, tout, size = est
    return ("tokens (estimate): about %s input, mostly cached repeats of Claude Code's own prompt, and %s output; "
            "%s sizes: solution %d, attack %d, defence %d, verdict %d tokens"
            % (human(tin), human(tout), how, size["solution"], size["attack"], size["defence"], size["verdict"]))


def human(x):
    return "%.1fM" % (x / 1e6) if x >= 1e6 else "%dk" % round(x / 1e3) if x >= 1e3 else str(x)


def measured_sizes(run, st):
    """Average sizes of the outputs written so far, in tokens (assumed where none yet)."""
    sums = {k: [0, 0] for k in ASSUMED}
    for job, info in st["jobs"].items():
        if info["s"] != "done" or st["summ"].get(job, {}).get("missing"):
            continue
        kind = job_kind(job)
        for path in outputs_of(job):
            what = {"spawn": "solution", "atk": "attack", "judge": "verdict", "final": "verdict"}.get(kind)
            if kind == "def":
                what = "solution" if "-sol-" in path else "defence"
            try:
                sums[what][0] += os.path.getsize(run.path(path))
                sums[what][1] += 1
            except OSError:
                pass
    return {k: (tokens_of(b" " * (total // count)) if count else ASSUMED[k]) for k, (total, count) in sums.items()}


def plan_table(n, wave, baseline=False, recheck=True):
    rows = plan_rows(n, wave, baseline)
    out = ["round  alive  matches  bye  sub-agent calls  waves"]
    for label, alive, matches, bye, calls, waves in rows:
        out.append("%5s  %5s  %7s  %3s  %15d  %5d" % (
            label, alive, "-" if matches is None else matches, "yes" if bye else "-", calls, waves))
    calls = sum(r[4] for r in rows)
    waves = sum(r[5] for r in rows)
    # the total row sits one column right, as in the published table
    out.append("%-6s  %5s  %7s  %3s  %15d  %5d" % ("total", "", "", "", calls, waves))
    out.append("alive per round: " + " ".join(str(x) for x in field_sizes(n)))
    packed, bound = packed_waves(n, wave, baseline)
    out.append("packed waves (ready jobs from any phase share a wave): %d (best possible with round barriers: %d)"
               % (packed, bound))
    if recheck and n > 1:
        extra = expected_looks(n, wave)
        waves2, _ = packed_waves(n, wave, baseline, RECHECK_SHARE)
        out.append("second looks (close matches, and every match of rounds small enough to judge twice in one wave):")
        out.append("  about %d more judge calls, %d calls in all (x%.2f), about %d packed waves"
                   % (extra, calls + extra, (calls + extra) / float(calls), waves2))
    return "\n".join(out)


def expected_looks(n, wave):
    """Second-look judge calls to expect: all matches of small rounds, a share of the rest."""
    extra = 0
    for alive in field_sizes(n)[:-1]:
        m = alive // 2
        extra += m if 2 * m <= wave else int(round(RECHECK_SHARE * m))
    return extra


# Share of matches that get a second judge at the default margin, as measured
# by benchmarks/judging.py with the default judge model (26.7% at N=100).
RECHECK_SHARE = 0.25


def check_numbers(n, wave, cards=None):
    sizes = [len(p) for p in (cards or load_cards()).values()]
    top = sizes[0] * sizes[1] * sizes[2] if len(sizes) == 3 else 2160
    if not 1 <= n <= top:
        raise ArenaError("--agents must be 1 to %d (the number of distinct cards), not %d" % (top, n))
    if not 1 <= wave <= MAX_WAVE:
        raise ArenaError("--wave must be 1 to %d (Claude Code refuses more concurrent sub-agents), not %d"
                         % (MAX_WAVE, wave))


def cmd_init(args):
    cards = load_cards()
    load_rubric()  # refuse to start with a rubric the judges could not be scored on
    n = QUICK_AGENTS if args.quick else args.agents
    check_numbers(n, args.wave, cards)
    if args.seed is not None and args.seed < 0:
        raise ArenaError("--seed must be a whole number 0 or above")
    if args.batch_waves < 1:
        raise ArenaError("--batch-waves must be 1 or more, not %d" % args.batch_waves)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10 ** 6)
    task = read_input(args.task_file, "--task-file")
    baseline = read_input(args.baseline_file, "--baseline-file") if args.baseline_file else None
    for kind in ("spawn", "attack", "defend", "judge", "final", "conductor"):
        load_template(kind)
    name = args.run or time.strftime("%Y%m%d-%H%M%S") + "-s%d" % seed
    root = ".arena"
    if os.path.islink(root) or (os.path.exists(root) and not os.path.isdir(root)):
        raise ArenaError(".arena must be a plain folder, not a link or a file")
    run = Run(name, root)
    if os.path.exists(run.dir):
        raise ArenaError("run %s already exists; pick another --run name or continue it with next --run %s" % (name, name))
    fp, complete = fingerprint(".")
    os.makedirs(run.path("b"))
    for sub in ("out", "j"):
        os.makedirs(run.path(sub))
    if not os.path.exists(os.path.join(root, ".gitignore")):
        atomic_write(os.path.join(root, ".gitignore"), "*\n")
    atomic_write(run.path("task.md"), task)
    if baseline is not None:
        atomic_write(run.path("baseline.md"), baseline)
    atomic_write(run.path("fingerprint.json"), json.dumps({"complete": complete, "files": fp}))
    rng = rng_for(seed, "fence", hashlib.sha256(task.encode("utf-8")).hexdigest())
    fence = "=====ARENA-DATA-%012x=====" % rng.getrandbits(48)
    while fence in task or (baseline and fence in baseline):
        fence = "=====ARENA-DATA-%012x=====" % rng.getrandbits(48)
    sizes = tuple(len(cards[p]) for p in ("reasoning", "workflow", "strategy"))
    ev = {"e": "init", "seq": 1, "run": name, "agents": n, "seed": seed, "wave": args.wave, "at": round(time.time(), 3),
          "fence": fence, "baseline": baseline is not None, "model": args.model, "judge_model": args.judge_model,
          "recheck": None if args.recheck == "off" else int(args.recheck), "final_judges": args.final_judges,
          "pack": not args.no_pack, "batch_waves": args.batch_waves, "mode": "direct" if args.direct else "conductor",
          "sizes": list(sizes)}
    ev["plan_waves"] = planned_waves(ev)
    with run.lock():
        run.append([ev])
        st = new_state(ev, sizes)
        st["seq"] = 1
        run.save(st)
    write_conductor_brief(run, st)
    atomic_write(os.path.join(root, "current"), name + "\n")
    print("run %s: %d agents, seed %d, wave %d, %s mode; task in %s" % (
        name, n, seed, args.wave, st["mode"], run.path("task.md")))
    print("next: next --run %s" % name)


def read_input(path, flag):
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ArenaError("%s %s: %s" % (flag, path, e.strerror or e))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ArenaError("%s %s is not UTF-8 text" % (flag, path))
    if not text.strip():
        raise ArenaError("%s %s is empty; write the whole task into it" % (flag, path))
    return text


def write_conductor_brief(run, st):
    values = {"bracket": 'python3 -S "%s"' % os.path.abspath(__file__), "run": st["run"],
              "batch": str(st["batch_waves"])}
    atomic_write(run.path("conductor.md"), fill(load_template("conductor"), values))


def with_run(args, fn):
    run = find_run(args.run)
    run.check_folder()
    # read-only commands lock too: load may replay the journal and save
    with run.lock():
        st = run.load()
        result = fn(run, st)
        # not saved after an error: the journal is replayed by the next command instead
        run.flush(st)
        return result


def cmd_next(args):
    def go(run, st):
        if args.direct and st["mode"] != "direct":
            run.commit(st, [{"e": "mode", "mode": "direct"}])
        cards, rubric = load_cards(), load_rubric()
        if [len(cards[p]) for p in ("reasoning", "workflow", "strategy")] != st["sizes"]:
            raise ArenaError("cards.md changed its number of entries since this run started; restore it to finish the run")
        task = read_text(run.path("task.md"))
        act = plan_next(run, st, rubric, cards, task, retry=args.retry, conductor=args.conductor)
        if args.json:
            act.pop("line", None)
            print(json.dumps(act, sort_keys=True))
        else:
            print(render_next(act, run))
        if act["action"] == "wave":
            sys.stdout.flush()
            # only now has the orchestrator seen the wave; until then next shows it again
            run.commit(st, [{"e": "shown", "wave": act["wave"]}])
    with_run(args, go)


def cmd_collect(args):
    def go(run, st):
        before = sum(1 for i in st["jobs"].values() if i["s"] == "done")
        notes = settle_state(run, st, load_rubric(), retry=False)
        after = sum(1 for i in st["jobs"].values() if i["s"] == "done")
        print("collected %d output(s); %d invalid (next re-issues them)" % (after - before, len(notes)))
        for note in notes:
            print("invalid: " + note[:200])
    with_run(args, go)


PHASES = {"spawn": "spawn", "attack": "atk", "defend": "def", "judge": "judge", "final": "final"}


def cmd_prompts(args):
    def go(run, st):
        kind = PHASES[args.phase]
        rnd = len(st["rounds"])
        jobs = sorted(j for j in st["jobs"] if job_kind(j) == kind and (kind in ("spawn", "final") or parse_job(j)[1] == rnd))
        if not jobs:
            raise ArenaError("round %d has no %s jobs" % (rnd, args.phase))
        cards, rubric, task = load_cards(), load_rubric(), read_text(run.path("task.md"))
        wrote = 0
        for j in jobs:
            info = st["jobs"][j]
            if info["s"] in ("ready", "issued") and all(st["jobs"][d]["s"] == "done" for d in deps_of(st, j)):
                write_brief(run, st, j, info["t"] + (info["s"] == "ready"), cards, rubric, task)
                wrote += 1
        print("%s: %d job(s), %d brief(s) written under %s" % (args.phase, len(jobs), wrote, run.path("b")))
        for k in range(0, len(jobs), st["wave"]):
            print("wave %d: %s" % (k // st["wave"] + 1, " ".join(jobs[k:k + st["wave"]])))
    with_run(args, go)


def cmd_pairings(args):
    def go(run, st):
        if not st["rounds"]:
            print("no matches: a single agent has no one to play")
            return
        rnd = st["rounds"][-1]
        modes = lambda a: load_cards()["reasoning"][st["cards"][a][0]][0]
        print("round %d: %d matches%s" % (rnd["n"], len(rnd["matches"]), ", bye " + rnd["bye"] if rnd["bye"] else ""))
        for m in rnd["matches"]:
            res = st["results"].get(m["id"])
            tail = "  -> %s (%s)" % (res["w"], res["how"]) if res else ""
            print("%s  %s (%s) vs %s (%s)%s" % (m["id"], m["a"], modes(m["a"]), m["b"], modes(m["b"]), tail))
    with_run(args, go)


def cmd_record(args):
    def go(run, st):
        m = find_match(st, args.match)
        if m is None or not st["rounds"] or m not in st["rounds"][-1]["matches"]:
            raise ArenaError("%s is not a match of the current round; see pairings" % args.match)
        if args.match in st["results"]:
            raise ArenaError("%s is already decided (%s won)" % (args.match, st["results"][args.match]["w"]))
        if args.agent not in (m["a"], m["b"]):
            raise ArenaError("%s is not in %s; it is %s vs %s" % (args.agent, args.match, m["a"], m["b"]))
        reason = (args.reason or "").strip()
        if not reason:
            raise ArenaError('record needs --reason "why this side won"')
        run.commit(st, [{"e": "record", "match": args.match, "winner": args.agent, "why": reason[:300]}])
        print("%s: %s goes through (recorded by hand)" % (args.match, args.agent))
    with_run(args, go)


def cmd_advance(args):
    def go(run, st):
        if st["champion"] is not None:
            raise ArenaError("the tournament is decided (%s); run winner" % st["champion"])
        if not matches_decided(st):
            open_ = [m["id"] for m in st["rounds"][-1]["matches"] if m["id"] not in st["results"]]
            raise ArenaError("round %d still has %d undecided match(es): %s" % (
                len(st["rounds"]), len(open_), " ".join(open_[:10])))
        # by hand, pairing does not wait for a bye's first solution: its jobs wait for it
        run.commit(st, [{"e": "advance", "round": len(st["rounds"])}])
        if st["champion"]:
            print("one agent left: %s" % st["champion"])
        else:
            r = st["rounds"][-1]
            print("round %d paired: %d matches%s" % (r["n"], len(r["matches"]), ", bye " + r["bye"] if r["bye"] else ""))
    with_run(args, go)


def cmd_report(args):
    def go(run, st):
        sys.path.insert(0, HERE)
        import report  # report.py, beside this file
        print("report: %s" % report.write_report(run, st))
    with_run(args, go)


def cmd_repair(args):
    run = find_run(args.run)
    run.check_folder()
    with run.lock():
        st = run.rebuild()
        run.save(st)
    print("rebuilt state.json of run %s from %d journal events" % (run.name, st["seq"]))


def cmd_status(args):
    def go(run, st):
        print(progress_line(st))
        print("run %s: %d agents, seed %d, wave %d, %s mode, second look %s" % (
            st["run"], st["agents"], st["seed"], st["wave"], st["mode"],
            "off" if st["recheck"] is None else "within %d points" % st["recheck"]))
        for rnd in st["rounds"]:
            decided = [st["results"][m["id"]] for m in rnd["matches"] if m["id"] in st["results"]]
            looks = sum(1 for r in decided if r.get("n") == 2)
            print("round %d: %d alive, %d matches, %d decided%s%s" % (
                rnd["n"], 2 * len(rnd["matches"]) + (1 if rnd["bye"] else 0), len(rnd["matches"]), len(decided),
                ", %d second looks" % looks if looks else "", ", bye " + rnd["bye"] if rnd["bye"] else ""))
        alive = alive_agents(st)
        print("alive: %d%s" % (len(alive), " (" + " ".join(alive) + ")" if len(alive) <= 16 else ""))
        failing = sorted((j, i["why"]) for j, i in st["jobs"].items() if i.get("why") and i["s"] in ("ready", "stuck"))
        for job, why in failing[:10]:
            print("retry %s: %s" % (job, why[:120]))
        for mid, why in sorted(st["manual"].items()):
            print("needs a decision by hand: %s (%s)" % (mid, why))
        calls = job_counts(st["agents"], st["wave"], st["baseline"], st["recheck"] is not None)
        task = tokens_of(read_text(run.path("task.md")))
        print(format_estimate(estimate_tokens(calls, task, measured_sizes(run, st)), "measured"))
        print(format_estimate(estimate_tokens(calls, task, ASSUMED), "assumed"))
        print_tree_changes(run)
    with_run(args, go)


def print_tree_changes(run):
    changes, note = tree_changes(run)
    if changes is None:
        print("files outside .arena/: not checked (%s)" % note)
    elif not changes:
        print("files outside .arena/: none changed since init%s" % note)
    else:
        print("files outside .arena/ changed since init%s: %d" % (note, len(changes)))
        for c in changes[:20]:
            print("  " + c)


def path_of(st, agent):
    """The matches an agent played, in order, with their results."""
    games = []
    for rnd in st["rounds"]:
        for m in rnd["matches"]:
            if agent in (m["a"], m["b"]):
                games.append((m, st["results"].get(m["id"])))
    return games


def attacks_on(run, job):
    """[(label, summary)] of an attack file, read again for the report."""
    try:
        text = read_text(run.path(outputs_of(job)[0]))
    except ArenaError:
        return []
    return re.findall(r"^## ATTACK \d+ (FATAL|MAJOR|MINOR): (.*)$", text, re.M)


def cmd_winner(args):
    def go(run, st):
        if st["champion"] is None:
            raise ArenaError("no winner yet: %s; keep running next" % progress_line(st))
        champ = st["champion"]
        cards = load_cards()
        sol = st["sol"].get(champ)
        rounds = len(st["rounds"])
        print("winner %s of %d agents after %d round%s (seed %d)" % (
            champ, st["agents"], rounds, "" if rounds == 1 else "s", st["seed"]))
        print("card: %s" % " / ".join(card_names(cards, st["cards"][champ])))
        print("solution: %s" % (run.path(sol) if sol else "none: no competitor produced a valid solution"))
        for m, res in path_of(st, champ):
            opp = opponent(m, champ)
            line = "%s vs %s: %s" % (m["id"], opp, res["how"])
            if res.get("tot"):
                looks = res.get("n", 1)
                line += " %s-%s (margin %s)" % (points(res["tot"][champ], looks), points(res["tot"][opp], looks),
                                                 points(res["tot"][champ] - res["tot"][opp], looks))
            if res["how"] == "judge" and res.get("n") == 2:
                line += ", second look %s" % ("agreed" if res.get("agree") else "disagreed: scores summed")
            elif res["how"] == "panel":
                line += ", %d of %d judges" % (res["votes"], res["n"])
            elif res.get("rule") == "fatal":
                line += ", opponent had a verified FATAL flaw"
            print(line)
            atk = "%s-atk-%s" % (m["id"], opp)
            answers = st["summ"].get("%s-def-%s" % (m["id"], champ), {}).get("ans", "")
            for k, (label, summary) in enumerate(attacks_on(run, atk)):
                reply = {"C": "conceded and fixed", "R": "rebutted"}.get(answers[k:k + 1], "unanswered")
                print("  %s %s -> %s" % (label, summary.strip()[:100], reply))
        byes = [r["n"] for r in st["rounds"] if r["bye"] == champ]
        if byes:
            print("byes: round %s" % ", ".join(str(b) for b in byes))
        print_final(st)
        report = run.path("report.html")
        if os.path.exists(report):
            print("report: %s" % report)
        print_tree_changes(run)
    with_run(args, go)


def points(total, looks):
    """A total on the rubric's scale: several looks are averaged for display."""
    value = total / float(looks or 1)
    return "%d" % value if value == int(value) else "%.1f" % value


def print_final(st):
    if not st["baseline"]:
        return
    f = st["final"]
    if f is None:
        print("baseline check: not run yet (run next)")
    elif f.get("missing"):
        print("baseline check: failed (%s); compare by hand" % f.get("why", "no verdict"))
    else:
        w, b = sum(f["sc"]["winner"]), sum(f["sc"]["baseline"])
        fw, fb = f["fat"]["winner"], f["fat"]["baseline"]
        if fw != fb:
            verdict = "the old answer is better: the new one has a verified FATAL flaw" if fw else \
                "the arena answer is better: the old one has a verified FATAL flaw"
        else:
            verdict = "the arena answer scored higher" if w > b else "the OLD answer scored higher" if b > w else "a tie"
        print("baseline check (blind): arena answer %d, old answer %d: %s" % (w, b, verdict))


# ---------------------------------------------------------------- the command line

class Parser(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write("bracket.py: %s; see 'bracket.py %s --help'\n" % (message, self.prog.split()[-1]
                                                                           if " " in self.prog else ""))
        sys.exit(2)


def whole(text):
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a whole number" % text)


def build_parser():
    p = Parser(prog="bracket.py", description="Bookkeeping for /arena tournaments. State lives in .arena/<run>/.")
    sub = p.add_subparsers(dest="cmd", metavar="command", parser_class=Parser)
    sub.required = True

    def command(name, fn, help_text, run=True):
        c = sub.add_parser(name, help=help_text, description=help_text)
        c.set_defaults(fn=fn)
        if run:
            c.add_argument("--run", help="the run's folder name under .arena/ (default: the latest init)")
        return c

    c = command("plan", cmd_plan, "show rounds, sub-agent calls and waves for N agents; writes nothing", run=False)
    c.add_argument("--agents", type=whole, default=DEFAULT_AGENTS)
    c.add_argument("--quick", action="store_true", help="8 agents")
    c.add_argument("--wave", type=whole, default=DEFAULT_WAVE)
    c.add_argument("--baseline", action="store_true", help="add the final check against the old answer")
    c.add_argument("--recheck", default=str(DEFAULT_RECHECK), help="margin for a second judge, or off")
    c.add_argument("--task-file", help="estimate tokens for this task")

    c = command("init", cmd_init, "start a run: deal cards, pair round 1, write the state", run=False)
    c.add_argument("--agents", type=whole, default=DEFAULT_AGENTS)
    c.add_argument("--quick", action="store_true", help="8 agents")
    c.add_argument("--seed", type=whole)
    c.add_argument("--task-file", required=True)
    c.add_argument("--baseline-file")
    c.add_argument("--wave", type=whole, default=DEFAULT_WAVE)
    c.add_argument("--run", help="folder name under .arena/ (default: date-time and seed)")
    c.add_argument("--model", choices=MODELS, help="model for competitors (default: the session's)")
    c.add_argument("--judge-model", choices=MODELS, help="model for judges (default: the session's)")
    c.add_argument("--recheck", default=str(DEFAULT_RECHECK), type=recheck_value,
                   help="second judge when totals are within this margin (default %d), or off" % DEFAULT_RECHECK)
    c.add_argument("--final-judges", type=int, choices=(1, 3), default=1, help="judges for the final match")
    c.add_argument("--no-pack", action="store_true", help="one phase per wave, as the per-phase table counts")
    c.add_argument("--direct", action="store_true", help="the main session runs every wave itself")
    c.add_argument("--batch-waves", type=whole, default=DEFAULT_BATCH, help="waves per conductor")

    c = command("next", cmd_next, "collect what arrived and print exactly what to do now")
    c.add_argument("--retry", action="store_true", help="the last wave's agents have returned: re-issue what is missing")
    c.add_argument("--direct", action="store_true", help="switch this run to the direct loop (no conductor)")
    c.add_argument("--conductor", action="store_true", help="called by a conductor sub-agent")
    c.add_argument("--json", action="store_true", help="print the action as JSON")

    c = command("prompts", cmd_prompts, "write the briefs of a phase of this round and list its jobs in waves")
    c.add_argument("phase", choices=sorted(PHASES))
    command("pairings", cmd_pairings, "this round's matches and the bye")
    command("collect", cmd_collect, "read and check the outputs that arrived, record verdicts")
    c = command("record", cmd_record, "decide one match by hand")
    c.add_argument("match")
    c.add_argument("agent")
    c.add_argument("--reason", required=True)
    command("advance", cmd_advance, "eliminate the losers and pair the survivors")
    command("status", cmd_status, "progress, rounds, alive agents, and files changed outside .arena/")
    command("winner", cmd_winner, "the survivor, its card, path, the attacks it survived, the baseline check")
    command("report", cmd_report, "write report.html: the bracket, scores, attacks and the winner's path")
    command("repair", cmd_repair, "rebuild state.json from journal.jsonl")
    return p


def recheck_value(text):
    if text == "off":
        return "off"
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("must be a whole number of points or off")
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError("must be 0 to 100 points, or off")
    return str(value)


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        args.fn(args)
    except ArenaError as e:
        sys.stderr.write("bracket.py: %s\n" % e)
        return 2
    except BrokenPipeError:  # the reader stopped early (e.g. `| head`): nothing to report
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except KeyboardInterrupt:
        sys.stderr.write("bracket.py: interrupted; the state is as the last finished step left it, run next\n")
        return 130
    except Exception as e:  # never a traceback for the user; ARENA_DEBUG=1 shows it
        if os.environ.get("ARENA_DEBUG"):
            raise
        sys.stderr.write("bracket.py: internal error (%s: %s); the state was not changed by the failed step; "
                         "set ARENA_DEBUG=1 to see where\n" % (type(e).__name__, str(e)[:200]))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
