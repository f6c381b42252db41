"""Everything on disk that must survive a crash: the run folder, journal, state file and lock.

Every change is appended to journal.jsonl and fsynced, then applied and saved to
state.json (atomic rename, checksum, format number). Run.load finishes a command that
died between the two. This module decides nothing about the tournament; it only
persists and replays events through state.apply.
"""

import hashlib
import json
import os
import re
import sys
import time

from .base import ArenaError, FORMAT, RUN_NAME, read_text
from .state import EVENTS, apply, check_event, new_state, upgrade


KILLS = [0]


def kill_point(torn=None):
    """Test hook: with ARENA_KILL_AT=n the n-th point reached dies by SIGKILL (after calling torn)."""
    at = os.environ.get("ARENA_KILL_AT")
    if not at:
        return
    KILLS[0] += 1
    if str(KILLS[0]) == at:
        if torn:
            torn()
        os.kill(os.getpid(), 9)


def atomic_write(path, data, durable=True):
    """Write, flush, fsync, rename: a reader sees the old file or the new one.

    Briefs and judge copies are made again from the state if lost, so they
    skip the fsyncs (durable=False) and keep only the all-or-nothing rename.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    tmp = "%s.tmp-%d" % (path, os.getpid())
    with open(tmp, "wb") as f:
        f.write(data)
        if durable:
            f.flush()
            os.fsync(f.fileno())
    kill_point()
    os.replace(tmp, path)
    if not durable:
        return
    try:
        fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass


class RunLock:
    """An exclusive lock on one run, released by the kernel if the holder dies."""

    def __init__(self, path, wait=10.0):
        self.path, self.wait, self.fd = path, wait, None

    def __enter__(self):
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.time() + self.wait
        while not self._try():
            if time.time() >= deadline:
                os.close(self.fd)
                holder = read_text(self.path).strip() if os.path.exists(self.path) else "?"
                raise ArenaError("another bracket.py (%s) is working on this run; wait for it to finish, "
                                 "then run the command again" % (holder or "pid unknown"))
            time.sleep(0.05)
        os.ftruncate(self.fd, 0)
        os.write(self.fd, ("pid %d" % os.getpid()).encode())
        return self

    def _try(self):
        try:
            import fcntl
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except ImportError:
            try:
                import msvcrt
                msvcrt.locking(self.fd, msvcrt.LK_NBLCK, 1)
                return True
            except OSError:
                return False
        except OSError:
            return False

    def __exit__(self, *exc):
        os.close(self.fd)


STATE_HEAD = re.compile(r'^\{"format": (\d+), "sum": "([0-9a-f]{64})", "state": ')


class Run:
    """One run folder and its state, journal and lock."""

    def __init__(self, name, root=".arena"):
        if name == "":
            raise ArenaError("the run name is empty; pass --run NAME, or leave --run out for the latest run")
        if not RUN_NAME.match(name or ""):
            raise ArenaError("run name %r is not allowed: use letters, digits, '.', '_' or '-' (no '/' or '..')" % name)
        self.name, self.root = name, root
        self.dir = os.path.join(root, name)
        self.state_path = os.path.join(self.dir, "state.json")
        self.journal_path = os.path.join(self.dir, "journal.jsonl")

    def started(self):
        """Its init reached the journal: from then on the run exists and only next goes on."""
        return os.path.exists(self.state_path) or self.journal_tail() > 0

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def lock(self):
        if not os.path.isdir(self.dir):
            raise ArenaError("no run %r under %s/; start one with init, or pass --run NAME" % (self.name, self.root))
        return RunLock(self.path("lock"))

    def keep(self, rel, text):
        """Write a copy the engine keeps (the text of an output as it was collected)."""
        path = self.path(rel)
        folder = os.path.dirname(path)
        for up in (self.path(rel.split("/")[0]), folder):
            if os.path.islink(up) or (os.path.lexists(up) and not os.path.isdir(up)):
                os.remove(up)  # planted by a sub-agent: the copy must not leave the run folder
        os.makedirs(folder, exist_ok=True)
        if os.path.islink(path):
            os.remove(path)
        atomic_write(path, text, durable=False)

    def put_back(self, kept, rel):
        """Put a kept copy back where its output file is (the file changed into something that
        no longer counts as it did)."""
        if os.path.islink(self.path(kept)):
            return
        with open(self.path(kept), "rb") as f:
            atomic_write(self.path(rel), f.read(), durable=False)

    def set_aside(self, rel, attempt, tag=None):
        """Move a refused output (a file, folder or link) to out/refused/<name>.try<N>.<ext>, kept
        for the report; nothing there is ever read as an output again. tag replaces 'try<N>'."""
        src = self.path(rel)
        if not os.path.lexists(src):
            return
        folder = self.path("out", "refused")
        if os.path.islink(folder) or (os.path.lexists(folder) and not os.path.isdir(folder)):
            os.remove(folder)  # planted by a sub-agent: a move must not leave the run folder
        os.makedirs(folder, exist_ok=True)
        stem, ext = os.path.splitext(os.path.basename(rel))
        tag = tag or "try%d" % attempt
        dst, k = os.path.join(folder, "%s.%s%s" % (stem, tag, ext)), 1
        while os.path.lexists(dst):
            k += 1
            dst = os.path.join(folder, "%s.%s-%d%s" % (stem, tag, k, ext))
        os.rename(src, dst)

    # -- state
    def check_folder(self):
        """The run folder exists and neither it nor .arena leads elsewhere through a link."""
        for path in (self.root, self.dir, self.path("b"), self.path("j"), self.path("out")):
            if os.path.islink(path):
                raise ArenaError("%s is a symbolic link; a run must stay inside a plain .arena/ folder here" % path)
        if not os.path.isdir(self.dir):
            raise ArenaError("no run %r under %s/; start one with init, or pass --run NAME" % (self.name, self.root))

    def load(self):
        self.check_folder()
        if not os.path.exists(self.state_path):
            if os.path.exists(self.journal_path):
                st = self.rebuild()
                self.save(st)
                sys.stderr.write("bracket.py: run %s had no state.json (init was cut short, or it was deleted); "
                                 "rebuilt it from journal.jsonl\n" % self.name)
                return st
            raise ArenaError("run %r was never started: its init was cut short before its first journal line; "
                             "run the same init --run %s again" % (self.name, self.name))
        with open(self.state_path, "rb") as f:
            raw = f.read()
        text = raw.decode("utf-8", "replace")
        head = STATE_HEAD.match(text)
        if head and int(head.group(1)) != FORMAT:
            raise ArenaError("state.json is format %s but this bracket.py reads format %d; use the bracket.py "
                             "that started the run" % (head.group(1), FORMAT))
        body = text[head.end():].rstrip()[:-1] if head else ""
        if not head or hashlib.sha256(body.encode("utf-8")).hexdigest() != head.group(2):
            raise ArenaError("state.json of run %s is damaged or was edited by hand (checksum mismatch); run "
                             "'bracket.py repair --run %s' to rebuild it from journal.jsonl" % (self.name, self.name))
        st = upgrade(json.loads(body))
        last = self.journal_tail()
        if last > st["seq"]:
            # a command died after journaling and before saving: finish its work
            for ev in self.events():
                if ev["seq"] > st["seq"]:
                    apply(st, ev, checked=False)
            self.save(st)
        elif last < st["seq"]:
            raise ArenaError("state.json is ahead of journal.jsonl (event %d vs %d); run 'bracket.py repair --run %s'"
                             % (st["seq"], last, self.name))
        return st

    def peek(self):
        """The state as state.json and the journal have it, for a reader that must change
        nothing: no lock, no save, and a torn last journal line is left where it is."""
        self.check_folder()
        if not os.path.exists(self.state_path):
            return self.rebuild()
        with open(self.state_path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        head = STATE_HEAD.match(text)
        body = text[head.end():].rstrip()[:-1] if head else ""
        if not head or int(head.group(1)) != FORMAT or \
                hashlib.sha256(body.encode("utf-8")).hexdigest() != head.group(2):
            raise ArenaError("state.json of run %s cannot be read as it is; run 'bracket.py next --run %s' (or repair)"
                             % (self.name, self.name))
        st = upgrade(json.loads(body))
        for ev in self.events():
            if ev["seq"] > st["seq"]:
                apply(st, ev, checked=False)
        return st

    def save(self, st):
        body = json.dumps(st, separators=(",", ":"), sort_keys=True)
        head = '{"format": %d, "sum": "%s", "state": ' % (FORMAT, hashlib.sha256(body.encode("utf-8")).hexdigest())
        atomic_write(self.state_path, head + body + "}\n")
        kill_point()

    # -- journal
    def journal_tail(self):
        """The seq of the last complete journal line; a torn last line is cut off."""
        try:
            size = os.path.getsize(self.journal_path)
        except OSError:
            return 0
        with open(self.journal_path, "rb+") as f:
            f.seek(max(0, size - 65536))
            tail = f.read()
            if tail and not tail.endswith(b"\n"):
                cut = tail.rfind(b"\n") + 1
                f.truncate(size - len(tail) + cut)
                tail = tail[:cut]
        lines = [x for x in tail.split(b"\n") if x.strip()]
        for line in reversed(lines):
            try:
                return json.loads(line.decode("utf-8"))["seq"]
            except (ValueError, KeyError, TypeError):
                continue
        return 0

    def events(self):
        if not os.path.isfile(self.journal_path):
            raise ArenaError("run %s has no journal.jsonl, so state.json cannot be rebuilt; start a new run with init"
                             % self.name)
        with open(self.journal_path, "rb") as f:
            for n, line in enumerate(f, 1):
                if not line.endswith(b"\n"):
                    break
                try:
                    ev = json.loads(line.decode("utf-8"))
                    if ev["e"] not in EVENTS or not isinstance(ev["seq"], int):
                        raise ValueError(ev["e"])
                except (ValueError, KeyError, TypeError):
                    raise ArenaError("journal.jsonl line %d is damaged; the run cannot be rebuilt past it" % n)
                yield ev

    def append(self, events):
        data = "".join(json.dumps(ev, separators=(",", ":"), sort_keys=True) + "\n" for ev in events)
        fd = os.open(self.journal_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            kill_point()
            kill_point(torn=lambda: os.write(fd, data.encode("utf-8")[:len(data) // 2]))
            os.write(fd, data.encode("utf-8"))
            os.fsync(fd)
            kill_point()
        finally:
            os.close(fd)

    def commit(self, st, events):
        """Journal first, then apply and save: a crash in between is replayed on load."""
        if not events:
            return
        # refused before anything is journaled; a command's events together (the outputs one next
        # collects) concern different jobs, so each is checked against the state they arrive in
        for ev in events:
            check_event(st, ev)
        if len({ev.get("job") for ev in events if "job" in ev}) < sum(1 for ev in events if "job" in ev):
            raise ArenaError("one job cannot come back twice at once")
        for k, ev in enumerate(events):
            ev["seq"] = st["seq"] + 1 + k
        self.append(events)
        for ev in events:
            apply(st, ev, checked=False)
        # saved once at the end of the command (flush); until then the journal holds it
        self.dirty = True

    def flush(self, st):
        if getattr(self, "dirty", False):
            self.save(st)
            self.dirty = False

    def rebuild(self):
        st = None
        for ev in self.events():
            if ev["e"] == "init":
                st = new_state(ev, tuple(ev["sizes"]))
                st["seq"] = ev["seq"]
            elif st is None:
                raise ArenaError("journal.jsonl does not start with init; the run cannot be rebuilt")
            else:
                apply(st, ev, checked=False)
        if st is None:
            raise ArenaError("journal.jsonl of run %s is empty; start a new run with init" % self.name)
        return st


def find_run(name, root=".arena"):
    """The run named, or the one init made last in this folder."""
    if name is not None:
        return Run(name, root)
    current = os.path.join(root, "current")
    if os.path.exists(current):
        return Run(read_text(current).strip(), root)
    raise ArenaError("no run found under %s/; start one with init (or pass --run NAME)" % root)
