"""Writing what each sub-agent reads: its brief, and a judge's blinded copies of the inputs.

Briefs are the templates in briefs/ filled in one pass; the task is fenced by the run's
marker; judges get copies stripped of agent ids, job headers and the fence, which later
tell whether a solution file still reads as what was judged. Functions take the command's
Context (context.py). This module writes only under the run folder and never changes the
state.
"""

import json
import os
import re

from .base import ArenaError, BRACKET, DEFAULT_LANE_WAIT, SKILL_DIR, MAX_ATTACKS, read_text
from .cards import card_parts
from .jobs import (FINAL, KIND, MAX_SOLUTION_BYTES, agent_of, attack_id, probe_id, defence_id, is_done, job_kind, judge_copy,
                   judge_folder, match_of, outputs_of)
from .state import card_of, find_match, judges_of, judge_sides, opponent, path_of
from .storage import atomic_write
from .outputs import BadOutput, HEADER, read_output
from .bench import MOST_ENTRIES, MOST_SCORERS, SCORE_MARGIN, SCORER_SECONDS, TEST_SECONDS
from .sandbox import confinement, limits_text
from .workspace import EXEC_MAX_SECONDS, EXEC_SECONDS, PHASE_MINUTES, point_reproducers, work_folder


def load_template(kind):
    return read_text(os.path.join(SKILL_DIR, "briefs", kind + ".md"))


def card_text(st, agent, cards):
    return "\n".join("- %s (%s): %s" % part for part in card_parts(cards, card_of(st, agent)))


def fenced(st, task):
    return "%s\n%s%s%s" % (st["fence"], task, "" if task.endswith("\n") else "\n", st["fence"])


def fill(template, values):
    """Replace {{name}} in one pass, so text put in is never scanned again."""
    return re.sub(r"\{\{(\w+)\}\}", lambda m: values.get(m.group(1), m.group(0)), template)


# Job and match ids anywhere in a text (they hold agent ids and name the match), and
# agent ids glued to any character: agent_a001 and a001_v2 name a001 as plainly as a001 does.
JOB_TEXT = re.compile(r"spawn-a\d+|r\d+-m\d+(?:-(?:atk|def|sol)-a\d+|-judge\d*)?")


def scrub_ids(text, st, agents, labels):
    """Replace the run's agent ids by the judge's labels (others by a neutral word) and drop job ids."""
    named = dict(zip(agents, labels))
    text = JOB_TEXT.sub("(id removed)", text)
    width = max(3, len(str(st["agents"])))
    ids = re.compile(r"a\d{%d}" % width)
    return ids.sub(lambda m: named.get(m.group(0), "another agent" if m.group(0) in st["cards"] else m.group(0)),
                   text)


def blinded(ctx, src, agents, labels, empty=None):
    """A file as a judge gets it: without its job header, the agents' ids or the run's fence.

    src None (or an output refused on every try) gives the empty sentence instead."""
    st = ctx.st
    try:
        text = read_output(ctx.run.path(src), MAX_SOLUTION_BYTES) if src else None
    except BadOutput:
        text = None
    if text is None:
        text = empty or "(nothing was received for this part)\n"
    text = HEADER.sub("", text, count=1)
    # a copied fence line could pass data off as the end of the task
    text = text.replace(st["fence"], "(fence line removed)")
    return scrub_ids(text, st, agents, labels)


def blind_copy(ctx, src, dst, agents, labels, empty=None):
    atomic_write(ctx.run.path(dst), blinded(ctx, src, agents, labels, empty), durable=False)


def last_judged_copy(ctx, agent):
    """(path, same) of the judges' last copy of agent's solution: the baseline check's copy
    if it has run, else that of the last look at agent's last match; same is False when the
    solution file no longer reads as that copy (it changed after the judges read it).
    None when no judge has read it."""
    run, st = ctx.run, ctx.st
    if agent == (st["ship"] or st["champion"]) and is_done(st, FINAL):  # the check reads the text that ships
        job, agents = FINAL, [agent]
    else:
        played = [m for r in st["rounds"] for m in r["matches"] if agent in (m["a"], m["b"])]
        if not played:
            return None
        m = played[-1]
        looks = [j for j in judges_of(st, m["id"]) if is_done(st, j)]
        if not looks:
            return None
        job, agents = looks[-1], [agent, opponent(m, agent)]
    tail = judge_copy(job, "", "solution")[len(judge_folder(job)) + 1:]
    try:
        copies = sorted(f for f in os.listdir(run.path(judge_folder(job))) if f.endswith(tail))
    except OSError:
        return None
    if not copies:
        return None
    labels = [f[:-len(tail)] for f in copies]
    for label in labels:
        path = judge_copy(job, label, "solution")
        others = [x for x in labels if x != label][:len(agents) - 1]
        try:
            judged = read_text(run.path(path), exact=True)
        except ArenaError:  # an unreadable copy is one that does not match
            continue
        if judged == blinded(ctx, st["sol"].get(agent), agents[:1 + len(others)], [label] + others):
            return path, True
    # no copy reads as the file now: name the champion's side of the last look when known
    names = {side: label for label, side in st["summ"].get(job, {}).get("names", {}).items()}
    side = "winner" if job == FINAL else agent
    label = names.get(side) if names.get(side) in labels else labels[0]
    return judge_copy(job, label, "solution"), False


NO_ATTACKS = "(no attacks: the attack file was refused on every try, so it counts as none)\n"
NO_DEFENCE = "(no defence: it was refused on every try, so the solution before it stands)\n"


def fell_back(st, job):
    """The job ended in its fallback: its file, if any is left, must not be shown to anyone."""
    return bool(st["summ"].get(job, {}).get("missing"))


def attack_list(st, job, rel, whose):
    """How a defence brief names one side's attack file: its path, or why there is none."""
    if fell_back(st, job):
        return "none: the attack file on %s was refused on every try, so it counts as no attacks" % whose
    if not st["summ"].get(job, {}).get("labels"):
        return "none: no attacks were raised on %s" % whose
    return "`%s`" % rel(outputs_of(job)[0])


def make_room(run, rel, folder=False):
    """Move aside whatever a sub-agent left where the engine writes (a folder where a brief goes,
    a file where a judge's folder goes), so no planted path can stop the run."""
    path = run.path(rel)
    fits = os.path.isdir(path) if folder else os.path.isfile(path)
    if os.path.lexists(path) and (os.path.islink(path) or not fits):
        run.set_aside(rel, 0, tag="in-the-way")


def write_brief(ctx, job, attempt):
    """Write b/<job>.md (and a judge's blinded inputs) for one try of a job: the template its
    kind names (jobs.KIND), filled with the values every brief has and those of its kind."""
    run, st = ctx.run, ctx.st
    kind = KIND[job_kind(job)]
    outs = outputs_of(job)
    for p in outs:
        # a link left by a failed try would make the next agent write through it, outside .arena/
        if os.path.islink(run.path(p)):
            os.unlink(run.path(p))
    values = {"job": job, "task": fenced(st, ctx.task), "fence": st["fence"], "output": rel_to(run, outs[0]),
              "receipt": "done " + job, "max_attacks": str(MAX_ATTACKS), "reproducers": ""}
    values.update(workspace_values(ctx, job))
    values["check"] = fill(load_template("part-check"), values).rstrip("\n")
    if len(outs) > 1:
        values["solution_output"] = rel_to(run, outs[1])
    values.update(BRIEF_VALUES[kind.brief](ctx, job, attempt, values))
    make_room(run, os.path.join("b", job + ".md"))
    atomic_write(run.path("b", job + ".md"), fill(load_template(kind.template), values), durable=False)


def rel_to(run, path):
    """A run-relative path as the project sees it (.arena/<run>/...), the form briefs name."""
    return os.path.join(run.dir, path)


def competitor_values(ctx, job, attempt, values):
    """A competitor's brief: its card."""
    return {"card": card_text(ctx.st, agent_of(job), ctx.cards)}


def attack_values(ctx, job, attempt, values):
    """An attack's brief: its card, its own solution and the one it attacks."""
    st, who = ctx.st, agent_of(job)
    m = find_match(st, match_of(job))
    return dict(competitor_values(ctx, job, attempt, values), own_solution=rel_to(ctx.run, st["sol"][who]),
                target=rel_to(ctx.run, st["sol"][opponent(m, who)]))


def defence_values(ctx, job, attempt, values):
    """A defence's brief: its card, its solution, the attacks on it and those it raised."""
    st, who, mid = ctx.st, agent_of(job), match_of(job)
    m = find_match(st, mid)
    rel = lambda p: rel_to(ctx.run, p)
    return dict(competitor_values(ctx, job, attempt, values), own_solution=rel(st["sol"][who]),
                attacks=attack_list(st, attack_id(mid, opponent(m, who)), rel, "your solution"),
                opponent_attacks=attack_list(st, attack_id(mid, who), rel, "your opponent's solution"))


def judging_values(ctx, job, attempt, values):
    """A judge's brief (a match's look, or the baseline check): its blinded inputs under labels,
    the rubric and an example verdict."""
    run, st = ctx.run, ctx.st
    rel = lambda p: rel_to(run, p)
    sides, names = judge_sides(st, job, attempt)
    folder = judge_folder(job)
    make_room(run, folder, folder=True)
    os.makedirs(run.path(folder), exist_ok=True)
    inputs = []
    out = {}
    if job != FINAL:
        mid = match_of(job)
        m = find_match(st, mid)
        agents = [m["a"], m["b"]]
        labels = [names[sides.index(a)] for a in agents]
        for agent, label in zip(sides, names):
            atk, dfc = attack_id(mid, opponent(m, agent)), defence_id(mid, agent)
            parts = [("revised solution", st["sol"].get(agent), "solution", None),
                     ("attacks against it", None if fell_back(st, atk) else outputs_of(atk)[0], "attacks",
                      NO_ATTACKS),
                     ("its defence", None if fell_back(st, dfc) else outputs_of(dfc)[0], "defence", NO_DEFENCE)]
            inputs.append("- %s" % label)
            for what, src, tag, empty in parts:
                dst = judge_copy(job, label, tag)
                make_room(run, dst)
                blind_copy(ctx, src, dst, agents, labels, empty)
                inputs.append("  - %s: %s" % (what, rel(dst)))
        out["reproducers"], reproduced = reproducer_section(ctx, job, m, sides, names, agents, labels, values)
    else:
        reproduced = None
        shipped = st["ship"] or st["champion"]  # the text that ships: the champion's, or a merge that beat it
        for side, label in zip(sides, names):
            src = st["sol"][shipped] if side == "winner" else "baseline.md"
            dst = judge_copy(job, label, "solution")
            make_room(run, dst)
            blind_copy(ctx, src, dst, [shipped], [label])
            inputs.append("- %s: %s" % (label, rel(dst)))
    out.update({"label_a": names[0], "label_b": names[1], "inputs": "\n".join(inputs),
                "rubric": "\n".join("- %s (%d): %s" % r for r in ctx.rubric),
                "criteria": ", ".join(c for c, _, _ in ctx.rubric),
                "example": verdict_example(job, names, ctx.rubric, job != FINAL, reproduced)})
    return out


def blind_solutions(ctx, job, sides, names):
    """Each side's latest solution copied, blinded, into the job's folder under its label; the
    copies' paths, in the order of sides."""
    make_room(ctx.run, judge_folder(job), folder=True)
    os.makedirs(ctx.run.path(judge_folder(job)), exist_ok=True)
    copies = []
    for agent, label in zip(sides, names):
        dst = judge_copy(job, label, "solution")
        make_room(ctx.run, dst)
        blind_copy(ctx, ctx.st["sol"].get(agent), dst, sides, names)
        copies.append(dst)
    return copies


def probe_values(ctx, job, attempt, values):
    """A probe's inputs: every survivor's latest solution, blinded, under its label."""
    rel = lambda p: rel_to(ctx.run, p)
    sides, names = judge_sides(ctx.st, job, attempt)
    copies = blind_solutions(ctx, job, sides, names)
    inputs = ["- %s: %s" % (label, rel(dst)) for label, dst in zip(names, copies)]
    half = max(1, len(names) // 2)
    example = {"job": job, "groups": [names[:half], names[half:]] if len(names) > 1 else [names], "inputs": 420,
               "decided": ["the empty input: the task says it gives 0; %s raise ValueError"
                           % ", ".join(names[half:] or names)],
               "open": ["a space after the prefix, which the task does not mention: some accept it, some refuse it"],
               "reason": "%s and %s differ on the empty input; the rest give the same results for all 420."
                         % (names[0], names[-1])}
    if job == probe_id(0):
        why = ("They are the first solutions written; the run will decide from your grouping whether the rest of "
               "the field is worth writing.")
    else:
        why = "The judges who compared them found most pairs equivalent."
    return {"inputs": "\n".join(inputs), "count": str(len(names)), "labels": ", ".join(names),
            "example": json.dumps(example), "why": why}


# How the merge's brief names the two finalists: the bracket's winner is the base.
MERGE_LABELS = ("Base", "Other")


def merge_values(ctx, job, attempt, values):
    """The merge's inputs: both finalists' latest solutions and, match by match, the attacks on
    each and its answers, blinded (the two are Base and Other, anyone else another agent)."""
    st = ctx.st
    rel = lambda p: rel_to(ctx.run, p)
    sides = [st["merged"]["base"], st["merged"]["other"]]
    copies = blind_solutions(ctx, job, sides, list(MERGE_LABELS))
    inputs = []
    for agent, label, dst in zip(sides, MERGE_LABELS, copies):
        inputs.append("- the %s solution (%s): %s" % ("base" if label == "Base" else "other", label, rel(dst)))
        for m, res in path_of(st, agent):
            if not res or res["how"] == "forfeit":
                continue
            rnd = m["id"].split("-")[0]
            atk, dfc = attack_id(m["id"], opponent(m, agent)), defence_id(m["id"], agent)
            for src, part, what in ((outputs_of(atk)[0], "%s-attacks" % rnd, "attacks on it"),
                                    (outputs_of(dfc)[0], "%s-answers" % rnd, "its answers")):
                if fell_back(st, atk if part.endswith("attacks") else dfc):
                    continue
                dst = judge_copy(job, label, part)
                make_room(ctx.run, dst)
                blind_copy(ctx, src, dst, sides, list(MERGE_LABELS))
                inputs.append("  - round %s, %s: %s" % (rnd[1:], what, rel(dst)))
    return {"inputs": "\n".join(inputs)}


def reproducer_section(ctx, job, m, sides, names, agents, labels, values):
    """Copy the match's reproducers into the judge's work folder, blinded; the brief's section on them."""
    run, st = ctx.run, ctx.st
    if not st.get("run_code"):
        return "", None
    # copies for an earlier try stay: that try's judge may still be running them
    work = work_folder(job)
    lines, example = [], {}
    for side, label in zip(sides, names):
        attacker = attack_id(match_of(job), opponent(m, side))
        carried = st["summ"].get(attacker, {}).get("rp", {})
        copies = {}
        for number in sorted(carried, key=int):
            # the copy's name says only what it attacks: the attacker's folder name holds its agent id
            dst = "%s/against-%s-%s%s" % (work, label, number, os.path.splitext(carried[number])[1])
            blind_copy(ctx, "%s/%s" % (work_folder(attacker), carried[number]), dst, agents, labels)
            copies[number] = os.path.join(run.dir, dst)
            lines.append("- attack %s against %s: `%s`" % (number, label, copies[number]))
            example.setdefault(label, {})[number] = "yes"
        if copies:
            attacks = run.path(judge_copy(job, label, "attacks"))
            atomic_write(attacks, point_reproducers(read_text(attacks), copies), durable=False)
    if not lines:
        return "", None
    text = fill(load_template("part-reproducers"), dict(values, reproducers="\n".join(lines),
                                                         reproduced_example=json.dumps(example, sort_keys=True)))
    return text, example


def verdict_example(job, names, rubric, judge, reproduced=None):
    """The example verdict a judging brief shows: its own job, labels and rubric criteria, and
    `reproduced` exactly when the brief asks for it, so a judge copying its shape gets it right."""
    better, worse = names
    v = {"job": job,
         "scores": {better: {c: int(round(top * 0.8)) for c, top, _ in rubric},
                    worse: {c: int(round(top * 0.6)) for c, top, _ in rubric}},
         "fatal": {better: False, worse: False}}
    if judge:
        v["decided"] = [{"difference": "the task says an empty input gives 0; %s gives 0, %s raises" % (better, worse),
                         "supports": better}]
        v["open"] = ["the two word the error for a negative input differently; the task names no wording"]
    v["confidence"] = "high"
    if reproduced:
        v["reproduced"] = reproduced
    v["reason"] = ("%s meets every requirement; %s misses one the task states (it ignores the second input)."
                   % (better, worse))
    return json.dumps(v)


def engine_command():
    # the exact form the skill's allowed-tools names, so sub-agents can run it without a prompt
    return 'python3 -S "%s"' % BRACKET


def workspace_values(ctx, job):
    """The brief's work folder, time budget and code-running lines; makes the folder."""
    run, st = ctx.run, ctx.st
    kind = job_kind(job)
    folder = work_folder(job)
    if os.path.islink(run.path(folder)):
        # a link planted by an earlier try would send this job's scratch files outside .arena/
        os.unlink(run.path(folder))
    os.makedirs(run.path(folder), exist_ok=True)
    values = {"job": job, "run": st["run"], "bracket": engine_command(), "work": os.path.join(run.dir, folder) + "/",
              "work_root": os.path.join(run.dir, "work") + "/",
              "minutes": str(st.get("minutes", PHASE_MINUTES).get(kind, PHASE_MINUTES[kind])),
              "exec_seconds": str(EXEC_SECONDS), "exec_max": str(EXEC_MAX_SECONDS)}
    if st.get("run_code"):
        values["exec_limits"] = limits_text()
        values["exec_sandbox"] = (", in a sandbox: the filesystem is read-only outside your work folder, the home "
                                  "folder hidden, no network (install nothing; use the standard library)"
                                  if confinement()[0] else "")
    code = "on" if st.get("run_code") else "off"
    values["run_code"] = fill(load_template("part-run-code-" + code), values).rstrip("\n")
    values["workspace"] = fill(load_template("part-workspace"), values).rstrip("\n")
    values["evidence"] = fill(load_template("part-evidence-" + code), values).rstrip("\n")
    values["bench"] = bench_part(st, kind, values)
    return values


# What a job of each kind runs the bench on, and what it does with the results.
BENCH_USE = {
    "atk": ("the solution you attack (`target`) and on yours (`yours`)",
            "Run it first. A test the target fails and yours passes is an attack: name the entry and the failed "
            "case, and the judge will see the same result. Do not rebuild what the bench covers; look for what it "
            "does not."),
    "def": ("your revision (`yours`, once you have written it; your current solution before) and your opponent's "
            "(`opponent`)",
            "Run it on your revision before you finish: a failed case there is a flaw the judge will see."),
    "judge": ("both revised solutions, under their labels",
              "Run it first. Put every test it marks decided, and the score when it says `the score: decided`, in "
              "your `decided` list, with the side it supports, "
              "and score it under correctness and completeness; if you find the entry itself wrong about what the "
              "task decides, name it instead in an object `disputed`, with why, like `\"disputed\": {\"b02\": "
              "\"the task leaves the error type open\"}`. The engine refuses a verdict that does neither, and one "
              "written before the bench ran. Scorer figures it does not decide are yours to weigh with your own "
              "measurements: a side you find better on the task's score is a decided difference (`\"confidence\": "
              "\"low\"` if the figures are close and you are unsure), and only sides you find level are open. Do "
              "not rebuild what the bench covers: spend your minutes on what it does not."),
    "probe": ("every solution, under its label",
              "Run it first: solutions an entry splits (one passes every case, another fails) behave differently "
              "where the task decides. Do not rebuild what it covers: spend your minutes on what it does not."),
}


def bench_part(st, kind, values):
    """The bench section of an attack, defence, judge or probe brief of a --run-code run; ''
    for other jobs and runs."""
    if not st.get("bench_on") or kind not in BENCH_USE:
        return ""
    sides, use = BENCH_USE[kind]
    return fill(load_template("part-bench"), dict(
        values, bench_sides=sides, bench_use=use, bench_margin="%g%% of the larger" % (100 * SCORE_MARGIN),
        bench_test_seconds=str(TEST_SECONDS), bench_scorer_seconds=str(SCORER_SECONDS),
        bench_most=str(MOST_ENTRIES), bench_scorers=str(MOST_SCORERS))).rstrip("\n") + "\n\n"


def write_conductor_brief(run, st):
    values = {"bracket": engine_command(), "run": st["run"],
              "batch": str(st["batch_waves"])}
    atomic_write(run.path("conductor.md"), fill(load_template("conductor"), values))


def write_lane_brief(run, st):
    values = {"bracket": engine_command(), "run": st["run"], "wait": str(DEFAULT_LANE_WAIT)}
    atomic_write(run.path("lane.md"), fill(load_template("lane"), values))


# What fills each kind's brief, by the name jobs.KIND gives it.
BRIEF_VALUES = {"competitor_values": competitor_values, "attack_values": attack_values,
                "defence_values": defence_values, "judging_values": judging_values, "probe_values": probe_values,
                "merge_values": merge_values}
