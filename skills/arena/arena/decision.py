"""The `next` decision: collect, advance, then say exactly what the orchestrator does now.

plan_next is the one entry point the skill loops on: it collects outputs, advances
finished rounds, and returns a wave of Agent calls, a wait, a manual decision, the
conductor, or finished, as plain data that render_next prints; lane_step is one lane's
turn. Both take the command's Context (context.py) and change the state only through
journaled events (ctx.commit).
"""

import os
import time

from . import budget
from .base import ArenaError, DEFAULT_LANE_JOBS, MAX_LANES, plural
from .estimate import expected_looks
from .jobs import ISSUED, OPEN, count_in, is_judging, jobs_in, outputs_of, tries
from .state import find_match, finished, job_model, judge_sides, round_done
from .outputs import collect_events
from .briefs import write_brief, write_lane_brief
from .schedule import pick_jobs, pick_wave, priority, progress, spawn_positions
from .wording import after_refusal, minutes, progress_line, tokens


def advance_events(st):
    return [{"e": "advance", "round": len(st["rounds"])}] if round_done(st) and st["champion"] is None else []


def collect_and_advance(ctx, retry=False, only=None, used=None):
    """Collect what arrived (of `only`, when given) and advance finished rounds; returns the notes.

    used: {job: [subagent_tokens, tool uses, duration in ms]} as Claude Code reported them to
    the caller. A refused output is moved aside at once, so a later next never reads it
    again and charges its job a second failure.
    """
    st = ctx.st
    events, _ = collect_events(ctx, retry, only)
    now = round(time.time(), 3)
    for ev in events:
        ev["at"] = now
        if used and ev["job"] in used:
            ev["used"] = used[ev["job"]]
    ctx.commit(events)
    notes = []
    for ev in events:
        if ev["e"] == "fail":
            set_aside(ctx, ev["job"])
            notes.append("%s: %s: %s" % (after_refusal(st, ev["job"]), ev["job"], ev["why"]))
    while True:
        adv = advance_events(st)
        if not adv:
            break
        ctx.commit(adv)
    return notes


def set_aside(ctx, job):
    """Move whatever sits at a job's output paths to out/refused/, named by the try it is charged to."""
    attempt = tries(ctx.st, job)
    for rel in outputs_of(job):
        ctx.run.set_aside(rel, attempt)



def call_template(run, model):
    extra = ', model "%s"' % model if model else ""
    return 'run_in_background false%s, description "<id>", prompt "Read %s/b/<id>.md and follow it."' % (
        extra, run.dir)


def plan_next(ctx, retry=False, conductor=False, returned=None, used=None):
    """Decide and do the next step; returns the action as plain data.

    returned: jobs whose agents the caller saw return while others still run (a client
    told of each completion). Those are collected for good, and the slots they free are
    refilled at once with ready jobs, keeping at most W in flight.
    """
    run, st = ctx.run, ctx.st
    notes = []
    if returned:
        for job in returned:
            if job not in st["jobs"]:
                raise ArenaError("--returned %r is not a job of run %s" % (job[:40], st["run"]))
        mine = [j for j in returned if st["jobs"][j]["s"] == ISSUED]
        notes += collect_and_advance(ctx, retry=True, only=mine, used=used) if mine else []
    notes += collect_and_advance(ctx, retry, used=used)
    act = {"run": st["run"], "mode": st["mode"], "notes": notes}
    outstanding = jobs_in(st, ISSUED)
    last = st["waves"][-1] if st["waves"] else None
    unshown = [j for j in outstanding if last and st["jobs"][j]["w"] == last["n"]]
    free = st["wave"] - len(outstanding)
    if finished(st):
        act.update(action="finished", command="winner --run %s" % st["run"])
        if not st["sol"].get(st["ship"] or st["champion"]):
            act["no_solution"] = True
    elif last and not last.get("shown", True) and unshown and len(unshown) == last["size"]:
        # handed out but never printed (the command was killed in between): show the same wave again
        act.update(action="wave", wave=last["n"], calls=wave_calls(ctx, sorted(unshown, key=lambda j: (
            priority(st, j, spawn_positions(st)), j))))
    elif outstanding and returned and free > 0 and st["mode"] != "lanes" and pick_jobs(st, free):
        # rolling: refill the freed slots now instead of waiting for the whole wave
        jobs = pick_jobs(st, free)
        hand_out(ctx, jobs, {"wave": len(st["waves"]) + 1})
        act.update(action="wave", wave=len(st["waves"]), calls=wave_calls(ctx, jobs), running=outstanding)
    elif outstanding:
        act.update(action="wait", waiting=outstanding, wave=len(st["waves"]))
    elif st["manual"]:
        act.update(action="manual", matches=[manual_match(ctx, mid, why) for mid, why in sorted(st["manual"].items())])
    elif st["settle"] and st["settle"]["choice"] is None:
        act.update(action="settle", settle=dict(st["settle"], cost=budget.finishing_cost(
            st, expected_looks(st["settle"]["alive"], st["wave"]))))
    elif st["mode"] == "lanes" and not conductor:
        act.update(action="lanes", calls=start_lanes(ctx), brief=run.path("lane.md"))
    elif st["mode"] == "conductor" and not conductor:
        ctx.commit([{"e": "batch", "n": (st["batch"] or {}).get("n", 0) + 1}])
        act.update(action="conductor", description="arena conductor " + st["run"],
                   prompt="Read %s and follow it." % run.path("conductor.md"))
    elif conductor and st["batch"] and len(st["waves"]) - st["batch"]["from"] >= st["batch_waves"]:
        act.update(action="batch-over")
    else:
        wave = pick_wave(st)
        if not wave:
            raise ArenaError("nothing can run and nothing is finished; run 'bracket.py status --run %s' and report "
                             "this as a bug" % st["run"])
        hand_out(ctx, wave, {"wave": len(st["waves"]) + 1})
        act.update(action="wave", wave=len(st["waves"]), calls=wave_calls(ctx, wave))
    return finish_act(st, act)


def cost_text(cost):
    calls, tok, seconds = cost
    return "%s, %s tokens and %s of sub-agent time" % (plural(calls, "sub-agent call"), tokens(tok), minutes(seconds))


def manual_match(ctx, mid, why):
    """A match waiting for a decision by hand: why, its two agents and their solution files."""
    m = find_match(ctx.st, mid)
    agents = [m["a"], m["b"]]
    return {"match": mid, "why": why, "agents": agents,
            "solutions": [os.path.join(ctx.run.dir, ctx.st["sol"].get(a) or "") for a in agents]}


def hand_out(ctx, jobs, where):
    """Write the jobs' briefs and journal their issue, to a wave ({"wave": n}) or a lane ({"lane": "2.3"})."""
    st = ctx.st
    for job in jobs:
        set_aside(ctx, job)  # left by an earlier try: a retry writes to a clear path
        write_brief(ctx, job, st["jobs"][job]["t"] + 1)
    # the judges' labels are fixed when handed out, so the verdict is read as the brief was written
    labels = {j: list(judge_sides(st, j, st["jobs"][j]["t"] + 1)) for j in jobs if is_judging(j)}
    ev = {"e": "issue", "jobs": jobs, "at": round(time.time(), 3), "labels": labels}
    ev.update(where)
    ctx.commit([ev])


def start_lanes(ctx):
    """A new set of lanes: one Agent call each, all in one message. Each lane then runs
    one job at a time (`lane`), so a slot is refilled as soon as its job returns."""
    run, st = ctx.run, ctx.st
    # no more lanes than jobs open now: a round's jobs are all known once it is paired
    k = max(1, min(st["wave"], MAX_LANES, count_in(st, *OPEN)))
    n = (st.get("lanes") or {}).get("n", 0) + 1
    write_lane_brief(run, st)
    ctx.commit([{"e": "lanes", "n": n, "k": k, "budget": k * st.get("lane_jobs", DEFAULT_LANE_JOBS),
                 "at": round(time.time(), 3)}])
    return [{"lane": "%d.%d" % (n, i), "run_in_background": False, "description": "arena lane %d.%d" % (n, i),
             "prompt": "Read %s and follow it as lane %d.%d." % (run.path("lane.md"), n, i)} for i in range(1, k + 1)]


def lane_step(ctx, lane, refused=False, used=None):
    """One turn of a lane: collect the job it ran last (its Agent call has returned, so
    whatever that job wrote is all there will be), then hand it the next ready job.

    Returns {"action": "job" | "again" | "lane-over", ...}. A job goes to one lane only,
    and a lane holds one job at a time, so no more than the set's lanes (<= W) run at once.
    """
    st = ctx.st
    act = {"run": st["run"], "lane": lane, "notes": []}
    mine = [j for j in jobs_in(st, ISSUED) if st["jobs"][j].get("ln") == lane]
    if mine and "sh" in st["jobs"][mine[0]]:
        # handed out but never printed (the command was killed in between): show it again
        act.update(action="job", call=wave_calls(ctx, mine[:1])[0])
        return finish_act(st, act)
    if mine and refused:
        # Claude Code refused the Agent call (too many sub-agents at once): the job never ran,
        # so it goes back without spending a try, and this lane stops to make room
        ctx.commit([{"e": "fail", "job": mine[0], "why": "the client refused the Agent call", "never_ran": True}])
        act["action"] = "lane-over"
        return finish_act(st, act)
    act["notes"] = collect_and_advance(ctx, retry=True, only=mine, used={mine[0]: used} if mine and used else None) \
        if mine else []
    collect_and_advance(ctx, only=[])  # advance a round this lane's job may have closed
    lanes = st.get("lanes")
    # a lane of an older set, or numbered past this set's size, would push the jobs in
    # flight past W: it stops
    current = lanes is not None and lane.split(".")[0] == str(lanes["n"]) and int(lane.split(".")[1]) <= lanes["k"]
    running = count_in(st, ISSUED)
    if finished(st) or st["mode"] != "lanes" or not current or lanes["handed"] >= lanes["budget"]:
        act["action"] = "lane-over"
        return finish_act(st, act)
    picked = pick_jobs(st, 1)
    if picked:
        hand_out(ctx, picked, {"lane": lane})
        act.update(action="job", call=wave_calls(ctx, picked)[0])
    elif not running:
        # nothing runs, so nothing will become ready: a decision by hand, or a retry the
        # main session must see; the lanes hand back
        act["action"] = "lane-over"
    else:
        act.update(action="again", running=running)
    return finish_act(st, act)


def finish_act(st, act):
    # optional work the budget left out since the main session last saw a list of it
    act["cuts"] = st["cuts"][st["cuts_shown"]:]
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
        # the reply lands in the main session ten times over: a short line (next prints the progress)
        out.append("LANE OVER. Reply with exactly this line and stop: lane %s over" % act["lane"])
    return "\n".join(out)


def wave_calls(ctx, jobs):
    """The Agent calls of a wave, with every parameter the orchestrator passes."""
    st = ctx.st
    calls = []
    for job in jobs:
        model = job_model(st, job)
        # no subagent_type: general-purpose is the default, and every byte here is paid per call
        call = {"job": job, "run_in_background": False, "description": job,
                "prompt": "Read %s/b/%s.md and follow it." % (ctx.run.dir, job)}
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
    for cut in act["cuts"][:5]:
        out.append("left out: " + cut)
    if len(act["cuts"]) > 5:
        out.append("(%d more pieces of optional work left out; see status)" % (len(act["cuts"]) - 5))
    a = act["action"]
    if a == "finished":
        none = " No competitor produced a valid solution: there is none to use or compare." if act.get("no_solution") else ""
        out.append("Finished.%s Run: winner --run %s" % (none, act["run"]))
    elif a == "wait":
        out.append("Waiting for %d job(s) of wave %d with no output yet: %s" % (
            len(act["waiting"]), act["wave"], " ".join(act["waiting"][:20]) + (" ..." if len(act["waiting"]) > 20 else "")))
        out.append("If every Agent call of that wave has returned (or was never made), run: next --retry")
    elif a == "settle":
        s = act["settle"]
        out.append("The field looks settled: %s." % s["why"])
        out.append("Finishing the bracket would still cost about %s. Finishing now makes the leader by average "
                   "score so far, %s, the winner." % (cost_text(s["cost"]), s["leader"]))
        out.append("Ask the user, then run one of: settle continue --run %s | settle finish --run %s" % (
            act["run"], act["run"]))
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
