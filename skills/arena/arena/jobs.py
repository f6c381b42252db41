"""Job ids and the plan arithmetic: what a run of N agents costs in calls and waves.

A job id (spawn-a017, r3-m07-atk-a017, r3-m07-judge2, final) says what the job is; this
module parses ids, names the files each job writes, and computes the per-phase table and
the packed-wave bound that `plan` prints. Pure: no state, no files.
"""

import heapq
import re

from .base import ArenaError, DEFAULT_WAVE, JUDGES_PER_MATCH, LATE_FIELD


# Jobs left on the longest path from a job to its round's end; round 1's bye
# spawns feed nothing in round 1, so they fill the judges' waves (Hu's rule).
CHAIN = {"spawn": 4, "bye": 1, "atk": 3, "def": 2, "judge": 1, "final": 1}


JOB_ID = re.compile(r"^(?:spawn-(a\d+)|r(\d+)-m(\d+)-(atk|def)-(a\d+)|r(\d+)-m(\d+)-judge(\d?)|final)$")


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


def round_kind(matches, field, wave):
    """late: the last two rounds; small: judges of two looks fit in half a wave; big: the rest."""
    if field <= LATE_FIELD:
        return "late"
    return "small" if 2 * matches <= wave else "big"


def first_looks(matches, field, wave, final_judges=1, most=2):
    """Judges each match of a round starts with, second looks on (off: 1, or the final's panel).

    When a round's judges leave half a wave empty anyway, both looks run side by
    side: a second opinion for no extra wave, where it matters most. A round whose
    matches take at least three looks (to a majority of five) starts them together
    when they fit in a wave.
    """
    judges = final_judges if matches == 1 and field == 2 else 1
    if judges > 1:
        return judges
    if most >= 5 and 3 * matches <= wave:
        return 3
    return 2 if 2 * matches <= wave else 1


def round_judges(matches, field, wave, most_looks):
    """(judges side by side, judge calls to expect) per match of one round under looks to
    a majority (most_looks: the engine's MOST_LOOKS pair)."""
    late = field <= LATE_FIELD
    first = first_looks(matches, field, wave, most=most_looks[1] if late else most_looks[0])
    return first, max(float(first), JUDGES_PER_MATCH[round_kind(matches, field, wave)])


def round_jobs(rnd, matches, spawn_order=None, looks=0.0, wave=DEFAULT_WAVE, judges=None):
    """The job graph of one round in the scheduler's terms (for `plan` and tests).

    looks: the share of matches that get a second look after their first
    judge; a round whose judges fit in half a wave gets both looks side by side.
    judges, instead (looks to a majority): (judges side by side, judge calls to
    expect) per match; the calls beyond the first judges are spread over the
    matches, each after the one before it.
    """
    if judges is not None:
        return chained_judges(round_jobs(rnd, matches, spawn_order, 0.0, wave), rnd, matches, judges)
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
        jobs["d%d" % a] = (job_key("def", rnd, k, 0), ["a%d" % a, "a%d" % b])
        jobs["d%d" % b] = (job_key("def", rnd, k, 1), ["a%d" % a, "a%d" % b])
        jobs["j%d" % k] = (job_key("judge", rnd, k, 1), ["d%d" % a, "d%d" % b])
        if side_by_side:
            jobs["k%d" % k] = (job_key("judge", rnd, k, 2), ["d%d" % a, "d%d" % b])
        elif k in rechecked:
            jobs["k%d" % k] = (job_key("judge", rnd, k, 2), ["j%d" % k])
    return jobs


def chained_judges(jobs, rnd, matches, judges):
    """A one-judge round graph with each match's judges made (first side by side, then a chain)."""
    first, mean = judges
    extra = int(round((mean - first) * matches))
    depth = [0] * matches
    for i in range(extra):  # spread evenly: every match gets a later look before any gets two
        depth[int((i % matches) * matches / min(extra, matches))] += 1
    for k in range(matches):
        a, b = 2 * k, 2 * k + 1
        for look in range(2, first + 1):
            jobs["k%d-%d" % (k, look)] = (job_key("judge", rnd, k, look), ["d%d" % a, "d%d" % b])
        before = ["j%d" % k] + ["k%d-%d" % (k, look) for look in range(2, first + 1)]
        for look in range(first + 1, first + 1 + depth[k]):
            jobs["k%d-%d" % (k, look)] = (job_key("judge", rnd, k, look), before)
            before = ["k%d-%d" % (k, look)]
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


def packed_waves(n, wave, baseline=False, looks=0.0, most_looks=None):
    """(waves with packing, lower bound) for n agents, W at a time.

    Rounds stay barriers: pairing a round needs all its winners. Within a
    round the bound is max(ceil(calls / W), length of the dependency chain).
    most_looks: plan the judges of looks to a majority instead of a share of
    second looks.
    """
    total = bound = 0
    sizes = field_sizes(n)
    for r, alive in enumerate(sizes[:-1], 1):
        m = alive // 2
        judges = round_judges(m, alive, wave, most_looks) if most_looks else None
        jobs = round_jobs(r, m, list(range(n)) if r == 1 else None, looks, wave, judges)
        total += len(list_schedule(jobs, wave))
        bound += round_bound(jobs, wave)
    if n == 1:
        total = bound = 1
    if baseline:
        total += 1
        bound += 1
    return total, bound


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


def outputs_of(job):
    """Paths (relative to the run folder) a job must write."""
    kind = job_kind(job)
    if kind in ("judge", "final"):
        return ["out/%s.json" % job]
    if kind == "def":
        mid, agent = match_of(job), job.split("-")[3]
        return ["out/%s.md" % job, "out/%s-sol-%s.md" % (mid, agent)]
    return ["out/%s.md" % job]


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
