#!/usr/bin/env python3
"""startup.py: `next` at 100 agents in the middle of a run, this checkout's engine against the one at a commit.

Each engine plays its own stand-in run (the same seed, the same waves, through `next --json`
and the product's stand-ins) to the middle of round 1, then `python3 -S bracket.py next` is
timed on fresh copies of those two runs, interleaved, plus this checkout's engine with no
compiled-module cache (as when the skill folder sits inside the project, where bracket.py
writes none). Prints medians and ratios; asserts nothing.

    python3 benchmarks/startup.py [--ref COMMIT] [--reps N] [--waves N]

--ref defaults to the last commit before the engine gained its context object and named
job states, so the figure answers "did that make commands slower?".
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "skills", "arena"))

from arena import demo  # noqa: E402

BRACKET = os.path.join(ROOT, "skills", "arena", "bracket.py")
BEFORE_CONTEXT = "275cd8a"
SEED = 2


def engine_at(ref):
    """The skill folder at ref, unpacked into a temporary folder; returns its bracket.py."""
    folder = tempfile.mkdtemp(prefix="arena-ref-")
    archive = subprocess.run(["git", "-C", ROOT, "archive", ref, "skills/arena"], stdout=subprocess.PIPE, check=True)
    subprocess.run(["tar", "-x", "-C", folder], input=archive.stdout, check=True)
    return os.path.join(folder, "skills", "arena", "bracket.py")


def engine(bracket, args, cwd, env=None):
    return subprocess.run([sys.executable, "-S", bracket] + args, cwd=cwd, env=env, check=True,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout


def mid_run(bracket, agents, waves):
    """A project whose run t was played by this engine for `waves` waves of stand-ins."""
    cwd = tempfile.mkdtemp(prefix="arena-start-")
    with open(os.path.join(cwd, "task.md"), "w") as f:
        f.write("Name three prime numbers.\n")
    engine(bracket, ["init", "--agents", str(agents), "--seed", str(SEED), "--task-file", "task.md", "--run", "t",
                     "--direct"], cwd)
    for _ in range(waves):
        act = json.loads(engine(bracket, ["next", "--run", "t", "--json"], cwd))
        for call in act.get("calls", []):
            demo.play(cwd, call["prompt"], SEED)
    return cwd


def time_next(bracket, cwd, env):
    work = tempfile.mkdtemp(prefix="arena-copy-")
    shutil.rmtree(work)
    shutil.copytree(cwd, work, symlinks=True)
    start = time.perf_counter()
    engine(bracket, ["next", "--run", "t"], work, env)
    took = time.perf_counter() - start
    shutil.rmtree(work)
    return took


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ref", default=BEFORE_CONTEXT)
    p.add_argument("--reps", type=int, default=15)
    p.add_argument("--agents", type=int, default=100)
    p.add_argument("--waves", type=int, default=15)
    args = p.parse_args()
    old = engine_at(args.ref)
    cached = dict(os.environ)
    cached.pop("PYTHONDONTWRITEBYTECODE", None)
    uncached = dict(cached, PYTHONDONTWRITEBYTECODE="1")
    # a copy of the package with no __pycache__ that is never written: every start compiles it
    fresh = tempfile.mkdtemp(prefix="arena-fresh-")
    shutil.copytree(os.path.dirname(BRACKET), os.path.join(fresh, "arena"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    runs = {"old": mid_run(old, args.agents, args.waves), "new": mid_run(BRACKET, args.agents, args.waves)}
    layouts = [("engine at %s" % args.ref, old, cached, "old"),
               ("this checkout, modules cached", BRACKET, cached, "new"),
               ("this checkout, compiled every start", os.path.join(fresh, "arena", "bracket.py"), uncached, "new")]
    for _, bracket, env, run in layouts:  # warm the caches and the disk
        time_next(bracket, runs[run], env)
    times = {name: [] for name, _, _, _ in layouts}
    for _ in range(args.reps):
        for name, bracket, env, run in layouts:
            times[name].append(time_next(bracket, runs[run], env))
    print("python %s, %d agents after %d waves, %d runs each, interleaved" % (
        sys.version.split()[0], args.agents, args.waves, args.reps))
    base = statistics.median(times[layouts[0][0]])
    for name, _, _, _ in layouts:
        med = statistics.median(times[name])
        print("%-38s next: %6.1f ms median (x%.2f of the engine at %s)" % (name, med * 1000, med / base, args.ref))
    for folder in list(runs.values()) + [fresh, os.path.dirname(os.path.dirname(os.path.dirname(old)))]:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
