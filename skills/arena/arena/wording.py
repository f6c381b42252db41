"""What the engine says about a run, in English: the sentences `winner`, `status`, `next`
and the report share.

Each function turns part of the state into a phrase: how a match's looks voted, which
attacks each side fixed, why two agents met, how a reproducer fared, what happens after a
refused output, the baseline check's verdict, the progress line. One place for the words,
so the command line and the report say the same thing and tests have one text to match.
It reads the state and never changes it.
"""

from . import budget
from .base import plural, run_scorers
from .bench import behind, best_first, fmt_score
from .jobs import KIND, KINDS_IN_ORDER, READY, agent_of, job_kind, status
from .sandbox import confinement_line, limits_text
from .schedule import progress
from .judging import decide, is_equal_vote, is_equivalent
from .state import carried_reproducers, entered, field_look_for, field_look_size, fixes_of, looks_of, model_table, opponent, reproductions


def points(total, looks):
    """A total on the rubric's scale: several looks are averaged for display."""
    value = total / float(looks or 1)
    return "%d" % value if value == int(value) else "%.1f" % value


def ordinal(k):
    tail = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return "%d%s" % (k, tail)


def look_findings(st, m):
    """What each look at a match found, in order: (side it favoured, or None for an equal vote;
    margin; rule; 'equivalent', 'equal' or None). A look is an equal vote when it found no
    decided difference or its totals were within the run's equal margin (judging.is_equal_vote);
    in a run from before equal votes, when its totals were the same."""
    out = []
    margin_of_run = st.get("equal_margin")
    for v in looks_of(st, m["id"]):
        pick, rule = decide(v, m, len(v["sc"][m["a"]]))
        other = opponent(m, pick)
        margin = sum(v["sc"][pick]) - sum(v["sc"][other])
        if margin_of_run is not None and is_equal_vote(v, m, margin_of_run):
            kind = "equivalent" if is_equivalent(v, m) else "equal"
        else:
            kind = "equal" if rule not in ("total", "fatal") else None
        out.append((None if kind else pick, margin, rule, kind, pick))
    return out


def finding_text(m, finding):
    pick, margin, rule, kind, leaning = finding
    if kind == "equivalent":
        return "equivalent"
    if kind == "equal":
        return "equal" if not margin else "equal (%s by %d)" % (leaning, margin)
    if rule == "fatal":
        return "%s (FATAL on %s)" % (pick, opponent(m, pick))
    return "%s by %d" % (pick, margin)


def fatal_note(loser):
    """What a match decided by the FATAL rule says of its loser (winner and the report)."""
    return "%s had a verified FATAL flaw" % loser


def looks_text(st, m, res):
    """How a judged match's looks went, in words: what each look found, or that the first found
    the two equivalent ('' for a single look with a difference; its margin says it)."""
    n = res.get("n", 1)
    if res.get("how") != "judge":
        return ""
    if n == 1:
        return "equivalent (look 1)" if res.get("eq") else ""
    found = ", ".join(finding_text(m, f) for f in look_findings(st, m))
    # a match that ended on equal votes is a tie: the summed scores and the tie rules decide it
    how = "a tie, decided by the summed scores" if res.get("tie") else "scores summed"
    return "%d looks: %s; %s" % (n, found, how)


def looks_short(st, m, res):
    """The same in a few characters, for the report's bracket table: '3 looks, 2-1', '2 looks, 1-0, 1 equal'."""
    n = res.get("n", 1)
    if res.get("eq") and n == 1:
        return "equivalent"
    if n < 2:
        return ""
    found = look_findings(st, m)
    won = sum(1 for f in found if f[0] == res["w"])
    lost = sum(1 for f in found if f[0] == res["l"])
    equal = n - won - lost
    return "%d looks, %d-%d%s" % (n, won, lost, ", %d equal" % equal if equal else "")


def fixes_text(st, m, agent):
    own, also = fixes_of(st, m, agent)
    numbers = lambda xs: ", ".join(str(x) for x in xs)
    parts = []
    if own:
        parts.append("attack%s %s of those on it" % ("s" if len(own) > 1 else "", numbers(own)))
    if also:
        parts.append("attack%s %s of those on %s, %s it shared" % (
            "s" if len(also) > 1 else "", numbers(also), opponent(m, agent), "flaws" if len(also) > 1 else "a flaw"))
    return "%s fixed %s" % (agent, "; ".join(parts) if parts else "nothing")


def pairing_text(rnd, m):
    """Why two agents met: their places in the rating the round was paired by ('' if drawn)."""
    rated = rnd.get("rated")
    if not rated or len(rated) < 3:  # two agents left: nothing to choose
        return ""
    place = {row[0]: (k, row[1], row[2]) for k, row in enumerate(rated, 1)}
    if m["a"] not in place or m["b"] not in place:
        return ""

    def side(agent):
        k, pts, looks = place[agent]
        return "%s %s of %d (%s)" % (agent, ordinal(k), len(rated),
                                     "average " + points(pts, looks) if looks else "no looks yet, placed mid-field")
    return "paired strongest-with-weakest by average score so far: %s vs %s" % (side(m["a"]), side(m["b"]))


REPRODUCED_SAID = {"yes": "reproduced by the judge", "fixed": "reproduced on the old code only",
                   "no": "did not reproduce", "not run": "not re-run by the judge"}


def reproducer_note(st, mid, side, number):
    """How a reproducer of attack number on side fared with the judges, or "" when it had none."""
    if str(number) not in carried_reproducers(st, mid, side):
        return ""
    said = reproductions(st, mid, side).get(str(number))
    if not said:
        return "reproducer: not checked by a judge"
    return "reproducer: " + " / ".join(REPRODUCED_SAID.get(r, r) for r in said.split(" / "))


def match_bench_lines(st, mid, sides):
    """The bench in a match as its last look that ran it saw it: per entry, each side's result
    (cases passed of cases, a score, or error) and whom it decided for; [] when no look ran it.
    What each entry checks is in the report's bench table (it would repeat under every match).
    Every look at the same solutions sees the same figures (results are kept by solution)."""
    seen = next((v for v in reversed(looks_of(st, mid)) if v.get("bn")), None)
    if not seen:
        return []
    entries = {e["id"]: e for e in st.get("bench", [])}
    lines = []
    for eid in sorted(seen["bn"]):
        row, won = seen["bn"][eid], seen.get("bd", {}).get(eid)
        figures = ", ".join("%s %s" % (s, fmt_figure(row.get(s))) for s in sides)
        entry = entries.get(eid, {})
        title = "%s %s" % (eid, entry.get("kind", "entry")) + (
            " (%s is better)" % entry["better"] if entry.get("better") else "")
        lines.append("bench %s: %s%s" % (title, figures, "; decided for %s" % won if won else ""))
    return lines


SHOWN_SURVIVORS = 12


def survivor_bench_lines(st, limit=SHOWN_SURVIVORS):
    """Per round the engine measured (bench.measured_event): its survivors' bench scores, best
    first (comparable across matches: every survivor ran the same entries), and whether the
    bench's tests found them alike; up to `limit` agents a line (None: all)."""
    scorers = run_scorers(st)
    lines = []
    for rnd in st["rounds"]:
        found = rnd.get("bench")
        if not found:
            continue
        res = found["res"]
        head = "bench after round %d, run by the engine on its %d survivors:" % (rnd["n"], len(res))
        ran = [e for e in scorers if any(e["id"] in row for row in res.values())]
        if ran:
            order = best_first(st, res)
            shown = order if limit is None else order[:limit]
            more = " and %d more" % (len(order) - len(shown)) if len(order) > len(shown) else ""
            if len(ran) == 1:
                figures = ", ".join("%s %s" % (a, fmt_figure(res[a].get(ran[0]["id"]))) for a in shown)
                head += " scorer %s (%s is better) %s%s;" % (ran[0]["id"], ran[0]["better"], figures, more)
            else:
                shares = behind(st, res)
                figures = ", ".join("%s %s" % (a, "%.2f%%" % (100 * shares[a]) if a in shares else "not scored")
                                    for a in shown)
                head += " scorers %s, each survivor's distance behind the best on each, averaged: %s%s;" % (
                    ", ".join(e["id"] for e in ran), figures, more)
        lines.append(head + " " + grouped_text(found, None if limit is None else max(1, limit // 2)))
    return lines


def grouped_text(found, limit=None):
    """What the bench's tests said of a round's survivors, and what that held back; up to
    `limit` groups and names a group (None: all)."""
    if not found["tests"]:
        text = "no test a look has upheld to group them by"
    elif len(found["groups"]) == 1:
        text = "its tests (%s) found them alike" % ", ".join(found["tests"])
    else:
        groups = found["groups"] if limit is None else found["groups"][:limit]
        names = lambda g: " ".join(g if limit is None else g[:limit]) + (
            " and %d more" % (len(g) - limit) if limit is not None and len(g) > limit else "")
        more = " | %d more groups" % (len(found["groups"]) - len(groups)) if len(found["groups"]) > len(groups) else ""
        text = "its tests split them into %d groups by %s: %s%s" % (
            len(found["groups"]), ", ".join(found["split"]), " | ".join(names(g) for g in groups), more)
    held = {"offer": "; so no settle offer, though the judges found the round's matches equal",
            "probe": "; so no settle probe, though the judges found half or more of the round's matches equal"}
    return text + held.get(found.get("held"), "")


def fmt_figure(x):
    return "not run" if x is None else fmt_score(x) if isinstance(x, (int, float)) else str(x)


def after_refusal(st, job):
    """What really happens after a refused output: another try, or the job's fallback (jobs.KIND)."""
    if status(st, job) == READY:
        return "will be re-issued"
    kind = job_kind(job)
    if kind == "spawn" and st["agents"] == 1:
        return "no more tries, the run has no solution"
    return "no more tries, " + KIND[kind].given_up.format(agent=agent_of(job) if kind == "spawn" else "")


def code_line(run_code, run_name):
    if run_code:
        return ("running code: ON (--run-code): sub-agents may run Python scripts they write in "
                ".arena/%s/work/<job>/, through bracket.py exec; that is model-written code, run as you on this "
                "machine within the limits and the confinement below" % run_name)
    return "running code: off: sub-agents read and reason about code and run nothing (--run-code lets them test it)"


def code_lines(run_code, run_name, env=()):
    """code_line, and with --run-code what a script gets: its environment, its limits, its sandbox."""
    lines = [code_line(run_code, run_name)]
    if run_code:
        lines.append("  environment: PATH and the locale; HOME and the temp folder inside the work folder; %s"
                     % ("also, from yours: " + ", ".join(env) if env else
                        "nothing else of yours (no keys or tokens; --run-code-env NAME,... passes one on)"))
        lines.append("  limits per script: %s" % limits_text())
        lines.append("  " + confinement_line())
    return lines


def baseline_verdict(f):
    """(arena total, old total, verdict, how it went: better, worse or tie) of a baseline check's verdict."""
    w, b = sum(f["sc"]["winner"]), sum(f["sc"]["baseline"])
    fw, fb = f["fat"]["winner"], f["fat"]["baseline"]
    if fw != fb:
        verdict = ("the old answer is better: the new one has a verified FATAL flaw" if fw else
                   "the arena answer is better: the old one has a verified FATAL flaw")
        return w, b, verdict, "worse" if fw else "better"
    verdict = "the arena answer scored higher" if w > b else "the OLD answer scored higher" if b > w else "a tie"
    return w, b, verdict, "better" if w > b else "worse" if b > w else "tie"


def tokens(x):
    """1.2M, 35k, 900: a token count as people say it."""
    return "%.1fM" % (x / 1e6) if x >= 1e6 else "%dk" % round(x / 1e3) if x >= 1e3 else "%d" % x


SPEND_NAMES = dict({k.name: k.title for k in KINDS_IN_ORDER}, lane="lanes", conductor="conductor")


def spend_lines(st):
    """What the run spent, per phase: calls, tokens (from usage reports or estimated, saying
    which), sub-agent minutes; then the caps, and what the budget left out."""
    calls, sec, tok, rep = budget.spend_of(st)
    told = ("all %d from Claude Code's usage reports" % calls if rep == calls and calls else
            "%d of %d calls from Claude Code's usage reports, the rest estimated" % (rep, calls) if rep else
            "estimated: no usage reports were passed on")
    orchestration = sum(st["spend"].get(k, {}).get("calls", 0) for k in budget.ORCHESTRATION)
    lines = ["spent: %s%s, about %s tokens (%s), %s of sub-agent time" % (
        plural(calls, "sub-agent call"), " (and %d to run them: lanes, conductors)" % orchestration if orchestration
        else "", tokens(tok), told, minutes(sec))]
    for kind in budget.SPEND_KINDS:
        row = st["spend"].get(kind)
        if not row or not row["calls"]:
            continue
        detail = "%s, about %s tokens" % (plural(row["calls"], "call"), tokens(row["tok"])) \
            if kind not in budget.ORCHESTRATION else plural(row["calls"], "call")
        if row["sec"]:
            detail += ", %s" % minutes(row["sec"])
        if row["rep"]:
            detail += ", %d reported (%d tool uses)" % (row["rep"], row["tools"])
        lines.append("  %s: %s" % (SPEND_NAMES.get(kind, kind), detail))
    lines += budget_lines(st)
    return lines


def budget_lines(st):
    """The caps, what is left of them, and what they made the run leave out."""
    lines = []
    floor = budget.floor_calls(st)
    if st.get("max_calls") is not None:
        lines.append("budget: at most %d calls (--max-calls): %d spent, %d still needed at the least, %d free for "
                     "optional work" % (st["max_calls"], budget.spent_calls(st), floor,
                                        max(0, st["max_calls"] - budget.spent_calls(st) - floor)))
    if st.get("max_tokens") is not None:
        need = budget.floor_tokens(st)
        lines.append("budget: at most %s tokens (--max-tokens, kept by the estimate): about %s spent, %s still "
                     "needed at the least" % (tokens(st["max_tokens"]), tokens(budget.spent_tokens(st)), tokens(need)))
    if st["cuts"]:
        lines.append("optional work left out: %s" % plural(len(st["cuts"]), "item"))
        lines += ["  " + c for c in st["cuts"][-10:]]
    return lines


def merge_lines(st):
    """What the checked merge did: what it took from whom, and which text ships (the match itself
    is shown like the champion's others)."""
    info = st["merged"]
    if not info:
        return []
    champ, other = info["base"], info["other"]
    if info.get("failed") is not None:
        return ["checked merge: the merge job failed (%s); %s's text ships" % (info["failed"][:100], champ)]
    if "taken" in info and not info["taken"]:
        return ["checked merge: nothing of %s's (the runner-up) was worth taking into %s's solution; %s's text "
                "ships" % (other, champ, champ)]
    lines = ["checked merge: a challenger (%s) built on %s's solution took %s from %s, the runner-up%s" % (
        info["challenger"], champ, plural(len(info.get("taken", [])), "part"), other,
        ":" if info.get("taken") else "")]
    lines += ["  TAKEN %d: %s" % (k, what) for k, what in enumerate(info.get("taken", []), 1)]
    res = st["results"].get(info.get("match"))
    if res and res["w"] == info["challenger"]:
        lines.append("  the challenger won the match against %s: its text ships" % champ)
    elif res and res.get("rule") in ("equivalent", "equal", "coin"):
        lines.append("  the match against %s was %s, which keeps the winner: %s's own revised text ships"
                     % (champ, {"equivalent": "judged equivalent", "equal": "a tie on equal looks"}.get(
                         res["rule"], "a tie"), champ))
    elif res:
        lines.append("  the challenger lost the match against %s: %s's own revised text ships" % (champ, champ))
    else:
        lines.append("  its match against %s is not decided yet" % champ)
    return lines


def unplayed_lines(st):
    """What the run did not play, and why: the early look at the field, a settled finish (winner and the report)."""
    lines = [early_look_text(st)]
    if st["settle"] and st["settle"]["choice"] == "finish":
        lines.append("finished early after round %d: %s; the leader by average score so far stands"
                     % (st["settle"]["round"], st["settle"]["why"]))
    return [line for line in lines if line]


def early_look_text(st):
    """What the early look at the field found and what came of it, for winner and the report ('' if none)."""
    info = st.get("field")
    if not info or info["choice"] is None:
        return ""
    if info["choice"] == "finish":
        return "spawning stopped after the first %d solutions: %s; %d agents withdrawn, the bracket played among " \
            "the %d written" % (info["at"], info["why"], len(info["withdrawn"]), entered(st))
    then = "settle continue: the whole field was written" if info["choice"] == "continue" else \
        "the whole field was written"
    return "early look at the first %d solutions: %s; %s" % (info["at"], info["why"], then)


def field_look_line(n, wave, settle, run_code):
    """When the early look at the field comes, for plan (state.field_look_for decides it)."""
    k = field_look_size(wave)
    if field_look_for(n, wave, settle) is None:
        why = "--settle never" if settle == "never" else "it needs at least %d agents, twice the %d first solutions " \
            "it waits for" % (2 * k, k)
        return "early look at the field: none; %s" % why
    evidence = "a probe runs them and groups them by what the task decides; if one group holds most of them" if \
        run_code else "their round-1 matches are judged; if two thirds of those end equal"
    then = "stops spawning there and plays" if settle == "auto" else "asks whether to stop spawning there and play"
    return "early look at the field: after the first %d solutions (the other %d wait), %s, next %s the bracket " \
        "among those written" % (k, n - k, evidence, then)


def mix_text(models):
    """--models as typed back: opus:2,sonnet:1 (a share of 1 is left out)."""
    return ",".join(name if share == 1 else "%s:%d" % (name, share) for name, share in models)


def judges_on(judge_model):
    return "judges on %s" % (judge_model or "the session's model")


def field_text(models, counts):
    """opus 5, sonnet 3: how many competitors each model of a mixed field has."""
    return ", ".join("%s %d" % (name, k) for (name, _), k in zip(models, counts))


def model_lines(st):
    """Who plays on which model, for status and winner: the field by model with how many are
    still in, and each model's matches won and lost (against another model in brackets)."""
    if not st["models"]:
        if st["model"] or st["judge_model"]:
            return ["models: competitors on %s; %s" % (st["model"] or "the session's model",
                                                       judges_on(st["judge_model"]))]
        return []
    lines = ["models: a mixed field (--models %s); %s, who never learn which model wrote what"
             % (mix_text(st["models"]), judges_on(st["judge_model"]))]
    for name, agents, alive, won, lost, won_x, lost_x in model_table(st):
        lines.append("  %s: %s, %d still in; matches won %d, lost %d (against another model: won %d, lost %d)"
                     % (name, plural(agents, "agent"), alive, won, lost, won_x, lost_x))
    return lines


def minutes(seconds):
    if seconds is None:
        return "-"
    seconds = int(seconds)
    return "%dm%02ds" % (seconds // 60, seconds % 60) if seconds >= 60 else "%ds" % seconds


def progress_line(st, p=None):
    p = p or progress(st)
    text = "arena %s: round %d/%d %s, %d/%d jobs" % (st["run"], p["round"], p["rounds"], p["phase"], p["done"], p["total"])
    if p.get("lanes"):
        text += ", %d running" % p["running"]
    else:
        text += ", wave %d/%d" % (p["wave"], p["waves"])
    if p["elapsed"] is not None:
        text += ", %s elapsed" % minutes(p["elapsed"])
    if p["eta"] is not None and p["phase"] != "finished":
        text += ", ETA %s" % minutes(p["eta"])
    if p["retrying"]:
        text += ", %d to retry" % p["retrying"]
    if p.get("spent"):
        cap = "/%d" % st["max_calls"] if st.get("max_calls") is not None else ""
        text += ", spent %d%s calls, ~%s tokens" % (p["spent"], cap, tokens(p["tokens"]))
    return text


# ---------------------------------------------------------------- what next and lane print

def call_template(run, model):
    extra = ', model "%s"' % model if model else ""
    return 'run_in_background false%s, description "<id>", prompt "Read %s/b/<id>.md and follow it."' % (
        extra, run.dir)


def cost_text(cost):
    calls, tok, seconds = cost
    return "%s, %s tokens and %s of sub-agent time" % (plural(calls, "sub-agent call"), tokens(tok), minutes(seconds))


def lane_text(act):
    """The few lines a lane reads."""
    out = [act["line"]]
    for note in act.get("changed", [])[:10]:
        out.append("changed, " + note[:300])
    for note in act["notes"][:10]:
        out.append("invalid, " + note[:200])
    a = act["action"]
    if a == "job":
        c = act["call"]
        model = ', model "%s"' % c["model"] if c.get("model") else ""
        out.append("Lane %s: make this one Agent call, then run the same lane command again:" % act["lane"])
        out.append('run_in_background false%s, description "%s", prompt "%s"' % (model, c["description"], c["prompt"]))
    elif a == "again":
        why = "; the engine measures the survivors on the bench" if act.get("measure") else ""
        out.append("Lane %s: nothing ready yet (%d running%s); run the same lane command again." % (
            act["lane"], act["running"], why))
    else:
        # the reply lands in the main session ten times over: a short line (next prints the progress)
        out.append("LANE OVER. Reply with exactly this line and stop: lane %s over" % act["lane"])
    return "\n".join(out)


def next_text(act, run):
    """The few lines the orchestrator reads."""
    out = [act["line"]]
    for note in act.get("changed", [])[:10]:
        out.append("changed, " + note[:300])
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
    elif a == "measure":
        out.append("Measuring: the engine runs the bench on the %d survivors of round %d before it closes (%d run%s "
                   "left, no Agent call); run next again." % (act["survivors"], act["round"], act["left"],
                                                              "" if act["left"] == 1 else "s"))
    elif a == "settle":
        s = act["settle"]
        if s.get("field"):
            out.append("The field looks settled before it is written: %s." % s["why"])
            out.append("Writing the other %d solutions and playing their matches would still cost about %s. Finishing "
                       "now stops spawning: the bracket is played among the %d agents whose solutions are written "
                       "or being written." % (s["held"], cost_text(s["cost"]), s["written"]))
        else:
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
