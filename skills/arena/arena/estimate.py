"""What a run will cost: the plan arithmetic, the `plan` table and the token estimate.

The plan arithmetic counts what a run of N agents takes, round by round: calls, waves
as one phase at a time and as the engine packs them, the bound no schedule can beat,
and the judge calls looks to a majority add. The token estimate puts sizes on those
calls. Pure arithmetic on N, W and sizes; measured_sizes reads the output sizes of a run
in progress to redo the estimate with real numbers. Never changes a state.
"""

import heapq
import os

from .base import DEFAULT_WAVE, JUDGES_PER_MATCH, MOST_LOOKS, plural
from .cards import model_counts
from .jobs import (KINDS_IN_ORDER, MATCH_CALLS, MERGE_CALLS, MERGE_JOBS, bracket_calls, bracket_jobs, job_key,
                   output_sizes, outputs_of)
from .judging import first_looks, looks_after_first, most_looks_in, round_kind


def field_sizes(n):
    """Agents alive at the start of each round, ending with 1."""
    sizes = [n]
    while sizes[-1] > 1:
        sizes.append((sizes[-1] + 1) // 2)
    return sizes


def plan_rows(n, wave, baseline=False, merge=False):
    """The per-phase table: (label, alive, matches, bye, calls, waves)."""
    def waves(k):
        return -(-k // wave) if k else 0
    rows = [("spawn", n, None, None, n, waves(n))]
    for r, alive in enumerate(field_sizes(n)[:-1], 1):
        m = alive // 2
        rows.append((str(r), alive, m, alive % 2 == 1, MATCH_CALLS * m, 2 * waves(2 * m) + waves(m)))
    if merge and n > 1:
        rows.append(("merge", 2, 1, False, MERGE_CALLS, 1 + 2 * waves(2) + 1))
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


def round_judges(matches, field, wave, most_looks):
    """(first looks, judge calls to expect, looks added at once after the first) per match
    of one round (most_looks: the run's pair, see judging.most_looks_in)."""
    kind = round_kind(matches, field, wave)
    first = first_looks(matches, field)
    together = looks_after_first(kind, True, most_looks_in(field, most_looks))
    return first, max(float(first), JUDGES_PER_MATCH[kind]), together


def round_jobs(rnd, matches, spawn_order=None, wave=DEFAULT_WAVE, judges=None):
    """The job graph of one round in the scheduler's terms (for `plan` and tests).

    Every match: two attacks, two defences, one judge. judges, when given: (first looks,
    judge calls to expect per match[, looks added at once after the first]); the calls
    beyond the first looks are spread over the matches (chained_judges).
    """
    jobs = {}
    if spawn_order is not None:
        for pos, a in enumerate(spawn_order):
            jobs["s%d" % a] = (job_key("spawn" if pos < 2 * matches else "bye", 0, pos, 0), [])
    for k in range(matches):
        a, b = 2 * k, 2 * k + 1
        first = spawn_order is not None
        jobs["a%d" % a] = (job_key("atk", rnd, k, 0), ["s%d" % a, "s%d" % b] if first else [])
        jobs["a%d" % b] = (job_key("atk", rnd, k, 1), ["s%d" % a, "s%d" % b] if first else [])
        jobs["d%d" % a] = (job_key("def", rnd, k, 0), ["a%d" % a, "a%d" % b])
        jobs["d%d" % b] = (job_key("def", rnd, k, 1), ["a%d" % a, "a%d" % b])
        jobs["j%d" % k] = (job_key("judge", rnd, k, 1), ["d%d" % a, "d%d" % b])
    return chained_judges(jobs, rnd, matches, judges) if judges else jobs


def chained_judges(jobs, rnd, matches, judges):
    """A one-judge round graph with each match's later looks added: the first looks side by
    side, then the looks added at once after them side by side, then one after another."""
    first, mean = judges[:2]
    together = max(1, judges[2]) if len(judges) > 2 else 1
    extra = int(round((mean - first) * matches))
    depth = [0] * matches
    for i in range(extra):  # spread evenly: every match gets a later look before any gets two
        depth[int((i % matches) * matches / min(extra, matches))] += 1
    for k in range(matches):
        a, b = 2 * k, 2 * k + 1
        for look in range(2, first + 1):
            jobs["k%d-%d" % (k, look)] = (job_key("judge", rnd, k, look), ["d%d" % a, "d%d" % b])
        before = ["j%d" % k] + ["k%d-%d" % (k, look) for look in range(2, first + 1)]
        look, left = first + 1, depth[k]
        while left:
            level = ["k%d-%d" % (k, x) for x in range(look, look + min(left, together))]
            for job in level:
                jobs[job] = (job_key("judge", rnd, k, int(job.split("-")[1])), before)
            look, left, before, together = look + len(level), left - len(level), level, 1
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


def packed_waves(n, wave, baseline=False, most_looks=None, merge=False):
    """(waves with packing, lower bound) for n agents, W at a time.

    Rounds stay barriers: pairing a round needs all its winners. Within a
    round the bound is max(ceil(calls / W), length of the dependency chain).
    most_looks: plan the later looks too (looks to a majority); without it, one judge a match.
    """
    total = bound = 0
    sizes = field_sizes(n)
    for r, alive in enumerate(sizes[:-1], 1):
        m = alive // 2
        judges = round_judges(m, alive, wave, most_looks) if most_looks else None
        jobs = round_jobs(r, m, list(range(n)) if r == 1 else None, wave, judges)
        total += len(list_schedule(jobs, wave))
        bound += round_bound(jobs, wave)
    if n == 1:
        total = bound = 1
    if merge and n > 1:
        # the merge job, then a match played like a final
        judges = round_judges(1, 2, wave, most_looks) if most_looks else None
        jobs = round_jobs(len(sizes), 1, None, wave, judges)
        total += 1 + len(list_schedule(jobs, wave))
        bound += 1 + round_bound(jobs, wave)
    if baseline:
        total += 1
        bound += 1
    return total, bound


# Token arithmetic. Sizes in tokens (about 4 characters each); the assumed
# sizes are printed with the estimate, and `status` redoes it with real sizes.
ASSUMED = {"solution": 1500, "attack": 600, "defence": 500, "verdict": 250}


# a brief's own text without the task, by job kind (jobs.KIND: means of real briefs; a test
# keeps them within 10%), and what --run-code adds to it
BRIEF_TOKENS = {k.name: k.brief_tokens for k in KINDS_IN_ORDER}
RUN_CODE_TOKENS = {k.name: k.code_tokens for k in KINDS_IN_ORDER}
BENCH_TOKENS = {k.name: k.bench_tokens for k in KINDS_IN_ORDER}


CLIENT_TOKENS = 12000     # Claude Code's system prompt and tool definitions, per sub-agent


TURNS = 4                 # model turns per sub-agent call: read, read inputs, write, reply


def tokens_of(text_or_bytes):
    return max(1, len(text_or_bytes) // 4)


def job_counts(n, wave, baseline, recheck, merge=False):
    """Calls of each kind a run of n agents is expected to make (later looks as expected_looks)."""
    counts = bracket_jobs(n)
    if merge and n > 1:
        for kind, k in MERGE_JOBS.items():
            counts[kind] = counts.get(kind, 0) + k
    counts["judge"] += expected_looks(n, wave, merge) if recheck and n > 1 else 0
    counts["final"] = 1 if baseline else 0
    return counts


def per_call(task, size=ASSUMED, run_code=False, bench=False):
    """{kind: [context at its first turn, output, input and output in all]} of one call.

    Each call reads the client's prompt, its brief and the task on every turn (mostly
    served from the prompt cache), plus the files the brief names, and writes its output.
    """
    out = {}
    for kind in KINDS_IN_ORDER:
        # a probe reads some survivors' code (about eight solutions); the merge both finalists and their matches
        reads = sum(k * size[what] for what, k in kind.reads.items())
        writes = sum(k * size[what] for what, k in kind.writes.items())
        start = CLIENT_TOKENS + kind.brief_tokens + task
        if run_code:
            start += kind.code_tokens + (kind.bench_tokens if bench else 0)
        out[kind.name] = [start, writes, TURNS * start + reads + writes]
    return out


def estimate_tokens(calls, task, size, run_code=False, bench=False):
    """(input tokens, output tokens, sizes) for a whole run of these calls."""
    each = per_call(task, size, run_code, bench)
    tin = sum(k * (each[kind][2] - each[kind][1]) for kind, k in calls.items())
    tout = sum(k * each[kind][1] for kind, k in calls.items())
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
        for path, what in zip(outputs_of(job), output_sizes(job)):
            if what is None:
                continue  # the merge's notes of what it took (the challenger is a solution)
            try:
                sums[what][0] += os.path.getsize(run.path(path))
                sums[what][1] += 1
            except OSError:
                pass
    return {k: (tokens_of(b" " * (total // count)) if count else ASSUMED[k]) for k, (total, count) in sums.items()}


def plan_table(n, wave, baseline=False, recheck=True, merge=False):
    rows = plan_rows(n, wave, baseline, merge)
    out = ["round  alive  matches  bye  sub-agent calls  waves"]
    for label, alive, matches, bye, calls, waves in rows:
        out.append("%5s  %5s  %7s  %3s  %15d  %5d" % (
            label, alive, "-" if matches is None else matches, "yes" if bye else "-", calls, waves))
    calls = sum(r[4] for r in rows)
    waves = sum(r[5] for r in rows)
    out.append("%5s  %5s  %7s  %3s  %15d  %5d" % ("total", "", "", "", calls, waves))
    out.append("alive per round: " + " ".join(str(x) for x in field_sizes(n)))
    packed, bound = packed_waves(n, wave, baseline, merge=merge)
    out.append("packed waves (ready jobs from any phase share a wave): %d (best possible with round barriers: %d)"
               % (packed, bound))
    if recheck and n > 1:
        extra = expected_looks(n, wave, merge)
        waves2, _ = packed_waves(n, wave, baseline, most_looks=MOST_LOOKS, merge=merge)
        out.append("more looks (none after a first look that finds the two equivalent; otherwise a second at close "
                   "matches and in rounds small enough to judge twice in one wave, a third when two split, three of "
                   "five in the last two rounds; equal looks outnumbering the rest end a match as a tie):")
        out.append("  about %s, %d calls in all (x%.2f), about %d packed waves"
                   % (plural(extra, "more judge call"), calls + extra, (calls + extra) / float(calls), waves2))
    return "\n".join(out)


def expected_looks(n, wave, merge=False):
    """Judge calls beyond one per match to expect, round by round (jobs.round_judges), and
    in the merge's match when there is one (judged like a final), rounded once at the end
    (rounding per round would lose up to half a call in every round)."""
    extra = 0.0
    fields = field_sizes(n)[:-1] + ([2] if merge and n > 1 else [])
    for alive in fields:
        m = alive // 2
        extra += m * (round_judges(m, alive, wave, MOST_LOOKS)[1] - 1)
    return int(extra + 0.5)


def least_calls(n, baseline=False):
    """The fewest calls a run of n agents can finish in: every job once, no later looks."""
    return bracket_calls(n) + (1 if baseline else 0)


def least_tokens(n, each, baseline=False):
    """The tokens of least_calls, by the per-call estimate `each` (per_call)."""
    calls = dict(bracket_jobs(n), final=1 if baseline else 0)
    return sum(k * each[kind][2] for kind, k in calls.items())


def most_agents(fits, top):
    """The largest n (1 to top) for which fits(n) holds, or 0."""
    best = 0
    for n in range(1, top + 1):
        if not fits(n):
            break
        best = n
    return best


def budget_lines(n, wave, baseline, recheck, max_calls, max_tokens, each, top):
    """What a cap lets a run of n agents do: whether the bracket fits, the largest n that does,
    and how many of the looks it expects would be left out."""
    lines = []
    calls = least_calls(n, baseline)
    extra = expected_looks(n, wave) if recheck and n > 1 else 0
    if max_calls is not None:
        if max_calls < calls:
            fit = most_agents(lambda k: least_calls(k, baseline) <= max_calls, top)
            lines.append("budget: --max-calls %d is below the %d calls %s need at the least; %s" % (
                max_calls, calls, plural(n, "agent"), "at most %s fit (%d calls)" % (
                    plural(fit, "agent"), least_calls(fit, baseline)) if fit else "not even one agent fits"))
        elif max_calls < calls + extra:
            lines.append("budget: at most %d calls: the bracket's %d fit; of the about %d later looks about %d fit, "
                         "and a match whose look is cut is decided on the looks it has" % (
                             max_calls, calls, extra, max_calls - calls))
        else:
            lines.append("budget: at most %d calls: the whole run fits (about %d with its later looks)"
                         % (max_calls, calls + extra))
    if max_tokens is not None:
        need = least_tokens(n, each, baseline)
        if max_tokens < need:
            fit = most_agents(lambda k: least_tokens(k, each, baseline) <= max_tokens, top)
            lines.append("budget: --max-tokens %s is below the about %s tokens %s need at the least (estimated); %s"
                         % (human(max_tokens), human(need), plural(n, "agent"), "at most %s fit" % plural(fit, "agent")
                            if fit else "not even one agent fits"))
        else:
            lines.append("budget: at most %s tokens, kept by the estimate: the bracket needs about %s" % (
                human(max_tokens), human(need)))
    return lines


# Kinds of call a competitor makes on its own model (the merge: on the winner's); the rest
# are judging and run on the judges' model.
COMPETITOR_KINDS = tuple(k.name for k in KINDS_IN_ORDER if k.runs_on != "judges")


def plan_model_lines(n, models, model, judge_model, calls, each=None):
    """plan's lines on models: the field by model, and with a task (each: per_call) the tokens
    each model is estimated to use, as if each model's agents went as far in the bracket."""
    judges = "judges on %s" % (judge_model or "the session's model")
    if not models:
        if not (model or judge_model):
            return []
        return ["models: competitors on %s; %s" % (model or "the session's model", judges)]
    counts = model_counts(n, [share for _, share in models])
    lines = ["field by model: %s (of %d agents, by shares %s); %s" % (
        ", ".join("%s %d" % (name, k) for (name, _), k in zip(models, counts)), n,
        ":".join(str(share) for _, share in models), judges)]
    if each is not None:
        compete = sum(k * each[kind][2] for kind, k in calls.items() if kind in COMPETITOR_KINDS)
        judging = sum(k * each[kind][2] for kind, k in calls.items() if kind not in COMPETITOR_KINDS)
        lines.append("tokens by model (estimate, as if every model's agents went as far): %s; judges about %s" % (
            ", ".join("%s about %s" % (name, human(compete * k / float(n))) for (name, _), k in zip(models, counts)),
            human(judging)))
    return lines
