"""What a run will cost: the `plan` table text and the token estimate.

Pure arithmetic on N, W and file sizes; measured_sizes reads output sizes of a run in
progress to redo the estimate with real numbers. Never changes a state.
"""

import os

from .base import MOST_LOOKS, plural
from .jobs import field_sizes, job_kind, outputs_of, packed_waves, plan_rows, round_judges


# Token arithmetic. Sizes in tokens (about 4 characters each); the assumed
# sizes are printed with the estimate, and `status` redoes it with real sizes.
ASSUMED = {"solution": 1500, "attack": 600, "defence": 500, "verdict": 250}


# a brief's own text without the task, by job kind (means of real briefs; a test keeps
# them within 10%), and what --run-code adds to it
BRIEF_TOKENS = {"spawn": 820, "atk": 1010, "def": 1300, "judge": 1330, "final": 1100}
RUN_CODE_TOKENS = {"spawn": 60, "atk": 250, "def": 60, "judge": 60, "final": 60}


CLIENT_TOKENS = 12000     # Claude Code's system prompt and tool definitions, per sub-agent


TURNS = 4                 # model turns per sub-agent call: read, read inputs, write, reply


def tokens_of(text_or_bytes):
    return max(1, len(text_or_bytes) // 4)


def job_counts(n, wave, baseline, recheck):
    matches = n - 1
    judges = matches + (expected_looks(n, wave) if recheck and n > 1 else 0)
    return {"spawn": n, "atk": 2 * matches, "def": 2 * matches, "judge": judges, "final": 1 if baseline else 0}


def estimate_tokens(calls, task, size, run_code=False):
    """(input tokens, output tokens) for a whole run.

    Each call reads the client's prompt, its brief and the task on every turn
    (mostly served from the prompt cache), plus the files the brief names.
    """
    s, a, d, v = size["solution"], size["attack"], size["defence"], size["verdict"]
    brief = {kind: BRIEF_TOKENS[kind] + (RUN_CODE_TOKENS[kind] if run_code else 0) for kind in BRIEF_TOKENS}
    reads = {"spawn": 0, "atk": 2 * s, "def": s + a, "judge": 2 * (s + a + d), "final": 2 * s}
    writes = {"spawn": s, "atk": a, "def": d + s, "judge": v, "final": v}
    tin = sum(k * (TURNS * (CLIENT_TOKENS + brief[kind] + task) + reads[kind]) for kind, k in calls.items())
    tout = sum(k * writes[kind] for kind, k in calls.items())
    return tin, tout, size


def format_estimate(est, how):
    tin, tout, size = est
    return ("tokens (estimate): about %s input, mostly cached repeats of Claude Code's own prompt, and %s output; "
            "%s sizes: solution %d, attack %d, defence %d, verdict %d tokens"
            % (human(tin), human(tout), how, size["solution"], size["attack"], size["defence"], size["verdict"]))


def human(x):
    return "%.1fM" % (x / 1e6) if x >= 1e6 else "%dk" % round(x / 1e3) if x >= 1e3 else str(x)


def measured_sizes(run, st):
    """Average sizes of the outputs written so far, in tokens (assumed where none yet)."""
    sums = {k: [0, 0] for k in ASSUMED}
    for job, info in st["jobs"].items():
        if info["s"] != "done" or st["summ"].get(job, {}).get("missing"):
            continue
        kind = job_kind(job)
        for path in outputs_of(job):
            what = {"spawn": "solution", "atk": "attack", "judge": "verdict", "final": "verdict"}.get(kind)
            if kind == "def":
                what = "solution" if "-sol-" in path else "defence"
            try:
                sums[what][0] += os.path.getsize(run.path(path))
                sums[what][1] += 1
            except OSError:
                pass
    return {k: (tokens_of(b" " * (total // count)) if count else ASSUMED[k]) for k, (total, count) in sums.items()}


def plan_table(n, wave, baseline=False, recheck=True):
    rows = plan_rows(n, wave, baseline)
    out = ["round  alive  matches  bye  sub-agent calls  waves"]
    for label, alive, matches, bye, calls, waves in rows:
        out.append("%5s  %5s  %7s  %3s  %15d  %5d" % (
            label, alive, "-" if matches is None else matches, "yes" if bye else "-", calls, waves))
    calls = sum(r[4] for r in rows)
    waves = sum(r[5] for r in rows)
    out.append("%5s  %5s  %7s  %3s  %15d  %5d" % ("total", "", "", "", calls, waves))
    out.append("alive per round: " + " ".join(str(x) for x in field_sizes(n)))
    packed, bound = packed_waves(n, wave, baseline)
    out.append("packed waves (ready jobs from any phase share a wave): %d (best possible with round barriers: %d)"
               % (packed, bound))
    if recheck and n > 1:
        extra = expected_looks(n, wave)
        waves2, _ = packed_waves(n, wave, baseline, most_looks=MOST_LOOKS)
        out.append("more looks (a second at close matches and in rounds small enough to judge twice in one wave, "
                   "a third when two split, three of five in the last two rounds):")
        out.append("  about %s, %d calls in all (x%.2f), about %d packed waves"
                   % (plural(extra, "more judge call"), calls + extra, (calls + extra) / float(calls), waves2))
    return "\n".join(out)


def expected_looks(n, wave):
    """Judge calls beyond one per match to expect, round by round (jobs.round_judges),
    rounded once at the end (rounding per round would lose up to half a call in every round)."""
    extra = 0.0
    for alive in field_sizes(n)[:-1]:
        m = alive // 2
        extra += m * (round_judges(m, alive, wave, MOST_LOOKS)[1] - 1)
    return int(extra + 0.5)
