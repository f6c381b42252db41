"""Each job's work folder, the time a job is worth, and reproducers.

Every job gets `work/<job>/` in the run folder for its scratch files. With `init
--run-code`, `bracket.py exec` runs a Python script from that folder for the job that
owns it (sandbox.py runs it); otherwise nothing is run for a sub-agent. An attack may name
a reproducer, a file in the attacker's work folder; judges get a copy without agent ids in
theirs.
"""

import os
import re

from .base import ArenaError
from .attacks import REPRODUCER, FormatError, read_attacks
from .jobs import KINDS_IN_ORDER


# Minutes each kind of job is worth (jobs.KIND: a spawn writes a whole solution, a judge
# reads two and scores them), and the phase names users type for them.
PHASE_MINUTES = {k.name: k.minutes for k in KINDS_IN_ORDER}
PHASE_WORDS = {k.word: k.name for k in KINDS_IN_ORDER}


EXEC_SECONDS = 60


EXEC_MAX_SECONDS = 600


MAX_REPRODUCER_BYTES = 256 * 1024


VERDICT_REPRODUCED = ("yes", "fixed", "no", "not run")


def parse_job_minutes(text):
    """Minutes per job kind from `15` (spawn 15, the rest in proportion) or `spawn=20,judge=6`."""
    text = (text or "").strip()
    minutes = dict(PHASE_MINUTES)
    if not text:
        return minutes
    if re.match(r"^\d+$", text):
        spawn = int(text)
        if not 1 <= spawn <= 600:
            raise ArenaError("--job-minutes must be 1 to 600, not %s" % text)
        for kind, default in PHASE_MINUTES.items():
            minutes[kind] = max(1, int(round(default * spawn / float(PHASE_MINUTES["spawn"]))))
        return minutes
    for part in text.split(","):
        m = re.match(r"^\s*([a-z]+)\s*=\s*(\d+)\s*$", part)
        if not m or m.group(1) not in PHASE_WORDS or not 1 <= int(m.group(2)) <= 600:
            raise ArenaError("--job-minutes takes a number (spawn minutes; the other phases scale with it) or "
                             "phase=minutes pairs like spawn=20,judge=6 (phases: %s; 1 to 600 each), not %r"
                             % (", ".join(PHASE_WORDS), text[:60]))
        minutes[PHASE_WORDS[m.group(1)]] = int(m.group(2))
    return minutes


def format_minutes(minutes):
    return ", ".join("%s %d" % (word, minutes[kind]) for word, kind in PHASE_WORDS.items())


def work_folder(job):
    """A job's work folder, relative to the run folder."""
    return "work/%s" % job


def inside(path, folder):
    """True when path, links resolved, is folder or below it."""
    real, top = os.path.realpath(path), os.path.realpath(folder)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def resolve_in(folder, name):
    """The real path of a file a sub-agent named, if it lies in folder; else None.

    Accepted: a name relative to the folder, the path as the project sees it
    (`.arena/<run>/work/<job>/x.py`), or an absolute path.
    """
    for path in (os.path.join(folder, name), name):
        try:
            if os.path.isfile(path) and inside(path, folder):
                return os.path.realpath(path)
        except (ValueError, OSError):  # a NUL byte or a name too long for the system
            return None
    return None


# ---------------------------------------------------------------- reproducers

def find_reproducers(body, folder, path):
    """{attack number as text: file name within folder} of an attack file's reproducers.

    folder is the attacker's work folder. Raises ValueError with a message for the
    sub-agent when a reproducer is malformed.
    """
    found = {}
    try:
        attacks = read_attacks(body)
    except FormatError as e:
        raise ValueError(path + str(e))
    for attack in attacks:
        name, number = attack.reproducer, attack.number
        if name is None:
            continue
        if not attack.output:
            raise ValueError("%s: attack %d names a reproducer but no 'Output:' line follows it with what it printed"
                             % (path, number))
        if not name:
            raise ValueError("%s: attack %d has an empty 'Reproducer:' line" % (path, number))
        real = resolve_in(folder, name)
        if real is None:
            raise ValueError("%s: attack %d names reproducer %r, which is not a file in your work folder %s/"
                             % (path, number, name[:80], folder))
        if os.path.getsize(real) > MAX_REPRODUCER_BYTES:
            raise ValueError("%s: attack %d: reproducer %s is over %d KiB" % (
                path, number, name[:80], MAX_REPRODUCER_BYTES // 1024))
        found[str(number)] = os.path.relpath(real, os.path.realpath(folder)).replace(os.sep, "/")
    return found


def point_reproducers(text, copies):
    """An attack file's text (the judge's copy, header removed) with each `Reproducer:` line
    naming the judge's copy instead. copies is {attack number as text: path of the copy}."""
    try:
        attacks = read_attacks(text)
    except FormatError:  # checked when it was collected; a copy that no longer parses keeps its lines
        return text
    pieces, last = [], 0
    for attack in attacks:
        path = copies.get(str(attack.number))
        if path:
            pieces.append(text[last:attack.start])
            pieces.append(REPRODUCER.sub(lambda _: "Reproducer: %s (a copy in your work folder)" % path,
                                         text[attack.start:attack.end], count=1))
            last = attack.end
    return "".join(pieces) + text[last:]


def check_reproduced(value, labels, expected, path):
    """A verdict's optional `reproduced` field: {label: {attack number: one of VERDICT_REPRODUCED}}.

    expected is {label: [attack numbers that carry a reproducer]}.
    """
    if not isinstance(value, dict):
        raise ValueError("%s: 'reproduced' must be an object like {\"%s\": {\"1\": \"yes\"}}" % (path, labels[0]))
    out = {}
    for label, entries in value.items():
        if label not in labels:
            raise ValueError("%s: 'reproduced' names %r; use the labels %s" % (path, str(label)[:20], " and ".join(labels)))
        if not isinstance(entries, dict):
            raise ValueError("%s: 'reproduced' for %s must be an object of attack number: result" % (path, label))
        for number, result in entries.items():
            if str(number) not in expected.get(label, []):
                raise ValueError("%s: 'reproduced' gives attack %s against %s, which carries no reproducer"
                                 % (path, str(number)[:10], label))
            if result not in VERDICT_REPRODUCED:
                raise ValueError("%s: 'reproduced' for attack %s against %s is %r; use %s" % (
                    path, number, label, str(result)[:20], ", ".join('"%s"' % r for r in VERDICT_REPRODUCED)))
            out.setdefault(label, {})[str(number)] = result
    return out
