"""The user's tree: a fingerprint at init and the files changed outside .arena/ since.

Read-only over the working tree; it must never write outside the run folder. The
fingerprint skips .arena/ and .git/ and stops at 20,000 files, saying so. The records the
audit compares against (the fingerprint, and the snapshots of the temp and home folders)
live in the run folder, where sub-agents can write too; init journals a checksum of each,
and a record that no longer matches it is reported as damaged, never trusted.
"""

import hashlib
import json
import os

from .base import ArenaError, read_text


FINGERPRINT_FILES = 20000


FINGERPRINT_HASH = 1024 * 1024


FINGERPRINT_SKIP = (".arena", ".git")


def fingerprint(top="."):
    """{path: [size, mtime_ns, sha256 or None]} of the tree outside .arena/ and .git/.

    Files up to 1 MiB are hashed; larger ones are compared by size and time.
    Stops after 20,000 files and says so.
    """
    files, complete = {}, True
    for dirpath, dirnames, filenames in os.walk(top):
        if dirpath == top:
            dirnames[:] = [d for d in dirnames if d not in FINGERPRINT_SKIP]
        dirnames.sort()
        for name in sorted(filenames):
            if len(files) >= FINGERPRINT_FILES:
                return files, False
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, top)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            digest = None
            if os.path.isfile(path) and not os.path.islink(path) and info.st_size <= FINGERPRINT_HASH:
                try:
                    with open(path, "rb") as f:
                        digest = hashlib.sha256(f.read()).hexdigest()
                except OSError:
                    pass
            files[rel] = [info.st_size, info.st_mtime_ns, digest]
    return files, complete


# The audit's records, each written once by init.
RECORDS = ("fingerprint.json", "tempdir.json", "homedir.json")


def digest(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_record(run, name, digests):
    """(the record's data, None, False) or (None, why it cannot be used, whether it was
    damaged rather than never made). digests: {name: sha256} from the init event ({} for a
    run begun before they were kept)."""
    try:
        text = read_text(run.path(name), exact=True)
    except ArenaError:
        text = None
    if name in digests:
        if text is None:
            return None, ("its record %s was removed or made unreadable after init, so it cannot vouch for what "
                          "changed since; treat it as unknown" % name), True
        if digest(text) != digests[name]:
            return None, ("its record %s was changed after init (its checksum no longer matches the journal's), "
                          "so it cannot vouch for what changed since; treat it as unknown" % name), True
    elif text is None:
        return None, "no %s was recorded at init" % name, False
    try:
        return json.loads(text), None, False
    except ValueError:
        return None, "its record %s is damaged (not JSON); treat what changed since init as unknown" % name, True


def tree_changes(run, digests):
    """(paths created, changed or deleted outside .arena/ since init, note, False), or (None,
    why not, whether the record was damaged)."""
    before, problem, damaged = load_record(run, "fingerprint.json", digests)
    if problem:
        return None, problem, damaged
    if not isinstance(before, dict) or not isinstance(before.get("files"), dict):
        return None, "its record fingerprint.json is damaged; treat what changed since init as unknown", True
    now, complete = fingerprint(".")
    old = before["files"]
    changes = []
    for path in sorted(set(old) | set(now)):
        if path not in now:
            changes.append("deleted " + path)
        elif path not in old:
            changes.append("created " + path)
        elif old[path][0] != now[path][0] or old[path][2] != now[path][2] or (
                old[path][2] is None and old[path][1] != now[path][1]):
            changes.append("changed " + path)
    note = "" if before.get("complete") and complete else " (only the first %d files are watched)" % FINGERPRINT_FILES
    return changes, note, False
