"""The `next` decision: collect, advance, then say exactly what the orchestrator does now.

plan_next is the one entry point the skill loops on: it collects outputs, advances
finished rounds, and returns a wave of Agent calls, a wait, a manual decision, a settle
offer, lanes, the conductor, or finished, as plain data (wording.next_text prints it),
decided by the first of the ordered rules NEXT_RULES whose condition holds; lane_step is one
lane's turn. Both take the command's Context (context.py) and change the state only through
journaled events (ctx.commit).
"""

import os
import time
from collections import namedtuple

from . import bench, budget
from .base import ArenaError, DEFAULT_LANE_JOBS, MAX_LANES
from .estimate import expected_looks
from .jobs import ISSUED, OPEN, READY, count_in, is_judging, jobs_in, outputs_of, spawn_id, status, tries
from .state import (alive_agents, entered, field_offered, find_match, finished, inputs_of,
                    grouping_tests, job_model, judge_sides, measure_due, round_done)
from .outputs import changed_since_collected, check_output, collect_events, kept_copy
from .briefs import write_brief, write_lane_brief
from .schedule import pick_jobs, pick_wave, priority, progress, spawn_positions
from .wording import after_refusal, progress_line


def advance_events(st):
    return [{"e": "advance", "round": len(st["rounds"])}] if round_done(st) and st["champion"] is None else []


def collect_and_advance(ctx, retry=False, only=None, used=None):
    """Collect what arrived (of `only`, when given) and advance finished rounds; returns the notes.

    used: {job: [subagent_tokens, tool uses, duration in ms]} as Claude Code reported them to
    the caller. A refused output is moved aside at once, so a later next never reads it
    again and charges its job a second failure.
    """
    st = ctx.st
    events, _, texts = collect_events(ctx, retry, only)
    for job, seen in texts.items():
        # what was collected, byte for byte: a file changed later is noticed before another job reads it
        for path, text in zip(outputs_of(job), seen):
            ctx.run.keep(kept_copy(path), text)
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
        if measure_due(st):
            found = bench.measured_event(ctx.run, st, alive_agents(st), grouping_tests(st))
            if found is None:
                break  # runs are missing: next runs them with the run unlocked (measure_runs), then closes the round
            ctx.commit([found])
        ctx.commit(adv)
    return notes


def measure_runs(run, st, seconds=bench.COMMAND_SECONDS):
    """With the run unlocked: the bench runs a finished round's measurement still needs, run
    for at most `seconds`; how many are left."""
    return bench.measure(run, st, bench.survivor_texts(run, st, alive_agents(st)), seconds)


def set_aside(ctx, job):
    """Move whatever sits at a job's output paths to out/refused/, named by the try it is charged to."""
    attempt = tries(ctx.st, job)
    for rel in outputs_of(job):
        ctx.run.set_aside(rel, attempt)



def plan_next(ctx, retry=False, conductor=False, returned=None, used=None):
    """Decide and do the next step; returns the action as plain data.

    Without `returned` the caller says every Agent call it was shown has returned (a wave is
    made in one message, and the Agent tool waits for all of them), so every job out is
    collected. returned: the jobs whose agents the caller saw return while others still run (a
    client told of each completion): only those are collected, and the slots they free are
    refilled at once with ready jobs, keeping at most W in flight. The decision is the first
    of NEXT_RULES whose condition holds.
    """
    st = ctx.st
    notes = []
    if returned:
        for job in returned:
            if job not in st["jobs"]:
                raise ArenaError("--returned %r is not a job of run %s" % (job[:40], st["run"]))
        mine = [j for j in returned if st["jobs"][j]["s"] == ISSUED]
        notes += collect_and_advance(ctx, retry=True, only=mine, used=used)
    else:
        notes += collect_and_advance(ctx, retry, used=used)
    now = Situation(ctx, notes, returned, conductor)
    for rule in NEXT_RULES:
        if rule.when(now):
            rule.act(now)
            break
    return finish_act(st, now.act)


class Situation:
    """What the rules of `next` look at: the run in hand, the jobs out, the free slots, the
    caller (a conductor, or a client that named the jobs that returned)."""

    def __init__(self, ctx, notes, returned, conductor):
        self.ctx, self.st, self.returned, self.conductor = ctx, ctx.st, returned, conductor
        self.act = {"run": self.st["run"], "mode": self.st["mode"], "notes": notes}
        self.outstanding = jobs_in(self.st, ISSUED)
        self.last = self.st["waves"][-1] if self.st["waves"] else None
        self.free = self.st["wave"] - len(self.outstanding)
        self._ready = None

    def ready(self):
        """The ready jobs the free slots would take (picked once)."""
        if self._ready is None:
            self._ready = pick_jobs(self.st, self.free)
        return self._ready

    def unshown(self):
        """The last wave's jobs, when that wave was handed out but never printed."""
        last = self.last
        if not last or last.get("shown", True):
            return []
        jobs = [j for j in self.outstanding if self.st["jobs"][j]["w"] == last["n"]]
        return jobs if len(jobs) == last["size"] else []


Rule = namedtuple("Rule", "name when act")


def act_finished(now):
    st = now.st
    now.act.update(action="finished", command="winner --run %s" % st["run"])
    if not st["sol"].get(st["ship"] or st["champion"]):
        now.act["no_solution"] = True


def act_show_again(now):
    # handed out but never printed (the command was killed in between): the same wave again
    st, positions = now.st, spawn_positions(now.st)
    jobs = sorted(now.unshown(), key=lambda j: (priority(st, j, positions), j))
    now.act.update(action="wave", wave=now.last["n"], calls=wave_calls(now.ctx, jobs))


def act_refill(now):
    # rolling: refill the freed slots now instead of waiting for the whole wave
    jobs = now.ready()
    now.act["changed"] = hand_out(now.ctx, jobs, {"wave": len(now.st["waves"]) + 1})
    now.act.update(action="wave", wave=len(now.st["waves"]), calls=wave_calls(now.ctx, jobs), running=now.outstanding)


def act_wait(now):
    now.act.update(action="wait", waiting=now.outstanding, wave=len(now.st["waves"]))


def act_manual(now):
    now.act.update(action="manual", matches=[manual_match(now.ctx, mid, why)
                                             for mid, why in sorted(now.st["manual"].items())])


def act_settle(now):
    st = now.st
    if field_offered(st):
        # what writing the rest of the field would still cost: its spawns, a match each, their later looks
        held = [a for a in st["cards"] if status(st, spawn_id(a)) == READY]
        written = entered(st) - len(held)
        more = max(0, expected_looks(entered(st), st["wave"]) - expected_looks(written, st["wave"]))
        cost = budget.finishing_cost(st, more, matches=len(held), spawns=len(held))
        now.act.update(action="settle", settle=dict(st["field"], field=True, held=len(held), written=written,
                                                     cost=cost))
        return
    cost = budget.finishing_cost(st, expected_looks(st["settle"]["alive"], st["wave"]))
    now.act.update(action="settle", settle=dict(st["settle"], cost=cost))


def act_measure(now):
    st = now.st
    texts = bench.survivor_texts(now.ctx.run, st, alive_agents(st))
    missing = bench.missing_runs(now.ctx.run, st, texts)
    # need: the seconds the next run may take, so a command stops measuring before it cannot end in time
    now.act.update(action="measure", round=len(st["rounds"]), survivors=len(texts), left=len(missing),
                   need=bench.seconds_for(missing[0][0]) if missing else 0)


def act_lanes(now):
    now.act.update(action="lanes", calls=start_lanes(now.ctx), brief=now.ctx.run.path("lane.md"))


def act_conductor(now):
    st = now.st
    now.ctx.commit([{"e": "batch", "n": (st["batch"] or {}).get("n", 0) + 1}])
    now.act.update(action="conductor", description="arena conductor " + st["run"],
                   prompt="Read %s and follow it." % now.ctx.run.path("conductor.md"))


def act_batch_over(now):
    now.act.update(action="batch-over")


def act_wave(now):
    st = now.st
    wave = pick_wave(st)
    if not wave:
        raise ArenaError("nothing can run and nothing is finished; run 'bracket.py status --run %s' and report "
                         "this as a bug" % st["run"])
    now.act["changed"] = hand_out(now.ctx, wave, {"wave": len(st["waves"]) + 1})
    now.act.update(action="wave", wave=len(st["waves"]), calls=wave_calls(now.ctx, wave))


def batch_over(now):
    st = now.st
    return now.conductor and st["batch"] and len(st["waves"]) - st["batch"]["from"] >= st["batch_waves"]


# What `next` does, in order: the first rule whose condition holds decides.
NEXT_RULES = (
    Rule("finished", lambda now: finished(now.st), act_finished),
    Rule("show the wave again", lambda now: bool(now.unshown()), act_show_again),
    Rule("refill freed slots", lambda now: bool(now.outstanding and now.returned and now.free > 0
                                                and now.st["mode"] != "lanes" and now.ready()), act_refill),
    Rule("wait for the jobs out", lambda now: bool(now.outstanding), act_wait),
    Rule("ask for a decision by hand", lambda now: bool(now.st["manual"]), act_manual),
    Rule("ask to settle", lambda now: field_offered(now.st) or bool(now.st["settle"] and now.st["settle"]["choice"]
                                                                      is None), act_settle),
    Rule("measure the survivors on the bench", lambda now: measure_due(now.st), act_measure),
    Rule("start lanes", lambda now: now.st["mode"] == "lanes" and not now.conductor, act_lanes),
    Rule("start a conductor", lambda now: now.st["mode"] == "conductor" and not now.conductor, act_conductor),
    Rule("end the conductor's batch", batch_over, act_batch_over),
    Rule("hand out a wave", lambda now: True, act_wave),
)


def manual_match(ctx, mid, why):
    """A match waiting for a decision by hand: why, its two agents and their solution files."""
    m = find_match(ctx.st, mid)
    agents = [m["a"], m["b"]]
    return {"match": mid, "why": why, "agents": agents,
            "solutions": [os.path.join(ctx.run.dir, ctx.st["sol"].get(a) or "") for a in agents]}


def hand_out(ctx, jobs, where):
    """Write the jobs' briefs and journal their issue, to a wave ({"wave": n}) or a lane ({"lane": "2.3"})."""
    st = ctx.st
    changed = []
    for job in jobs:
        for src in inputs_of(st, job):
            changed += read_again(ctx, src)
        set_aside(ctx, job)  # left by an earlier try: a retry writes to a clear path
        write_brief(ctx, job, st["jobs"][job]["t"] + 1)
    # the judges' labels are fixed when handed out, so the verdict is read as the brief was written
    labels = {j: list(judge_sides(st, j, st["jobs"][j]["t"] + 1)) for j in jobs if is_judging(j)}
    ev = {"e": "issue", "jobs": jobs, "at": round(time.time(), 3), "labels": labels}
    ev.update(where)
    ctx.commit([ev])
    return changed


def read_again(ctx, job):
    """A collected job whose file changed since (its agent wrote on after the engine read it) is
    checked again before another job reads it: still valid and counting as before, the new text
    stands; otherwise the text collected is put back. Returns a line for each file found changed."""
    changed = changed_since_collected(ctx, job)
    if not changed:
        return []
    seen = []
    verdict, detail = check_output(ctx, job, seen)
    counted = ctx.st["summ"].get(job, {})
    now = {k: v for k, v in (detail or {}).items() if k != "sol"} if verdict == "done" else None
    if now == counted:
        for path, text in zip(outputs_of(job), seen):
            ctx.run.keep(kept_copy(path), text)
        return ["%s: %s changed after it was collected; read again, it passes and counts as before, so the "
                "new text is what later jobs read" % (job, " and ".join(changed))]
    for path in changed:
        ctx.run.put_back(kept_copy(path), path)
    why = detail if verdict == "fail" else "it no longer counts as it did (%s)" % (
        "its attacks or answers changed" if verdict == "done" else "a file is missing")
    return ["%s: %s changed after it was collected and %s; the text collected was put back" % (
        job, " and ".join(changed), why[:160])]


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
        act["changed"] = hand_out(ctx, picked, {"lane": lane})
        act.update(action="job", call=wave_calls(ctx, picked)[0])
    elif measure_due(st):
        # the round's survivors are measured on the bench (cmd_lane runs it unlocked), then it closes
        act.update(action="again", running=running, measure=True)
    elif not running:
        # nothing runs, so nothing will become ready: a decision by hand, or a retry the
        # main session must see; the lanes hand back
        act["action"] = "lane-over"
    else:
        act.update(action="again", running=running)
    return finish_act(st, act)


def finish_act(st, act):
    if not act.get("changed"):
        act.pop("changed", None)
    # optional work the budget left out since the main session last saw a list of it
    act["cuts"] = st["cuts"][st["cuts_shown"]:]
    act["progress"] = progress(st)
    act["line"] = progress_line(st, act["progress"])
    return act


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
