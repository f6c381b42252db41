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

from .base import ArenaError


# What a job record's "s" says.
READY = "ready"          # waiting to be handed out (again, after a refused try)
ISSUED = "issued"        # out with a sub-agent now
DONE = "done"            # its output counted, or its fallback applied
STUCK = "stuck"          # a judge that failed every try: its match waits for a decision by hand
CANCELLED = "cancelled"  # no longer needed (a forfeit, a decision by hand)
OPEN = (READY, ISSUED)
STATES = (READY, ISSUED, DONE, STUCK, CANCELLED)


# Job kinds, as parse_job names them and as TRIES and the minutes per job are keyed.
KINDS = ("spawn", "atk", "def", "judge", "final", "probe", "merge")
FINAL = "final"
MERGE = "merge"


JOB_ID = re.compile(r"^(?:spawn-(a\d+)|r(\d+)-m(\d+)-(atk|def)-(a\d+)|r(\d+)-m(\d+)-judge(\d?)|probe-r(\d+)|final|merge)$")


# Jobs left on the longest path from a job to its round's end; round 1's bye
# spawns feed nothing in round 1, so they fill the judges' waves (Hu's rule).
CHAIN = {"spawn": 4, "bye": 1, "atk": 3, "def": 2, "judge": 1, "final": 1, "probe": 1, "merge": 4}


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


def revision_file(mid, agent):
    """The revised solution agent writes in match mid, relative to the run folder."""
    return "out/%s-sol-%s.md" % (mid, agent)


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
    return job == FINAL or "-judge" in job or job.startswith("probe-")


def outputs_of(job):
    """Paths (relative to the run folder) a job must write."""
    kind = job_kind(job)
    if kind in ("judge", FINAL, "probe"):
        return ["out/%s.json" % job]
    if kind == "def":
        return ["out/%s.md" % job, revision_file(match_of(job), agent_of(job))]
    if kind == MERGE:
        return ["out/merge.md", MERGED_FILE]
    return ["out/%s.md" % job]


# The challenger the merge writes, before its match revises it.
MERGED_FILE = "out/merge-sol.md"


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
