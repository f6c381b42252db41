"""The `next` decision: collect, advance, then say exactly what the orchestrator does now.

plan_next is the one entry point the skill loops on: it collects outputs, advances
finished rounds, and returns a wave of Agent calls, a wait, a manual decision, the
conductor, or finished, as plain data that render_next prints. It changes the state only
through journaled events (run.commit).
"""

import os
import time

from .base import ArenaError, DEFAULT_LANE_JOBS, MAX_LANES, plural
from .jobs import job_kind, outputs_of
from .state import find_match, finished, judge_sides, round_done
from .outputs import collect_events
from .briefs import write_brief, write_lane_brief
from .schedule import pick_jobs, pick_wave, priority, progress, progress_line, spawn_positions


def advance_events(st):
    return [{"e": "advance", "round": len(st["rounds"])}] if round_done(st) and st["champion"] is None else []


def settle_state(run, st, rubric, retry=False, only=None):
    """Collect what arrived (of `only`, when given) and advance finished rounds; returns the notes.

    A refused output is moved aside at once, so a later next never reads it
    again and charges its job a second failure.
    """
    events, _ = collect_events(run, st, rubric, retry, only)
    run.commit(st, events)
    notes = []
    for ev in events:
        if ev["e"] == "fail":
            set_aside(run, st, ev["job"])
            notes.append("%s: %s: %s" % (after_refusal(st, ev["job"]), ev["job"], ev["why"]))
    while True:
        adv = advance_events(st)
        if not adv:
            break
        run.commit(st, adv)
    return notes


def set_aside(run, st, job):
    """Move whatever sits at a job's output paths to out/refused/, named by the try it is charged to."""
    attempt = st["jobs"][job].get("t", 1)
    for rel in outputs_of(job):
        run.set_aside(rel, attempt)


def after_refusal(st, job):
    """What really happens after a refused output: another try, or the job's fallback."""
    info = st["jobs"][job]
    if info["s"] == "ready":
        return "will be re-issued"
    kind = job_kind(job)
    if kind == "spawn":
        agent = job[len("spawn-"):]
        if st["agents"] == 1:
            return "no more tries, the run has no solution"
        return "no more tries, %s forfeits its match" % agent
    return "no more tries, " + {
        "atk": "it counts as no attacks",
        "def": "the solution before it stands, with no answers",
        "judge": "the match needs a decision by hand",
        "final": "the baseline check is left to you",
    }[kind]


def call_template(run, model):
    extra = ', model "%s"' % model if model else ""
    return 'run_in_background false%s, description "<id>", prompt "Read %s/b/<id>.md and follow it."' % (
        extra, run.dir)


def plan_next(run, st, rubric, cards, task, retry=False, conductor=False, returned=None):
    """Decide and do the next step; returns the action as plain data.

    returned: jobs whose agents the caller saw return while others still run (a client
    told of each completion). Those are collected for good, and the slots they free are
    refilled at once with ready jobs, keeping at most W in flight.
    """
    notes = []
    if returned:
        for job in returned:
            if job not in st["jobs"]:
                raise ArenaError("--returned %r is not a job of run %s" % (job[:40], st["run"]))
        mine = [j for j in returned if st["jobs"][j]["s"] == "issued"]
        notes += settle_state(run, st, rubric, retry=True, only=mine) if mine else []
    notes += settle_state(run, st, rubric, retry)
    act = {"run": st["run"], "mode": st["mode"], "notes": notes}
    outstanding = sorted(j for j, info in st["jobs"].items() if info["s"] == "issued")
    last = st["waves"][-1] if st["waves"] else None
    unshown = [j for j in outstanding if last and st["jobs"][j]["w"] == last["n"]]
    free = st["wave"] - len(outstanding)
    if finished(st):
        act.update(action="finished", command="winner --run %s" % st["run"])
        if not st["sol"].get(st["champion"]):
            act["no_solution"] = True
    elif last and not last.get("shown", True) and unshown and len(unshown) == last["size"]:
        # handed out but never printed (the command was killed in between): show the same wave again
        act.update(action="wave", wave=last["n"], calls=wave_calls(run, st, sorted(unshown, key=lambda j: (
            priority(st, j, spawn_positions(st)), j))))
    elif outstanding and returned and free > 0 and st["mode"] != "lanes" and pick_jobs(st, free):
        # rolling: refill the freed slots now instead of waiting for the whole wave
        jobs = pick_jobs(st, free)
        hand_out(run, st, jobs, cards, rubric, task, {"wave": len(st["waves"]) + 1})
        act.update(action="wave", wave=len(st["waves"]), calls=wave_calls(run, st, jobs), running=outstanding)
    elif outstanding:
        act.update(action="wait", waiting=outstanding, wave=len(st["waves"]))
    elif st["manual"]:
        act.update(action="manual", matches=[{
            "match": mid, "why": why, "agents": [find_match(st, mid)["a"], find_match(st, mid)["b"]],
            "solutions": [os.path.join(run.dir, st["sol"].get(a) or "") for a in
                          (find_match(st, mid)["a"], find_match(st, mid)["b"])]}
            for mid, why in sorted(st["manual"].items())])
    elif st["mode"] == "lanes" and not conductor:
        act.update(action="lanes", calls=start_lanes(run, st), brief=run.path("lane.md"))
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
        hand_out(run, st, wave, cards, rubric, task, {"wave": len(st["waves"]) + 1})
        act.update(action="wave", wave=len(st["waves"]), calls=wave_calls(run, st, wave))
    act["progress"] = progress(st)
    act["line"] = progress_line(st, act["progress"])
    return act


def hand_out(run, st, jobs, cards, rubric, task, where):
    """Write the jobs' briefs and journal their issue, to a wave ({"wave": n}) or a lane ({"lane": "2.3"})."""
    for job in jobs:
        set_aside(run, st, job)  # left by an earlier try: a retry writes to a clear path
        write_brief(run, st, job, st["jobs"][job]["t"] + 1, cards, rubric, task)
    # the judges' labels are fixed when handed out, so the verdict is read as the brief was written
    labels = {j: list(judge_sides(st, j, st["jobs"][j]["t"] + 1)) for j in jobs if job_kind(j) in ("judge", "final")}
    ev = {"e": "issue", "jobs": jobs, "at": round(time.time(), 3), "labels": labels}
    ev.update(where)
    run.commit(st, [ev])


def start_lanes(run, st):
    """A new set of lanes: one Agent call each, all in one message. Each lane then runs
    one job at a time (`lane`), so a slot is refilled as soon as its job returns."""
    # no more lanes than jobs open now: a round's jobs are all known once it is paired
    open_jobs = sum(1 for info in st["jobs"].values() if info["s"] in ("ready", "issued"))
    k = max(1, min(st["wave"], MAX_LANES, open_jobs))
    n = (st.get("lanes") or {}).get("n", 0) + 1
    write_lane_brief(run, st)
    run.commit(st, [{"e": "lanes", "n": n, "k": k, "budget": k * st.get("lane_jobs", DEFAULT_LANE_JOBS),
                     "at": round(time.time(), 3)}])
    return [{"lane": "%d.%d" % (n, i), "run_in_background": False, "description": "arena lane %d.%d" % (n, i),
             "prompt": "Read %s and follow it as lane %d.%d." % (run.path("lane.md"), n, i)} for i in range(1, k + 1)]


def lane_step(run, st, rubric, cards, task, lane, refused=False):
    """One turn of a lane: collect the job it ran last (its Agent call has returned, so
    whatever that job wrote is all there will be), then hand it the next ready job.

    Returns {"action": "job" | "again" | "lane-over", ...}. A job goes to one lane only,
    and a lane holds one job at a time, so no more than the set's lanes (<= W) run at once.
    """
    act = {"run": st["run"], "lane": lane, "notes": []}
    mine = sorted(j for j, info in st["jobs"].items() if info["s"] == "issued" and info.get("ln") == lane)
    if mine and "sh" in st["jobs"][mine[0]]:
        # handed out but never printed (the command was killed in between): show it again
        act.update(action="job", call=wave_calls(run, st, mine[:1])[0])
        return finish_act(st, act)
    if mine and refused:
        # Claude Code refused the Agent call (too many sub-agents at once): the job never ran,
        # so it goes back without spending a try, and this lane stops to make room
        run.commit(st, [{"e": "fail", "job": mine[0], "why": "the client refused the Agent call", "never_ran": True}])
        act["action"] = "lane-over"
        return finish_act(st, act)
    act["notes"] = settle_state(run, st, rubric, retry=True, only=mine) if mine else []
    settle_state(run, st, rubric, only=[])  # advance a round this lane's job may have closed
    lanes = st.get("lanes")
    # a lane of an older set, or numbered past this set's size, would push the jobs in
    # flight past W: it stops
    current = lanes is not None and lane.split(".")[0] == str(lanes["n"]) and int(lane.split(".")[1]) <= lanes["k"]
    running = [j for j, info in st["jobs"].items() if info["s"] == "issued"]
    if finished(st) or st["mode"] != "lanes" or not current or lanes["handed"] >= lanes["budget"]:
        act["action"] = "lane-over"
        return finish_act(st, act)
    picked = pick_jobs(st, 1)
    if picked:
        job = picked[0]
        hand_out(run, st, [job], cards, rubric, task, {"lane": lane})
        act.update(action="job", call=wave_calls(run, st, [job])[0])
    elif not running:
        # nothing runs, so nothing will become ready: a decision by hand, or a retry the
        # main session must see; the lanes hand back
        act["action"] = "lane-over"
    else:
        act.update(action="again", running=len(running))
    return finish_act(st, act)


def finish_act(st, act):
    act["progress"] = progress(st)
    act["line"] = progress_line(st, act["progress"])
    return act


def render_lane(act):
    """The few lines a lane reads."""
    out = [act["line"]]
    for note in act["notes"][:10]:
        out.append("invalid, " + note[:200])
    a = act["action"]
    if a == "job":
        c = act["call"]
        model = ', model "%s"' % c["model"] if c.get("model") else ""
        out.append("Lane %s: make this one Agent call, then run the same lane command again:" % act["lane"])
        out.append('run_in_background false%s, description "%s", prompt "%s"' % (model, c["description"], c["prompt"]))
    elif a == "again":
        out.append("Lane %s: nothing ready yet (%d running); run the same lane command again." % (
            act["lane"], act["running"]))
    else:
        out.append("LANE OVER. Reply with exactly this line and stop: %s" % act["line"])
    return "\n".join(out)


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
        out.append("invalid, " + note[:200])
    if len(act["notes"]) > 10:
        out.append("(%d more invalid outputs; see status)" % (len(act["notes"]) - 10))
    a = act["action"]
    if a == "finished":
        none = " No competitor produced a valid solution: there is none to use or compare." if act.get("no_solution") else ""
        out.append("Finished.%s Run: winner --run %s" % (none, act["run"]))
    elif a == "wait":
        out.append("Waiting for %d job(s) of wave %d with no output yet: %s" % (
            len(act["waiting"]), act["wave"], " ".join(act["waiting"][:20]) + (" ..." if len(act["waiting"]) > 20 else "")))
        out.append("If every Agent call of that wave has returned (or was never made), run: next --retry")
    elif a == "manual":
        for m in act["matches"]:
            out.append("%s needs a decision by hand: %s." % (m["match"], m["why"]))
            out.append("  solutions: %s" % " ".join(m["solutions"]))
            out.append('  run: record %s <%s> --reason "..."' % (m["match"], "|".join(m["agents"])))
    elif a == "lanes":
        out.append("Start %d lanes: %s in ONE message, then run next when they have all replied. Each call:" % (
            len(act["calls"]), plural(len(act["calls"]), "Agent call")))
        out.append('run_in_background false, description "arena lane <n>", prompt "Read %s and follow it as lane <n>."'
                   % act["brief"])
        out.append("<n> = " + " ".join(c["lane"] for c in act["calls"]))
        out.append("If a lane replies NO-AGENT-TOOL, run next --direct instead.")
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
        out.append("Wave %d: %s in ONE message, then run next. Each call:" % (act["wave"], plural(len(act["calls"]),
                                                                                              "Agent call")))
        for model, jobs in groups.items():
            out.append(call_template(run, model))
            out.append("<id> = " + " ".join(jobs))
    return "\n".join(out)
