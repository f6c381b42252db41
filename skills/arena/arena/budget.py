"""What a run has spent and what it may still spend.

The spend is counted per job kind in st["spend"] as the journal's events arrive: calls (an
Agent call per try handed out), minutes from hand-out to return, and tokens. Claude Code
reports for each sub-agent its tool uses, its run time and `subagent_tokens`, the size of its
context at its last turn; where the caller passes that report on (`--used`), the tokens of the
job are estimated from it, elsewhere from the sizes the estimate assumes. floor_calls and
floor_tokens count what the run still needs if every job succeeds at its next try and nothing
optional is added; affordable() says whether optional work fits the caps (`--max-calls`,
`--max-tokens`) with that floor still covered. Pure functions of the state.
"""

from .jobs import FINAL, KIND, KINDS, MATCH_JOBS, MERGE, MERGE_JOBS, bracket_jobs, OPEN, READY, is_done, job_kind, match_of, spawn_id, status


# Orchestration: sub-agent calls that run jobs; counted and shown, but not the jobs a cap counts.
ORCHESTRATION = ("lane", "conductor")
# What the spend is kept by: the kinds of job, and the lanes and conductors that run them.
SPEND_KINDS = KINDS + ORCHESTRATION


def empty(kind):
    return {"calls": 0, "sec": 0.0, "tok": 0, "rep": 0, "ctx": 0, "tools": 0, "ms": 0}


def entry(st, kind):
    return st["spend"].setdefault(kind, empty(kind))


def assumed_tokens(st, kind):
    """Tokens the estimate assumes for one call of this kind (input and output)."""
    return st["per_call"].get(kind, [0, 0, 0])[2]


def call_tokens(st, kind):
    """Tokens one call of this kind is expected to use, for what is still to come: the mean of
    the calls of this kind that reported their usage, once three have, else the assumed size.
    A call's spend is the assumed size from its hand-out until its report replaces it, so the
    reported calls' sum is the spend less the assumed size of every call without a report."""
    spend = st["spend"].get(kind)
    if spend and spend["rep"] >= 3:
        reported = spend["tok"] - assumed_tokens(st, kind) * (spend["calls"] - spend["rep"])
        return max(0, int(reported / float(spend["rep"])))
    return assumed_tokens(st, kind)


def reported_tokens(st, kind, used):
    """A job's tokens from its usage report: its turns (tool uses + 1) each read a context
    growing from the brief's start to the final size Claude Code reports, plus what it wrote."""
    start, out = st["per_call"].get(kind, [0, 0, 0])[:2]
    final = max(used[0], start)
    return int((used[1] + 1) * (start + final) / 2.0) + out


def handed_out(st, job):
    """One more call of this job's kind (an issue event)."""
    kind = job_kind(job)
    spend = entry(st, kind)
    spend["calls"] += 1
    spend["tok"] += assumed_tokens(st, kind)


def never_ran(st, job):
    """The client refused the call: it is not spent."""
    kind = job_kind(job)
    spend = entry(st, kind)
    spend["calls"] -= 1
    spend["tok"] -= assumed_tokens(st, kind)


def came_back(st, job, ev):
    """A try of the job returned (done or fail): its minutes, and its usage if reported."""
    info = st["jobs"][job]
    kind = job_kind(job)
    spend = entry(st, kind)
    if ev.get("at") is not None:
        st["last"] = max(st.get("last") or 0.0, ev["at"])
    if ev.get("at") is not None and info.get("at") is not None:
        spend["sec"] = round(spend["sec"] + max(0.0, ev["at"] - info["at"]), 3)
    used = ev.get("used")
    if used:
        spend["rep"] += 1
        spend["ctx"] += used[0]
        spend["tools"] += used[1]
        spend["ms"] += used[2]
        spend["tok"] += reported_tokens(st, kind, used) - assumed_tokens(st, kind)


def orchestrated(st, kind, calls):
    """Lanes or a conductor started: sub-agent calls that run the jobs."""
    entry(st, kind)["calls"] += calls


def spent_calls(st):
    """Job calls handed out so far (every try; lanes and conductors are not jobs)."""
    return sum(v["calls"] for k, v in st["spend"].items() if k not in ORCHESTRATION)


def spent_tokens(st):
    return sum(v["tok"] for k, v in st["spend"].items() if k not in ORCHESTRATION)


def still_needed(st):
    """{kind: calls} the run still needs at the least: every job waiting to be handed out,
    and the first calls of the rounds not paired yet, if every job succeeds at its next try."""
    need = {}
    doomed = forfeits_to_come(st)
    for job, info in st["jobs"].items():
        if info["s"] == READY and match_of(job) not in doomed:
            kind = job_kind(job)
            need[kind] = need.get(kind, 0) + 1
    # the rounds not paired yet; and the checked merge's match, while its challenger is being written
    matches = future_matches(st) + (1 if status(st, MERGE) in OPEN else 0)
    for kind, calls in MATCH_JOBS.items():
        need[kind] = need.get(kind, 0) + calls * matches
    if st["baseline"] and FINAL not in st["jobs"] and st["ship"] is None and \
            (st["champion"] is None or st["sol"].get(st["champion"])):
        need[FINAL] = need.get(FINAL, 0) + 1
    return need


def forfeits_to_come(st):
    """Matches of round 1 not decided yet with a side whose first solution failed for good: they
    are forfeited once the other side's first solution is in, and need no more calls."""
    if not st["rounds"]:
        return set()
    return {m["id"] for m in st["rounds"][0]["matches"] if m["id"] not in st["results"]
            and not (has_solution(st, m["a"]) and has_solution(st, m["b"]))}


def future_matches(st):
    """Matches of the rounds not paired yet that need judging: one fewer than the agents with a
    solution that come out of the current round (one without a solution forfeits for nothing)."""
    if st["champion"] is not None or not st["rounds"]:
        return 0
    rnd = st["rounds"][-1]
    survivors = 0
    for m in rnd["matches"]:
        res = st["results"].get(m["id"])
        if res:
            survivors += 1 if has_solution(st, res["w"]) else 0
        else:
            # judged, or forfeited to the side with a solution (if either has one)
            survivors += 1 if has_solution(st, m["a"]) or has_solution(st, m["b"]) else 0
    if rnd["bye"] and has_solution(st, rnd["bye"]):
        survivors += 1
    return max(0, survivors - 1)


def has_solution(st, agent):
    """The agent has (or, its first solution still to come, will have) a solution."""
    return not is_done(st, spawn_id(agent)) or st["sol"].get(agent) is not None


def floor_calls(st):
    return sum(still_needed(st).values())


def floor_tokens(st):
    return sum(calls * call_tokens(st, kind) for kind, calls in still_needed(st).items())


def capped(st):
    return st.get("max_calls") is not None or st.get("max_tokens") is not None


def affordable(st, calls, kind):
    """Whether `calls` more calls of this kind fit the caps with the floor still covered."""
    if st.get("max_calls") is not None and spent_calls(st) + floor_calls(st) + calls > st["max_calls"]:
        return False
    if st.get("max_tokens") is not None and \
            spent_tokens(st) + floor_tokens(st) + calls * call_tokens(st, kind) > st["max_tokens"]:
        return False
    return True


def affordable_work(st, work):
    """Whether a piece of optional work, {kind: calls}, fits the caps with the floor still covered."""
    calls = sum(work.values())
    if st.get("max_calls") is not None and spent_calls(st) + floor_calls(st) + calls > st["max_calls"]:
        return False
    if st.get("max_tokens") is not None and spent_tokens(st) + floor_tokens(st) + \
            sum(n * call_tokens(st, kind) for kind, n in work.items()) > st["max_tokens"]:
        return False
    return True


def within_caps(st):
    """The run can still finish inside its caps: what it spent and still needs fits."""
    return affordable(st, 0, "judge")


def cut(st, what):
    """Note optional work left out for the budget, in one line `next` and `status` show."""
    st["cuts"].append(what)


def spend_of(st, kinds=None):
    """(calls, seconds, tokens, reported calls) summed over the kinds (default: the jobs')."""
    kinds = kinds or [k for k in st["spend"] if k not in ORCHESTRATION]
    rows = [st["spend"][k] for k in kinds if k in st["spend"]]
    return (sum(r["calls"] for r in rows), sum(r["sec"] for r in rows), sum(r["tok"] for r in rows),
            sum(r["rep"] for r in rows))


def finishing_cost(st, later_looks, matches=None, spawns=0):
    """(calls, tokens, sub-agent seconds) the rest of the bracket would cost from a settle offer:
    a match for each survivor but one (the match recipe), the later looks it may expect (as the
    plan counts them: estimate.expected_looks), the baseline check; priced by the run's own
    averages where it has them. From the early look at the field: the spawns still to write and
    a match for each (matches, spawns), and the later looks they add; no baseline check, which
    comes either way."""
    field = matches is not None
    calls = bracket_jobs(spawns, matches=matches if field else st["settle"]["alive"] - 1)
    if not spawns:
        calls.pop("spawn", None)
    if st["recheck"] is not None:
        calls["judge"] += later_looks
    if st["baseline"] and not field:
        calls[FINAL] = 1
    seconds = 0.0
    for kind, n in calls.items():
        spend = st["spend"].get(kind)
        per = spend["sec"] / float(spend["calls"]) if spend and spend["calls"] and spend["sec"] else \
            60.0 * st["minutes"].get(kind, KIND[kind].minutes)
        seconds += n * per
    return sum(calls.values()), sum(n * call_tokens(st, k) for k, n in calls.items()), seconds


def merge_fits(st):
    """The checked merge (its job and its match) fits the caps with the floor still covered."""
    return not capped(st) or affordable_work(st, MERGE_JOBS)
