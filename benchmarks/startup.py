#!/usr/bin/env python3
"""startup.py: `next` at 100 agents, the single-file engine against the package, in one run.

The engine was one 2,200-line bracket.py; it is now a short entry point and the
package arena/. A script is compiled on every start; modules are compiled once and
cached in arena/__pycache__ (except when the skill folder sits inside the project, where
bracket.py writes no cache and every start compiles, as the single file did). This times `python3 -S bracket.py next` in the middle of a stand-in
tournament for both layouts, interleaved, and prints the medians and their ratio.
Prints numbers, asserts nothing.

    python3 benchmarks/startup.py [--ref COMMIT] [--reps N]

--ref is the last commit with the single-file engine (default: the one before the split).
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import perf  # noqa: E402

SINGLE_FILE_REF = "ba34284"


def old_engine(ref):
    """The skill folder at ref, unpacked into a temporary folder; returns its bracket.py."""
    folder = tempfile.mkdtemp(prefix="arena-old-")
    archive = subprocess.run(["git", "-C", ROOT, "archive", ref, "skills/arena"], stdout=subprocess.PIPE, check=True)
    subprocess.run(["tar", "-x", "-C", folder], input=archive.stdout, check=True)
    return os.path.join(folder, "skills", "arena", "bracket.py")


def time_next(engine, cwd, env):
    work = tempfile.mkdtemp(prefix="arena-start-")
    shutil.rmtree(work)
    shutil.copytree(cwd, work, symlinks=True)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-S", engine, "next", "--run", perf.RUN], cwd=work, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    took = time.perf_counter() - start
    shutil.rmtree(work)
    return took


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ref", default=SINGLE_FILE_REF)
    p.add_argument("--reps", type=int, default=15)
    args = p.parse_args()
    old = old_engine(args.ref)
    cwd = perf.new_run(100)
    orch = perf.Timed(cwd, perf.standin.StandIn(cwd, seed=2), perf.RUN)
    perf.play_waves(orch, 15)
    cached = dict(os.environ)
    cached.pop("PYTHONDONTWRITEBYTECODE", None)
    uncached = dict(cached, PYTHONDONTWRITEBYTECODE="1")
    # a copy of the package with no __pycache__ that is never written: every start compiles it
    fresh = tempfile.mkdtemp(prefix="arena-fresh-")
    shutil.copytree(os.path.dirname(perf.BRACKET), os.path.join(fresh, "arena"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    layouts = [("single file (ref %s)" % args.ref, old, cached),
               ("package, compiled modules cached", perf.BRACKET, cached),
               ("package, compiled on every start", os.path.join(fresh, "arena", "bracket.py"), uncached)]
    for _, engine, env in layouts:  # warm the caches and the disk
        time_next(engine, cwd, env)
    times = {name: [] for name, _, _ in layouts}
    for _ in range(args.reps):
        for name, engine, env in layouts:
            times[name].append(time_next(engine, cwd, env))
    bare = perf.bare_startup(args.reps)
    print("python %s, %d runs each, interleaved; bare `python3 -S -c pass`: %.1f ms" % (
        sys.version.split()[0], args.reps, bare * 1000))
    base = statistics.median(times[layouts[0][0]])
    for name, _, _ in layouts:
        med = statistics.median(times[name])
        print("%-36s next at 100 agents: %6.1f ms median (x%.2f of the single file)" % (name, med * 1000, med / base))
    shutil.rmtree(cwd)
    shutil.rmtree(fresh)
    shutil.rmtree(os.path.dirname(os.path.dirname(os.path.dirname(old))))


if __name__ == "__main__":
    main()
