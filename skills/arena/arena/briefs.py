"""Writing what each sub-agent reads: its brief, and a judge's blinded copies of the inputs.

Briefs are the templates in briefs/ filled in one pass; the task is fenced by the run's
marker; judges get copies stripped of agent ids, job headers and the fence. This module
writes only under the run folder and never changes the state.
"""

import os
import re

from .base import BRACKET, SKILL_DIR, MAX_ATTACKS, MAX_SOLUTION_BYTES, read_text
from .jobs import job_kind, match_of, outputs_of, parse_job
from .state import find_match, judge_sides, opponent
from .storage import atomic_write
from .outputs import BadOutput, HEADER, read_output
from .workspace import EXEC_MAX_SECONDS, EXEC_SECONDS, PHASE_MINUTES, work_folder


def load_template(kind):
    return read_text(os.path.join(SKILL_DIR, "briefs", kind + ".md"))


def card_text(st, agent, cards):
    lines = []
    for part, i in zip(("reasoning", "workflow", "strategy"), st["cards"][agent]):
        name, text = cards[part][i]
        lines.append("- %s (%s): %s" % (part, name, text))
    return "\n".join(lines)


def fenced(st, task):
    return "%s\n%s%s%s" % (st["fence"], task, "" if task.endswith("\n") else "\n", st["fence"])


def fill(template, values):
    """Replace {{name}} in one pass, so text put in is never scanned again."""
    return re.sub(r"\{\{(\w+)\}\}", lambda m: values.get(m.group(1), m.group(0)), template)


def blind_copy(run, src, dst, agents, labels, fence=None):
    """Copy a file for a judge without its job header, the agents' ids or the run's fence."""
    try:
        # an output that fell back after failing its checks must not stall the judge
        text = read_output(run.path(src), MAX_SOLUTION_BYTES) if src else None
    except BadOutput:
        text = None
    if text is None:
        text = "(nothing was received for this part)\n"
    text = HEADER.sub("", text, count=1)
    if fence:
        # a copied fence line could pass data off as the end of the task
        text = text.replace(fence, "(fence line removed)")
    for agent, label in zip(agents, labels):
        text = re.sub(r"\b%s\b" % agent, label, text)
    atomic_write(run.path(dst), text, durable=False)


def write_brief(run, st, job, attempt, cards, rubric, task):
    """Write b/<job>.md (and a judge's blinded inputs) for one try of a job."""
    kind, rnd, _, who = parse_job(job)
    rel = lambda p: os.path.join(run.dir, p)
    outs = outputs_of(job)
    for p in outs:
        # a link left by a failed try would make the next agent write through it, outside .arena/
        if os.path.islink(run.path(p)):
            os.unlink(run.path(p))
    values = {"job": job, "task": fenced(st, task), "fence": st["fence"], "output": rel(outs[0]),
              "receipt": "done " + job, "max_attacks": str(MAX_ATTACKS), "reproducers": ""}
    values.update(workspace_values(run, st, job))
    if kind in ("spawn", "atk", "def"):
        values["card"] = card_text(st, who, cards)
    if kind == "atk":
        m = find_match(st, match_of(job))
        values["own_solution"] = rel(st["sol"][who])
        values["target"] = rel(st["sol"][opponent(m, who)])
    elif kind == "def":
        m = find_match(st, match_of(job))
        values["own_solution"] = rel(st["sol"][who])
        values["attacks"] = rel(outputs_of("%s-atk-%s" % (match_of(job), opponent(m, who)))[0])
        values["solution_output"] = rel(outs[1])
    elif kind in ("judge", "final"):
        sides, names = judge_sides(st, job, attempt)
        folder = "j/%s" % job
        os.makedirs(run.path(folder), exist_ok=True)
        inputs = []
        if kind == "judge":
            m = find_match(st, match_of(job))
            agents = [m["a"], m["b"]]
            labels = [names[sides.index(a)] for a in agents]
            for agent, label in zip(sides, names):
                mid = match_of(job)
                parts = [("revised solution", st["sol"].get(agent), "solution"),
                         ("attacks against it", outputs_of("%s-atk-%s" % (mid, opponent(m, agent)))[0], "attacks"),
                         ("its defence", outputs_of("%s-def-%s" % (mid, agent))[0], "defence")]
                inputs.append("- %s" % label)
                for what, src, tag in parts:
                    dst = "%s/%s-%s.md" % (folder, label, tag)
                    blind_copy(run, src, dst, agents, labels, st["fence"])
                    inputs.append("  - %s: %s" % (what, rel(dst)))
        else:
            for side, label in zip(sides, names):
                src = st["sol"][st["champion"]] if side == "winner" else "baseline.md"
                dst = "%s/%s-solution.md" % (folder, label)
                blind_copy(run, src, dst, [st["champion"]], [label], st["fence"])
                inputs.append("- %s: %s" % (label, rel(dst)))
        values.update({"label_a": names[0], "label_b": names[1], "inputs": "\n".join(inputs),
                       "rubric": "\n".join("- %s (%d): %s" % r for r in rubric),
                       "criteria": ", ".join(c for c, _, _ in rubric)})
    template = load_template({"atk": "attack", "def": "defend"}.get(kind, kind))
    atomic_write(run.path("b", job + ".md"), fill(template, values), durable=False)


def engine_command():
    # the exact form the skill's allowed-tools names, so sub-agents can run it without a prompt
    return 'python3 -S "%s"' % BRACKET


def workspace_values(run, st, job):
    """The brief's work folder, time budget and code-running lines; makes the folder."""
    kind = job_kind(job)
    folder = work_folder(job)
    if os.path.islink(run.path(folder)):
        # a link planted by an earlier try would send this job's scratch files outside .arena/
        os.unlink(run.path(folder))
    os.makedirs(run.path(folder), exist_ok=True)
    values = {"job": job, "run": st["run"], "bracket": engine_command(), "work": os.path.join(run.dir, folder) + "/",
              "minutes": str(st.get("minutes", PHASE_MINUTES).get(kind, PHASE_MINUTES[kind])),
              "exec_seconds": str(EXEC_SECONDS), "exec_max": str(EXEC_MAX_SECONDS)}
    code = "on" if st.get("run_code") else "off"
    values["run_code"] = fill(load_template("part-run-code-" + code), values).rstrip("\n")
    values["workspace"] = fill(load_template("part-workspace"), values).rstrip("\n")
    values["evidence"] = fill(load_template("part-evidence-" + code), values).rstrip("\n")
    return values


def write_conductor_brief(run, st):
    values = {"bracket": engine_command(), "run": st["run"],
              "batch": str(st["batch_waves"])}
    atomic_write(run.path("conductor.md"), fill(load_template("conductor"), values))
