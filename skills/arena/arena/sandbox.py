"""Running a sub-agent's script: its environment, its limits, its confinement, and what it
changed outside its work folder.

`bracket.py exec` (runs started with --run-code) runs model-written Python. Here that script
gets a minimal environment (no keys or tokens unless the user names them), resource limits
on POSIX (CPU time, memory, file size, processes, open files), and, where the machine has
one, a sandbox: bubblewrap on Linux, sandbox-exec on macOS, with the filesystem read-only
except the job's work folder, the home folder hidden and no network. What the script still
changed in the home folder's top level or the system temp folder is named after it ran.
Standard library only; nothing here reads or changes a run's state.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from .base import ArenaError


# Output of one exec shown to the agent; the rest is cut from the middle.
EXEC_SHOWN = 16 * 1024

# Limits for every script, as (name shown, bytes or count). Generous enough for ordinary
# tests and benchmarks; a script that needs more is doing something a review should see.
MEMORY = 2 * 1024 ** 3          # address space
FILE_SIZE = 256 * 1024 ** 2     # the largest file it may write
PROCESSES = 64                  # processes and threads of its own at once
OPEN_FILES = 256

# Variables a script gets from the caller's environment, besides those the user names
# (init --run-code-env): the search path and the locale. HOME and the temp variables point
# into the work folder.
PASSED = ("PATH", "LANG", "LANGUAGE", "TZ")
PASSED_PREFIX = ("LC_",)
# Windows cannot start Python without these; they hold no secrets.
WINDOWS_PASSED = ("SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def size_text(n):
    for unit, size in (("GiB", 1024 ** 3), ("MiB", 1024 ** 2), ("KiB", 1024)):
        if n >= size and n % size == 0:
            return "%d %s" % (n // size, unit)
    return "%d bytes" % n


def limits_text(timeout=None):
    """The limits every script runs under, in words."""
    cpu = "%d s of CPU" % timeout if timeout else "CPU time up to its timeout"
    return "%s, memory %s, files up to %s each, %d processes, %d open files" % (
        cpu, size_text(MEMORY), size_text(FILE_SIZE), PROCESSES, OPEN_FILES)


def env_names(text):
    """--run-code-env NAME,NAME -> [names], each a valid variable name."""
    names = [n.strip() for n in (text or "").split(",") if n.strip()]
    for name in names:
        if not ENV_NAME.match(name):
            raise ArenaError("--run-code-env takes variable names like API_BASE,MY_FLAG, not %r" % name[:40])
    return sorted(set(names))


def script_env(folder, keep=()):
    """The environment a script runs in: PATH and the locale from the caller's, HOME and the
    temp variables in its work folder, and the variables the user named; nothing else."""
    env = {}
    for name, value in os.environ.items():
        if name in PASSED or name.startswith(PASSED_PREFIX) or name in keep or \
                (os.name == "nt" and name.upper() in WINDOWS_PASSED):
            env[name] = value
    env.setdefault("PATH", os.defpath)
    home, tmp = os.path.join(folder, "home"), os.path.join(folder, "tmp")
    for path in (home, tmp):
        os.makedirs(path, exist_ok=True)
    env["HOME"] = home
    if os.name == "nt":
        env["USERPROFILE"] = home
    for name in ("TMPDIR", "TEMP", "TMP"):
        env[name] = tmp
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONNOUSERSITE"] = "1"
    return env


# ---------------------------------------------------------------- confinement

_FOUND = {}


def confinement():
    """(name, None) of the sandbox exec uses on this machine, or (None, why there is none)."""
    if "how" not in _FOUND:
        _FOUND["how"] = find_confinement()
    return _FOUND["how"]


def find_confinement():
    if sys.platform.startswith("linux"):
        bwrap = shutil.which("bwrap")
        if not bwrap:
            return None, "install bubblewrap (the bwrap command; apt, dnf and pacman call the package bubblewrap)"
        # a container may forbid the namespaces bubblewrap needs: try it once
        probe = bwrap_args(bwrap, os.getcwd(), [], home=None) + ["--", "/bin/sh", "-c", ":"]
        try:
            done = subprocess.run(probe, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  timeout=20)
        except (OSError, subprocess.SubprocessError) as e:
            return None, "bubblewrap is installed but could not start (%s)" % str(e)[:120]
        if done.returncode != 0:
            why = done.stdout.decode("utf-8", "replace").strip().splitlines()
            return None, "bubblewrap is installed but cannot sandbox here (%s)" % ((why or ["exit %d" % done.returncode])[0][:160])
        return "bubblewrap", None
    if sys.platform == "darwin":
        if os.path.exists("/usr/bin/sandbox-exec"):
            return "sandbox-exec", None
        return None, "this macOS has no /usr/bin/sandbox-exec"
    if os.name == "nt":
        return None, "Windows offers no sandbox this engine can use"
    return None, "no sandbox this engine knows on %s; bubblewrap (Linux) and sandbox-exec (macOS) are" % sys.platform


def confinement_line():
    """One line for plan, init and status."""
    name, why = confinement()
    if name:
        return ("confinement: %s: scripts see the filesystem read-only except their own work folder, your home "
                "folder hidden, and no network" % name)
    return ("confinement: none; %s. Scripts can then read and write whatever you can, unless a sandbox around "
            "this engine (such as Claude Code's own, when you turned it on) holds them" % why)


def hidden_home():
    """The home folder to hide from a script, or None when hiding it would hide Python itself."""
    home = os.path.realpath(os.path.expanduser("~"))
    if not home or home == os.sep or not os.path.isdir(home):
        return None
    return home


def python_paths():
    """Where the interpreter and its standard library live (kept visible under a hidden home)."""
    paths = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix,
                                           os.path.dirname(sys.executable)) if p}
    return sorted(paths)


def under(path, top):
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)


def bwrap_args(bwrap, folder, visible, home):
    """bubblewrap's command line: the whole filesystem read-only, the home folder an empty
    tmpfs (the project, the interpreter and the work folder put back), no network, its own
    process and IPC namespaces, killed with its parent."""
    args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session"]
    if home:
        args += ["--tmpfs", home]
    # put back what the fresh home, /dev and /proc cover (a project may live under /dev/shm)
    for path in visible:
        if os.path.exists(path) and (under(path, home or "\0") or under(path, "/dev") or under(path, "/proc")):
            args += ["--ro-bind", path, path]
    args += ["--bind", folder, folder, "--chdir", folder]
    return args


def seatbelt_profile(folder, visible, home):
    """sandbox-exec's profile: no network, writes only in the work folder (and /dev), the home
    folder unreadable but for the project, the interpreter and the work folder."""
    def q(path):
        return '"%s"' % path.replace("\\", "\\\\").replace('"', '\\"')
    lines = ["(version 1)", "(allow default)", "(deny network*)", "(deny file-write*)",
             "(allow file-write* (subpath %s) (subpath \"/dev\"))" % q(folder)]
    if home:
        lines.append("(deny file-read* (subpath %s))" % q(home))
        kept = [p for p in visible if under(p, home)] + [folder]
        lines.append("(allow file-read* %s)" % " ".join("(subpath %s)" % q(p) for p in kept))
    return "\n".join(lines) + "\n"


def confined(argv, folder, project):
    """(argv wrapped in the machine's sandbox, its name) or (argv, None)."""
    name, _ = confinement()
    folder = os.path.realpath(folder)
    home = hidden_home()
    visible = sorted({os.path.realpath(project)} | set(python_paths()))
    if home and any(under(home, p) for p in visible):
        home = None  # the project or Python contains the whole home folder: nothing left to hide
    if name == "bubblewrap":
        return bwrap_args(shutil.which("bwrap"), folder, visible, home) + ["--"] + argv, name
    if name == "sandbox-exec":
        return ["/usr/bin/sandbox-exec", "-p", seatbelt_profile(folder, visible, home)] + argv, name
    return argv, None


# ---------------------------------------------------------------- limits

def user_tasks():
    """How many processes and threads this user runs now (what the kernel's per-user process
    limit counts; Linux /proc), or None where it cannot tell."""
    uid = os.getuid()
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    count = 0
    for name in names:
        if not name.isdigit():
            continue
        try:
            if os.stat("/proc/" + name).st_uid != uid:
                continue
            with open("/proc/%s/status" % name) as f:
                threads = re.search(r"^Threads:\s*(\d+)", f.read(), re.M)
            count += int(threads.group(1)) if threads else 1
        except (OSError, ValueError):
            pass
    return count


def set_limits(cpu_seconds, nproc):
    """A preexec function: resource limits for the script (and whatever wraps it)."""
    import resource

    def apply():
        wanted = [(resource.RLIMIT_CPU, cpu_seconds), (resource.RLIMIT_AS, MEMORY),
                  (resource.RLIMIT_FSIZE, FILE_SIZE), (resource.RLIMIT_NOFILE, OPEN_FILES)]
        if nproc is not None:
            wanted.append((resource.RLIMIT_NPROC, nproc))
        for which, value in wanted:
            try:
                soft, hard = resource.getrlimit(which)
                cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
                resource.setrlimit(which, (cap, cap if which != resource.RLIMIT_CPU else hard))
            except (ValueError, OSError):
                pass  # a limit the system will not take: the others still hold
    return apply


class ProcessCap:
    """A pids cgroup holding the script's processes to PROCESSES, for root on Linux (where
    the per-user process limit does not apply); quietly absent where it cannot be made."""

    ROOTS = ("/sys/fs/cgroup/pids", "/sys/fs/cgroup")

    def __init__(self):
        self.path = None
        if not sys.platform.startswith("linux") or os.geteuid() != 0:
            return
        for root in self.ROOTS:
            if not os.path.exists(os.path.join(root, "cgroup.procs")):
                continue
            if root.endswith("cgroup") and "pids" not in self.read(os.path.join(root, "cgroup.controllers")):
                continue
            path = os.path.join(root, "arena-exec-%d" % os.getpid())
            try:
                os.mkdir(path)
                with open(os.path.join(path, "pids.max"), "w") as f:
                    f.write(str(PROCESSES))
                self.path = path
                return
            except OSError:
                self.close(path)

    @staticmethod
    def read(path):
        try:
            with open(path) as f:
                return f.read()
        except OSError:
            return ""

    def join(self):
        """In the child before exec: move it into the cgroup."""
        if self.path:
            try:
                with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
                    f.write(str(os.getpid()))
            except OSError:
                pass

    def hit(self):
        """True when a fork was refused for the cap."""
        if not self.path:
            return self.was_hit
        events = self.read(os.path.join(self.path, "pids.events"))
        m = re.search(r"max (\d+)", events)
        return bool(m and int(m.group(1)) > 0)

    was_hit = False

    def close(self, path=None):
        """Kill what is left in the cgroup and remove it (the refusals counted are kept)."""
        if path is None and self.path:
            self.was_hit, path, self.path = self.hit(), self.path, None
        if not path:
            return
        for _ in range(50):
            procs = self.read(os.path.join(path, "cgroup.procs")).split()
            for pid in procs:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (OSError, ValueError):
                    pass
            try:
                os.rmdir(path)
                return
            except OSError:
                time.sleep(0.02)


def descendants(pid):
    """Every process below pid (Linux /proc), numbered as this process numbers them; [] where
    it cannot tell.

    /proc may belong to another pid namespace than this process (a sandbox that gave it a pid
    namespace of its own but left the outer /proc mounted, as Claude Code 2.1.332's does):
    there a number is another process's, or one of this one's threads, so each process's
    NSpid line translates it into this namespace, and one not in it is left out."""
    try:
        names = [name for name in os.listdir("/proc") if name.isdigit()]
        same = os.readlink("/proc/self") == str(os.getpid())
    except OSError:
        return []
    depth = None if same else len(ns_pids("self") or [])
    if depth == 0:
        return []
    children, mine = {}, {}
    for name in names:
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read()
            ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(name))
        if depth:
            nested = ns_pids(name)
            if nested and len(nested) >= depth:
                mine[int(name)] = nested[depth - 1]
    if depth:
        # another pid namespace as deep as this one (another sandbox beside it) numbers its
        # processes from 1 too: pid is the one in this namespace
        top = [outer for outer, inner in mine.items() if inner == pid]
        if len(top) > 1:
            here = pid_namespace("self")
            top = [outer for outer in top if pid_namespace(outer) == here]
        if len(top) != 1:
            return []
        start, name_of = top[0], mine.get
    else:
        start, name_of = pid, lambda p: p
    out, todo = [], [start]
    while todo:
        for child in children.get(todo.pop(), ()):
            if name_of(child) is not None:
                out.append(name_of(child))
            todo.append(child)
    return out


def pid_namespace(name):
    """The pid namespace a process is in, as the kernel names it (pid:[4026531836]), or None
    where it cannot be read."""
    try:
        return os.readlink("/proc/%s/ns/pid" % name)
    except OSError:
        return None


def ns_pids(name):
    """A process's pid in the namespace of /proc and in each nested below it, from its NSpid
    line (None where the kernel gives none)."""
    try:
        with open("/proc/%s/status" % name, "rb") as f:
            for line in f:
                if line.startswith(b"NSpid:"):
                    return [int(x) for x in line.split()[1:]]
    except (OSError, ValueError):
        pass
    return None


def kill_tree(pid):
    for _ in range(20):
        below = descendants(pid)
        for p in [pid] + below:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        if not below:
            return
        time.sleep(0.01)


def adopt_orphans():
    """Let this process collect the script's orphans (Linux), so the watch still sees them."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError, ImportError):
        pass


class Watch(threading.Thread):
    """Counts the script's processes every few milliseconds and kills them all past the cap:
    the last line against a fork bomb where no kernel limit applies."""

    def __init__(self, pid):
        threading.Thread.__init__(self, daemon=True)
        self.pid, self.stop, self.tripped = pid, threading.Event(), False

    def run(self):
        while not self.stop.wait(0.02):
            if len(descendants(self.pid)) > PROCESSES + 4:  # bubblewrap's own processes
                self.tripped = True
                kill_tree(self.pid)
                return


# ---------------------------------------------------------------- running

LIMIT_SIGNALS = {getattr(signal, "SIGXCPU", None): "cpu", getattr(signal, "SIGXFSZ", None): "file"}


def limit_hit(status, text, cap, watch, timeout):
    """The one-line report of the limit that ended the script, or None."""
    tail = "\n".join(text.rstrip().splitlines()[-3:])
    if (watch and watch.tripped) or (cap and cap.hit()) or \
            re.search(r"BlockingIOError: \[Errno 11\]|Resource temporarily unavailable", tail):
        return "killed: process limit %d" % PROCESSES
    if status is not None and status < 0 and LIMIT_SIGNALS.get(-status) == "cpu":
        return "killed: CPU time limit %d s" % timeout
    if re.search(r"^MemoryError", tail, re.M) or re.search(r"Cannot allocate memory|std::bad_alloc", tail):
        return "killed: memory limit %s" % size_text(MEMORY)
    if re.search(r"\[Errno 27\] File too large", tail) or (status is not None and status < 0 and
                                                           LIMIT_SIGNALS.get(-status) == "file"):
        return "killed: file size limit %s" % size_text(FILE_SIZE)
    if re.search(r"\[Errno 24\] Too many open files", tail):
        return "killed: open files limit %d" % OPEN_FILES
    return None


def run_script(path, args, folder, timeout, keep=(), project="."):
    """Run `python path args` in folder, confined and limited.

    Returns {"status": exit status (None: timed out), "text": its output, "seconds",
    "limit": the limit that ended it or None, "confinement": the sandbox's name or None,
    "outside": what changed in the home folder's top level and the temp folder}."""
    # absolute: the script runs inside folder, where a relative path would point elsewhere
    folder = os.path.abspath(folder)
    env = script_env(folder, keep)
    posix = os.name == "posix"
    argv, how = confined([sys.executable, path] + list(args), folder, project)
    before = outside_snapshot()
    cap = ProcessCap() if posix else None
    nproc = None
    if posix and os.geteuid() != 0:
        # the kernel counts all of this user's tasks: allow what runs now and PROCESSES more
        running = user_tasks()
        nproc = running + PROCESSES if running is not None else None
    # a second past the wall-clock timeout, so a busy script is reported as timed out; the CPU
    # limit still holds children that outlive the kill
    limits = set_limits(timeout + 1, nproc) if posix else None

    def child():
        if cap:
            cap.join()
        limits()
    if posix:
        adopt_orphans()
    start = time.time()
    try:
        proc = subprocess.Popen(argv, cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=posix, preexec_fn=child if posix else None)
    except (OSError, ValueError) as e:
        if cap:
            cap.close()
        raise ArenaError("could not start %s (%s)" % (argv[0], e))
    watch = Watch(proc.pid) if posix and os.path.isdir("/proc") else None
    if watch:
        watch.start()
    try:
        out, _ = proc.communicate(timeout=timeout)
        status = proc.returncode
    except subprocess.TimeoutExpired:
        out, status = b"", None
    finally:
        if watch:
            watch.stop.set()
        if posix:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # its own children die with it
            except OSError:
                pass
            kill_tree(proc.pid)
        else:
            proc.kill()
    if status is None:
        more, _ = proc.communicate()
        out += more
    if cap:
        cap.close()
    text = out.decode("utf-8", "replace")
    limit = limit_hit(status, text, cap, watch, timeout)
    if len(text) > EXEC_SHOWN:
        half = EXEC_SHOWN // 2
        text = "%s\n[... %d characters cut ...]\n%s" % (text[:half], len(text) - 2 * half, text[-half:])
    # a confined script cannot write outside its folder: whatever changed there, another program did
    return {"status": status, "text": text, "seconds": time.time() - start, "limit": limit, "confinement": how,
            "outside": [] if how else outside_changes(before)}


# ---------------------------------------------------------------- what changed outside

def top_entries(top, mine_only):
    """{name: [inode, size, mtime_ns]} of a folder's top-level entries (this user's only, in
    the shared temp folder), or None when it cannot be listed."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    try:
        names = os.listdir(top)
    except OSError:
        return None
    entries = {}
    for name in names:
        try:
            info = os.lstat(os.path.join(top, name))
        except OSError:
            continue
        if mine_only and uid is not None and info.st_uid != uid:
            continue
        entries[name] = [info.st_ino, info.st_size, info.st_mtime_ns]
    return entries


def temp_snapshot():
    """{"dir": the temp folder, "entries": {name: [inode, size, mtime_ns]}} of this user's entries there."""
    top = tempfile.gettempdir()
    return {"dir": top, "entries": top_entries(top, True)}


def home_snapshot():
    """{"dir": the home folder, "entries": ...} of its top level."""
    top = os.path.expanduser("~")
    return {"dir": top, "entries": top_entries(top, False)}


def changed_entries(before, now_entries, changes=True):
    """Sorted names new since the snapshot (and changed, with changes), marked "(changed)"."""
    old = before["entries"]
    out = []
    for name, info in sorted(now_entries.items()):
        was = old.get(name)
        if was is None or (isinstance(was, int) and was != info[0]) or (not isinstance(was, int) and was[0] != info[0]):
            out.append(name)
        elif changes and not isinstance(was, int) and was[1:] != info[1:]:
            out.append(name + " (changed)")
    return out


def folder_changes(before, snap, changes=True):
    """(folder, sorted new or changed names) since the snapshot, or (folder, None) when it cannot tell."""
    if not before or before.get("entries") is None:
        return (before or {}).get("dir"), None
    now = snap()
    if now["dir"] != before["dir"] or now["entries"] is None:
        return before["dir"], None
    return before["dir"], changed_entries(before, now["entries"], changes)


def temp_changes(before):
    """(temp folder, sorted new entry names) since the snapshot, or (folder, None)."""
    return folder_changes(before, temp_snapshot, changes=False)


def home_changes(before):
    """(home folder, sorted new or changed top-level names) since the snapshot, or (folder, None)."""
    return folder_changes(before, home_snapshot)


def outside_snapshot():
    return {"home": home_snapshot(), "temp": temp_snapshot()}


def outside_changes(before):
    """["~/.cache (changed)", "/tmp/x"]: what one script run added or changed there."""
    out = []
    home_dir, home = home_changes(before["home"])
    temp_dir, temp = folder_changes(before["temp"], temp_snapshot)
    for top, names in ((home_dir, home), (temp_dir, temp)):
        for name in names or ():
            out.append(os.path.join(top, name))
    return out
