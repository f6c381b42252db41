"""The attack file's format, read in one place: each attack with its label and its reproducer.

An attack file is a job header, then up to MAX_ATTACKS sections `## ATTACK <n> <FATAL|MAJOR|MINOR>:
<summary>`, numbered from 1, each with its text and at most one `Reproducer: <file>` line followed
by an `Output:` line. read_attacks is the one parser: the output check (outputs.py), the reproducer
copies (workspace.py) and the report's re-read all take its Attack records. Pure: text in, records
or a FormatError out; it knows nothing of runs, paths on disk or the state.
"""

import re
from collections import namedtuple

from .base import MAX_ATTACKS


# The labels an attack carries, and the one-letter code a job's summary keeps for each.
SEVERITY = {"FATAL": "F", "MAJOR": "M", "MINOR": "m"}
LABEL_OF = {code: label for label, code in SEVERITY.items()}


HEADING = re.compile(r"^## ATTACK (\S+) (\S+?):(.*)$", re.M)
REPRODUCER = re.compile(r"^Reproducer:[ \t]*(.*?)[ \t]*$", re.M)
NO_REPRODUCER = ("none", "n/a", "-")


class FormatError(ValueError):
    """An attack file that does not follow the format; the message follows the file's path
    (it starts with ' has' or ':')."""


# number: 1, 2, ...; label: FATAL, MAJOR or MINOR; summary: the heading's text after the colon;
# start, end: the section's span in the body (heading included); text: the section after its
# heading line; reproducer: what its `Reproducer:` line names (None without one, or for
# "none"; "" for an empty line), with output: whether an `Output:` line follows that line.
Attack = namedtuple("Attack", "number label summary start end text reproducer output")


def read_attacks(body):
    """[Attack] of an attack file's body (its job header already removed), in order.

    Raises FormatError for a stray `## ` heading, more than MAX_ATTACKS attacks, numbers out
    of order, an unknown label, or an attack naming more than one reproducer."""
    stray = [line for line in body.splitlines() if line.startswith("## ") and not HEADING.match(line)]
    if stray:
        raise FormatError(" has a heading that is not '## ATTACK <n> <FATAL|MAJOR|MINOR>: ...': %r" % stray[0][:60])
    heads = list(HEADING.finditer(body))
    if len(heads) > MAX_ATTACKS:
        raise FormatError(" has %d attacks; at most %d are allowed" % (len(heads), MAX_ATTACKS))
    found = []
    for k, m in enumerate(heads, 1):
        number, label = m.group(1), m.group(2)
        if number != str(k):
            raise FormatError(": attack %s should be numbered %d" % (number, k))
        if label not in SEVERITY:
            raise FormatError(": attack %d is labelled %r; use FATAL, MAJOR or MINOR" % (k, label[:20]))
        end = heads[k].start() if k < len(heads) else len(body)
        text = body[m.end():end]
        names = REPRODUCER.findall(text)
        if len(names) > 1:
            raise FormatError(": attack %d names %d reproducers; give at most one" % (k, len(names)))
        name = names[0].strip("`'\"") if names else None
        if name is not None and name.lower() in NO_REPRODUCER:
            name = None
        output = name is not None and bool(re.search(r"^Output:", text[text.index("Reproducer:"):], re.M))
        found.append(Attack(k, label, m.group(3).strip(), m.start(), end, text, name, output))
    return found


def labels_of(attacks):
    """The summary's code for a list of attacks: 'FMm' for a FATAL, a MAJOR and a MINOR."""
    return "".join(SEVERITY[a.label] for a in attacks)
