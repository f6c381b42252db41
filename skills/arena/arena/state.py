"""The run's state and the events that change it.

A state is plain JSON-able data (docs/state.md lists every key); it changes only through
apply(state, event), so replaying the journal rebuilds it exactly. This module owns rounds,
matches, job statuses, retries and fallbacks, the ratings later rounds are paired by, when a
match is decided (the rules themselves are judging.py's), settle offers and the early look at
the field. It never reads or writes
files: storage.py persists it, outputs.py turns files into events.
"""


from fractions import Fraction

from . import budget
from .base import ArenaError, BENCH_ENTRIES, BENCH_SCORERS, DEFAULT_BATCH, DEFAULT_LANE_JOBS, DEFAULT_RECHECK, LABELS, below, rng_for, shuffled
from .cards import PARTS, deal_cards, deal_models
from .jobs import (CANCELLED, DONE, FINAL, ISSUED, KIND, MERGE, MERGE_CALLS, OPEN, READY, STUCK, TRIES, agent_ids, agent_of, attack_id,
                   challenger_id, competitor_jobs, defence_id, is_done, job_kind, judge_id, look_of, match_id, match_of,
                   new_record, parse_job, probe_id, round_of, spawn_id, status, writer_of)
from .judging import (PROBE_SHARE, SETTLE_SHARE, at_least, decide, ended_equal, first_looks as round_first_looks,
                      is_close, is_equivalent, looks_after_first, merge_verdicts, most_looks_in, round_kind, equal_votes,
                      wants_more)
from .pairing import make_round, pair_survivors, pick_bye
from .workspace import PHASE_MINUTES


def new_state(ev, sizes):
    if ev.get("pairing") != "rated" or ev.get("most_looks") is None:
        raise ArenaError("run %s was started by an older bracket.py whose judging rules (drawn pairing, at most two "
                         "looks) this one no longer plays; finish it with that version, or start a new run"
                         % ev.get("run"))
    n, seed = ev["agents"], ev["seed"]
    ids = agent_ids(n)
    cards = deal_cards(n, sizes, rng_for(seed, "deal"))
    if ev.get("models"):
        # a stream of its own, so the first three parts are the same with or without --models
        dealt = deal_models(cards, [share for _, share in ev["models"]], rng_for(seed, "deal-models"))
        cards = [card + [m] for card, m in zip(cards, dealt)]
    st = {
        "run": ev["run"], "seed": seed, "agents": n, "wave": ev["wave"],
        "created": ev["at"], "fence": ev["fence"], "baseline": ev["baseline"],
        "model": ev.get("model"), "judge_model": ev.get("judge_model"), "models": ev.get("models"),
        "recheck": ev.get("recheck", DEFAULT_RECHECK), "final_judges": ev.get("final_judges", 1),
        "pack": ev.get("pack", True), "batch_waves": ev.get("batch_waves", DEFAULT_BATCH),
        "mode": ev.get("mode", "conductor"), "sizes": list(sizes), "plan_waves": ev.get("plan_waves"),
        "pairing": ev["pairing"], "most_looks": ev["most_looks"],
        "cards": {a: c for a, c in zip(ids, cards)},
        "byes": {}, "out": {}, "sol": {}, "rounds": [], "results": {},
        "jobs": {}, "summ": {}, "waves": [], "batch": None, "champion": None,
        "final": None, "manual": {}, "seq": 0,
        "run_code": bool(ev.get("run_code")), "minutes": dict(ev.get("minutes") or PHASE_MINUTES),
        "run_code_env": list(ev.get("run_code_env") or []), "records": dict(ev.get("records") or {}),
        "lane_jobs": ev.get("lane_jobs", DEFAULT_LANE_JOBS), "lanes": None,
        "per_call": ev.get("per_call") or {}, "max_calls": ev.get("max_calls"), "max_tokens": ev.get("max_tokens"),
        "spend": {}, "cuts": [], "cuts_shown": 0,
        "settle_mode": ev.get("settle", "never"), "settle": None, "merge_on": bool(ev.get("merge")), "merged": None,
        "ship": None, "last": None, "equal_margin": ev.get("equal_margin"),
        "field_look": ev.get("field_look"), "field": None, "bench": [],
        "bench_on": bool(ev.get("bench")),
    }
    for a in ids:
        add_job(st, spawn_id(a))
    if n == 1:
        crown(st, ids[0])
    else:
        start_round(st, ids)
    return st


# Keys a state gained after format 1 began, with the value a run started before them has;
# new_state sets them from the init event.
LATER_KEYS = {"models": None, "run_code_env": [], "records": {}, "per_call": {}, "max_calls": None, "max_tokens": None, "spend": {}, "cuts": [], "cuts_shown": 0,
              "settle_mode": "never", "settle": None, "merge_on": False, "merged": None, "ship": None, "last": None,
              "equal_margin": None, "field_look": None, "field": None, "bench": [], "bench_on": False}


def upgrade(st):
    """A state saved by an earlier bracket.py of this format, given the keys it lacks."""
    for key, value in LATER_KEYS.items():
        if key not in st:
            st[key] = json_copy(value)
    return st


def json_copy(value):
    return dict(value) if isinstance(value, dict) else list(value) if isinstance(value, list) else value


def add_job(st, job):
    """A job waiting to be handed out (what it reads: deps_of)."""
    st["jobs"][job] = new_record()


def alive_agents(st):
    return sorted(a for a in st["cards"] if a not in st["out"])


def start_round(st, alive):
    number = len(st["rounds"]) + 1
    modes = {a: st["cards"][a][0] for a in alive}
    rated = round_ratings(st, number, alive)
    values = rating_values(rated) if rated else None
    rnd = make_round(number, alive, st["byes"], modes, st["seed"], values)
    if rated:
        rnd["rated"] = [[a] + rated[a] for a in sorted(alive, key=lambda a: (-values[a], a)) if a != rnd["bye"]]
    st["rounds"].append(rnd)
    if rnd["bye"]:
        st["byes"][rnd["bye"]] = st["byes"].get(rnd["bye"], 0) + 1
    for m in rnd["matches"]:
        mid, a, b = m["id"], m["a"], m["b"]
        if number > 1 and (no_solution(st, a) or no_solution(st, b)):
            forfeit(st, m)
            continue
        for job in competitor_jobs(mid, a, b):
            add_job(st, job)
        for k in range(1, first_looks(st, rnd) + 1):
            add_job(st, judge_id(mid, k))


def first_looks(st, rnd):
    """Judges a match of this round starts with (judging.first_looks)."""
    return round_first_looks(len(rnd["matches"]), field_of(rnd), st["final_judges"])


def field_of(rnd):
    return 2 * len(rnd["matches"]) + (1 if rnd["bye"] else 0)


def round_of_match(st, m):
    return st["rounds"][round_of(m["id"]) - 1]


def most_looks(st, rnd):
    """Most looks one match of this round may take (see MOST_LOOKS); none when second
    looks are off, so only the first looks (or the final's panel) count."""
    if st["recheck"] is None:
        return 0
    return most_looks_in(field_of(rnd), st["most_looks"])


def round_ratings(st, number, alive):
    """What round `number` is paired by: None in round 1 (drawn), else the ratings."""
    return ratings(st, alive) if number > 1 else None


def ratings(st, alive):
    """{agent: [points, looks]}: every judge's total for each agent, summed over all
    its judged matches so far, and how many looks those were."""
    out = {a: [0, 0] for a in alive}
    for rnd in st["rounds"]:
        for m in rnd["matches"]:
            res = st["results"].get(m["id"])
            if not res or res["how"] != "judge":
                continue
            for v in looks_of(st, m["id"]):
                for a in (m["a"], m["b"]):
                    if a in out:
                        out[a][0] += sum(v["sc"][a])
                        out[a][1] += 1
    return out


def rating_values(rated):
    """{agent: average total per look}, exact; an agent never judged yet (a bye, a
    forfeit) stands at the average of the others, neither favoured nor feared."""
    known = [Fraction(p, k) for p, k in rated.values() if k]
    middle = sum(known, Fraction(0)) / len(known) if known else Fraction(0)
    return {a: Fraction(p, k) if k else middle for a, (p, k) in rated.items()}


def judges_of(st, mid):
    """The judge jobs a match has so far, in look order."""
    out, k = [], 1
    while judge_id(mid, k) in st["jobs"]:
        out.append(judge_id(mid, k))
        k += 1
    return out


def looks_of(st, mid):
    """The verdicts of a match's judges that are in, in order."""
    out = []
    for job in judges_of(st, mid):
        v = st["summ"].get(job)
        if is_done(st, job) and v and "sc" in v:
            out.append(v)
    return out


def deps_of(st, job):
    """The jobs whose outputs a job reads (what its kind waits for: jobs.KIND's `after`);
    derived from its id, never stored."""
    after = KIND[job_kind(job)].after
    if after == "nothing":
        # a probe and the merge are made when what they read is there: a finished round, a finished bracket
        return []
    if after == "shipped":
        return [spawn_id(st["champion"])]
    m = find_match(st, match_of(job))
    if after == "first solutions":
        return [first_solution_job(st, m["a"]), first_solution_job(st, m["b"])]
    if after == "attacks":
        # a defender reads the attacks on both sides: it fixes any flaw it shares with its opponent
        return [attack_id(m["id"], m["a"]), attack_id(m["id"], m["b"])]
    return [defence_id(m["id"], m["a"]), defence_id(m["id"], m["b"])]


def inputs_of(st, job):
    """The jobs whose outputs a job's brief names or copies: the jobs it waits for, the jobs that
    wrote the solutions it reads and, for a judge, the attacks of its match."""
    kind = job_kind(job)
    found = list(deps_of(st, job))
    if kind in ("atk", "def", "judge"):
        m = find_match(st, match_of(job))
        agents = [m["a"], m["b"]]
        if kind == "judge":
            found += [attack_id(m["id"], m["a"]), attack_id(m["id"], m["b"])]
    elif kind == FINAL:
        agents = [st["ship"] or st["champion"]]
    elif kind == "probe":
        agents = probed_agents(st, job)
    elif kind == MERGE:
        agents = [st["merged"]["base"], st["merged"]["other"]]
    else:
        agents = []
    found += [writer_of(st["sol"].get(a)) for a in agents]
    return [j for j in dict.fromkeys(found) if j]


def deps_done(st, job):
    if st["field_look"] and job_kind(job) == "spawn" and spawn_held(st, job):
        return False
    return all(is_done(st, d) for d in deps_of(st, job))


def waits_for_held(st, job):
    """A job the early look at the field holds back: a held spawn, or a job of a round-1 match
    with a held side."""
    if not st["field_look"]:
        return False
    kind = job_kind(job)
    if kind == "spawn":
        return spawn_held(st, job)
    if kind not in ("atk", "def", "judge") or round_of(match_of(job)) != 1:
        return False
    m = find_match(st, match_of(job))
    return any(spawn_held(st, spawn_id(a)) for a in (m["a"], m["b"]))


def spawn_held(st, job):
    """The early look at the field holds every spawn but its first field_look ones until it has
    its answer (a spawn handed out before, now waiting for a retry, is never held)."""
    info = st["jobs"][job]
    if info["s"] != READY or info["t"] > 0:
        return False
    look = st["field"]
    if look is not None:
        return look["choice"] is None
    handed = sum(1 for a in st["cards"] if st["jobs"][spawn_id(a)]["s"] != READY or st["jobs"][spawn_id(a)]["t"] > 0)
    return handed >= st["field_look"]


def first_solution_job(st, agent):
    """The job that wrote the agent's first solution: its spawn, or for the challenger the merge."""
    return MERGE if st["merged"] and agent == st["merged"]["challenger"] else spawn_id(agent)


def no_solution(st, agent):
    """The agent's spawn ended without a usable solution (it forfeits its matches)."""
    return is_done(st, first_solution_job(st, agent)) and st["sol"].get(agent) is None


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
    close_match(st, m, winner, {"how": "forfeit", "why": why})


def close_match(st, m, winner, info):
    """Decide a match: its open jobs are cancelled (a forfeit or a decision by hand)
    and its judges' labels dropped, which matter only while it is open."""
    mid = m["id"]
    for job in competitor_jobs(mid, m["a"], m["b"]) + [judge_id(mid, k) for k in range(1, 10)]:
        job_info = st["jobs"].get(job)
        if job_info is None:
            continue
        job_info.pop("lab", None)
        job_info.pop("old", None)
        if job_info["s"] in OPEN:
            job_info["s"] = CANCELLED
    loser = m["b"] if winner == m["a"] else m["a"]
    info.update({"w": winner, "l": loser})
    st["results"][m["id"]] = info
    st["manual"].pop(m["id"], None)
    if st["merged"] and m["id"] == st["merged"].get("match"):
        # the checked merge: the challenger ships only if it won; the bracket's winner stays champion
        ship(st, winner)
        return
    st["out"][loser] = round_of(m["id"])
    field_matches_in(st)


def matches_decided(st):
    rnd = st["rounds"][-1] if st["rounds"] else None
    return rnd is not None and all(m["id"] in st["results"] for m in rnd["matches"])


def round_done(st):
    """The current round may be closed by next: every match decided, and in round 1
    the bye's spawn in too, so the scheduler counts it in the round it belongs to; and
    nothing between rounds is pending (a probe running, a settle offer unanswered)."""
    rnd = st["rounds"][-1] if st["rounds"] else None
    bye_ready = rnd is None or rnd["n"] > 1 or not rnd["bye"] or is_done(st, spawn_id(rnd["bye"]))
    return bye_ready and matches_decided(st) and not between_rounds(st)


def between_rounds(st):
    """A finished round waits for its probe, or for an answer to a settle offer."""
    if st["settle"] and st["settle"]["choice"] is None:
        return True
    rnd = st["rounds"][-1] if st["rounds"] else None
    return rnd is not None and status(st, probe_id(rnd["n"])) in OPEN


# ---------------------------------------------------------------- which event is valid when
#
# Every event is checked against the state it arrives in before it is journaled (storage's
# commit calls check_event); apply checks it too, so a client that writes events another way gets
# the same refusals. A journal is replayed without the checks: its events were checked when
# they arrived, and one written by an earlier bracket.py is kept as it was played.

def refuse_init(st, ev):
    return "a run starts once, with init; run %s has started" % st["run"]


def refuse_issue(st, ev):
    jobs = ev.get("jobs")
    if not isinstance(jobs, list) or not jobs or len(set(jobs)) != len(jobs):
        return "an issue event hands out a list of different jobs"
    for job in jobs:
        if job not in st["jobs"]:
            return "%s is not a job of run %s" % (str(job)[:40], st["run"])
        if st["jobs"][job]["s"] == READY and waits_for_held(st, job):
            return "%s is held until the early look at the field has its answer; run next" % job
        if st["jobs"][job]["s"] != READY or not deps_done(st, job):
            return "%s is not ready to hand out (it is %s%s)" % (
                job, st["jobs"][job]["s"], "" if deps_done(st, job) else ", and waits for the jobs it reads")
    if ev.get("lane") is None and ev.get("wave") != len(st["waves"]) + 1:
        return "a wave is numbered %d now, not %s" % (len(st["waves"]) + 1, ev.get("wave"))
    if ev.get("lane") is not None and st.get("lanes") is None:
        return "no lanes were started for lane %s" % ev["lane"]
    if not set(ev.get("labels", {})) <= set(jobs) or not all(KIND[job_kind(j)].judging for j in ev.get("labels", {})):
        return "labels go with the judging jobs the event hands out"
    return None


def refuse_returned(st, ev):
    job = ev.get("job")
    if status(st, job) != ISSUED:
        return "%s is not handed out now (it is %s); only a job out with an agent comes back" % (
            str(job)[:40], status(st, job) or "not a job of this run")
    return None


def refuse_record(st, ev):
    m = find_match(st, ev.get("match"))
    if m is None or not st["rounds"] or m not in st["rounds"][-1]["matches"]:
        return "%s is not a match of the current round; see pairings" % str(ev.get("match"))[:40]
    if m["id"] in st["results"]:
        return "%s is already decided (%s won)" % (m["id"], st["results"][m["id"]]["w"])
    if ev.get("winner") not in (m["a"], m["b"]):
        return "%s is not in %s; it is %s vs %s" % (str(ev.get("winner"))[:40], m["id"], m["a"], m["b"])
    if not str(ev.get("why") or "").strip():
        return 'record needs --reason "why this side won"'
    return None


def refuse_advance(st, ev):
    if st["champion"] is not None:
        return "the tournament is decided (%s); run winner" % st["champion"]
    if not matches_decided(st):
        undecided = [m["id"] for m in st["rounds"][-1]["matches"] if m["id"] not in st["results"]]
        return "round %d still has %d undecided match(es): %s" % (len(st["rounds"]), len(undecided),
                                                                 " ".join(undecided[:10]))
    if st["settle"] and st["settle"]["choice"] is None:
        return "round %d ended with a settle offer waiting for its answer; run settle continue or settle finish" \
            % st["settle"]["round"]
    if between_rounds(st):
        return "round %d waits for its settle probe; run next" % len(st["rounds"])
    if measure_due(st):
        return "round %d's survivors are not measured on the bench yet; run next" % len(st["rounds"])
    return None


def measure_due(st):
    """True when a finished round's survivors wait to be measured on the bench before it closes
    (bench.measured_event): a bench run whose bench holds entries, two or more survivors."""
    if not st.get("bench_on") or not st["bench"] or st["champion"] is not None or not round_done(st):
        return False
    return "bench" not in st["rounds"][-1] and len(alive_agents(st)) >= 2


def grouping_tests(st):
    """The bench tests that may group a round's survivors (bench.measured_event): those some
    look saw decide a match and upheld (its 'bd', not in its 'disputed'), and no look disputed.
    A test no look has weighed yet groups no one: it may test what the task leaves open."""
    disputed = {eid for s in st["summ"].values() for eid in s.get("bx", ())}
    upheld = {eid for s in st["summ"].values() for eid in s.get("bd", {}) if eid not in s.get("bx", ())}
    return sorted(upheld - disputed)


def refuse_measured(st, ev):
    if not measure_due(st):
        return "no finished round waits to be measured on the bench; run next"
    if ev.get("round") != len(st["rounds"]):
        return "round %d is the one to measure, not %s" % (len(st["rounds"]), ev.get("round"))
    alive = set(alive_agents(st))
    groups = ev.get("groups")
    if not isinstance(groups, list) or not all(isinstance(g, list) and g for g in groups) \
            or not set(a for g in groups for a in g) <= alive or not set(ev.get("res", {})) <= alive:
        return "a measured event groups the survivors of the round"
    return None


def refuse_settle(st, ev):
    if not field_offered(st) and (not st["settle"] or st["settle"]["choice"] is not None):
        return "run %s has no settle offer waiting for an answer; run next" % st["run"]
    if ev.get("choice") not in ("continue", "finish"):
        return "a settle offer is answered with continue or finish"
    return None


def refuse_shown(st, ev):
    if "cuts" in ev:
        return None if isinstance(ev["cuts"], int) and 0 <= ev["cuts"] <= len(st["cuts"]) else \
            "%s lines of left-out work were never made" % ev["cuts"]
    if "job" in ev:
        return refuse_returned(st, ev)
    if not st["waves"] or ev.get("wave") not in (None, st["waves"][-1]["n"]):
        return "wave %s is not the last wave handed out" % ev.get("wave")
    return None


def refuse_mode(st, ev):
    return None if ev.get("mode") in ("direct", "conductor", "lanes") else "a run's mode is direct, conductor or lanes"


def refuse_batch(st, ev):
    return None if st["mode"] == "conductor" else "a conductor batch starts only in a run whose mode is conductor"


def refuse_lanes(st, ev):
    if st["mode"] != "lanes":
        return "lanes start only in a run whose mode is lanes"
    ok = all(isinstance(ev.get(k), int) and ev[k] >= 1 for k in ("n", "k", "budget"))
    return None if ok else "a set of lanes has a number, a count of lanes and a job budget, each 1 or more"


# The one table of which event is valid when: each event's check, None when it may be applied.
VALID_WHEN = {"init": refuse_init, "issue": refuse_issue, "shown": refuse_shown, "done": refuse_returned,
              "fail": refuse_returned, "record": refuse_record, "advance": refuse_advance, "mode": refuse_mode,
              "batch": refuse_batch, "lanes": refuse_lanes, "settle": refuse_settle,
              "measured": refuse_measured}
EVENTS = tuple(VALID_WHEN)


def refusal(st, ev):
    """Why this event cannot be applied to this state (one line), or None."""
    check = VALID_WHEN.get(ev.get("e") if isinstance(ev, dict) else None)
    if check is None:
        return "%r is not an event this bracket.py knows" % (ev.get("e") if isinstance(ev, dict) else ev,)
    try:
        return check(st, ev)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        return "a %s event is missing what it needs" % ev["e"]


def check_event(st, ev):
    """Refuse an event that makes no sense in this state, in one line (ArenaError)."""
    why = refusal(st, ev)
    if why:
        raise ArenaError(why)


def apply(st, ev, checked=True):
    """Apply one event to the state; refused (ArenaError, nothing changed) if it makes no sense
    in it. checked=False skips the check: a journal's replay (see above), or a simulator that
    plays jobs without handing them out."""
    if checked:
        check_event(st, ev)
    kind = ev["e"]
    if kind == "issue":
        lane = ev.get("lane")
        if lane is None:
            # a wave's jobs are the jobs whose "w" is its number; the journal keeps the full list
            st["waves"].append({"n": ev["wave"], "at": ev["at"], "size": len(ev["jobs"]), "shown": False})
        else:
            st["lanes"]["handed"] += len(ev["jobs"])
        for j in ev["jobs"]:
            job = st["jobs"][j]
            job["s"], job["t"], job["w"], job["at"] = ISSUED, job["t"] + 1, ev.get("wave"), ev["at"]
            budget.handed_out(st, j)
            if lane is not None:
                # one job for one lane, no wave: "ln" names the lane running it, "sh" is there
                # until the lane has been shown the job (a lane command killed in between shows it again)
                job["ln"], job["sh"] = lane, 0
            if st["bench"] and job_kind(j) == "judge":
                # the entries its look must have run on both sides (outputs.bench_checked)
                job["bn"] = len(st["bench"])
            if j in ev.get("labels", {}):
                if job.get("lab"):
                    # kept while the job is open: a late output of an earlier try is read with its own labels
                    job.setdefault("old", []).append(job["lab"])
                job["lab"] = ev["labels"][j]
    elif kind == "done":
        budget.came_back(st, ev["job"], ev)
        on_done(st, ev["job"], ev["out"])
    elif kind == "fail" and ev.get("never_ran"):
        # the client refused the job's Agent call (its sub-agent cap): back to the queue, no try spent
        budget.never_ran(st, ev["job"])
        info = st["jobs"][ev["job"]]
        info["s"], info["t"], info["w"] = READY, info["t"] - 1, None
        for key in ("ln", "sh", "at"):
            info.pop(key, None)
    elif kind == "fail":
        budget.came_back(st, ev["job"], ev)
        on_fail(st, ev["job"], ev["why"])
    elif kind == "record":
        m = find_match(st, ev["match"])
        close_match(st, m, ev["winner"], {"how": "record", "why": ev["why"]})
    elif kind == "advance":
        alive = alive_agents(st)
        if len(alive) == 1:
            crown(st, alive[0])
        elif not offer_settle_or_probe(st, alive):
            start_round(st, alive)
    elif kind == "measured":
        st["rounds"][-1]["bench"] = {k: ev[k] for k in ("res", "groups", "split", "tests")}
    elif kind == "settle" and field_offered(st):
        choose_field(st, ev["choice"])
    elif kind == "settle":
        choose(st, ev["choice"])
    elif kind == "shown" and "cuts" in ev:
        st["cuts_shown"] = ev["cuts"]
    elif kind == "shown" and "job" in ev:
        st["jobs"][ev["job"]].pop("sh", None)
    elif kind == "shown":
        st["waves"][-1]["shown"] = True
    elif kind == "mode":
        st["mode"] = ev["mode"]
    elif kind == "batch":
        st["batch"] = {"n": ev["n"], "from": len(st["waves"])}
        budget.orchestrated(st, "conductor", 1)
    elif kind == "lanes":
        # a new set of lanes: the old set's numbers no longer own anything
        first = (st.get("lanes") or {}).get("first", ev["at"])
        st["lanes"] = {"n": ev["n"], "k": ev["k"], "budget": ev["budget"], "handed": 0, "at": ev["at"], "first": first}
        budget.orchestrated(st, "lane", ev["k"])
    else:
        raise ArenaError("journal event %r is unknown to this bracket.py" % kind)
    st["seq"] = ev["seq"]


def on_done(st, job, out):
    info = st["jobs"][job]
    info["s"] = DONE
    # only handed-out jobs need their wave or lane, the time they went out and earlier labels
    for key in ("w", "ln", "sh", "at", "old", "bn"):
        info.pop(key, None)
    if info.get("t") == 1:
        del info["t"]  # done at the first try: the common case stays small
    # solution paths live in st["sol"]; the summary keeps what the report and winner need
    keep = {k: v for k, v in out.items() if k not in ("sol", "bench")}
    if out.get("bench"):
        keep["bna"] = bench_in(st, job, out["bench"])
    if keep:
        st["summ"][job] = keep
    arrival = KIND[job_kind(job)].arrival
    if arrival:
        ARRIVALS[arrival](st, job, out)


def bench_in(st, job, marks):
    """Add a collected job's bench entries while the bench has room (base.BENCH_ENTRIES, of them
    base.BENCH_SCORERS scorers, one a job: scorers that agree must come from different writers);
    the ids added, in order. The same marks add the same entries on every replay."""
    added = []
    for mark in marks:
        have = st["bench"]
        if mark["kind"] == "scorer" and (sum(e["kind"] == "scorer" for e in have) >= BENCH_SCORERS or any(
                e["kind"] == "scorer" and e["id"] in added for e in have)):
            continue
        if len(have) >= BENCH_ENTRIES or any(e["dir"] == mark["dir"] for e in have):
            continue
        entry = dict(mark, id="b%02d" % (len(have) + 1), by=bench_author(st, job))
        have.append(entry)
        added.append(entry["id"])
    return added


def bench_author(st, job):
    """Who added an entry, as a blind job may read it: the kind of job and its round."""
    kind, rnd, _, _ = parse_job(job)
    return "%s, round %d" % (KIND[kind].word, rnd)


def spawn_in(st, job, out):
    """A first solution (or none): a round-1 match with a side that has none is forfeited."""
    agent = agent_of(job)
    st["sol"][agent] = out.get("sol")
    forfeit_silent(st, agent)
    if out.get("sol") is None and FINAL in st["jobs"]:
        st["jobs"][FINAL]["s"] = CANCELLED
    start_field_look(st)


def defence_in(st, job, out):
    """A defence: its revision is the agent's solution from now on (a fallback keeps the old one)."""
    agent = agent_of(job)
    st["sol"][agent] = out.get("sol") or st["sol"].get(agent)


def final_in(st, job, out):
    st["final"] = out


def reproductions(st, mid, side):
    """{attack number: what the match's judges found} for the reproducers of attacks on side.

    Looks that disagree are all kept, in order, joined by " / "."""
    found = {}
    for job in sorted(j for j in st["summ"] if j.startswith(mid + "-judge")):
        for number, result in st["summ"][job].get("rep", {}).get(side, {}).items():
            said = found.setdefault(number, [])
            if result not in said:
                said.append(result)
    return {n: " / ".join(r) for n, r in found.items()}


def carried_reproducers(st, mid, side):
    """{attack number: file} of the reproducers the attacks on side carried."""
    return st["summ"].get(attack_id(mid, opponent(find_match(st, mid), side)), {}).get("rp", {})


def on_fail(st, job, why):
    """A job's output was missing or invalid: hand it out again, or fall back."""
    info = st["jobs"][job]
    info["why"] = why[:200]
    info.pop("ln", None)  # the lane is free again
    info.pop("sh", None)
    kind = KIND[job_kind(job)]
    if info["t"] < kind.tries:
        info["s"] = READY
        if budget.within_caps(st):
            return
        # another try would not leave enough for the rest of the bracket: fall back now
        budget.cut(st, "no try %d of %s: the budget needs the rest for the bracket" % (info["t"] + 1, job))
    # every kind has a fallback (jobs.KIND), so that no failure can stall the run
    if kind.fallback is None:
        info["s"] = STUCK
        st["manual"][match_of(job)] = "its judge failed %d times (%s)" % (info["t"], why[:120])
        return
    out = dict(kind.fallback)
    if kind.why_kept:
        prefix, length = kind.why_kept
        out["why"] = prefix + why[:length]
    on_done(st, job, out)


def forfeit_silent(st, agent):
    """Once both spawns of a round-1 match are in, a side with no solution forfeits."""
    for m in st["rounds"][0]["matches"] if st["rounds"] else []:
        if agent not in (m["a"], m["b"]) or m["id"] in st["results"]:
            continue
        pair = (m["a"], m["b"])
        if all(is_done(st, spawn_id(a)) for a in pair):
            if any(st["sol"].get(a) is None for a in pair):
                forfeit(st, m, "no solution from " + " and ".join(a for a in pair if st["sol"].get(a) is None))


def judge_arrived(st, job, out=None):
    """Decide the match once its judges are in, or ask for one more look."""
    mid = match_of(job)
    m = find_match(st, mid)
    judges = judges_of(st, mid)
    if any(not is_done(st, j) for j in judges):
        return
    verdicts = [st["summ"][j] for j in judges]
    crit = len(verdicts[0]["sc"][m["a"]])
    picks = [decide(v, m, crit)[0] for v in verdicts]
    equal = equal_votes(verdicts, m, st["equal_margin"])
    merged = merge_verdicts(verdicts, m)
    winner, rule = decide(merged, m, crit)
    tot = {a: sum(merged["sc"][a]) for a in (m["a"], m["b"])}
    more = more_looks(st, m, verdicts, merged, picks, equal)
    if more:
        for k in range(1, more + 1):
            add_job(st, judge_id(mid, len(verdicts) + k))
        return
    # equivalent: the first look, or most looks, found no decided difference; a tie: equal votes
    # (equivalent, or totals within the margin) outnumber the rest
    tie = ended_equal(equal)
    found = sum(1 for v in verdicts if is_equivalent(v, m))
    equivalent = is_equivalent(verdicts[0], m) or tie and 2 * found > len(verdicts)
    if (equivalent or tie) and st["merged"] and st["merged"].get("match") == mid:
        # the merge match: the challenger must beat the winner, and one it equals has not
        winner, rule = m["a"], "equivalent" if equivalent else "equal"
    info = {"how": "judge", "n": len(verdicts), "tot": tot, "fatal": merged["fat"], "rule": rule}
    if equivalent:
        info["eq"] = True
    if tie:
        info["tie"] = True
    if st["equal_margin"] is not None and len(verdicts) >= 2:
        info["equal"] = sum(equal)
    if len(verdicts) >= 2:
        info["agree"] = len(set(picks)) == 1
        info["votes"] = picks.count(winner)
    close_match(st, m, winner, info)


def more_looks(st, m, verdicts, merged, picks, equal=()):
    """How many more judges this match gets now (0: it is decided).

    None after a first look that found the two equivalent (a FATAL flag on either side
    overrides that). Otherwise, after one look, as judging.looks_after_first says for the
    round and the look (an equal vote gets one more); after two or more, one at a time while
    no side has won a majority of the most looks the match may take (judging.wants_more), so
    split looks get a tie-breaker and the last two rounds play to three of five, unless equal
    votes outnumber the rest: a tie ends the match.
    """
    if st["recheck"] is None or is_equivalent(verdicts[0], m):
        return 0
    rnd = round_of_match(st, m)
    most = most_looks(st, rnd)
    if len(picks) == 1:
        kind = round_kind(len(rnd["matches"]), field_of(rnd), st["wave"])
        first_equal = bool(equal) and equal[0]
        wanted = looks_after_first(kind, is_close(merged, m, st["recheck"]), most, equal=first_equal)
    else:
        wanted = 1 if wants_more(picks, (m["a"], m["b"]), most, equal) else 0
    return affordable_looks(st, m, wanted)


def affordable_looks(st, m, wanted):
    """As many of the wanted looks as the budget pays for, with the rest of the bracket covered."""
    given = wanted
    while given and budget.capped(st) and not budget.affordable(st, given, "judge"):
        given -= 1
    if given < wanted:
        budget.cut(st, "%s: %s skipped for the budget" % (m["id"], "1 more look" if wanted - given == 1 else
                                                        "%d more looks" % (wanted - given)))
    return given


def opponent(m, agent):
    return m["b"] if agent == m["a"] else m["a"]


def probed_agents(st, job):
    """The agents a probe runs: the survivors of its round, or, for the early look at the field
    (probe-r0), the first solutions written when it was made."""
    rnd = int(job[len("probe-r"):])
    if rnd == 0:
        return list(st["field"]["agents"])
    return sorted(a for a in st["cards"] if st["out"].get(a, rnd + 1) > rnd)


def probe_sides(st, job, attempt):
    """(agents in a seeded order, their labels) for one try of a probe: S1, S2, ... on the
    first try, T1, T2, ... on the second, so a late output names the try it answers."""
    order = shuffled(rng_for(st["seed"], "probe", job), probed_agents(st, job))
    return order, ["%s%d" % ("STUVWXYZ"[(attempt - 1) % 8], k) for k in range(1, len(order) + 1)]


def judge_sides(st, job, attempt):
    """(agents in presentation order, their neutral labels) for one try of a judge.

    Every try of a job draws its labels from its own slice of one seeded shuffle,
    so no label comes back on a later try and a late verdict names the try it
    answers. The order is drawn once per job from the seed: a retry replaces a
    try whose verdict never counted, so the same seed gives the same
    presentation however many tries a judge needed. Later looks alternate the
    first look's order (the second swapped, the third as the first, ...), so
    position bias cancels as far as the count of looks allows.
    """
    if job_kind(job) == "probe":
        return probe_sides(st, job, attempt)
    if job == FINAL:
        sides = ["winner", "baseline"]
    else:
        m = find_match(st, match_of(job))
        sides = [m["a"], m["b"]]
    pool = list(LABELS)
    if look_of(job) >= 2:
        first = judge_id(match_of(job), 1)
        prior = st["summ"].get(first)
        if prior and st["jobs"][first].get("lab"):
            order = st["jobs"][first]["lab"][0]
        else:  # the looks run side by side
            order = judge_sides(st, first, 1)[0]
        sides = [order[1], order[0]] if look_of(job) % 2 == 0 else list(order)
        # the first look's labels, on any of its tries, never name a later look's sides
        used = label_slice(st, first)
        pool = [x for x in pool if x not in used]
    else:
        sides = shuffled(rng_for(st["seed"], "order", job), sides)
    start = 2 * (attempt - 1) % len(pool)
    return sides, shuffled(rng_for(st["seed"], "labels", job), pool)[start:start + 2]


def label_slice(st, job):
    """Every label a first look can use over its tries."""
    return shuffled(rng_for(st["seed"], "labels", job), LABELS)[:2 * TRIES["judge"]]


# ---------------------------------------------------------------- between rounds: a settled field

def offer_settle_or_probe(st, alive):
    """What a finished round with survivors left calls for before the next is paired. A settle
    offer when every match it judged was equivalent, or, in a run without --run-code, at least
    two thirds of them (SETTLE_SHARE). In a --run-code run where not all but at least half were
    (PROBE_SHARE), a probe that runs every survivor's code on the same inputs: running the code
    is better evidence than the judges' share. Neither when the bench's tests split the
    survivors (bench_split): they differ where the task decides. False: pair the next round.
    One offer a run: once answered, the bracket goes on to the end."""
    if st["settle_mode"] == "never" or st["settle"]:
        return False
    rnd = st["rounds"][-1]
    judged = [st["results"][m["id"]] for m in rnd["matches"] if st["results"][m["id"]]["how"] == "judge"]
    same = sum(1 for r in judged if r.get("eq"))
    if judged and same == len(judged):
        call, why = "offer", "every match of round %d that a judge decided (%d) was judged equivalent" % (rnd["n"], same)
    elif not st["run_code"] and at_least(same, len(judged), SETTLE_SHARE):
        call, why = "offer", "%d of the %d matches of round %d that a judge decided were judged equivalent" % (
            same, len(judged), rnd["n"])
    elif st["run_code"] and at_least(same, len(judged), PROBE_SHARE) and probe_id(rnd["n"]) not in st["jobs"]:
        call, why = "probe", None
    else:
        return False
    if bench_split(rnd):
        rnd["bench"]["held"] = call
        return False
    if call == "offer":
        offer_settle(st, alive, why)
        return True
    if budget.capped(st) and not budget.affordable(st, 1, "probe"):
        budget.cut(st, "probe-r%d: the settle probe skipped for the budget" % rnd["n"])
        return False
    add_job(st, probe_id(rnd["n"]))
    return True


def bench_split(rnd):
    """True when the engine's run of the bench's tests found the round's survivors in more
    than one group (bench.measured_event)."""
    return len((rnd.get("bench") or {}).get("groups", ())) > 1


def probed(st, job, out):
    """The probe is in: one behaviour for every survivor is a settle offer; else the next round.
    The early look's probe groups the first solutions instead (field_probed)."""
    if job == probe_id(0):
        field_probed(st, out)
        return
    alive = alive_agents(st)
    rnd = st["rounds"][-1]
    groups = out.get("groups")
    if groups is not None and len(groups) == 1:
        offer_settle(st, alive, "a probe ran the code of all %d survivors of round %d on the same %d inputs and "
                     "found one behaviour" % (len(alive), rnd["n"], out.get("inputs", 0)))
    else:
        start_round(st, alive)


def offer_settle(st, alive, why):
    rated = rating_values(ratings(st, alive))
    # the leader by average score so far; equal averages go to the seeded order of the field
    order = shuffled(rng_for(st["seed"], "settle", len(st["rounds"])), sorted(alive))
    leader = max(order, key=lambda a: (rated[a], -order.index(a)))
    st["settle"] = {"round": len(st["rounds"]), "why": why, "leader": leader, "choice": None,
                    "alive": len(alive)}
    if st["settle_mode"] == "auto":
        choose(st, "finish")


def choose(st, choice):
    """The answer to a settle offer: finish now with the leader, or play the bracket out."""
    st["settle"]["choice"] = choice
    if choice == "finish":
        crown(st, st["settle"]["leader"])
    else:
        start_round(st, alive_agents(st))


# ---------------------------------------------------------------- before the field is written: an early look

def field_look_size(wave):
    """First solutions the early look at the field waits for: two waves' worth, and at least 8."""
    return max(2 * wave, 8)


def field_look_for(agents, wave, settle):
    """The init event's field_look: the first solutions to look at before writing the rest, or
    None when no offer may come (--settle never) or the look would save less than it waits for."""
    k = field_look_size(wave)
    return k if settle != "never" and agents - k >= k else None


def start_field_look(st):
    """Once the first field_look solutions are in, spawns not handed out yet are held and the
    look starts: in a --run-code run a probe of those solutions (probe-r0), else the round-1
    matches among them, whose equal results are the evidence."""
    if not st["field_look"] or st["field"] is not None:
        return
    written = sorted(a for a in st["cards"] if is_done(st, spawn_id(a)))
    if len(written) < st["field_look"]:
        return
    solved = [a for a in written if st["sol"].get(a)]
    st["field"] = {"at": len(written), "agents": solved, "how": "probe" if st["run_code"] else "matches",
                   "why": None, "choice": None, "withdrawn": []}
    if st["run_code"]:
        if len(solved) < 2:
            release_field(st, "no probe: fewer than two solutions to run")
            return
        if budget.capped(st) and not budget.affordable(st, 1, "probe"):
            budget.cut(st, "probe-r0: the early look at the field skipped for the budget")
            release_field(st, "no probe: the budget leaves no room for it")
            return
        add_job(st, probe_id(0))
        return
    done = set(written)
    st["field"]["matches"] = [m["id"] for m in st["rounds"][0]["matches"] if m["a"] in done and m["b"] in done]
    field_matches_in(st)


def release_field(st, why):
    """The look made no offer: the held spawns go on."""
    st["field"].update(choice="no offer", why=why)


def field_offered(st):
    return bool(st["field"] and st["field"]["choice"] is None and st["field"]["why"])


def field_probed(st, out):
    """The probe of the first solutions: one group holding more than half of them is an offer
    to stop spawning."""
    info, groups = st["field"], out.get("groups")
    if not groups:
        release_field(st, "the probe of the first solutions failed")
        return
    biggest = max(len(g) for g in groups)
    if 2 * biggest <= len(info["agents"]):
        release_field(st, "a probe of the first %d solutions found %d behaviours, none shared by most"
                      % (len(info["agents"]), len(groups)))
        return
    info["group"] = sorted(max(groups, key=len))
    offer_field(st, "a probe ran the first %d solutions on the same %d inputs: %d of them behave alike where "
                    "the task decides" % (len(info["agents"]), out.get("inputs", 0), biggest))


def field_matches_in(st):
    """Without --run-code: once every round-1 match among the first solutions is decided, at
    least two thirds of those a judge decided ending equal are an offer to stop spawning."""
    info = st["field"]
    if not info or info["how"] != "matches" or info["choice"] is not None or info["why"]:
        return
    if any(mid not in st["results"] for mid in info["matches"]):
        return
    judged = [st["results"][mid] for mid in info["matches"] if st["results"][mid]["how"] == "judge"]
    same = sum(1 for r in judged if r.get("eq"))
    if not judged or not at_least(same, len(judged), SETTLE_SHARE):
        release_field(st, "%d of the %d round-1 matches among the first %d solutions ended equal"
                      % (same, len(judged), info["at"]))
        return
    offer_field(st, "%d of the %d round-1 matches among the first %d solutions that a judge decided ended equal"
                % (same, len(judged), info["at"]))


def offer_field(st, why):
    st["field"]["why"] = why
    if st["settle_mode"] == "auto":
        choose_field(st, "finish")


def choose_field(st, choice):
    """The answer to the early look: finish stops spawning (the agents not handed out yet are
    withdrawn and round 1 is paired again among the rest); continue writes the whole field."""
    st["field"]["choice"] = choice
    if choice == "finish":
        withdraw(st)


def withdraw(st):
    """Drop the agents whose first solution was never handed out; round 1 keeps every match
    between two agents left, and pairs the agents whose opponent was withdrawn (and the bye)
    again among themselves, in the freed match numbers."""
    gone = sorted(a for a in st["cards"] if status(st, spawn_id(a)) == READY)
    st["field"]["withdrawn"] = gone
    left = set(gone)
    for a in gone:
        st["jobs"][spawn_id(a)]["s"] = CANCELLED
        st["out"][a] = 0
    rnd = st["rounds"][0]
    kept, freed, orphans = [], [], []
    for k, m in enumerate(rnd["matches"], 1):
        if m["a"] in left or m["b"] in left:
            freed.append(k)
            orphans += [a for a in (m["a"], m["b"]) if a not in left]
            for job in competitor_jobs(m["id"], m["a"], m["b"]) + judges_of(st, m["id"]):
                del st["jobs"][job]
        else:
            kept.append(m)
    if rnd["bye"]:
        if rnd["bye"] not in left:
            orphans.append(rnd["bye"])
        st["byes"][rnd["bye"]] -= 1
    rng = rng_for(st["seed"], "withdrawn")
    modes = {a: st["cards"][a][0] for a in orphans}
    bye = pick_bye(sorted(orphans), st["byes"], modes, rng) if len(orphans) % 2 else None
    width = len(rnd["matches"])
    rnd["bye"] = bye
    if bye:
        st["byes"][bye] = st["byes"].get(bye, 0) + 1
    new = []
    for k, (a, b) in zip(freed, pair_survivors([x for x in orphans if x != bye], modes, rng)):
        new.append({"id": match_id(1, k, width), "a": a, "b": b, "coin": a if below(rng, 2) else b})
    rnd["matches"] = sorted(kept + new, key=lambda m: m["id"])
    MATCH_INDEX[0] = None  # the round's matches changed
    for m in new:
        for job in competitor_jobs(m["id"], m["a"], m["b"]):
            add_job(st, job)
        for k in range(1, first_looks(st, rnd) + 1):
            add_job(st, judge_id(m["id"], k))
    for m in new:
        forfeit_silent(st, m["a"])


def entered(st):
    """Agents in the bracket: the run's agents less those an early finish withdrew."""
    return st["agents"] - len((st["field"] or {}).get("withdrawn", []))


# ---------------------------------------------------------------- after the bracket: the checked merge

def crown(st, agent):
    """The bracket is over: agent is its champion. A checked merge may still challenge it."""
    st["champion"] = agent
    if not plan_merge(st, agent):
        ship(st, agent)


def ship(st, agent):
    """The text that ships is agent's latest solution; the baseline check compares that text
    (a lone agent's check waits for its first solution, and is cancelled if none comes)."""
    st["ship"] = agent
    if st["baseline"] and (st["sol"].get(agent) or not is_done(st, first_solution_job(st, agent))):
        add_job(st, FINAL)


def final_match(st):
    """The bracket's last match (the one that decided the champion), or None."""
    played = [r for r in st["rounds"] if not r.get("merge") and r["matches"]]
    return played[-1]["matches"][-1] if played and len(played[-1]["matches"]) == 1 else None


def plan_merge(st, champion):
    """Start the checked merge when it is on, there is a runner-up with a solution, the
    finalists were not judged equivalent and the budget pays for it (the merge and a match)."""
    if not st["merge_on"] or st["agents"] < 2 or not st["sol"].get(champion):
        return False
    if st["settle"] and st["settle"]["choice"] == "finish":
        budget.cut(st, "merge: not tried, the field was settled (its survivors judged interchangeable)")
        return False
    m = final_match(st)
    res = st["results"].get(m["id"]) if m else None
    if not res:
        return False
    runner_up = res["l"]
    if not st["sol"].get(runner_up):
        return False
    if res.get("eq"):
        budget.cut(st, "merge: not tried, the finalists were judged equivalent")
        return False
    if not budget.merge_fits(st):
        budget.cut(st, "merge: skipped for the budget (it needs about %d calls)" % MERGE_CALLS)
        return False
    st["merged"] = {"base": champion, "other": runner_up, "challenger": challenger_id(st["agents"])}
    add_job(st, MERGE)
    return True


def merged(st, job, out):
    """The challenger is written (or the merge failed): it meets the champion in a full match."""
    info, champion = st["merged"], st["champion"]
    if out.get("missing"):
        info["failed"] = out.get("why", "")
        ship(st, champion)
        return
    challenger = info["challenger"]
    info["taken"] = list(out.get("taken", []))
    if not info["taken"]:
        # nothing of the runner-up's was worth taking: the challenger is the winner's own text
        ship(st, champion)
        return
    st["sol"][challenger] = out["sol"]
    number = len(st["rounds"]) + 1
    # the challenger must beat the winner: a tie on every criterion (an equivalent verdict
    # among them) keeps the winner, so this match's coin is no draw
    m = {"id": match_id(number, 1, 1), "a": champion, "b": challenger, "coin": champion}
    rnd = {"n": number, "matches": [m], "bye": None, "merge": True}
    st["rounds"].append(rnd)
    info["match"] = m["id"]
    for job in competitor_jobs(m["id"], champion, challenger):
        add_job(st, job)
    for k in range(1, first_looks(st, rnd) + 1):
        add_job(st, judge_id(m["id"], k))


def card_of(st, agent):
    """An agent's card; the challenger plays with the runner-up's."""
    if agent in st["cards"]:
        return st["cards"][agent]
    return st["cards"][st["merged"]["other"]]


def model_of(st, agent):
    """The model an agent's jobs run on: its card's fourth part in a mixed field, else the
    run's --model (None: the session's own)."""
    card = card_of(st, agent)
    if st["models"] and len(card) > len(PARTS):
        return st["models"][card[len(PARTS)]][0]
    return st["model"]


def model_table(st):
    """[(model, agents, alive, won, lost, won against another model, lost against one)] of a
    mixed field, in --models order; the checked merge's match counts for the models that
    played it (the challenger plays on the runner-up's). [] when the field has one model."""
    if not st["models"]:
        return []
    rows = {name: [0, 0, 0, 0, 0, 0] for name, _ in st["models"]}
    alive = set(alive_agents(st))
    for agent in st["cards"]:
        rows[model_of(st, agent)][0] += 1
        rows[model_of(st, agent)][1] += agent in alive
    for res in st["results"].values():
        won, lost = model_of(st, res["w"]), model_of(st, res["l"])
        rows[won][2] += 1
        rows[lost][3] += 1
        if won != lost:
            rows[won][4] += 1
            rows[lost][5] += 1
    return [(name,) + tuple(rows[name]) for name, _ in st["models"]]


def job_model(st, job):
    """The model a job's Agent call names (None: the session's): judges, probes and the
    baseline check take --judge-model; the merge runs on the winner's model, every other
    job on its competitor's."""
    runs_on = KIND[job_kind(job)].runs_on
    if runs_on == "judges":
        return st["judge_model"]
    if runs_on == "winner":
        return model_of(st, st["merged"]["base"])
    return model_of(st, agent_of(job))


def bracket_rounds(st):
    """The rounds of the bracket, without the checked merge's match."""
    return [r for r in st["rounds"] if not r.get("merge")]


def finished(st):
    return st["champion"] is not None and not any(info["s"] in OPEN for info in st["jobs"].values())


def path_of(st, agent):
    """The bracket matches an agent played, in order, with their results (the merge's aside)."""
    games = []
    for rnd in bracket_rounds(st):
        for m in rnd["matches"]:
            if agent in (m["a"], m["b"]):
                games.append((m, st["results"].get(m["id"])))
    return games


def fixes_of(st, m, agent):
    """(attacks on its own solution it conceded and fixed, attacks on the opponent's it says it
    fixed in its own too): the numbers in each list, for winner and the report."""
    done = st["summ"].get(defence_id(m["id"], agent), {})
    return [k for k, c in enumerate(done.get("ans", ""), 1) if c == "C"], list(done.get("also", []))


# What a job's arrival does beyond recording its summary, by the name jobs.KIND gives it.
ARRIVALS = {"spawn_in": spawn_in, "defence_in": defence_in, "judge_arrived": judge_arrived, "final_in": final_in,
            "probed": probed, "merged": merged}
