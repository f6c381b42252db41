"""The whole suite, its modules side by side: `python3 tests/run.py [-j N] [module ...]`.

Each test module runs in its own `python3 -m unittest -v` process, as many at once as
the machine has cores (-j to change it), the slowest first so the short ones fill in
around them. A module's output is printed whole when it ends, then one summary line;
the exit code is 0 only when every module passed. The same tests run one after another
with `python3 -m unittest discover -s tests -v`; this only shares the cores.
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# The slowest modules, slowest first, by the per-module times this runner prints:
# started first so that the many short modules fill the other cores around them.
SLOW_FIRST = ["test_claude_e2e", "test_claude_probe", "test_reliability", "test_budget", "test_models", "test_workfolder",
              "test_tournaments", "test_lanes", "test_claude_run_code", "test_schedule", "test_report",
              "test_cli", "test_fuzz", "test_hard_cases", "test_safety", "test_claude_plugin"]


def modules(folder, names):
    """The test modules to run, slowest first; a name that is not there is an error (None, why)."""
    found = sorted(f[:-3] for f in os.listdir(folder) if re.match(r"test_\w+\.py$", f))
    if names:
        wanted = [os.path.basename(n)[:-3] if n.endswith(".py") else n for n in names]
        unknown = [n for n in wanted if n not in found]
        if unknown:
            return None, "no test module %s in %s (there are: %s)" % (", ".join(unknown), folder, " ".join(found))
        found = list(dict.fromkeys(wanted))
    rank = {n: i for i, n in enumerate(SLOW_FIRST)}
    return sorted(found, key=lambda n: (rank.get(n, len(rank)), n)), None


def counts(text):
    """(tests run, skipped) from unittest's closing lines."""
    ran = re.findall(r"^Ran (\d+) tests? in ", text, re.M)
    last = re.findall(r"^(?:OK|FAILED)(?: \((.*)\))?$", text, re.M)
    tally = dict(re.findall(r"(\w+)=(\d+)", last[-1])) if last else {}
    return (int(ran[-1]) if ran else 0), int(tally.get("skipped", 0))


def stop(proc, sig):
    """Signal a module's process group (its tests' helpers with it)."""
    try:
        os.killpg(proc.pid, sig)
    except OSError:
        pass


def main(argv=None):
    ap = argparse.ArgumentParser(prog="tests/run.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2,
                    help="modules at once (default: the number of cores, %(default)s here)")
    ap.add_argument("-t", "--timeout", type=float, default=900,
                    help="seconds a module may take before it is killed and counted as failed (default %(default)d)")
    ap.add_argument("-s", "--start-dir", default=HERE, help="the folder of the test modules (default: tests/)")
    ap.add_argument("module", nargs="*", help="test modules to run (default: every test_*.py there)")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error("-j must be 1 or more")
    if args.timeout <= 0:
        ap.error("-t must be more than 0 seconds")
    if not os.path.isdir(args.start_dir):
        ap.error("no folder %s" % args.start_dir)
    todo, why = modules(args.start_dir, args.module)
    if why:
        ap.error(why)
    if not todo:
        ap.error("no test_*.py in %s" % args.start_dir)
    lock = threading.Lock()
    procs, results = {}, {}
    start = time.monotonic()

    def one(name):
        began = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "unittest", "-v", name], cwd=args.start_dir, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
        with lock:
            procs[name] = proc
        # a module that hangs is killed, with whatever its tests started in its process group
        timer = threading.Timer(args.timeout, stop, (proc, signal.SIGKILL))
        timer.start()
        out = proc.stdout.read().decode("utf-8", "replace")
        _, status, usage = os.wait4(proc.pid, 0)  # the CPU time of this module's process and its children
        timer.cancel()
        proc.returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        seconds, cpu = time.monotonic() - began, usage.ru_utime + usage.ru_stime
        ran, skipped = counts(out)
        ok = proc.returncode == 0
        if ok:
            how = "OK"
        elif seconds >= args.timeout:
            how = "FAILED (killed after the %g s it may take: -t to change that)" % args.timeout
        else:
            how = "FAILED (exit %d)" % proc.returncode
        with lock:
            del procs[name]
            results[name] = (ok, ran, skipped, seconds, cpu)
            sys.stdout.write("\n==== %s: %s, %d tests%s, %.1f s (CPU %.1f s) ====\n%s" % (
                name, how, ran, ", %d skipped" % skipped if skipped else "", seconds, cpu, out))
            sys.stdout.flush()

    def worker():
        while True:
            with lock:
                if not todo:
                    return
                name = todo.pop(0)
            one(name)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(min(args.jobs, len(todo)))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(0.5)
    except KeyboardInterrupt:
        with lock:
            for proc in procs.values():
                stop(proc, signal.SIGTERM)
        sys.stderr.write("\ntests/run.py: interrupted; modules still running were stopped\n")
        return 130
    failed = sorted(n for n, r in results.items() if not r[0])
    total = sum(r[1] for r in results.values())
    skipped = sum(r[2] for r in results.values())
    slowest = sorted(results, key=lambda n: -results[n][3])[:3]
    print("\n%d tests in %d modules, %d at once: %.1f s, CPU %.1f s (slowest: %s)" % (
        total, len(results), min(args.jobs, len(results)), time.monotonic() - start,
        sum(r[4] for r in results.values()), ", ".join("%s %.0f s" % (n, results[n][3]) for n in slowest)))
    if failed:
        print("FAILED: %s" % " ".join(failed))
        return 1
    print("OK" + (" (skipped=%d)" % skipped if skipped else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
