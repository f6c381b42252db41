"""The user's tree: a fingerprint at init and the files changed outside .arena/ since.

Read-only over the working tree; it must never write outside the run folder. The
fingerprint skips .arena/ and .git/ and stops at 20,000 files, saying so.
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


def tree_changes(run):
    """Paths created, changed or deleted outside .arena/ since init."""
    try:
        before = json.loads(read_text(run.path("fingerprint.json")))
    except (ArenaError, ValueError):
        return None, "no fingerprint was recorded at init"
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
    return changes, note
