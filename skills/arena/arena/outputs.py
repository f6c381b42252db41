"""Reading and checking what sub-agents write, and turning it into events.

Every output file is untrusted: size limits, no links, the job header, attack and
answer formats, verdict JSON checked against the rubric. check_output reads one job's
files; collect_events makes done/fail events for every handed-out job. Both take the
command's Context (context.py). It never changes the state itself and never writes files.
"""

import json
import os
import re

from . import bench
from .attacks import LABEL_OF, FormatError, labels_of, read_attacks
from .base import BRACKET, JOB_HEADER, ArenaError, read_text
from .jobs import (DONE, FINAL, ISSUED, KIND, agent_of, attack_id, job_kind, match_of, output_limits, outputs_of,
                   status)
from .state import find_match, judge_sides, opponent
from .workspace import check_reproduced, find_reproducers, work_folder


class BadOutput(Exception):
    pass


def read_output(path, limit):
    """The text of an output file, None if it is not there yet."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if os.path.islink(path):
        raise BadOutput("%s is a symbolic link; write a plain file" % path)
    if not os.path.isfile(path):
        raise BadOutput("%s is not a plain file" % path)
    if info.st_size > limit:
        raise BadOutput("%s is %d bytes, over the %d-byte limit" % (path, info.st_size, limit))
    with open(path, "rb") as f:
        raw = f.read(limit + 1)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadOutput("%s is not UTF-8 text" % path)


HEADER = JOB_HEADER


def strip_header(text, job, path):
    m = HEADER.match(text)
    if not m:
        raise BadOutput("%s must start with the line '<!-- arena job: %s -->'" % (path, job))
    if m.group(1) != job:
        raise BadOutput("%s names job %s, expected %s" % (path, m.group(1), job))
    return text[m.end():]


def parse_attacks(body, path):
    """The attacks of an attack file (attacks.read_attacks), each with its label and reproducer."""
    try:
        return read_attacks(body)
    except FormatError as e:
        raise BadOutput(path + str(e))


def parse_answers(body, attacks, path):
    """'CR..' for the answers of a defence file; every attack answered once, in order."""
    found = re.findall(r"^## ANSWER (\S+) (\S+?):", body, re.M)
    if len(found) != attacks:
        raise BadOutput("%s answers %d attacks but %d were made; answer each exactly once" % (path, len(found), attacks))
    ans = ""
    for k, (num, word) in enumerate(found, 1):
        if num != str(k):
            raise BadOutput("%s: answer %s should be numbered %d" % (path, num, k))
        if word not in ("CONCEDE", "REBUT"):
            raise BadOutput("%s: answer %d says %r; use CONCEDE or REBUT" % (path, k, word[:20]))
        ans += word[0]
    return ans


def parse_also_fixed(body, raised, path):
    """The numbers of the ALSO FIXED sections: flaws from the list on the opponent's solution
    that the defender found in its own and fixed; each a real attack number, once."""
    found = re.findall(r"^## ALSO FIXED (\S+?):", body, re.M)
    numbers = []
    for num in found:
        if not num.isdigit() or not 1 <= int(num) <= raised:
            raise BadOutput("%s: ALSO FIXED %s names no attack on the opponent's solution (%s)" % (
                path, num[:10], "it had none" if not raised else "numbers 1 to %d" % raised))
        if int(num) in numbers:
            raise BadOutput("%s: ALSO FIXED %s appears twice; name each attack once" % (path, num))
        numbers.append(int(num))
    return sorted(numbers)


def parse_taken(body, path):
    """The one-line summaries of a merge's `## TAKEN <n>: ...` sections, numbered in order."""
    found = re.findall(r"^## TAKEN (\S+?): (.*)$", body, re.M)
    stray = [line for line in body.splitlines() if line.startswith("## ") and not re.match(r"## TAKEN \S+?: ", line)]
    if stray:
        raise BadOutput("%s has a heading that is not '## TAKEN <n>: ...': %r" % (path, stray[0][:60]))
    for k, (num, _) in enumerate(found, 1):
        if num != str(k):
            raise BadOutput("%s: TAKEN %s should be numbered %d" % (path, num[:10], k))
    return [what.strip()[:200] for _, what in found][:20]


def parse_probe(text, job, tries, path):
    """A probe's verdict: the survivors' labels grouped by the behaviour their code showed.

    tries: the (sides, labels) of the job's tries, the current one first; the verdict must use
    the labels of one of them, each exactly once."""
    try:
        v = json.loads(text, object_pairs_hook=unique_keys)
    except BadOutput as e:
        raise BadOutput("%s has a %s; write every key once" % (path, e))
    except (ValueError, RecursionError):
        raise BadOutput("%s is not valid JSON" % path)
    if not isinstance(v, dict) or v.get("job") != job:
        raise BadOutput("%s must hold one JSON object naming job %s" % (path, job))
    groups = v.get("groups")
    if not isinstance(groups, list) or not groups or not all(isinstance(g, list) and g for g in groups):
        raise BadOutput("%s: 'groups' must be a list of lists of labels, one list per behaviour found" % path)
    flat = [x for g in groups for x in g]
    sides, labels = next(((s, n) for s, n in tries if sorted(map(str, flat)) == sorted(n)), tries[0])
    if sorted(map(str, flat)) != sorted(labels):
        raise BadOutput("%s: 'groups' must hold each of the labels %s exactly once" % (path, ", ".join(labels)))
    inputs = v.get("inputs")
    if isinstance(inputs, bool) or not isinstance(inputs, int) or inputs < 1:
        raise BadOutput("%s: 'inputs' must be the number of inputs every solution was run on (1 or more)" % path)
    named = dict(zip(labels, sides))
    found = {"groups": [sorted(named[x] for x in g) for g in groups], "inputs": inputs}
    if "decided" in v or "open" in v:
        decided, open_ = v.get("decided", []), v.get("open", [])
        for key, items in (("decided", decided), ("open", open_)):
            if not isinstance(items, list) or len(items) > MAX_DIFFERENCES or not all(
                    isinstance(d, str) and d.strip() for d in items):
                raise BadOutput("%s: '%s' must be a list of at most %d strings" % (path, key, MAX_DIFFERENCES))
        if len(groups) > 1 and not decided:
            raise BadOutput("%s: %d groups but no decided difference; solutions are grouped by what the task decides, "
                            "so list what splits them under 'decided', or put them in one group" % (path, len(groups)))
        found["dif"] = [len(decided), len(open_)]
    return found


def check_solution(text, job, path):
    body = strip_header(text, job, path)
    if not body.strip():
        raise BadOutput("%s holds no solution" % path)
    return body


def unique_keys(pairs):
    """A JSON object whose keys are all different: with a repeated key, which one counts is a guess."""
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise BadOutput("duplicate key %r" % next(k for k in keys if keys.count(k) > 1)[:40])
    return dict(pairs)


def parse_verdict(text, job, labels, rubric, path, earlier=()):
    """Per-label scores and FATAL flags, each score checked against its maximum.

    earlier: the label pairs of the job's earlier tries; a verdict that uses one of
    them is a late answer to that try and is read with its labels ("labels" says which).
    """
    try:
        v = json.loads(text, object_pairs_hook=unique_keys)
    except BadOutput as e:
        raise BadOutput("%s has a %s; write every key once" % (path, e))
    except ValueError as e:
        raise BadOutput("%s is not valid JSON (%s)" % (path, str(e)[:80]))
    except RecursionError:
        raise BadOutput("%s nests too deeply to be a verdict" % path)
    if not isinstance(v, dict):
        raise BadOutput("%s must hold one JSON object" % path)
    if v.get("job") != job:
        raise BadOutput("%s names job %r, expected %s" % (path, str(v.get("job"))[:40], job))
    scores, fatal = v.get("scores"), v.get("fatal")
    if isinstance(scores, dict) and set(scores) != set(labels):
        labels = next((list(old) for old in earlier if set(scores) == set(old)), labels)
    if not isinstance(scores, dict) or set(scores) != set(labels):
        raise BadOutput("%s: 'scores' must have exactly the labels %s" % (path, " and ".join(labels)))
    if not isinstance(fatal, dict) or set(fatal) != set(labels) or not all(isinstance(x, bool) for x in fatal.values()):
        raise BadOutput("%s: 'fatal' must map %s to true or false" % (path, " and ".join(labels)))
    out = {}
    for label in labels:
        card = scores[label]
        if not isinstance(card, dict) or set(card) != {c for c, _, _ in rubric}:
            raise BadOutput("%s: scores for %s must have exactly %s" % (path, label, ", ".join(c for c, _, _ in rubric)))
        row = []
        for crit, top, _ in rubric:
            x = card[crit]
            if isinstance(x, bool) or not isinstance(x, int):
                raise BadOutput("%s: %s %s is %r, not a whole number" % (path, label, crit, x))
            if not 0 <= x <= top:
                raise BadOutput("%s: %s %s is %d, max is %d" % (path, label, crit, x, top))
            row.append(x)
        out[label] = row
    conf = v.get("confidence", "high")
    if conf not in ("high", "low"):
        raise BadOutput("%s: confidence must be \"high\" or \"low\"" % path)
    equivalent = v.get("equivalent", False)
    if not isinstance(equivalent, bool):
        raise BadOutput("%s: equivalent must be true or false" % path)
    decided, open_ = differences(v, labels, path)
    if decided is not None:
        if equivalent and decided:
            raise BadOutput("%s: equivalent is true but 'decided' lists %d difference(s); equivalent means no "
                            "difference the task decides: set equivalent to false, or move them to 'open'"
                            % (path, len(decided)))
        equivalent = not decided
        check_supported(decided, out, labels, rubric, path)
    reason = v.get("reason", "")
    found = {"sc": out, "fat": {k: fatal[k] for k in labels}, "conf": conf,
             "why": (reason if isinstance(reason, str) else "")[:300], "labels": list(labels)}
    if decided is not None:
        # counts only: the differences themselves stay in the verdict file, for the report
        found["dif"] = [len(decided), len(open_)]
        found["decided_list"] = decided
    disputed = v.get("disputed", {})
    if not isinstance(disputed, dict) or not all(isinstance(k, str) and isinstance(x, str) and x.strip()
                                                 for k, x in disputed.items()):
        raise BadOutput("%s: 'disputed' must map bench entry ids to why each misreads the task, like "
                        "{\"b02\": \"the task leaves the error type open\"}" % path)
    found["disputed"] = disputed
    if equivalent:
        found["eq"] = True
    if "reproduced" in v:
        # checked by the caller, once it knows which try's labels the verdict used
        found["reproduced"] = v["reproduced"]
    return found


# Most differences a verdict or a probe may list under each of 'decided' and 'open'.
MAX_DIFFERENCES = 20


def differences(v, labels, path):
    """(decided, open) of a verdict: the differences the task decides, each naming the label the
    task supports, and those it leaves open; (None, None) for a verdict without them (written
    to an older brief: its 'equivalent' stands)."""
    if "decided" not in v and "open" not in v:
        return None, None
    decided, open_ = v.get("decided", []), v.get("open", [])
    if not isinstance(decided, list) or len(decided) > MAX_DIFFERENCES or not all(
            isinstance(d, dict) and isinstance(d.get("difference"), str) and d["difference"].strip()
            and d.get("supports") in labels for d in decided):
        raise BadOutput("%s: 'decided' must be a list of at most %d {\"difference\": \"...\", \"supports\": "
                        "<%s>} objects, one per difference the task decides" % (path, MAX_DIFFERENCES,
                                                                              " or ".join(labels)))
    if not isinstance(open_, list) or len(open_) > MAX_DIFFERENCES or not all(
            isinstance(d, str) and d.strip() for d in open_):
        raise BadOutput("%s: 'open' must be a list of at most %d strings, one per difference the task leaves open"
                        % (path, MAX_DIFFERENCES))
    return decided, open_


def check_supported(decided, scores, labels, rubric, path):
    """Decided differences are scored under correctness and completeness: when every one of
    them supports one side, the other may not score higher on those two."""
    backed = {d["supports"] for d in decided}
    if len(backed) != 1 or len(labels) != 2:
        return
    (side,) = backed
    other = labels[1] if side == labels[0] else labels[0]
    names = [c for c, _, _ in rubric]
    firm = [names.index(c) for c in ("correctness", "completeness") if c in names]
    if sum(scores[other][i] for i in firm) > sum(scores[side][i] for i in firm):
        raise BadOutput("%s: every decided difference supports %s, yet %s scores higher on %s; score the decided "
                        "differences there, or say why they are open" % (path, side, other,
                                                                          " and ".join(names[i] for i in firm)))


def judged_reproducers(st, job, sides, names):
    """{label: [attack numbers]} of the attacks on each side of a judged match that carry a reproducer."""
    if job_kind(job) != "judge":
        return {}
    m = find_match(st, match_of(job))
    found = {}
    for side, name in zip(sides, names):
        carried = st["summ"].get(attack_id(match_of(job), opponent(m, side)), {}).get("rp")
        if carried:
            found[name] = list(carried)
    return found


def check_output(ctx, job, seen=None):
    """('done', summary) or ('fail', reason) or (None, None) when not written yet.

    Each kind's files are read by the function jobs.KIND names for it (READERS below), given
    the job, the files' texts and the paths to name in a refusal. seen, a list, receives the
    texts read, so the caller keeps exactly what was checked."""
    run = ctx.run
    outs = outputs_of(job)
    try:
        texts = [read_output(run.path(p), limit) for p, limit in zip(outs, output_limits(job))]
        if any(t is None for t in texts):
            return None, None
        if seen is not None:
            seen[:] = texts
        shown = [os.path.join(run.dir, p) for p in outs]
        return "done", READERS[KIND[job_kind(job)].check](ctx, job, texts, shown)
    except BadOutput as e:
        return "fail", str(e)


def read_solution(ctx, job, texts, shown):
    """A first solution."""
    check_solution(texts[0], job, shown[0])
    return {"sol": outputs_of(job)[0]}


def read_merge(ctx, job, texts, shown):
    """The merge's notes of what it took, and the challenger."""
    taken = parse_taken(strip_header(texts[0], job, shown[0]), shown[0])
    check_solution(texts[1], job, shown[1])
    return {"taken": taken, "sol": outputs_of(job)[1]}


def label_tries(st, job):
    """The (sides, labels) of a judging job's tries, the current one first."""
    info = st["jobs"][job]
    return [info.get("lab") or judge_sides(st, job, info["t"])] + list(reversed(info.get("old", [])))


def read_probe(ctx, job, texts, shown):
    return with_bench(ctx, job, parse_probe(texts[0], job, label_tries(ctx.st, job), shown[0]))


def with_bench(ctx, job, out):
    """out with the bench entries the job lists in its work folder's bench.json, checked
    (bench.read_marks; their texts still in, for collect_events to copy)."""
    if not ctx.st.get("bench_on"):
        return out
    try:
        marks = bench.read_marks(ctx.run.path(work_folder(job)), os.path.join(ctx.run.dir, work_folder(job)))
    except bench.BenchError as e:
        raise BadOutput(str(e))
    if marks:
        out["bench"] = marks
    return out


def bench_sides(ctx, sides, names):
    """[(label, the text bench results are kept by)] of a judging job's sides: each side's
    latest solution as the engine holds it, whatever copy a job ran the bench on."""
    return [(name, read_text(ctx.run.path(ctx.st["sol"][side]))) for side, name in zip(sides, names)
            if ctx.st["sol"].get(side)]


def bench_checked(ctx, job, v, sides, names, path):
    """A look's bench results: {entry: {side: compact result}} and {entry: side} of those that
    decide. Refused when an entry the bench had at hand-out has no result for a side (the judge
    did not run it), or when an entry decides for a side the verdict neither supports in
    'decided' nor names in 'disputed'."""
    st = ctx.st
    had = st["jobs"][job].get("bn", 0)
    if not had:
        return {}, {}
    keyed = bench_sides(ctx, sides, names)
    results = bench.kept_bench(ctx.run, st, keyed)
    missing = [e["id"] for e in st["bench"][:had] if any(results[e["id"]].get(n) is None for n, _ in keyed)]
    held = {e["id"] for e in st["bench"][:had]}
    missing += [e for e in bench.unconfirmed(st, results, list(names)) if e in held and e not in missing]
    if missing:
        raise BadOutput("%s: the bench was not run on both solutions (%s); run `%s bench --run %s --job %s` "
                        "first, then judge with its results" % (path, ", ".join(missing), bench_command(), st["run"],
                                                                job))
    decides = bench.decisions(st, results, list(names))
    supported = {d["supports"] for d in v.get("decided_list", [])}
    disputed = v.get("disputed", {})
    for eid, label in sorted(decides.items()):
        if label not in supported and eid not in disputed:
            raise BadOutput("%s: bench entry %s decides for %s (%s); list that difference in 'decided' with "
                            "\"supports\": \"%s\", or say in 'disputed' why %s misreads the task"
                            % (path, eid, label, bench.entry_of(st, eid)["for"], label, eid))
    by_name = {n: s for s, n in zip(sides, names)}
    kept = {eid: {by_name[n]: bench.compact(bench.entry_of(st, eid), r) for n, r in row.items()}
            for eid, row in results.items() if any(r is not None for r in row.values())}
    return kept, {eid: by_name[label] for eid, label in decides.items()}


def bench_command():
    return 'python3 -S "%s"' % BRACKET


def read_attack(ctx, job, texts, shown):
    """An attack list: its labels, and with --run-code the reproducers it carries."""
    body = strip_header(texts[0], job, shown[0])
    out = with_bench(ctx, job, {"labels": labels_of(parse_attacks(body, shown[0]))})
    if ctx.st.get("run_code"):
        try:
            reproducers = find_reproducers(body, ctx.run.path(work_folder(job)), shown[0])
        except ValueError as e:
            raise BadOutput(str(e))
        if reproducers:
            out["rp"] = reproducers
    return out


def read_defence(ctx, job, texts, shown):
    """A defence: an answer to every attack on its side, the flaws of the other list it fixed too,
    and the revised solution."""
    st = ctx.st
    m, mid, who = find_match(st, match_of(job)), match_of(job), agent_of(job)
    attacks = len(st["summ"].get(attack_id(mid, opponent(m, who)), {}).get("labels", ""))
    raised = len(st["summ"].get(attack_id(mid, who), {}).get("labels", ""))
    body = strip_header(texts[0], job, shown[0])
    ans = parse_answers(body, attacks, shown[0])
    also = parse_also_fixed(body, raised, shown[0])
    check_solution(texts[1], job, shown[1])
    done = {"ans": ans, "sol": outputs_of(job)[1]}
    if also:
        done["also"] = also
    return with_bench(ctx, job, done)


def read_verdict(ctx, job, texts, shown):
    """A judge's verdict (a match's look, or the baseline check), read with the labels of the
    try it answers and turned from labels into sides."""
    st = ctx.st
    tries = label_tries(st, job)
    v = parse_verdict(texts[0], job, tries[0][1], ctx.rubric, shown[0], [names for _, names in tries[1:]])
    sides, names = next((sides, names) for sides, names in tries if list(names) == v["labels"])
    reproduced = None
    if "reproduced" in v:
        try:
            reproduced = check_reproduced(v["reproduced"], list(names), judged_reproducers(st, job, sides, names),
                                          shown[0])
        except ValueError as e:
            raise BadOutput(str(e))
    # "names" keeps which blind label stood for which side, so the report can show the
    # judge's reason with agent ids once the match is decided and the job's labels are gone
    by_side = {"sc": {s: v["sc"][n] for s, n in zip(sides, names)},
               "fat": {s: v["fat"][n] for s, n in zip(sides, names)},
               "conf": v["conf"], "names": {n: s for s, n in zip(sides, names)}}
    if v.get("eq") and job_kind(job) == "judge":
        by_side["eq"] = True
    if "dif" in v:
        by_side["dif"] = v["dif"]
    if reproduced:
        by_side["rep"] = {s: reproduced[n] for s, n in zip(sides, names) if reproduced.get(n)}
    if job != FINAL and st.get("bench_on"):
        kept, decides = bench_checked(ctx, job, v, sides, names, shown[0])
        if kept:
            by_side["bn"] = kept
        if decides:
            by_side["bd"] = decides
        # entries the judge said misread the task group no survivors (bench.measured_event)
        disputed = sorted(e for e in v.get("disputed", {}) if e in {b["id"] for b in st["bench"]})
        if disputed:
            by_side["bx"] = disputed
        with_bench(ctx, job, by_side)
    if job == FINAL:  # judges' reasons stay in their files; the one final reason is shown by winner
        by_side["why"] = v["why"]
    return by_side


# The reader of each kind's files, by the name jobs.KIND gives it.
READERS = {"read_solution": read_solution, "read_attack": read_attack, "read_defence": read_defence,
           "read_verdict": read_verdict, "read_probe": read_probe, "read_merge": read_merge}


def collect_events(ctx, retry=False, only=None):
    """Events for every handed-out job whose output arrived (or, with retry, never will);
    `only` limits it to those jobs (a lane collects the one job it ran).

    Returns (events, notes, texts): texts is {job: [the texts read]} for each job collected,
    for the caller to keep beside the run (kept_copy) as what was collected."""
    events, notes, kept = [], [], {}
    for job, info in sorted(ctx.st["jobs"].items()):
        if info["s"] != ISSUED or (only is not None and job not in only):
            continue
        seen = []
        verdict, detail = check_output(ctx, job, seen)
        if verdict == "done":
            if detail.get("bench"):
                # the files go to bench/ now; the journal keeps where, never their texts
                detail["bench"] = bench.copy_in(ctx.run, detail["bench"])
            events.append({"e": "done", "job": job, "out": detail})
            kept[job] = seen
        elif verdict == "fail":
            events.append({"e": "fail", "job": job, "why": detail})
            notes.append("%s: %s" % (job, detail))
        elif retry:
            events.append({"e": "fail", "job": job, "why": "no output after its agent returned"})
            notes.append("%s: no output" % job)
    # a judge's verdict is read in the context of the state after the others
    return events, notes, kept


def kept_copy(path):
    """Where the text of an output file is kept as the engine collected it, relative to the run."""
    return "kept/" + path


def changed_since_collected(ctx, job):
    """The output paths of a collected job whose files no longer read as what was collected
    (its agent wrote on after the engine read them); [] when none did, or when no copy was
    kept (a job collected by an earlier bracket.py, or one that fell back)."""
    if status(ctx.st, job) != DONE or ctx.st["summ"].get(job, {}).get("missing"):
        return []
    changed = []
    for path, limit in zip(outputs_of(job), output_limits(job)):
        try:
            with open(ctx.run.path(kept_copy(path)), "rb") as f:
                was = f.read()
        except OSError:
            continue
        try:
            now = read_output(ctx.run.path(path), limit)
        except BadOutput:
            now = None
        if now is None or now.encode("utf-8") != was:
            changed.append(path)
    return changed


def attacks_on(ctx, job):
    """[(label, summary)] of the attacks that counted in a match, read again for the report.

    None for a list refused on every try (it counted as none). A file rewritten after it
    was checked (a late try) shows the labels that counted, not its new text."""
    st = ctx.st
    done = st["summ"].get(job, {})
    if status(st, job) != DONE or done.get("missing"):
        return []
    counted = done.get("labels", "")
    try:
        found = read_attacks(HEADER.sub("", read_text(ctx.run.path(outputs_of(job)[0])), count=1))
    except (ArenaError, FormatError):
        found = None
    if found is None or labels_of(found) != counted:
        return [(LABEL_OF[c], "(its file changed after it was checked)") for c in counted]
    return [(a.label, a.summary) for a in found]
