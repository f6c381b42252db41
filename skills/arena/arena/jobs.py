"""Job ids, job kinds and job states: the one place that builds, splits and names them.

A job id says what the job is: spawn-a017 (a017 writes its first solution),
r3-m07-atk-a017 (a017 attacks its opponent in match r3-m07), r3-m07-def-a017 (a017
answers the attacks and revises), r3-m07-judge, r3-m07-judge2, ... (the looks at the
match), probe-r3 (runs every survivor of round 3's code on the same inputs), merge (builds
the challenger from the two finalists; the challenger, a000, then plays a match like any
other) and final (the blind check against the baseline). Every module builds ids with the
functions here and splits them with parse_job, never by hand. A job's record in the state
is a small dict (docs/state.md lists its keys); its status is one of the constants below.
Pure: no state changes, no files.
"""

import re
from collections import namedtuple

from .base import ArenaError


# What a job record's "s" says.
READY = "ready"          # waiting to be handed out (again, after a refused try)
ISSUED = "issued"        # out with a sub-agent now
DONE = "done"            # its output counted, or its fallback applied
STUCK = "stuck"          # a judge that failed every try: its match waits for a decision by hand
CANCELLED = "cancelled"  # no longer needed (a forfeit, a decision by hand)
OPEN = (READY, ISSUED)
STATES = (READY, ISSUED, DONE, STUCK, CANCELLED)


# Output files: what a job writes, relative to the run folder ({job}, {match} and {agent} are
# filled in from its id), the most bytes each may hold, and what the token estimate counts it as.
MAX_SOLUTION_BYTES = 512 * 1024
MAX_OTHER_BYTES = 256 * 1024


class Kind(namedtuple("Kind", "name word title template outputs tries chain minutes judging runs_on after "
                             "fallback why_kept given_up brief_tokens code_tokens reads writes check arrival brief "
                             "bench_tokens", defaults=(0,))):
    """Everything the engine knows about one kind of job, in one place.

    name: as job ids and the state spell it; word: as users type it (--job-minutes, prompts);
    title: as progress and spend lines say it; template: its brief in briefs/; outputs:
    (path, byte limit, size class) of each file it writes; tries: tries before its fallback;
    chain: jobs left on the longest path from it to its round's end (the scheduler's key);
    minutes: what it is worth by default; judging: it reads solutions blind under labels;
    runs_on: whose model its Agent call names (competitor, judges, winner); after: what it
    waits for (state.deps_of); fallback: the summary it records when every try failed (None:
    its match waits for a decision by hand); why_kept: the last refusal's reason kept in that
    summary, as (prefix, length), or None; given_up: what that fallback means, for the user; brief_tokens,
    code_tokens, bench_tokens: its brief's size without the task, what --run-code adds and what the
    bench's section adds beyond that (--bench; the estimate);
    reads, writes: what it reads beyond its brief and what it writes, in the estimate's size
    classes (solution, attack, defence, verdict); check, arrival,
    brief: the functions that read its output (outputs.py), apply it (state.py; None: nothing
    beyond its summary) and fill its brief (briefs.py).
    """


KINDS_IN_ORDER = (
    Kind("spawn", "spawn", "spawn", "spawn", (("out/{job}.md", MAX_SOLUTION_BYTES, "solution"),), 2, 4, 15, False,
         "competitor", "nothing", {"sol": None}, ("forfeit: ", 120), "{agent} forfeits its match", 900, 60, {}, {"solution": 1},
         "read_solution", "spawn_in", "competitor_values"),
    Kind("atk", "attack", "attack", "attack", (("out/{job}.md", MAX_OTHER_BYTES, "attack"),), 2, 3, 8, False,
         "competitor", "first solutions", {"labels": "", "missing": True}, None, "it counts as no attacks", 1170, 250,
         {"solution": 2}, {"attack": 1}, "read_attack", None, "attack_values", bench_tokens=725),
    Kind("def", "defend", "defend", "defend", (("out/{job}.md", MAX_OTHER_BYTES, "defence"),
                                               ("out/{match}-sol-{agent}.md", MAX_SOLUTION_BYTES, "solution")),
         2, 2, 8, False, "competitor", "attacks", {"ans": "", "missing": True}, None,
         "the solution before it stands, with no answers", 1380, 60, {"solution": 1, "attack": 1},
         {"defence": 1, "solution": 1}, "read_defence",
         "defence_in", "defence_values", bench_tokens=715),
    Kind("judge", "judge", "judge", "judge", (("out/{job}.json", MAX_OTHER_BYTES, "verdict"),), 3, 1, 5, True,
         "judges", "defences", None, None, "the match needs a decision by hand", 1820, 240,
         {"solution": 2, "attack": 2, "defence": 2}, {"verdict": 1}, "read_verdict", "judge_arrived", "judging_values",
         bench_tokens=830),
    Kind("final", "final", "baseline check", "final", (("out/{job}.json", MAX_OTHER_BYTES, "verdict"),), 3, 1, 5,
         True, "judges", "shipped", {"missing": True}, ("", 200), "the baseline check is left to you", 1210, 60,
         {"solution": 2}, {"verdict": 1}, "read_verdict", "final_in", "judging_values"),
    Kind("probe", "probe", "settle probe", "probe", (("out/{job}.json", MAX_OTHER_BYTES, "verdict"),), 2, 1, 8,
         True, "judges", "nothing", {"missing": True}, ("", 200), "no settle offer: the next round is paired", 1100,
         60, {"solution": 8}, {"verdict": 1}, "read_probe", "probed", "probe_values", bench_tokens=725),
    Kind("merge", "merge", "merge", "merge", (("out/merge.md", MAX_OTHER_BYTES, None),
                                              ("out/merge-sol.md", MAX_SOLUTION_BYTES, "solution")),
         2, 4, 15, False, "winner", "nothing", {"missing": True}, ("", 200), "no merge: the winner's text ships",
         1060, 60, {"solution": 2, "attack": 2, "defence": 2}, {"solution": 1, "verdict": 1}, "read_merge", "merged", "merge_values"),
)
KIND = {k.name: k for k in KINDS_IN_ORDER}
KINDS = tuple(KIND)
FINAL = "final"
MERGE = "merge"

# Tables other modules key by kind, each derived from the records above.
TRIES = {k.name: k.tries for k in KINDS_IN_ORDER}
# round 1's bye spawns feed nothing in round 1, so they fill the judges' waves (Hu's rule)
CHAIN = dict({k.name: k.chain for k in KINDS_IN_ORDER}, bye=1)


# The match recipe: what one match of the bracket hands out before any later look. Every
# count of a match's calls (plan, the estimate, the schedule, the budget's floor, a settle
# offer's cost) is made from it.
MATCH_JOBS = {"atk": 2, "def": 2, "judge": 1}
MATCH_CALLS = sum(MATCH_JOBS.values())
# The checked merge: its own job, then one match of the challenger and the winner.
MERGE_JOBS = dict(MATCH_JOBS, merge=1)
MERGE_CALLS = sum(MERGE_JOBS.values())


def bracket_jobs(agents, matches=None):
    """{kind: calls} of a bracket of agents when every job succeeds at its first try and no
    match takes a later look: a first solution each, and one match per agent knocked out
    (matches, when given, counts the matches instead)."""
    played = agents - 1 if matches is None else matches
    out = {"spawn": agents} if agents else {}
    for kind, k in MATCH_JOBS.items():
        out[kind] = k * played
    return out


def bracket_calls(agents):
    """6N - 5 for N agents: N first solutions and N - 1 matches of MATCH_CALLS."""
    return sum(bracket_jobs(agents).values())


JOB_ID = re.compile(r"^(?:spawn-(a\d+)|r(\d+)-m(\d+)-(atk|def)-(a\d+)|r(\d+)-m(\d+)-judge(\d?)|probe-r(\d+)|final|merge)$")


# ---------------------------------------------------------------- ids

def agent_ids(n):
    width = max(3, len(str(n)))
    return ["a%0*d" % (width, i) for i in range(1, n + 1)]


def challenger_id(n):
    """The merged challenger's id in a run of n agents: a000, which no competitor has."""
    return "a%0*d" % (max(3, len(str(n))), 0)


def probe_id(rnd):
    """The job that runs every survivor of round rnd's code on the same inputs."""
    return "probe-r%d" % rnd


def match_id(rnd, k, matches):
    """The k-th match of round rnd, numbered to the width of the round's match count."""
    return "r%d-m%0*d" % (rnd, max(2, len(str(matches))), k)


def spawn_id(agent):
    return "spawn-" + agent


def attack_id(mid, agent):
    """agent's attack on its opponent in match mid."""
    return "%s-atk-%s" % (mid, agent)


def defence_id(mid, agent):
    """agent's answers to the attacks on it in match mid, and its revision."""
    return "%s-def-%s" % (mid, agent)


def judge_id(mid, look):
    return "%s-judge%s" % (mid, "" if look == 1 else look)


def competitor_jobs(mid, a, b):
    """The four jobs of a match before its judges: both attacks, then both defences."""
    return [attack_id(mid, a), attack_id(mid, b), defence_id(mid, a), defence_id(mid, b)]


def judge_folder(job):
    """Where a judging job's blinded inputs go, relative to the run folder."""
    return "j/" + job


def judge_copy(job, label, part):
    """One blinded input of a judging job: part is solution, attacks or defence."""
    return "%s/%s-%s.md" % (judge_folder(job), label, part)


# ---------------------------------------------------------------- splitting ids

def parse_job(job):
    """(kind, round, match number, agent or look) from a job id; (final, 0, 0, None) for final."""
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
    if g[8]:
        return "probe", int(g[8]), 0, None
    return (MERGE, 0, 0, None) if job == MERGE else (FINAL, 0, 0, None)


def job_kind(job):
    """The kind of a well-formed id, without the full parse (called on every job, often)."""
    if job.startswith("spawn-"):
        return "spawn"
    if job in (FINAL, MERGE):
        return job
    if job.startswith("probe-"):
        return "probe"
    return "judge" if "-judge" in job else job.split("-")[2]


def match_of(job):
    """'r2-m03' for any job of that match."""
    return "-".join(job.split("-")[:2])


def round_of(mid):
    """The round number of a match id, or of any job of that match."""
    return int(mid.split("-")[0][1:])


def agent_of(job):
    """The competitor of a spawn, attack or defence job."""
    return job.rsplit("-", 1)[1]


def look_of(job):
    """Which look at its match a judge job is (1 for the first); 1 for final."""
    return 1 if job == FINAL else int(job.rsplit("judge", 1)[1] or 1)


def is_judging(job):
    """A job that reads solutions blind under labels: a match's judge, the baseline check, a probe."""
    return KIND[job_kind(job)].judging


def outputs_of(job):
    """Paths (relative to the run folder) a job must write."""
    kind = KIND[job_kind(job)]
    if len(kind.outputs) == 1 and "{agent}" not in kind.outputs[0][0] and "{match}" not in kind.outputs[0][0]:
        return [kind.outputs[0][0].replace("{job}", job)]
    names = {"job": job}
    if kind.name in ("atk", "def"):
        names.update(match=match_of(job), agent=agent_of(job))
    return [path.format(**names) for path, _, _ in kind.outputs]


def output_limits(job):
    """The most bytes each of a job's output files may hold, in the order of outputs_of."""
    return [limit for _, limit, _ in KIND[job_kind(job)].outputs]


def output_sizes(job):
    """What the token estimate counts each output file as (None: not counted), in order."""
    return [size for _, _, size in KIND[job_kind(job)].outputs]


def revision_file(mid, agent):
    """The revised solution agent writes in match mid, relative to the run folder."""
    return KIND["def"].outputs[1][0].format(match=mid, agent=agent)


SOLUTION_FILE = re.compile(r"^out/(?:spawn-(a\d+)|(r\d+-m\d+)-sol-(a\d+))\.md$")


def writer_of(path):
    """The job that wrote a solution file (a first solution, a revision, the challenger), or None."""
    if path == MERGED_FILE:
        return MERGE
    m = SOLUTION_FILE.match(path or "")
    if not m:
        return None
    return spawn_id(m.group(1)) if m.group(1) else defence_id(m.group(2), m.group(3))


# The challenger the merge writes, before its match revises it.
MERGED_FILE = KIND[MERGE].outputs[1][0]


def phase_of(job):
    """(round, step) of a job, the unit the unpacked, phase-by-phase schedule waits on.

    Split by hand, not parse_job: progress() calls this on every open job.
    """
    if job.startswith("spawn-"):
        return (0, 0)
    if job == FINAL:
        return (10 ** 6, 0)
    if job == MERGE:
        return (10 ** 5, 0)
    if job.startswith("probe-"):
        return (int(job[7:]), 9)
    part = job.split("-")
    kind = part[2]
    return (int(part[0][1:]), 1 if kind == "atk" else 2 if kind == "def" else 2 + int(kind[5:] or 1))


def job_key(kind, rnd, match, side):
    """Scheduling priority: longest remaining chain first, then round, match, side."""
    return (-CHAIN[kind], rnd, match, side)


# ---------------------------------------------------------------- a job's record

def new_record():
    """A job waiting to be handed out: status, tries so far, last wave."""
    return {"s": READY, "t": 0, "w": None}


def status(st, job):
    """The job's status, or None for a job the run does not have."""
    info = st["jobs"].get(job)
    return info["s"] if info else None


def is_done(st, job):
    return status(st, job) == DONE


def jobs_in(st, *states):
    """The run's jobs in any of these states, sorted."""
    return sorted(j for j, info in st["jobs"].items() if info["s"] in states)


def count_in(st, *states):
    return sum(1 for info in st["jobs"].values() if info["s"] in states)


def tries(st, job):
    """Tries handed out so far (a job done at its first try keeps no count)."""
    return st["jobs"][job].get("t", 1)
