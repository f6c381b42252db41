#!/usr/bin/env python3
"""perf.py: what bracket.py costs on this machine, in time, memory, disk and main-context bytes.

Prints numbers, asserts nothing. Every timing is the wall time of a real
`python3 -S bracket.py ...` subprocess (interpreter start-up included), the
median over several runs; the start-up of a bare interpreter is printed
first so it can be told apart. Runs use stand-in sub-agents (tests/standin.py).

    python3 benchmarks/perf.py              # everything; the 2,160-agent tournament takes many minutes
    python3 benchmarks/perf.py --quick      # 16 and 100 agents only, fewer repeats
"""

import argparse
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))

import standin  # noqa: E402
from standin import BRACKET  # noqa: E402

RUN = "20261129-231313-s1"  # a run name as long as init's default ones
TASK = "Write a Python function median(xs) for a list of numbers; raise ValueError on an empty list.\n"
TARGETS = {"per_call_bytes": 250, "ms_2160": 300, "ms_100": 80, "state_2160": 2 * 1024 * 1024}


def timed(args, cwd):
    """(seconds, peak RSS in KiB, stdout) of one bracket.py subprocess."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        # -S as SKILL.md runs it: the engine needs nothing from site-packages
        proc = subprocess.Popen([sys.executable, "-S", BRACKET] + args, cwd=cwd, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        took = time.perf_counter() - start
        out.seek(0)
        text = out.read().decode("utf-8")
    if status != 0:
        raise SystemExit("bracket.py %s failed in %s" % (" ".join(args), cwd))
    return took, usage.ru_maxrss, text


def bare_startup(reps):
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-S", "-c", "pass"])
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def new_run(n, direct=True):
    cwd = tempfile.mkdtemp(prefix="arena-perf-")
    with open(os.path.join(cwd, "task.md"), "w") as f:
        f.write(TASK)
    standin.run_cli(["init", "--agents", str(n), "--seed", "1", "--task-file", "task.md", "--run", RUN] + (["--direct"] if direct else []), cwd)
    return cwd


class Timed(standin.Orchestrator):
    """The stand-in orchestrator, timing every `next` and keeping what the main session reads."""

    def __init__(self, cwd, agent, run, wave=10):
        super().__init__(cwd, agent, run, wave)
        self.times, self.rss = [], 0
        self.main_read = 0       # bytes the main session reads
        self.conductor_calls = 0

    def next(self, *extra):
        took, rss, out = timed(["next", "--run", self.run] + list(extra), self.cwd)
        self.times.append(took)
        self.rss = max(self.rss, rss)
        self.outputs.append(out)
        if "--conductor" not in extra:
            self.main_read += len(out.encode("utf-8"))
        return out

    def conduct(self):
        """A conductor sub-agent; the main session sees its Agent call and its one-line reply."""
        start = self.outputs[-1]
        call = {"description": "arena conductor " + self.run,
                "prompt": "Read %s and follow it." % os.path.join(".arena", self.run, "conductor.md"),
                "subagent_type": "general-purpose", "run_in_background": False}
        assert call["prompt"] in start, "conductor call differs from what next printed"
        self.main_read += len(json.dumps(call).encode("utf-8"))
        self.conductor_calls += 1
        out = self.next("--conductor")
        while True:
            if "BATCH OVER" in out or "\nFinished." in out or "needs a decision by hand" in out:
                self.main_read += len(out.splitlines()[0].encode("utf-8")) + 1
                return self.next()
            out = self.step(out, flags=("--conductor",))


class DirectBytes(standin.StandIn):
    """A stand-in that also counts the Agent call input and the receipt the main session reads."""

    def __init__(self, cwd, seed=0):
        super().__init__(cwd, seed)
        self.main_read = self.call_bytes = self.receipt_bytes = 0

    def __call__(self, call):
        receipt = super().__call__(call)
        params = {k: v for k, v in call.items() if k != "job"}  # exactly what next printed
        self.call_bytes += len(json.dumps(params).encode("utf-8"))
        self.receipt_bytes += len(receipt.encode("utf-8")) + 1
        self.main_read = self.call_bytes + self.receipt_bytes
        return receipt


def play_waves(orch, waves):
    """Run `waves` waves, then let the stand-ins answer the last one without calling next."""
    out = orch.next()
    for _ in range(waves - 1):
        out = orch.step(out)
    for call in standin.parse_wave(out):
        orch.agent(call)


def mid_run(n, reps):
    """Medians of next, collect and status at n agents, after the spawns and a few waves."""
    cwd = new_run(n)
    orch = Timed(cwd, standin.StandIn(cwd, seed=2), RUN)
    play_waves(orch, int(math.ceil(n / 10.0)) + 5)
    res = {"n": n, "state": os.path.getsize(os.path.join(cwd, ".arena", RUN, "state.json")),
           "journal": os.path.getsize(os.path.join(cwd, ".arena", RUN, "journal.jsonl")),
           "wave": len(orch.waves) + 1}
    for cmd in ("next", "collect", "status"):
        times, rss = [], 0
        for _ in range(reps):
            work = tempfile.mkdtemp(prefix="arena-perf-")
            shutil.rmtree(work)
            shutil.copytree(cwd, work, symlinks=True)
            took, peak, _ = timed([cmd, "--run", RUN], work)
            times.append(took)
            rss = max(rss, peak)
            shutil.rmtree(work)
        res[cmd] = statistics.median(times)
        res[cmd + "_rss"] = rss
    shutil.rmtree(cwd)
    return res


def full_run(n, count_direct=False):
    cwd = new_run(n)
    agent = DirectBytes(cwd, seed=2) if count_direct else standin.StandIn(cwd, seed=2)
    orch = Timed(cwd, agent, RUN)
    start = time.perf_counter()
    orch.play()
    took = time.perf_counter() - start
    folder = os.path.join(cwd, ".arena", RUN)
    with open(os.path.join(folder, "state.json"), encoding="utf-8") as f:
        judged = [r for r in json.load(f)["state"]["results"].values() if r["how"] in ("judge", "panel")]
    res = {"n": n, "wall": took, "looks": sum(1 for r in judged if r.get("n", 1) >= 2), "judged": len(judged), "nexts": len(orch.times), "calls": len(agent.calls), "waves": len(orch.waves),
           "rss": orch.rss, "state": os.path.getsize(os.path.join(folder, "state.json")),
           "journal": os.path.getsize(os.path.join(folder, "journal.jsonl")), "times": orch.times,
           "main_read": orch.main_read + (agent.main_read if count_direct else 0),
           "conductors": orch.conductor_calls, "next_bytes": orch.main_read,
           "call_bytes": getattr(agent, "call_bytes", 0), "receipt_bytes": getattr(agent, "receipt_bytes", 0)}
    shutil.rmtree(cwd)
    return res


def quarters(times):
    k = len(times)
    return [statistics.median(times[i * k // 4:(i + 1) * k // 4]) for i in range(4)]


def ms(x):
    return "%.0f" % (x * 1000)


def kib(x):
    return "%.0f KiB" % (x / 1024.0) if x < 1024 * 1024 else "%.2f MiB" % (x / 1048576.0)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="16 and 100 agents only, 3 repeats")
    p.add_argument("--reps", type=int, default=7, help="repeats per command (default 7)")
    p.add_argument("--skip-2160-run", action="store_true", help="skip the full 2,160-agent tournament")
    args = p.parse_args()
    reps = 3 if args.quick else args.reps
    sizes = (16, 100) if args.quick else (16, 100, 1000, 2160)

    print("command: python3 benchmarks/%s" % " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]))
    print("machine: nproc %d, Python %s, %s; load average %s" % (
        os.cpu_count(), platform.python_version(), platform.platform(),
        " ".join("%.1f" % x for x in os.getloadavg())))
    base = bare_startup(max(reps, 9))
    print("bare interpreter start-up (python3 -S -c pass), median of %d: %s ms" % (max(reps, 9), ms(base)))
    print("every time below is a `python3 -S bracket.py` subprocess as SKILL.md runs it, start-up included; "
          "medians of %d runs" % reps)
    print()

    print("## Commands in mid-tournament (direct mode, W=10, after the spawns and 5 more waves)")
    print()
    print("| agents | at wave | next ms | collect ms | status ms | peak RSS | state.json | journal |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    mids = {}
    for n in sizes:
        r = mid_run(n, reps)
        mids[n] = r
        print("| %d | %d | %s | %s | %s | %.1f MiB | %s | %s |" % (
            n, r["wave"], ms(r["next"]), ms(r["collect"]), ms(r["status"]),
            max(r["next_rss"], r["collect_rss"], r["status_rss"]) / 1024.0, kib(r["state"]), kib(r["journal"])))
        sys.stdout.flush()
    print()

    print("## Whole stand-in tournaments through the CLI (direct mode, W=10)")
    print()
    full = {}
    hundred = [full_run(100) for _ in range(1 if args.quick else 3)]
    full[100] = hundred[0]
    print("100 agents, %d runs: median wall %.1f s, %d next calls, %d sub-agent calls, %d waves, "
          "second looks at %d of %d judged matches"
          % (len(hundred), statistics.median(r["wall"] for r in hundred), hundred[0]["nexts"],
             hundred[0]["calls"], hundred[0]["waves"], hundred[0]["looks"], hundred[0]["judged"]))
    if not args.quick and not args.skip_2160_run:
        big = full_run(2160)
        full[2160] = big
        print("2160 agents, measured once: wall %.0f s (%.1f min), %d next calls, %d sub-agent calls, %d waves, "
              "second looks at %d of %d judged matches"
              % (big["wall"], big["wall"] / 60, big["nexts"], big["calls"], big["waves"], big["looks"], big["judged"]))
    print()
    print("| agents | next ms by quarter of the run (1st, 2nd, 3rd, 4th) | slowest next ms | peak RSS | "
          "final state.json | final journal |")
    print("|---:|---|---:|---:|---:|---:|")
    for n, r in sorted(full.items()):
        print("| %d | %s | %s | %.1f MiB | %s | %s |" % (
            n, ", ".join(ms(x) for x in quarters(r["times"])), ms(max(r["times"])), r["rss"] / 1024.0,
            kib(r["state"]), kib(r["journal"])))
    print()

    print("## Main-session bytes, 100 agents (stand-ins), as SKILL.md prescribes")
    print()
    cwd = new_run(100, direct=False)  # conductor mode is init's default
    orch = Timed(cwd, standin.StandIn(cwd, seed=2), RUN)
    orch.play()
    conductor_calls = len(orch.agent.calls)
    shutil.rmtree(cwd)
    direct = full_run(100, count_direct=True)
    print("| mode | main-session bytes | sub-agent calls | bytes per sub-agent call | conductor calls |")
    print("|---|---:|---:|---:|---:|")
    print("| conductor (next outputs + conductor Agent calls + one-line replies) | %d | %d | %.1f | %d |" % (
        orch.main_read, conductor_calls, orch.main_read / float(conductor_calls), orch.conductor_calls))
    print("| direct (next outputs + every Agent call's JSON input + receipts) | %d | %d | %.1f | - |" % (
        direct["main_read"], direct["calls"], direct["main_read"] / float(direct["calls"])))
    print("direct mode per sub-agent call: %.1f bytes of next output, %.1f of Agent call input, %.1f of receipt"
          % tuple(direct[k] / float(direct["calls"]) for k in ("next_bytes", "call_bytes", "receipt_bytes")))
    print()

    print("## Targets")
    print()
    per_call = direct["main_read"] / float(direct["calls"])
    worst = lambda n: max(mids[n]["next"], mids[n]["collect"], mids[n]["status"]) if n in mids else None
    rows = [("direct mode <= %d bytes per sub-agent call" % TARGETS["per_call_bytes"], "%.0f" % per_call,
             per_call <= TARGETS["per_call_bytes"])]
    for n, key in ((100, "ms_100"), (2160, "ms_2160")):
        if worst(n) is not None:
            rows.append(("any command at N=%d under %d ms (start-up included)" % (n, TARGETS[key]),
                         "%s ms (%s ms without the %s ms bare start-up)" % (ms(worst(n)), ms(worst(n) - base), ms(base)),
                         worst(n) * 1000 < TARGETS[key]))
    if 2160 in full or 2160 in mids:
        size = max(full.get(2160, {}).get("state", 0), mids.get(2160, {}).get("state", 0))
        rows.append(("state.json at N=2160 under 2 MiB", kib(size), size < TARGETS["state_2160"]))
    for n, r in sorted(full.items()):
        q = quarters(r["times"])
        rows.append(("next flat over the run at N=%d (last quarter / first quarter)" % n,
                     "%.2f" % (q[3] / q[0]), q[3] / q[0] < 1.25))
    print("| target | measured | holds |")
    print("|---|---|---|")
    for what, value, ok in rows:
        print("| %s | %s | %s |" % (what, value, "yes" if ok else "NO"))


if __name__ == "__main__":
    main()
