"""The bench: tests and a scorer that jobs of a --run-code run leave for every later look.

A judge, probe, attack or defence that built something the next look would build again (a
test of what the task decides, or a scorer for a task scored by a number) lists it in
`bench.json` in its work folder. When the engine collects the job it checks each entry
(self-contained: plain files of the job's folder, Python that imports only the standard
library and its own files, names no agent), copies it to bench/<digest>/ and journals it in
the done event; the state keeps the list (state.bench_in). The engine runs the bench itself:
`bracket.py bench` runs every entry on each side of a job, confined like `exec`, and keeps
each result by entry and solution text, so every look at the same solutions sees the same
figures and a later look pays nothing for them.

An entry is a Python file run as `python3 <file> solution.md` in a fresh folder holding it,
its data files and a copy of the solution; the last line it prints is one JSON object: a
test's {"cases": N, "failed": ["what failed", ...]}, a scorer's {"score": X}. decision()
reads two sides' results: a test decides for the side that passes every case when the
other fails one. A scorer leans only on a gap its own runs can tell from its noise: when one
run on each side puts them more than SCORE_MARGIN apart, each side is scored a second time
(needs_repeat), and it leans when the two sides' averages are still more than SCORE_MARGIN
apart and further apart than the two sides' spreads between their own runs together (lean).
The bench holds up to MOST_SCORERS scorers from different jobs, and the score is decided only
when AGREE of them lean the same way and none the other (score_decision).
"""

import ast
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import sysconfig
import time

from .base import BENCH_ENTRIES, BENCH_SCORERS, JOB_HEADER, ArenaError, run_scorers
from .sandbox import run_script
from .workspace import resolve_in, work_folder


MANIFEST = "bench.json"
KINDS = ("test", "scorer")
# What the bench holds: at most this many entries in a run (one of them the scorer), each job
# adding at most PER_JOB, each entry at most DATA_FILES data files beside its script.
MOST_ENTRIES = BENCH_ENTRIES
PER_JOB = 3
DATA_FILES = 4
MAX_FILE_BYTES = 256 * 1024
MAX_ENTRY_BYTES = 1024 * 1024
# Seconds an entry may run on one solution (a scorer runs the solution on every instance), and
# the most one `bench` command spends in all, so it ends inside a client's two-minute tool call;
# entries left then are run by the next command (results are kept).
TEST_SECONDS = 20
SCORER_SECONDS = 60
COMMAND_SECONDS = 100
# Scores closer than this share of the larger are not decided by the bench: its instances are
# not the task's, and a gap this small between two good heuristics says more about the
# instances. A gap over it is confirmed by a second run of each side (REPEATS): a heuristic
# that stops on a clock scores differently with the machine's load.
SCORE_MARGIN = 0.005
REPEATS = 2
# The bench keeps up to MOST_SCORERS scorers, each from a different job, and a scored gap is
# decided when AGREE of them lean the same way and none the other (score_decision).
MOST_SCORERS = BENCH_SCORERS
AGREE = 2
MAX_FAILED_SHOWN = 5
MAX_LINE = 160
AGENT_ID = re.compile(r"\ba\d{3,4}\b")


class BenchError(ValueError):
    """A bench.json or an entry the engine refuses; the message says what to fix."""


# ---------------------------------------------------------------- what a job adds

def installed_elsewhere(name):
    """True for a module this Python finds outside its standard library: a package installed
    here that another machine may lack. A module it does not find at all is taken to be one the
    entry writes itself (the solution's code, written out from solution.md)."""
    if name in sys.builtin_module_names:
        return False
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    if spec is None or spec.origin in ("built-in", "frozen"):
        return False
    origin = spec.origin or (list(spec.submodule_search_locations or [None])[0])
    if not origin:
        return True
    origin = os.path.realpath(origin)
    tops = {os.path.realpath(sysconfig.get_paths()[k]) for k in ("stdlib", "platstdlib")}
    inside = any(origin.startswith(top + os.sep) for top in tops)
    return not inside or "site-packages" in origin or "dist-packages" in origin


def foreign_imports(source, own):
    """The top-level modules a script imports that this Python finds installed outside its
    standard library (installed_elsewhere), its own files aside."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return sorted(n for n in found if n not in own and installed_elsewhere(n))


def read_text_file(folder, name, what):
    real = resolve_in(folder, name) if isinstance(name, str) and name and "/" not in name and "\\" not in name \
        else None
    if real is None or os.path.islink(os.path.join(folder, name)):
        raise BenchError("%s %r is not a plain file directly in your work folder" % (what, str(name)[:60]))
    if os.path.getsize(real) > MAX_FILE_BYTES:
        raise BenchError("%s %s is over %d KiB" % (what, name, MAX_FILE_BYTES // 1024))
    with open(real, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BenchError("%s %s is not UTF-8 text" % (what, name))
    if ".arena" in text:
        raise BenchError("%s %s names a path of the run; an entry reads only its own files and the solution "
                         "file it is given" % (what, name))
    if AGENT_ID.search(text):
        raise BenchError("%s %s names an agent (%s); the bench is shown to blind judges, so name no agent"
                         % (what, name, AGENT_ID.search(text).group(0)))
    return raw, text


def read_marks(folder, path):
    """The entries a job's bench.json lists, checked: [{kind, file, data, for, better, files:
    {name: text}}]; [] when there is no bench.json. Raises BenchError naming what to fix."""
    manifest = os.path.join(folder, MANIFEST)
    if not os.path.lexists(manifest):
        return []
    where = "%s/%s" % (path, MANIFEST)
    raw, text = read_text_file(folder, MANIFEST, "the bench list")
    try:
        listed = json.loads(text)
    except ValueError as e:
        raise BenchError("%s is not valid JSON (%s)" % (where, str(e)[:80]))
    if not isinstance(listed, dict) or not isinstance(listed.get("bench"), list):
        raise BenchError("%s must be an object {\"bench\": [entries]}" % where)
    entries = listed["bench"]
    if len(entries) > PER_JOB:
        raise BenchError("%s lists %d entries; a job adds at most %d" % (where, len(entries), PER_JOB))
    marks = []
    for n, e in enumerate(entries, 1):
        what = "%s entry %d" % (where, n)
        if not isinstance(e, dict) or e.get("kind") not in KINDS:
            raise BenchError("%s: 'kind' must be \"test\" or \"scorer\"" % what)
        if not isinstance(e.get("for"), str) or not e["for"].strip():
            raise BenchError("%s: 'for' must say in one line what it checks (the requirement, or the score)" % what)
        better = e.get("better")
        if e["kind"] == "scorer" and better not in ("lower", "higher"):
            raise BenchError("%s: a scorer says whether a \"lower\" or \"higher\" score is 'better'" % what)
        data = e.get("data", [])
        if not isinstance(data, list) or len(data) > DATA_FILES or not all(isinstance(d, str) for d in data):
            raise BenchError("%s: 'data' must list at most %d file names" % (what, DATA_FILES))
        script = e.get("file")
        if not isinstance(script, str) or not script.endswith(".py"):
            raise BenchError("%s: 'file' must name a .py file in your work folder" % what)
        names = [script] + [d for d in data if d != script]
        if len(set(names)) != len(names) or "solution.md" in names:
            raise BenchError("%s: its files need distinct names, none of them solution.md" % what)
        files, size = {}, 0
        for name in names:
            raw_file, body = read_text_file(folder, name, "%s: file" % what)
            size += len(raw_file)
            files[name] = body
        if size > MAX_ENTRY_BYTES:
            raise BenchError("%s: its files hold %d bytes, over %d KiB" % (what, size, MAX_ENTRY_BYTES // 1024))
        own = {os.path.splitext(name)[0] for name in names if name.endswith(".py")}
        for name in names:
            if not name.endswith(".py"):
                if name.endswith(".json"):
                    try:
                        json.loads(files[name])
                    except ValueError as err:
                        raise BenchError("%s: %s is not valid JSON (%s)" % (what, name, str(err)[:60]))
                continue
            try:
                foreign = foreign_imports(files[name], own)
            except (SyntaxError, ValueError) as err:
                raise BenchError("%s: %s does not parse as Python (%s)" % (what, name, str(err)[:80]))
            if foreign:
                raise BenchError("%s: %s imports %s, installed here outside the standard library; an entry may "
                                 "import only the standard library, its own files and the solution's module"
                                 % (what, name, ", ".join(foreign)))
        mark = {"kind": e["kind"], "file": script, "data": names[1:], "for": e["for"].strip()[:MAX_LINE],
                "files": files}
        if better:
            mark["better"] = better
        marks.append(mark)
    return marks


def digest(mark):
    """The entry's folder name: its files' digest, which names no job and no agent."""
    h = hashlib.sha256()
    for name in sorted(mark["files"]):
        h.update(name.encode("utf-8") + b"\0" + mark["files"][name].encode("utf-8") + b"\0")
    return h.hexdigest()[:12]


def copy_in(run, marks):
    """Copy checked entries into bench/<digest>/; the journal's form of them (no file texts)."""
    kept = []
    for mark in marks:
        folder = "bench/%s" % digest(mark)
        os.makedirs(run.path(folder), exist_ok=True)
        for name, text in mark["files"].items():
            with open(run.path(folder, name), "w", encoding="utf-8") as f:
                f.write(text)
        kept.append(dict({k: v for k, v in mark.items() if k != "files"}, dir=folder))
    return kept


def marks_of(run, st, job):
    """The journal's form of the entries a collected job adds; [] without --run-code."""
    if not st.get("bench_on"):
        return []
    folder = run.path(work_folder(job))
    return copy_in(run, read_marks(folder, os.path.join(run.dir, work_folder(job))))


# ---------------------------------------------------------------- running it

def solution_digest(text):
    """What results are kept by: the solution's text without the line naming the job that wrote
    it, so a revision that only copies the solution it revises reuses its results (a scorer of a
    heuristic that stops on a clock would otherwise score the same code twice, differently)."""
    return hashlib.sha256(JOB_HEADER.sub("", text, count=1).encode("utf-8")).hexdigest()[:16]


def result_path(run, entry, text):
    return run.path("bench", "results", "%s-%s.json" % (entry["id"], solution_digest(text)))


def kept_result(run, entry, text):
    try:
        with open(result_path(run, entry, text), encoding="utf-8") as f:
            found = json.load(f)
        return found if isinstance(found, dict) else None
    except (OSError, ValueError):
        return None


def short(text):
    text = AGENT_ID.sub("agent", " ".join(str(text).split()))
    return text if len(text) <= MAX_LINE else text[:MAX_LINE - 3] + "..."


def read_result(entry, ran):
    """What one run of an entry says: {"cases", "failed", "first"} for a test, {"score"} for
    the scorer, {"error"} when it did not end with the JSON line its kind prints."""
    if ran["status"] is None:
        return {"error": "timed out after %d s" % seconds_for(entry)}
    if ran["limit"]:
        return {"error": ran["limit"]}
    lines = [line for line in ran["text"].splitlines() if line.strip()]
    try:
        said = json.loads(lines[-1]) if lines else None
    except ValueError:
        said = None
    if not isinstance(said, dict):
        tail = lines[-1] if lines else "no output"
        return {"error": "its last line is not a JSON object: %s" % short(tail)}
    if entry["kind"] == "scorer":
        score = said.get("score")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or score != score \
                or score in (float("inf"), float("-inf")):
            return {"error": "no finite 'score' in %s" % short(lines[-1])}
        return {"score": score}
    cases, failed = said.get("cases"), said.get("failed")
    if isinstance(cases, bool) or not isinstance(cases, int) or cases < 0 or not isinstance(failed, list):
        return {"error": "a test prints {\"cases\": N, \"failed\": [...]}, not %s" % short(lines[-1])}
    return {"cases": cases, "failed": len(failed), "first": [short(f) for f in failed[:MAX_FAILED_SHOWN]]}


def fresh_folder(folder):
    if os.path.isdir(folder) and not os.path.islink(folder):
        shutil.rmtree(folder, ignore_errors=True)
    elif os.path.lexists(folder):
        os.unlink(folder)
    os.makedirs(folder)


def run_entry(run, st, entry, text, key, folder, before=None):
    """Run one entry on one solution text in folder (made afresh); the result, also kept by
    key (the text of the solution it stands for: a judge runs a blinded copy). before is a
    scorer's kept result this run repeats: the result then holds both runs (with_repeat)."""
    folder = os.path.abspath(folder)
    try:
        fresh_folder(folder)
        for name in [entry["file"]] + entry["data"]:
            shutil.copyfile(run.path(entry["dir"], name), os.path.join(folder, name))
        with open(os.path.join(folder, "solution.md"), "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        # a damaged bench folder: the entry decides nothing for this solution, and the run goes on
        found = {"error": "its files could not be set up (%s: %s)" % (e.strerror or e, os.path.basename(
            e.filename or "")), "seconds": 0.0}
    else:
        ran = run_script(os.path.join(folder, entry["file"]), ["solution.md"], folder, seconds_for(entry),
                         keep=st.get("run_code_env", ()), project=".")
        found = dict(read_result(entry, ran), seconds=round(ran["seconds"], 1))
    if entry["kind"] == "scorer":
        found = with_repeat(before, found)
    path = result_path(run, entry, key)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp%d" % os.getpid()
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(found, f)
    os.replace(tmp, path)
    return found


def with_repeat(before, found):
    """A scorer's result after one more run: {"score": the average, "runs": [each run's]}; an
    error in either run is the result's error (a scorer that fails on a solution now and then
    decides nothing for it)."""
    if found.get("error") or not before:
        return dict(found, runs=[found["score"]]) if "score" in found else found
    if before.get("error"):
        return before
    runs = runs_of(before) + [found["score"]]
    return {"score": sum(runs) / len(runs), "runs": runs,
            "seconds": round(before.get("seconds", 0) + found["seconds"], 1)}


def runs_of(r):
    """A scorer result's figures, one per run (a result kept before repeats were: its score)."""
    return list(r.get("runs") or [r["score"]])


def run_bench(run, st, sides, folder, only=None, seconds=COMMAND_SECONDS):
    """Every entry on every side: {entry id: {label: result or None (not run: time)}}.

    sides is [(label, the text to run, the text results are kept by)]; folder is where the
    runs happen (a job's work folder). Kept results are reused, so a second look, or a command
    cut short, runs only what is left. A scorer whose single runs put two sides more than the
    margin apart runs again on each side that has run once (needs_repeat)."""
    start = time.time()
    out = {}
    labels = [label for label, _, _ in sides]
    for entry in st.get("bench", []):
        if only and entry["id"] not in only:
            continue
        row = out.setdefault(entry["id"], {})
        where = {label: os.path.join(folder, "bench", "%s-%s" % (entry["id"], label)) for label in labels}
        for label, text, key in sides:
            found = kept_result(run, entry, key)
            if found is None and time.time() - start < seconds:
                found = run_entry(run, st, entry, text, key, where[label])
            row[label] = found
        if not needs_repeat(entry, row, labels):
            continue
        for label, text, key in sides:
            if len(runs_of(row[label])) < REPEATS and time.time() - start < seconds:
                row[label] = run_entry(run, st, entry, text, key, where[label], before=row[label])
    return out


def kept_bench(run, st, sides):
    """The results already kept for these sides, nothing run: {entry id: {label: result or None}}."""
    return {e["id"]: {label: kept_result(run, e, text) for label, text in sides} for e in st.get("bench", [])}


# ---------------------------------------------------------------- reading it

def decision(entry, results, labels):
    """The label a test decides for between two sides, or None. A scorer decides nothing alone
    (score_decision reads the bench's scorers together)."""
    if len(labels) != 2 or entry["kind"] == "scorer":
        return None
    a, b = (results.get(x) for x in labels)
    if not a or not b:
        return None
    clean = [not r.get("error") and r.get("failed") == 0 for r in (a, b)]
    broke = [bool(r.get("error")) or r.get("failed", 0) > 0 for r in (a, b)]
    if clean[0] and broke[1]:
        return labels[0]
    if clean[1] and broke[0]:
        return labels[1]
    return None


def lean(entry, results, labels):
    """The label one scorer puts ahead of the other by more than its margin (score_margin),
    confirmed by a second run of each side, or None."""
    if entry["kind"] != "scorer" or len(labels) != 2:
        return None
    a, b = (results.get(x) for x in labels)
    if not scored(a, b) or needs_repeat(entry, results, labels):
        return None
    x, y = a["score"], b["score"]
    if abs(x - y) <= score_margin(a, b):
        return None
    lower = labels[0] if x < y else labels[1]
    return lower if entry.get("better") == "lower" else (labels[1] if lower == labels[0] else labels[0])


def score_decision(st, results, labels):
    """(the label the bench's scorers decide for or None, {scorer id: its lean}): a gap is
    decided when AGREE scorers that scored both sides lean the same way (all of them when fewer
    scored) and none leans the other way. Each scorer's instances are its writer's choice, and
    one scorer alone ranks solutions only as well as that choice (benchmarks/real-agents.md,
    run 13); scorers from different jobs that agree were right far more often."""
    leans, counted = {}, 0
    for entry in run_scorers(st):
        row = results.get(entry["id"], {})
        if len(labels) == 2 and scored(*(row.get(x) for x in labels)):
            counted += 1
            leans[entry["id"]] = lean(entry, row, labels)
    need = min(AGREE, counted)
    votes = [x for x in leans.values() if x]
    for label in labels:
        if need and votes.count(label) >= need and len(set(votes)) == 1:
            return label, leans
    return None, leans


def scored(*results):
    return all(r and "score" in r for r in results)


def over_margin(a, b):
    """True when two scores are more than SCORE_MARGIN of the larger apart."""
    top = max(abs(a["score"]), abs(b["score"]))
    return top > 0 and abs(a["score"] - b["score"]) > SCORE_MARGIN * top


def spread(r):
    runs = runs_of(r)
    return max(runs) - min(runs)


def score_margin(a, b):
    """How far apart two sides' scores must be for the scorer to decide: SCORE_MARGIN of the
    larger, or the two sides' spreads between their own runs together, whichever is more."""
    return max(SCORE_MARGIN * max(abs(a["score"]), abs(b["score"])), spread(a) + spread(b))


def needs_repeat(entry, results, labels):
    """True when a scorer's figures for two sides are over the margin while a side has run
    fewer than REPEATS times: the gap is not confirmed yet."""
    if entry["kind"] != "scorer" or len(labels) != 2:
        return False
    a, b = (results.get(x) for x in labels)
    if not scored(a, b) or not over_margin(a, b):
        return False
    return any(len(runs_of(r)) < REPEATS for r in (a, b))


def result_text(entry, r):
    if r is None:
        return "not run yet (the command's time ran out; run it again)"
    if r.get("error"):
        return "error: %s" % r["error"]
    if entry["kind"] == "scorer":
        runs = runs_of(r)
        if len(runs) < 2:
            return "score %s" % fmt_score(r["score"])
        return "score %s (the average of %s)" % (fmt_score(r["score"]), ", ".join(fmt_score(x) for x in runs))
    if not r["failed"]:
        return "passed all %d" % r["cases"]
    return "failed %d of %d: %s" % (r["failed"], r["cases"], "; ".join(r["first"]))


def fmt_score(x):
    return ("%d" % x) if float(x).is_integer() and abs(x) < 1e15 else ("%.6g" % x)


def entry_title(entry):
    if entry["kind"] == "scorer":
        return "%s scorer, %s (%s is better)" % (entry["id"], entry["for"], entry["better"])
    return "%s test, %s" % (entry["id"], entry["for"])


def report_lines(st, results, labels):
    """The `bench` command's lines: per entry, each side's result and what it decides; then
    what the scorers decide together."""
    lines = []
    won_score, leans = score_decision(st, results, labels)
    for entry in st.get("bench", []):
        row = results.get(entry["id"])
        if row is None:
            continue
        lines.append(entry_title(entry))
        for label in labels:
            lines.append("  %s: %s" % (label, result_text(entry, row.get(label))))
        won = decision(entry, row, labels)
        if won:
            lines.append("  decided: for %s" % won)
        elif needs_repeat(entry, row, labels):
            lines.append("  not confirmed yet: over the margin on one run; each side runs a second time (run the "
                         "command again)")
        elif leans.get(entry["id"]):
            lines.append("  leans: for %s (%s apart, over its margin of %s)" % (
                (leans[entry["id"]],) + tuple(fmt_score(x) for x in margin_figures(*(row[x] for x in labels)))))
        elif entry["id"] in leans:
            lines.append("  within its margin: %s apart, its margin %s"
                         % tuple(fmt_score(x) for x in margin_figures(*(row[x] for x in labels))))
    if leans:
        lines.append(score_line(won_score, leans, unconfirmed(st, results, labels)))
    return lines


def score_line(won, leans, waiting=()):
    """What the bench's scorers decide together, in one line of the `bench` command."""
    votes = [x for x in leans.values() if x]
    if waiting:
        return "the score: not decided yet: %s await%s a second run of each side (run the command again)" % (
            ", ".join(waiting), "s" if len(waiting) == 1 else "")
    if won:
        for_it = sorted(eid for eid, x in leans.items() if x == won)
        return "the score: decided for %s (%s: %s of %d scorers lean that way, none the other)" % (
            won, ", ".join(for_it), len(for_it), len(leans))
    if len(set(votes)) > 1:
        why = "the scorers disagree (%s)" % "; ".join("%s for %s" % (eid, x) for eid, x in sorted(leans.items()) if x)
    elif votes:
        why = "only %d of the %d scorers leans beyond its margin; it takes %d" % (len(votes), len(leans), AGREE)
    else:
        why = "every scorer finds the sides within its margin"
    return ("the score: not decided by the bench: %s. These figures are measurements like your own, not an open "
            "difference: weigh them with what you find" % why)


def margin_figures(a, b):
    return abs(a["score"] - b["score"]), score_margin(a, b)


def unconfirmed(st, results, labels):
    """The ids of the scorer entries whose gap between the two sides awaits its second runs."""
    return [e["id"] for e in st.get("bench", []) if needs_repeat(e, results.get(e["id"], {}), labels)]


def decisions(st, results, labels):
    """{entry id: label} of every entry that decides between the two sides: each test that
    decides, and when the scorers decide (score_decision), each scorer that leans that way."""
    out = {}
    for entry in st.get("bench", []):
        won = decision(entry, results.get(entry["id"], {}), labels)
        if won:
            out[entry["id"]] = won
    won, leans = score_decision(st, results, labels)
    if won:
        out.update((eid, won) for eid, side in leans.items() if side == won)
    return out


def compact(entry, r):
    """A result as the state keeps it in a verdict's summary: "7/9" for a test, the score, or "error"."""
    if r is None:
        return None
    if r.get("error"):
        return "error"
    if entry["kind"] == "scorer":
        return r["score"]
    return "%d/%d" % (r["cases"] - r["failed"], r["cases"])


def entry_of(st, eid):
    for entry in st.get("bench", []):
        if entry["id"] == eid:
            return entry
    raise ArenaError("the bench has no entry %s" % eid)


# ---------------------------------------------------------------- the survivors, measured by the engine
#
# Before a finished round with two or more survivors closes, the engine runs every entry on
# every survivor's solution itself, with no model call (most results are kept already: the
# survivors' judges ran the bench on the same texts). What it finds is journaled in a
# 'measured' event: each survivor's results (its bench score among them, comparable across
# matches because every survivor ran the same entries) and the survivors' groups by the
# bench's tests that a look has upheld. Survivors those tests split differ where the task
# decides, so no settle offer or settle probe comes for that round
# (state.offer_settle_or_probe).

MEASURE_FOLDER = "work/bench-measure"


def survivor_texts(run, st, agents):
    """[(agent, solution text)] of the agents with a solution the engine holds."""
    out = []
    for agent in agents:
        rel = st["sol"].get(agent)
        if rel:
            try:
                with open(run.path(rel), encoding="utf-8") as f:
                    out.append((agent, f.read()))
            except (OSError, UnicodeDecodeError):
                continue
    return out


def missing_runs(run, st, texts):
    """[(entry, agent, text)] of the runs the survivors' measurement still needs."""
    return [(entry, agent, text) for entry in st.get("bench", []) for agent, text in texts
            if kept_result(run, entry, text) is None]


def measure(run, st, texts, seconds=COMMAND_SECONDS):
    """Run what the measurement still needs, each run started only when it can end inside
    `seconds`; one process at a time (another one measuring: nothing is run here). Returns how
    many runs are left."""
    start = time.time()
    os.makedirs(run.path(MEASURE_FOLDER), exist_ok=True)
    try:
        import fcntl
        fd = os.open(run.path(MEASURE_FOLDER, "lock"), os.O_RDWR | os.O_CREAT, 0o644)
    except (ImportError, OSError):
        fd = None  # no lock to take here (Windows): two commands may run the same entry, harmlessly
    if fd is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return len(missing_runs(run, st, texts))
    try:
        tried = set()
        while True:
            # asked again after each run: survivors with one text share its result, so it runs once
            # (and once only: a result that cannot be kept is not run again by this command)
            missing = missing_runs(run, st, texts)
            fits = [m for m in missing if (m[0]["id"], m[2]) not in tried
                    and time.time() - start + seconds_for(m[0]) <= seconds]
            if not fits:
                return len(missing)
            entry, agent, text = fits[0]
            tried.add((entry["id"], text))
            run_entry(run, st, entry, text, text, run.path(MEASURE_FOLDER, "%s-%s" % (entry["id"], agent)))
    finally:
        if fd is not None:
            os.close(fd)


def seconds_for(entry):
    """The longest one run of an entry may take."""
    return SCORER_SECONDS if entry["kind"] == "scorer" else TEST_SECONDS


def behaviour(r):
    """What a test's result says a solution does, as the groups compare it."""
    if r.get("error"):
        return "error"
    if not r["failed"]:
        return "passed"
    return "failed %d: %s" % (r["failed"], "; ".join(r.get("first", [])))


def measured_event(run, st, agents, grouping):
    """The 'measured' event of the finished round from kept results, or None while a run is
    missing. Only the tests in `grouping` (state.grouping_tests: upheld by a look, disputed by
    none) group the survivors."""
    kept = kept_bench(run, st, survivor_texts(run, st, agents))
    if any(r is None for row in kept.values() for r in row.values()):
        return None
    found = {}
    for eid, row in kept.items():
        for agent, r in row.items():
            found.setdefault(agent, {})[eid] = r
    tests = [e["id"] for e in st.get("bench", []) if e["kind"] == "test" and e["id"] in grouping]
    by = {}
    for agent in sorted(found):
        by.setdefault(tuple(behaviour(found[agent][t]) for t in tests), []).append(agent)
    groups = sorted(by.values(), key=lambda g: (-len(g), g[0]))
    split = [t for t in tests if len({behaviour(found[a][t]) for a in found}) > 1]
    res = {agent: {eid: compact(entry_of(st, eid), r) for eid, r in row.items()} for agent, row in found.items()}
    return {"e": "measured", "round": len(st["rounds"]), "res": res, "groups": groups, "split": split,
            "tests": tests}


def behind(st, res):
    """{agent: how far behind the best survivor it scores, as a share of the best, averaged over
    the scorers that scored it} of a measurement; agents no scorer scored are left out. Each
    scorer's figures are on its own instances, so only these shares compare across scorers."""
    out = {}
    for scorer in run_scorers(st):
        figures = {a: row.get(scorer["id"]) for a, row in res.items()}
        figures = {a: x for a, x in figures.items() if isinstance(x, (int, float)) and not isinstance(x, bool)}
        if not figures:
            continue
        best = (min if scorer["better"] == "lower" else max)(figures.values())
        for agent, x in figures.items():
            gap = abs(x - best) / abs(best) if best else abs(x - best)
            out.setdefault(agent, []).append(gap)
    return {agent: sum(gaps) / len(gaps) for agent, gaps in out.items()}


def best_first(st, res):
    """The agents of a measurement, best bench score first (averaged over the scorers: behind);
    no scorer, or only errors: by name."""
    shares = behind(st, res)
    return sorted(res, key=lambda a: (0, shares[a], a) if a in shares else (1, 0, a))
