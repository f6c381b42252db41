"""Which ready jobs run next, and the progress numbers shown to the user.

pick_wave takes up to W ready jobs, longest remaining dependency chain first; progress
counts jobs, waves, elapsed time and ETA (wording.progress_line puts them in words).
Reads the state, never changes it.
"""

import heapq
import time

from . import budget
from .estimate import field_sizes, packed_waves, plan_rows
from .jobs import (CANCELLED, KINDS_IN_ORDER, MERGE_CALLS, bracket_calls, DONE, ISSUED, OPEN, READY, count_in, job_key, job_kind, look_of, match_of, parse_job,
                   phase_of)
from .state import bracket_rounds, deps_done, entered, find_match, waits_for_held


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
    if job == "probe-r0":
        return (-10 ** 6, 0, 0, 0)  # the early look at the field decides whether the held spawns run: first
    if kind in ("probe", "merge"):
        return job_key(kind, rnd, 0, 0)
    if kind == "judge":
        return job_key("judge", rnd, mno, who)
    m = find_match(st, match_of(job))
    return job_key(kind, rnd, mno, 0 if who == m["a"] else 1)


def pick_wave(st):
    """The next wave: up to W ready jobs, longest remaining chain first."""
    return pick_jobs(st, st["wave"])


def pick_jobs(st, slots):
    """Up to `slots` ready jobs, longest remaining chain first: a wave, or the jobs
    that refill the slots whose jobs returned."""
    if slots <= 0:
        return []
    jobs = st["jobs"]
    ready = [j for j, info in jobs.items() if info["s"] == READY and deps_done(st, j)]
    if not st["pack"] and ready:
        # what waits on spawns the early look at the field holds is not open work yet
        open_phases = [phase_of(j) for j, info in jobs.items() if info["s"] in OPEN and not waits_for_held(st, j)]
        first = min(open_phases)
        ready = [j for j in ready if phase_of(j) == first]
    positions = spawn_positions(st)
    return heapq.nsmallest(slots, ready, key=lambda j: (priority(st, j, positions), j))


def planned_calls(st):
    """Sub-agent calls of the whole run: the base plan, the extra judges and settle probes
    made so far, the final's panel while it is still to come, minus jobs a forfeit cancelled."""
    n = entered(st)
    extra = sum(1 for j in st["jobs"] if job_kind(j) == "judge" and look_of(j) > 1 or job_kind(j) == "probe")
    # the spawns of agents an early finish withdrew are out of the field, not cancelled work
    cancelled = count_in(st, CANCELLED) - len((st["field"] or {}).get("withdrawn", []))
    final_paired = len(bracket_rounds(st)) == len(field_sizes(n)) - 1
    panel = st["final_judges"] - 1 if n > 1 and not final_paired else 0
    return bracket_calls(n) + panel + extra + (1 if st["baseline"] else 0) + merge_calls(st) - cancelled


def merge_calls(st):
    """The checked merge's jobs: the merge and its match (MERGE_CALLS) while they may still come;
    the merge alone once it found nothing worth taking or failed; none when it was not tried."""
    if not st["merge_on"] or st["agents"] < 2:
        return 0
    info = st["merged"]
    if st["champion"] is None:
        return MERGE_CALLS
    if not info:
        return 0
    return MERGE_CALLS if info.get("match") or "taken" not in info and "failed" not in info else 1


def planned_waves(st):
    """Waves the run should take; init computes it once into the init event (older runs: here)."""
    # an early finish of the field leaves a smaller bracket than the one planned
    n = entered(st) if st.get("field") else st["agents"]
    if st.get("plan_waves") and n == st["agents"]:
        return st["plan_waves"]
    most = st.get("most_looks") if st["recheck"] is not None else None
    # a state says merge_on, the init event it is computed from says merge
    merge = bool(st.get("merge_on", st.get("merge")))
    if st["pack"]:
        return packed_waves(n, st["wave"], st["baseline"], most, merge)[0]
    return sum(r[5] for r in plan_rows(n, st["wave"], st["baseline"], merge))


PHASE_NAMES = {k.name: k.title for k in KINDS_IN_ORDER}


def progress(st):
    """Numbers for the progress line: round, phase, jobs, waves, times."""
    done = count_in(st, DONE)
    retry = sum(1 for info in st["jobs"].values() if info["s"] == READY and info["t"] > 0)
    waves_plan = max(planned_waves(st), len(st["waves"]))
    open_jobs = [j for j, info in st["jobs"].items() if info["s"] in OPEN]
    phase = "finished" if st["champion"] else "waiting for a decision"
    if open_jobs:
        first = min(open_jobs, key=phase_of)
        merge_match = st["merged"] and first.startswith(st["merged"].get("match") or "merge")
        phase = "merge match" if merge_match and first != "merge" else PHASE_NAMES[parse_job(first)[0]]
    elapsed = eta = None
    lanes = st.get("lanes")
    running = count_in(st, ISSUED)
    if lanes and not st["waves"]:
        # lanes hand out one job at a time: no waves to count, so the ETA goes by jobs
        elapsed = max(0.0, time.time() - lanes["first"])
        total = planned_calls(st)
        if done:
            eta = elapsed / done * max(0, total - done)
    elif st["waves"]:
        first = st["waves"][0]["at"]
        elapsed = max(0.0, time.time() - first)
        done_waves = len(st["waves"]) - (1 if running else 0)
        if done_waves >= 1:
            per = elapsed / max(1, len(st["waves"]))
            eta = per * max(0, waves_plan - len(st["waves"]))
    total = planned_calls(st)
    if phase == "finished":
        # the plan was an estimate; a finished run shows what it took, and its clock stopped
        # with the last output read
        waves_plan, total = len(st["waves"]), done
        start = lanes["first"] if lanes and not st["waves"] else st["waves"][0]["at"] if st["waves"] else None
        if start is not None and st.get("last"):
            elapsed = max(0.0, st["last"] - start)
    return {"round": len(bracket_rounds(st)), "rounds": len(field_sizes(entered(st))) - 1, "phase": phase,
            "done": done, "total": total, "wave": len(st["waves"]), "waves": waves_plan,
            "retrying": retry, "elapsed": elapsed, "eta": eta, "running": running,
            "lanes": bool(lanes and not st["waves"]),
            "spent": budget.spent_calls(st), "tokens": budget.spent_tokens(st)}
