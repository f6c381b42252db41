"""Stand-in sub-agents: play any job from its brief alone, for demos and tests.

Call `play(project, prompt, seed)` for one Agent call: `prompt` is the one line `next`
prints ("Read .arena/<run>/b/<job>.md and follow it."), `project` the folder it runs in.
It reads that brief, writes exactly the files a real sub-agent would (a solution; an
attack file; answers plus a full revised solution; a verdict JSON) and returns the
receipt line. `play_brief(project, brief_path, seed)` does the same from the brief's path;
`outputs(project, brief_path, seed)` returns the receipt and the files without writing them.

Each competitor has a hidden quality drawn from the seed and its id. Its solutions say
it in a `quality:` line and list their flaws (`flaw F2 MAJOR: ...`); attackers find some
flaws and invent a few; a defence concedes real ones and its revision fixes most of
them, scoring a little higher, and fixes too the flaws it shares with the opponent's
solution when its own side raised them (ALSO FIXED). The judge reads only its blinded copies: it scores the
quality it reads with noise and a bonus for the side shown first, flags FATAL when a
FATAL flaw is still there (and rarely when none is), and says "low" when it is unsure.
So matches have real margins, close calls (second looks) and upsets. Everything is
drawn from the seed, the job and the text read, never from the order jobs run in, so a
re-issued job writes the same thing. Writes only the files its brief names.
"""

import json
import math
import os
import re
import statistics

from .base import MAX_ATTACKS, rng_for
from .jobs import agent_of, match_of, revision_file

# quality points = CENTRE + SPREAD * latent quality (a standard normal), as in benchmarks/judging.py
CENTRE, SPREAD = 65.0, 10.0
# the worst fifth of the field starts with a fatal flaw
FATAL_LINE = statistics.NormalDist().inv_cdf(0.2)
JUDGE_NOISE, FIRST_BONUS = 4.2, 2.0
MISS_FATAL, FALSE_FATAL = 0.2, 0.02
LOW_CONFIDENCE = 2.0
# a judge finds two solutions equivalent when their real quality is this close and neither
# still has a FATAL flaw (a real judge would see the same behaviour on its own tests)
EQUAL_POINTS = 0.5
FIX_GAIN = {"FATAL": 3.0, "MAJOR": 1.5, "MINOR": 0.5}
SEVERITY = ("FATAL", "MAJOR", "MINOR")

FLAWS = {
    "FATAL": ("gives a wrong result when the input is empty", "the main step contradicts the task's own example",
              "the core computation is off by one"),
    "MAJOR": ("misses the second requirement of the task", "no handling of invalid input",
              "a required output format is ignored", "a step depends on a tool the task rules out"),
    "MINOR": ("step order is confusing", "one example is not worked through", "a name is used before it is defined",
              "the summary repeats the body"),
}
INVENTED = ("the approach is not the most common one", "the answer could be shorter",
            "a rarely used edge case is not mentioned")

PROMPT = re.compile(r"^Read (\S+) and follow it\.$")
FLAW = re.compile(r"^flaw (F\d+) (FATAL|MAJOR|MINOR): (.*)$", re.M)
QUALITY = re.compile(r"^quality: (-?\d+(?:\.\d+)?)$", re.M)


def normal(rng):
    return statistics.NormalDist().inv_cdf(min(max(rng.random(), 1e-12), 1 - 1e-12))


# What a model adds to a stand-in's latent quality (a mixed field, --models): the call's
# model, as a real sub-agent is the model its Agent call names. No model: the session's, 0.
MODEL_EDGE = {"opus": 0.5, "sonnet": 0.0, "haiku": -0.7}


def quality_of(seed, agent, model=None):
    """An agent's hidden latent quality (about a standard normal), from the seed and its model."""
    return normal(rng_for(seed, "demo-quality", agent)) + MODEL_EDGE.get(model, 0.0)


def play(project, prompt, seed=0, model=None):
    """Play the Agent call whose prompt is `prompt` (on `model`, as the call names it);
    returns its receipt line."""
    m = PROMPT.match(prompt.strip())
    if not m:
        raise ValueError("not an arena prompt: %r" % prompt[:80])
    return play_brief(project, m.group(1), seed, model)


def play_brief(project, brief_path, seed=0, model=None):
    """Read the brief at brief_path (relative to project), write the job's files, return the receipt."""
    receipt, files = outputs(project, brief_path, seed, model)
    for rel, text in files:
        write(project, rel, text)
    return receipt


def outputs(project, brief_path, seed=0, model=None):
    """(receipt, [(path, text)]): what the job's sub-agent writes, without writing it."""
    full = read(project, brief_path)
    brief = after_task(full)
    receipt = re.search(r"^(done (\S+))$", brief, re.M)
    job = receipt.group(2)
    paths = unique(re.findall(r"`(\.arena/[^`]+)`", brief))
    out = [p for p in paths if re.search(r"/out/%s\.(?:md|json)$" % re.escape(job), p)][0]
    head = "<!-- arena job: %s -->\n" % job
    if job.startswith("spawn-"):
        files = [(out, head + spawn(seed, agent_of(job), full, model))]
    elif "-atk-" in job:
        target = [p for p in paths if p != out][0]
        files = [(out, head + attack(seed, job, read(project, target), model))]
    elif "-def-" in job:
        revised = [p for p in paths if p.endswith("/" + revision_file(match_of(job), agent_of(job)))][0]
        own = [p for p in paths if p not in (out, revised) and "-atk-" not in p][0]
        # each list is named on its own line, or "none" when there is no file to read
        on_me, on_them = (listed(brief, which) for which in ("Attacks on your solution", "Attacks your side raised"))
        answers, solution = defend(seed, job, read(project, own), read(project, on_me) if on_me else "",
                                   read(project, on_them) if on_them else "", model)
        files = [(out, head + answers), (revised, head + solution)]
    elif job == "merge":
        challenger = [p for p in paths if p.endswith("/out/merge-sol.md")][0]
        taken, solution = merge(seed, brief, project)
        files = [(out, head + taken), (challenger, head + solution)]
    elif job.startswith("probe-"):
        files = [(out, json.dumps(probe(job, brief, project)) + "\n")]
    else:
        files = [(out, json.dumps(verdict(seed, job, brief, project)) + "\n")]
    return receipt.group(1), files


# ---------------------------------------------------------------- competitors

def spawn(seed, agent, brief, model=None):
    q = quality_of(seed, agent, model)
    rng = rng_for(seed, "demo-spawn", agent)
    flaws = []
    if q < FATAL_LINE:
        flaws.append("FATAL")
    flaws += ["MAJOR" for _ in range(3) if rng.random() < min(0.8, max(0.05, 0.35 - 0.15 * q))]
    flaws += ["MINOR" for _ in range(3) if rng.random() < 0.4]
    found = [(kind, FLAWS[kind][int(rng.random() * len(FLAWS[kind]))]) for kind in flaws]
    listed = [("F%d" % k, kind, what) for k, (kind, what) in enumerate(found, 1)]
    return solution_text(CENTRE + SPREAD * q, listed, 0, task_line(brief), int(rng.random() * 6) + 2)


def solution_text(points, flaws, revision, about, steps):
    lines = ["# Answer", "", "Stand-in answer to: %s" % about, "", "quality: %.1f" % points,
             "revision: %d" % revision]
    lines += ["flaw %s %s: %s" % f for f in flaws]
    lines.append("")
    lines += ["Step %d: do the part of the task this step covers, with exact values." % k for k in range(1, steps + 1)]
    return "\n".join(lines) + "\n"


def read_solution(text):
    """(points, [(id, kind, what)], revision, about, steps) from a solution's text."""
    q = QUALITY.search(text)
    rev = re.search(r"^revision: (\d+)$", text, re.M)
    about = re.search(r"^Stand-in answer to: (.*)$", text, re.M)
    return (float(q.group(1)) if q else None, FLAW.findall(text), int(rev.group(1)) if rev else 0,
            about.group(1) if about else "the task", max(1, len(re.findall(r"^Step \d+:", text, re.M))))


def attack(seed, job, target, model=None):
    skill = quality_of(seed, agent_of(job), model)
    rng = rng_for(seed, "demo-attack", job)
    spot = min(0.9, max(0.2, 0.55 + 0.15 * skill))
    found = [(kind, "flaw %s, %s" % (fid, what)) for fid, kind, what in read_solution(target)[1] if rng.random() < spot]
    if rng.random() < 0.3:
        u = rng.random()
        kind = "FATAL" if u < 0.1 else "MAJOR" if u < 0.4 else "MINOR"
        found.append((kind, INVENTED[int(rng.random() * len(INVENTED))]))
    found.sort(key=lambda f: SEVERITY.index(f[0]))
    parts = ["## ATTACK %d %s: %s\nThe solution fails here; the task asks for it and a plain input shows it.\n"
             % (k, kind, what) for k, (kind, what) in enumerate(found[:MAX_ATTACKS], 1)]
    return "".join(parts)


def defend(seed, job, own, attacks, raised="", model=None):
    """(answers text, revised solution text): concede real flaws and fix most of them, and
    fix too the flaws raised against the opponent that this solution shares (ALSO FIXED)."""
    skill = quality_of(seed, agent_of(job), model)
    rng = rng_for(seed, "demo-defend", job)
    points, flaws, revision, about, steps = read_solution(own)
    if points is None:
        points = CENTRE
    live = {fid: (kind, what) for fid, kind, what in flaws}
    answers = []
    claims = re.findall(r"^## ATTACK (\d+) \S+?: (.*)$", attacks, re.M)
    for n, summary in claims:
        m = re.match(r"flaw (F\d+)\b", summary)
        if m and m.group(1) in live:
            kind = live[m.group(1)][0]
            answers.append("## ANSWER %s CONCEDE: %s is fixed where possible\nThe revision addresses it.\n" % (n, m.group(1)))
            if rng.random() < {"FATAL": 0.6, "MAJOR": 0.8, "MINOR": 0.9}[kind] + 0.05 * skill:
                del live[m.group(1)]
                points += FIX_GAIN[kind]
        else:
            answers.append("## ANSWER %s REBUT: the claim does not hold\nThe text already covers it.\n" % n)
    shared = {what: fid for fid, (kind, what) in live.items()}
    for n, summary in re.findall(r"^## ATTACK (\d+) \S+?: (.*)$", raised, re.M):
        m = re.match(r"flaw F\d+, (.*)$", summary)
        fid = shared.pop(m.group(1), None) if m else None
        if fid in live and rng.random() < {"FATAL": 0.6, "MAJOR": 0.8, "MINOR": 0.9}[live[fid][0]] + 0.05 * skill:
            answers.append("## ALSO FIXED %s: the same flaw was in this solution\nThe revision fixes it here too.\n" % n)
            points += FIX_GAIN[live.pop(fid)[0]]
    left = [(fid, kind, what) for fid, kind, what in flaws if fid in live]
    return "".join(answers), solution_text(min(100.0, points), left, revision + 1, about, steps)


# ---------------------------------------------------------------- after the bracket: the merge

# Chance that a merge breaks something instead of taking the better parts (a real merge can).
MERGE_WORSE = 0.25


def merge(seed, brief, project):
    """(TAKEN sections, challenger) from the two finalists' solutions: usually the base with each
    of its flaws the other does not have fixed and a step of the other's taken in, which makes
    it a little better; sometimes the merge breaks a step and the challenger is worse than the
    base; nothing when the other is far behind."""
    inputs = section(brief, "Inputs")
    base_path = re.search(r"^- the base solution \(\w+\): (\S+)$", inputs, re.M).group(1)
    other_path = re.search(r"^- the other solution \(\w+\): (\S+)$", inputs, re.M).group(1)
    base, other = read(project, base_path), read(project, other_path)
    pb, fb, rev, about, steps = read_solution(base)
    po, fo = read_solution(other)[:2]
    pb = CENTRE if pb is None else pb
    po = CENTRE if po is None else po
    if po < pb - 15.0:
        return "", base.split("\n", 1)[1] if base.startswith("<!--") else base
    rng = rng_for(seed, "demo-merge", base, other)
    theirs = {what for _, _, what in fo}
    fixed = [(fid, kind, what) for fid, kind, what in fb if what not in theirs]
    step = 1 + int(rng.random() * steps)
    taken = "## TAKEN 1: the other solution's step %d, more exact\nIts attackers found nothing there.\n" % step
    taken += "".join("## TAKEN %d: the other solution's way with %s\nThe other solution has no such flaw.\n"
                     % (k, what) for k, (_, _, what) in enumerate(fixed, 2))
    if rng.random() < MERGE_WORSE:
        left = list(fb) + [("F%d" % (len(fb) + 1), "MAJOR", "a step taken from the other solution contradicts the rest")]
        return taken, solution_text(pb - 2.0 - 3.0 * rng.random(), left, rev + 1, about, steps)
    left = [f for f in fb if f not in fixed]
    points = pb + sum(FIX_GAIN[kind] for _, kind, _ in fixed) + 0.5 + 0.3 * abs(po - pb) * rng.random()
    return taken, solution_text(min(100.0, points), left, rev + 1, about, steps)


def probe(job, brief, project):
    """A probe's grouping: solutions behave the same when they read as the same quality with the
    same flaws (what a real probe would see by running them on the same inputs)."""
    groups = {}
    for label, path in re.findall(r"^- ([A-Z]\d+): (\S+)$", section(brief, "Inputs"), re.M):
        points, flaws = read_solution(read(project, path))[:2]
        key = (round(points or 0.0, 0), tuple(sorted(kind for _, kind, _ in flaws)))
        groups.setdefault(key, []).append(label)
    found = [groups[k] for k in sorted(groups)]
    decided = ["%s and %s give different results where the task says what they should be" % (found[0][0], g[0])
               for g in found[1:]]
    return {"job": job, "groups": found, "inputs": 200, "decided": decided, "open": [],
            "reason": "The stand-in ran every solution on the same 200 inputs."}


# ---------------------------------------------------------------- the judge

def verdict(seed, job, brief, project):
    """A judge's verdict from its brief and its blinded copies alone."""
    inputs = section(brief, "Inputs")
    rubric = [(name, int(top)) for name, top in re.findall(r"^- (\S+) \((\d+)\): ", section(brief, "Rubric"), re.M)]
    labels = re.findall(r"^- ([A-Za-z]+)(?::|$)", inputs, re.M)
    scores, fatal, totals, truth = {}, {}, {}, []
    for pos, label in enumerate(labels):
        path = re.search(r"^- %s(?::| *\n  - revised solution:) (\S+)$" % label, inputs, re.M).group(1)
        text = read(project, path)
        for other in labels:
            text = text.replace(other, "LABEL")
        # the draw depends on what is judged and where it is shown, not on the labels,
        # so a judge handed out again (fresh labels, same order) writes the same verdict
        rng = rng_for(seed, "demo-judge", job, pos, text)
        points, flaws = read_solution(text)[:2]
        if points is None:  # not a stand-in's text, e.g. the user's baseline
            points = 0.0 if text.startswith("(nothing was received") else CENTRE - SPREAD * 0.5
        seen = points + JUDGE_NOISE * normal(rng) + (FIRST_BONUS if pos == 0 else 0.0)
        has_fatal = any(kind == "FATAL" for _, kind, _ in flaws)
        truth.append((read_solution(text)[0], has_fatal))
        u = rng.random()
        fatal[label] = (u >= MISS_FATAL) if has_fatal else (u < FALSE_FATAL)
        totals[label] = seen
        scores[label] = scorecard(seen, rubric, rng)
    sums = [sum(scores[x].values()) * 100.0 / max(1, sum(t for _, t in rubric)) for x in labels]
    low = len(labels) == 2 and abs(sums[0] - sums[1]) < LOW_CONFIDENCE
    best = max(labels, key=lambda x: sum(scores[x].values())) if labels else ""
    v = {"job": job, "scores": scores, "fatal": fatal, "confidence": "low" if low else "high",
         "reason": "%s holds up better on the rubric as read." % best}
    if "revised solution" in inputs:  # a match's judge (the baseline check has no such case)
        same = len(truth) == 2 and None not in (truth[0][0], truth[1][0]) and \
            abs(truth[0][0] - truth[1][0]) < EQUAL_POINTS and not truth[0][1] and not truth[1][1]
        if same:
            # no difference the task decides; the wording differs, which it leaves open
            v["decided"], v["open"] = [], ["the two word their steps differently; the task fixes no wording"]
            v["reason"] = "The two behave the same on every case the task names."
        else:
            v["equivalent"] = False
    return v


def scorecard(seen, rubric, rng):
    """Integer scores summing to about seen% of the rubric, each in proportion to its maximum,
    with a point sometimes moved between criteria so equal totals can still differ."""
    whole = sum(top for _, top in rubric)
    total = int(math.floor(min(100.0, max(0.0, seen)) * whole / 100.0 + 0.5))
    raw = [total * top / float(whole) for _, top in rubric]
    card = [int(x) for x in raw]
    order = sorted(range(len(raw)), key=lambda i: (card[i] - raw[i], i))
    for i in order[:total - sum(card)]:
        card[i] += 1
    if len(card) > 1 and rng.random() < 0.5:
        give, take = int(rng.random() * len(card)), int(rng.random() * len(card))
        if give != take and card[give] > 0 and card[take] < rubric[take][1]:
            card[give] -= 1
            card[take] += 1
    return {name: x for (name, _), x in zip(rubric, card)}


# ---------------------------------------------------------------- files

def listed(brief, which):
    """The file a defence brief names on the line that starts with `which`, or None."""
    m = re.search(r"^\s*- %s[^`\n]*`([^`]+)`" % re.escape(which), brief, re.M)
    return m.group(1) if m else None


def section(brief, title):
    m = re.search(r"^## %s\n(.*?)(?=^## |\Z)" % re.escape(title), brief, re.M | re.S)
    return m.group(1) if m else ""


def after_task(brief):
    """The brief after the fenced task: the task is data and may hold anything."""
    fence = re.search(r"^(=====ARENA-DATA-\w+=====)$", brief, re.M)
    return brief.rsplit(fence.group(1), 1)[1] if fence else brief


def task_line(brief):
    """The task's first non-blank line, as a solution might restate it."""
    m = re.search(r"^(=====ARENA-DATA-\w+=====)\n(.*?)^\1$", brief, re.M | re.S)
    line = next((x.strip() for x in (m.group(2) if m else "").splitlines() if x.strip()), "the task")
    return line[:80]


def unique(items):
    seen = []
    for x in items:
        if x not in seen:
            seen.append(x)
    return seen


def read(project, rel):
    with open(os.path.join(project, rel), encoding="utf-8", errors="replace") as f:
        return f.read()


def write(project, rel, text):
    with open(os.path.join(project, rel), "w", encoding="utf-8") as f:
        f.write(text)
