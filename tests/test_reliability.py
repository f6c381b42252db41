"""Kill-and-resume, damaged state files, and bad or missing sub-agent output.

bracket.py processes are killed with SIGKILL at seeded random points: at exact
journal/state write points (the ARENA_KILL_AT hook) and after random delays,
both in forked copies of the test process and in real `python3 bracket.py`
processes. Every interrupted run must end exactly like an uninterrupted run
with the same seed and the same stand-in outputs.
"""

import hashlib
import io
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import standin  # noqa: E402
from standin import usage_of, ENGINE, parse_wave  # noqa: E402
from arena import storage  # noqa: E402
from arena.base import FORMAT  # noqa: E402
from arena.jobs import TRIES  # noqa: E402
from arena.jobs import job_kind, match_of  # noqa: E402
from arena.state import find_match  # noqa: E402
from arena.cli import main  # noqa: E402

# Kills that landed, by kind. "sweep" and "hook" follow from the seeds and the engine's
# writes alone, so their sum is the same on every run; the others depend on timing.
KILLS = {"sweep": 0, "hook": 0, "hook-mixed": 0, "timed-fork": 0, "timed-process": 0}
# A kill is not a power cut: tmpfs behaves the same for these tests and spares
# the many fsyncs of a run a slow disk.
SHM = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def tmpdir():
    return tempfile.TemporaryDirectory(dir=SHM)


# ---------------------------------------------------------------- running bracket.py

def cli(cwd, *args):
    """main in this process, in cwd: (exit code, stdout, stderr)."""
    return standin.run_here(list(args), cwd, check=False)


def forked(cwd, args, kill_at=None, delay=None):
    """main(args) in a forked child: a real process that can be SIGKILLed.

    kill_at: the ARENA_KILL_AT hook point; delay: SIGKILL after this many seconds.
    Returns (killed, exit code or None, stdout, stderr).
    """
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:  # the child never returns into the test runner
            code = 99
            try:
                os.chdir(cwd)
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
                sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8")
                os.environ.pop("ARENA_KILL_AT", None)
                if kill_at:
                    os.environ["ARENA_KILL_AT"] = str(kill_at)
                storage.KILLS[0] = 0
                code = main(list(args))
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 2
            except BaseException:
                code = 98
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code)
        if delay is not None:
            time.sleep(delay)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _, status = os.waitpid(pid, 0)
        out.seek(0)
        err.seek(0)
        o, e = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    if os.WIFSIGNALED(status):
        return True, None, o, e
    return False, os.WEXITSTATUS(status), o, e


def process(cwd, args, delay=None):
    """A real `python3 bracket.py` process, SIGKILLed after delay seconds if still running."""
    proc = subprocess.Popen(ENGINE + list(args), cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    if delay is not None:
        try:
            out, err = proc.communicate(timeout=delay)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
            return True, None, "", ""
    else:
        out, err = proc.communicate(timeout=120)
    return proc.returncode < 0, (None if proc.returncode < 0 else proc.returncode), out, err


def make_task(cwd, text="Write a function that adds two numbers.\n"):
    with open(os.path.join(cwd, "task.md"), "w", encoding="utf-8") as f:
        f.write(text)


def init(cwd, agents, seed, run="r", *extra):
    make_task(cwd)
    code, out, err = cli(cwd, "init", "--agents", str(agents), "--seed", str(seed), "--task-file", "task.md",
                         "--run", run, "--direct", *extra)
    assert code == 0, err
    return run


def state_of(cwd, run="r"):
    with open(os.path.join(cwd, ".arena", run, "state.json"), encoding="utf-8") as f:
        return json.loads(f.read())["state"]


def journal_of(cwd, run="r"):
    with open(os.path.join(cwd, ".arena", run, "journal.jsonl"), encoding="utf-8") as f:
        return [json.loads(line) for line in f]


# ---------------------------------------------------------------- a deterministic stand-in

def digest(*parts):
    return hashlib.sha256(":".join(str(p) for p in parts).encode()).hexdigest()


class Agent:
    """A stand-in whose output depends only on the job (and, for judges, on what they read).

    Judges score each side from the text of its blinded solution, so a judge
    handed out again with fresh labels and order still decides the same way.
    `bad` maps job -> (how, times): write a bad output that many times first.
    """

    def __init__(self, cwd, seed=0, bad=None):
        self.cwd, self.seed = cwd, seed
        self.bad = {j: list(v) for j, v in (bad or {}).items()}
        self.queue, self.assigned = {}, {}
        self.ran = {}
        self.calls = []

    def __call__(self, call):
        m = re.match(r"^Read (\S+) and follow it\.$", call["prompt"])
        brief = self.read(m.group(1))
        receipt = re.search(r"^(done \S+)$", brief, re.M).group(1)
        job = receipt.split()[1]
        kind = job_kind(job)
        self.ran.setdefault(kind, set()).add(job)
        self.calls.append(job)
        out = re.search(r"`(\.arena/[^`]+?/out/%s\.(?:md|json))`" % re.escape(job), brief).group(1)
        how = None
        if job not in self.bad and self.queue.get(kind):
            self.bad[job] = list(self.queue[kind].pop(0))
            self.assigned[job] = tuple(self.bad[job])
        if job in self.bad and self.bad[job][1] > 0:
            self.bad[job][1] -= 1
            how = self.bad[job][0]
        if how is not None and misbehave(self, how, job, kind, brief, out):
            return receipt
        rng = random.Random(digest(self.seed, job))
        head = "<!-- arena job: %s -->\n" % job
        if kind == "spawn":
            self.write(out, head + "Solution %s\n%s\n" % (digest(self.seed, job)[:16], "y" * rng.randrange(20, 200)))
        elif kind == "atk":
            n = rng.randrange(0, 4)
            self.write(out, head + "".join("## ATTACK %d %s: flaw %d\nBreaks on %d.\n" % (
                k, ("FATAL", "MAJOR", "MINOR")[rng.randrange(3)], k, k) for k in range(1, n + 1)))
        elif kind == "def":
            count = len(standin.attacks_listed(self.cwd, brief, "Attacks on your solution"))
            self.write(out, head + "".join("## ANSWER %d %s: reply\nEvidence.\n" % (
                k, "CONCEDE" if rng.random() < .5 else "REBUT") for k in range(1, count + 1)))
            self.write(solution_output(job, brief), head + "Revised %s\n" % digest(self.seed, job)[:16])
        elif kind == "merge":
            self.write(out, head + "## TAKEN 1: a part of the other\nIt is better there.\n")
            challenger = re.search(r"`(\.arena/[^`]+/out/merge-sol\.md)`", brief).group(1)
            self.write(challenger, head + "Merged %s\n" % digest(self.seed, job)[:16])
        else:
            self.write(out, json.dumps(self.verdict(job, brief)))
        return receipt

    def verdict(self, job, brief):
        labels = re.findall(r"^- ([A-Z][a-z]+)(?::|$)", brief, re.M)
        crits = [(c, int(top)) for c, top in re.findall(r"^- ([a-z]+) \((\d+)\):", brief, re.M)]
        scores, fatal = {}, {}
        for label in labels:
            path = re.search(r"^- %s(?::| *\n  - revised solution:) (\S+)$" % label, brief, re.M).group(1)
            rng = random.Random(digest(self.read(path)))
            scores[label] = {c: rng.randrange(0, top + 1) for c, top in crits}
            fatal[label] = rng.random() < 0.1
        return {"job": job, "scores": scores, "fatal": fatal, "confidence": "high", "reason": "stand-in"}

    def read(self, rel):
        with open(os.path.join(self.cwd, rel), encoding="utf-8", errors="replace") as f:
            return f.read()

    def write(self, rel, text, mode="w"):
        with open(os.path.join(self.cwd, rel), mode) as f:
            f.write(text)


def solution_output(job, brief):
    """The revised-solution path a defence brief asks for."""
    mid, me = match_of(job), job.split("-")[3]
    return re.search(r"`(\.arena/[^`]+/out/%s-sol-%s\.md)`" % (mid, me), brief).group(1)


def misbehave(agent, how, job, kind, brief, out):
    """Write one kind of bad output for job; False means 'behave this time'."""
    head = "<!-- arena job: %s -->\n" % job
    if how == "missing":
        return True
    if how == "wrong-path":
        agent.write(out.replace("/out/", "/"), head + "Solution in the wrong place.\n")
        return True
    if how == "other-job":
        agent.write(out, "<!-- arena job: spawn-a001 -->\nSomeone else's work.\n" if job != "spawn-a001"
                    else "<!-- arena job: spawn-a002 -->\nSomeone else's work.\n")
        return True
    if how == "symlink":
        target = os.path.join(agent.cwd, "outside-secret.txt")
        with open(target, "w") as f:
            f.write(head + "secret\n")
        os.symlink(target, os.path.join(agent.cwd, out))
        return True
    if how == "not-utf8":
        agent.write(out, head.encode() + b"caf\xe9 \xff\xfe\n", mode="wb")
        return True
    if how == "empty":
        agent.write(out, head + "   \n\n")
        return True
    if how == "huge":
        with open(os.path.join(agent.cwd, out), "wb") as f:
            f.write(head.encode())
            f.truncate(50 * 1024 * 1024)
        return True
    if how.startswith("attacks:"):
        agent.write(out, head + how[len("attacks:"):])
        return True
    if how == "unanswered":
        count = len(standin.attacks_listed(agent.cwd, brief, "Attacks on your solution"))
        n = count - 1 if count else 1
        agent.write(out, head + "".join("## ANSWER %d CONCEDE: one\n" % k for k in range(1, n + 1)))
        agent.write(solution_output(job, brief), head + "Revised anyway\n")
        return True
    if how.startswith("verdict:"):
        v = agent.verdict(job, brief)
        labels = sorted(v["scores"])
        edit = how[len("verdict:"):]
        if edit == "not-json":
            agent.write(out, "The winner is %s." % labels[0])
            return True
        if edit == "no-fatal":
            del v["fatal"]
        elif edit == "no-scores":
            del v["scores"]
        elif edit == "no-crit":
            del v["scores"][labels[0]]["clarity"]
        elif edit == "unknown-label":
            v["scores"]["Zebra"] = v["scores"].pop(labels[0])
        elif edit == "over-max":
            v["scores"][labels[0]]["correctness"] = 31
        elif edit == "negative":
            v["scores"][labels[1]]["clarity"] = -1
        elif edit == "float":
            v["scores"][labels[0]]["correctness"] = 12.5
        elif edit == "string":
            v["scores"][labels[0]]["correctness"] = "12"
        elif edit == "bool":
            v["scores"][labels[0]]["clarity"] = True
        elif edit == "fatal-string":
            v["fatal"][labels[0]] = "no"
        elif edit == "other-job":
            v["job"] = "r9-m99-judge"
        elif edit == "array":
            v = [v]
        else:
            raise AssertionError("unknown verdict edit " + edit)
        agent.write(out, json.dumps(v))
        return True
    raise AssertionError("unknown misbehaviour " + how)


# ---------------------------------------------------------------- the harness

class Driver:
    """An orchestrator following SKILL.md; `runner(args)` runs one bracket.py command.

    runner returns (killed, code, stdout, stderr). A killed command is simply
    run again without the kill (that is the resume); when `next` then waits
    for jobs this driver never handed to an agent, it runs `next --retry`.
    """

    def __init__(self, cwd, run, agent, kill=None):
        self.cwd, self.run, self.agent, self.kill = cwd, run, agent, kill
        self.kills = self.retries = self.steps = 0
        self.stderr, self.outputs = [], []

    def call(self, *args, may_kill=True):
        argv = list(args) + ["--run", self.run]
        while True:
            self.steps += 1
            if self.steps > 3000:
                raise AssertionError("run did not finish")
            if self.kill and may_kill:
                killed, code, out, err = self.kill(self.cwd, argv)
            else:
                killed, code, out, err = (False,) + cli(self.cwd, *argv)
            if killed:
                self.kills += 1
                may_kill = False  # the resume itself runs clean, then kills may resume
                continue
            assert "Traceback" not in err + out, err
            assert code == 0, "bracket.py %s exited %s: %s" % (" ".join(argv), code, err)
            self.stderr.append(err)
            self.outputs.append(out)
            return out

    def play(self, out=None):
        out = out or self.call("next")
        while "\nFinished." not in out:
            if "Waiting for" in out:
                self.retries += 1
                # never kill the re-issue of jobs no agent got: that would cost them a second try
                out = self.call("next", "--retry", may_kill=False)
            elif "needs a decision by hand" in out:
                m = re.search(r"run: record (\S+) <(\w+)\|", out)
                self.call("record", m.group(1), m.group(2), "--reason", "by hand")
                out = self.call("next")
            else:
                calls = parse_wave(out)
                assert calls, "next printed no wave and no known action:\n" + out
                for c in calls:
                    self.agent(c)
                # what Claude Code would report for each call, passed on with the receipts
                out = self.call("next", "--used", *["%s=%s" % (c["description"], usage_of(c["description"]))
                                                    for c in calls])
        return out


def hook_killer(rng, rate, top, bucket="hook"):
    def kill(cwd, argv):
        if rng.random() >= rate:
            return (False,) + cli(cwd, *argv)
        killed, code, out, err = forked(cwd, argv, kill_at=1 + rng.randrange(top))
        KILLS[bucket] += killed
        return killed, code, out, err
    return kill


def timed_killer(rng, rate, top, real_process=False):
    """Kill a call at a random moment: forked calls within `top` seconds; real processes
    within `top` times the median length of the calls this killer let finish (so the kills
    land inside the process however fast the machine is)."""
    lengths = []

    def kill(cwd, argv):
        if rng.random() >= rate:
            if not real_process:
                return (False,) + cli(cwd, *argv)
            start = time.monotonic()
            _, code, out, err = process(cwd, argv)
            lengths.append(time.monotonic() - start)
            return False, code, out, err
        if real_process:
            typical = sorted(lengths)[len(lengths) // 2] if lengths else 0.1
            killed, code, out, err = process(cwd, argv, rng.uniform(0, top * typical))
            KILLS["timed-process"] += killed
        else:
            killed, code, out, err = forked(cwd, argv, delay=rng.uniform(0, top))
            KILLS["timed-fork"] += killed
        return killed, code, out, err
    return kill


def outcome(cwd, run="r"):
    """What an interrupted run must share with an uninterrupted one."""
    st = state_of(cwd, run)
    # the final judge's reason names its labels, which are fresh on every try
    summ = {j: {k: v for k, v in s.items() if k not in ("order", "names") and (j, k) != ("final", "why")}
            for j, s in st["summ"].items()}
    # the usage reports passed on survive every kill; calls may only grow (a wave killed after it was
    # shown, before the orchestrator read it, is handed out again)
    reported = {k: {x: v[x] for x in ("rep", "ctx", "tools", "ms")} for k, v in st["spend"].items()}
    return {"champion": st["champion"], "results": st["results"], "out": st["out"], "sol": st["sol"],
            "rounds": st["rounds"], "byes": st["byes"], "jobs": {j: i["s"] for j, i in st["jobs"].items()},
            "summ": summ, "final": {k: v for k, v in (st["final"] or {}).items() if k not in ("why", "names")},
            "reported": reported}


def play_clean(agents, seed, extra=()):
    with tmpdir() as d:
        init(d, agents, seed, "r", *extra)
        agent = Agent(d, seed)
        Driver(d, "r", agent).play()
        return outcome(d), agent.ran


class KillAndResume(unittest.TestCase):

    def check_run(self, d, reference, ran, agent, driver):
        got = outcome(d)
        self.assertEqual(got["champion"], reference["champion"])
        self.assertEqual(got["results"], reference["results"])
        self.assertEqual(got, reference)
        self.assertEqual(agent.ran, ran, "stand-ins executed a different set of jobs")
        st = state_of(d)
        # nothing recorded twice, nothing lost
        journal = journal_of(d)
        self.assertEqual([ev["seq"] for ev in journal], list(range(1, len(journal) + 1)))
        done = [ev["job"] for ev in journal if ev["e"] == "done"]
        self.assertEqual(len(done), len(set(done)), "a job was recorded done twice")
        self.assertEqual(set(done), {j for j, i in st["jobs"].items() if i["s"] == "done"})
        matches = [m["id"] for r in st["rounds"] for m in r["matches"]]
        self.assertEqual(sorted(st["results"]), sorted(matches))
        self.assertEqual(sum(1 for ev in journal if ev["e"] == "advance"),
                         len([r for r in st["rounds"] if not r.get("merge")]))
        self.assertEqual(st["seq"], len(journal))
        # repair from the journal gives back the same state, byte for byte
        with open(os.path.join(d, ".arena", "r", "state.json"), "rb") as f:
            before = f.read()
        code, out, err = cli(d, "repair", "--run", "r")
        self.assertEqual(code, 0, err)
        with open(os.path.join(d, ".arena", "r", "state.json"), "rb") as f:
            self.assertEqual(f.read(), before)
        self.assertEqual(cli(d, "next", "--run", "r")[1].splitlines()[-1], "Finished. Run: winner --run r")

    def tournament(self, agents, seed, killer, extra=()):
        reference, ran = play_clean(agents, seed, extra)
        with tmpdir() as d:
            init(d, agents, seed, "r", *extra)
            agent = Agent(d, seed)
            driver = Driver(d, "r", agent, killer)
            driver.play()
            self.check_run(d, reference, ran, agent, driver)
            return driver

    def test_hook_kills_16_agents(self):
        """SIGKILL at exact journal and state write points, 16 agents, several seeds."""
        total = 0
        # four seeds: the sweeps below reach every journal and state write; these add kills
        # during resumes and at brief writes
        for seed in range(4):
            rng = random.Random(1000 + seed)
            extra = ("--baseline-file", "task.md") if seed % 2 else ()
            driver = self.tournament(16, seed, hook_killer(rng, 0.9, 24), extra)
            total += driver.kills
        self.assertGreaterEqual(total, 35)

    def test_timed_kills_16_agents(self):
        """SIGKILL of forked bracket.py processes after random delays, 16 agents."""
        total = 0
        for seed in range(10, 13):
            rng = random.Random(2000 + seed)
            driver = self.tournament(16, seed, timed_killer(rng, 0.6, 0.025))
            total += driver.kills
        # how many land depends on this machine's speed; the floor proves kills happened
        self.assertGreaterEqual(total, 6)

    def test_kills_100_agents(self):
        """A 100-agent run killed at hook points and at random times."""
        rng = random.Random(77)
        # timed kills change which commands run, so these hook kills vary too
        hook, timed = hook_killer(rng, 1.0, 60, "hook-mixed"), timed_killer(rng, 1.0, 0.08)

        def either(cwd, argv):
            if rng.random() < 0.5:
                return (False,) + cli(cwd, *argv)
            return (hook if rng.random() < 0.6 else timed)(cwd, argv)
        driver = self.tournament(100, 5, either)
        self.assertGreaterEqual(driver.kills, 15)

    def test_real_process_kills(self):
        """Real `python3 bracket.py next` processes SIGKILLed at seeded random times."""
        rng = random.Random(31)
        driver = self.tournament(16, 21, timed_killer(rng, 0.7, 1.2, real_process=True))
        self.assertGreaterEqual(driver.kills, 5)

    def test_every_point_of_one_wave(self):
        """Kill `next` at each of its write points in turn; every resume ends the same."""
        reference, ran = play_clean(4, 3)
        with tmpdir() as d:
            init(d, 4, 3)
            agent = Agent(d, 3)
            drv = Driver(d, "r", agent)
            out = drv.call("next")
            calls = parse_wave(out)
            for c in calls:
                agent(c)
            # the next the driver runs after a wave, usage reports and all
            argv = ["next", "--run", "r", "--used"] + ["%s=%s" % (c["description"], usage_of(c["description"]))
                                                        for c in calls]
            snapshot = snapshot_dir(d)
            # how many points does this `next` pass?
            os.environ["ARENA_KILL_AT"] = "0"
            storage.KILLS[0] = 0
            try:
                cli(d, *argv)
            finally:
                del os.environ["ARENA_KILL_AT"]
            points = storage.KILLS[0]
            self.assertGreater(points, 10)
        for n in range(1, points + 1):
            with tmpdir() as d:
                restore_dir(snapshot, d)
                agent = Agent(d, 3)
                agent.ran = {"spawn": set(ran["spawn"])}
                killed, _, _, _ = forked(d, argv, kill_at=n)
                self.assertTrue(killed, "point %d not reached" % n)
                KILLS["hook"] += 1
                drv = Driver(d, "r", agent)
                drv.play(drv.call("next", *argv[3:]))  # the killed command, run again, then on
                self.check_run(d, reference, ran, agent, drv)




# ---------------------------------------------------------------- every write point of whole runs

def point_kinds(cwd, argv):
    """Run argv in this process without killing; returns (kinds of its kill points in order, output).

    A point is "journal" (inside a journal append), "state" (writing state.json) or
    "file" (a brief, a judge's copy, the report)."""
    kinds = []
    real = storage.kill_point

    def spy(torn=None):
        caller = sys._getframe(1).f_code.co_name
        if caller == "atomic_write":
            caller = "state" if sys._getframe(2).f_code.co_name == "save" else "file"
        kinds.append({"append": "journal", "save": "state"}.get(caller, caller))
    storage.kill_point = spy
    try:
        code, out, err = cli(cwd, *argv)
    finally:
        storage.kill_point = real
    assert code == 0, err
    return kinds, out


def in_workers(parts, fn):
    """[fn(part) for part in range(parts)], each in a forked child, side by side.

    A child's result (JSON) or its traceback comes back through a pipe; a failure in any
    child fails the test with that traceback."""
    sys.stdout.flush()
    sys.stderr.flush()
    kids = []
    for part in range(parts):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child never returns into the test runner
            os.close(r)
            try:
                result = {"ok": fn(part)}
            except BaseException:
                import traceback
                result = {"error": traceback.format_exc()}
            try:
                os.write(w, json.dumps(result).encode("utf-8"))
            finally:
                os._exit(0)
        os.close(w)
        kids.append((pid, r))
    results, errors = [], []
    for part, (pid, r) in enumerate(kids):
        with os.fdopen(r, "rb") as f:
            data = f.read()
        os.waitpid(pid, 0)
        res = json.loads(data.decode("utf-8")) if data else {"error": "the worker died without a word"}
        if "error" in res:
            errors.append("worker %d of %d:\n%s" % (part + 1, parts, res["error"]))
        else:
            results.append(res["ok"])
    if errors:
        raise AssertionError("\n".join(errors))
    return results


class Checkpoint:
    """The run folder's journal and state at one moment; restoring them undoes a command.

    Briefs and judges' copies a command wrote stay, but every command writes them again
    from the state before they are read."""

    def __init__(self, cwd, run):
        self.journal = os.path.join(cwd, ".arena", run, "journal.jsonl")
        self.state = os.path.join(cwd, ".arena", run, "state.json")
        self.folder = os.path.dirname(self.state)
        self.size = os.path.getsize(self.journal)
        with open(self.state, "rb") as f:
            self.data = f.read()

    def restore(self):
        with open(self.journal, "rb+") as f:
            f.truncate(self.size)
        with open(self.state, "wb") as f:
            f.write(self.data)
        for name in os.listdir(self.folder):
            if ".tmp-" in name:  # a killed atomic write's leftover
                os.remove(os.path.join(self.folder, name))


def kind_of(out):
    """What a `next` output asks for: a wave, the conductor, the end of a batch, a wait, the end."""
    if "\nFinished." in "\n" + out:
        return "finished"
    for words, kind in (("BATCH OVER", "batch-over"), ("Start the conductor", "conductor"), ("Waiting for", "wait")):
        if words in out:
            return kind
    return "wave" if parse_wave(out) else "other"


def wave_jobs(out):
    return sorted(c["description"] for c in parse_wave(out))


def about_the_run(text):
    """A command's output without its audit of the folders around the run, which other
    processes on the machine change, and without what it says was spent: a call counts once
    handed out, so a command killed after that and run again may count a wave twice."""
    lines, spend = [], False
    for line in text.splitlines():
        spend = line.startswith("spent: ") or (spend and line.startswith("  "))
        if not spend:
            lines.append(re.sub(r", spent \d+(/\d+)? calls, ~[0-9.]+[kM]? tokens", "", line))
    cut = [k for k, line in enumerate(lines) if line.startswith(("files outside", "system temp folder"))]
    return "\n".join(lines[:cut[0]] if cut else lines)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def without_clock(page):
    """A report page without the times it shows (elapsed, and when it was written)."""
    page = re.sub(rb"[0-9hms]+ elapsed", b"(time) elapsed", page)
    return re.sub(rb"Written by bracket.py report at [^.]*\.", b"Written by bracket.py report at (time).", page)


class EveryWritePoint(unittest.TestCase):
    """SIGKILL at every journal and state.json write point of whole runs, one by one.

    Each `next` (direct, conductor start, inside a conductor batch) is first run clean to
    learn its write points and what it ends with; then for every point a forked copy is
    killed exactly there and the command is run again, as the orchestrator would
    (`next --retry` when the killed wave never reached it). The resumed command must leave
    the same results, verdicts and job statuses and hand out the same jobs. The run goes
    on from the last resume and must end exactly like an uninterrupted run. `report`,
    `winner` and `repair` are swept the same way at the end, `winner` and `report` with a
    journal ahead of state.json so that they have writes to be killed in."""

    def sweep(self, cwd, argv):
        """Kill argv at each of its journal/state points and resume; returns the last resume's output."""
        mark = Checkpoint(cwd, "r")
        kinds, clean_out = point_kinds(cwd, argv)
        clean = outcome(cwd)
        points = [k for k, kind in enumerate(kinds, 1) if kind in ("journal", "state")]
        out = clean_out
        for n, k in enumerate(points):
            mark.restore()
            killed, _, _, err = forked(cwd, argv, kill_at=k)
            self.assertTrue(killed, "%s: point %d not reached: %s" % (" ".join(argv), k, err))
            KILLS["sweep"] += 1
            out = self.resume(cwd, argv, kind_of(clean_out))
            self.assertEqual(wave_jobs(out), wave_jobs(clean_out), "%s killed at point %d" % (argv, k))
            self.assertEqual(outcome(cwd), clean, "%s killed at point %d (%s)" % (argv, k, kinds[k - 1]))
        if not points:
            mark.restore()
            out = cli(cwd, *argv)[1]
        return out

    def resume(self, cwd, argv, want):
        """Run argv again, then do what SKILL.md says until `next` prints what the clean
        command printed (a wave, BATCH OVER, the conductor, finished)."""
        code, out, err = cli(cwd, *argv)
        self.assertEqual(code, 0, err)
        flags = [a for a in argv if a == "--conductor"]
        for _ in range(4):
            if kind_of(out) == want:
                return out
            if "Waiting for" in out:  # the killed wave never reached the orchestrator
                code, out, err = cli(cwd, "next", "--retry", "--run", "r", *flags)
            elif "BATCH OVER" in out:  # the conductor replies; the main session goes on
                flags = []
                code, out, err = cli(cwd, "next", "--run", "r")
            elif "Start the conductor" in out:
                flags = ["--conductor"]
                code, out, err = cli(cwd, "next", "--run", "r", *flags)
            else:
                break
            self.assertEqual(code, 0, err)
        self.assertEqual(kind_of(out), want, "%s resumed: %s" % (argv, out[-300:]))
        return out

    def begin(self, d, agents, seed, extra):
        make_task(d)
        code, out, err = cli(d, "init", "--agents", str(agents), "--seed", str(seed), "--task-file", "task.md",
                             "--run", "r", *extra)
        self.assertEqual(code, 0, err)

    def reference(self, agents, seed, extra):
        """The uninterrupted run: its outcome and the jobs its stand-ins executed."""
        with tmpdir() as d:
            self.begin(d, agents, seed, extra)
            agent = standin.StandIn(d, seed)
            standin.Orchestrator(d, agent, "r", runner=standin.run_here).play()
            return outcome(d), set(agent.calls), cli(d, "winner", "--run", "r")[1]

    def play(self, agents, seed, extra):
        """One whole run with every `next` swept; then winner, report and repair.

        Two forked workers play the run side by side, each sweeping every other command
        (and running the rest clean), so the machine's two cores share the work."""
        reference = self.reference(agents, seed, extra)
        parts = 2
        KILLS["sweep"] += sum(in_workers(parts, lambda part: self.walk(agents, seed, extra, reference, part, parts)))

    def walk(self, agents, seed, extra, reference, part, parts):
        """Play the run, sweeping the commands whose number is part modulo parts; returns the kills."""
        want, executed, winner_text = reference
        before = KILLS["sweep"]
        with tmpdir() as d:
            self.begin(d, agents, seed, extra)
            agent = standin.StandIn(d, seed)
            flags, batches, step = [], 0, 0

            def command(argv):
                return self.sweep(d, argv) if step % parts == part else cli(d, *argv)[1]
            mark = Checkpoint(d, "r")
            out = command(["next", "--run", "r"])
            while "\nFinished." not in out:
                if "Start the conductor" in out:
                    flags = ["--conductor"]
                    batches += 1
                elif "BATCH OVER" in out:
                    flags = []
                elif "The field looks settled" in out:
                    # as the reference's orchestrator answers an offer: the bracket plays out
                    self.assertEqual(cli(d, "settle", "continue", "--run", "r")[0], 0)
                else:
                    calls = parse_wave(out)
                    self.assertTrue(calls, out)
                    for c in calls:
                        agent(c)
                mark = Checkpoint(d, "r")
                step += 1
                out = command(["next", "--run", "r"] + flags)
            self.assertEqual(outcome(d), want, "the resumed run ended differently")
            self.assertEqual(set(agent.calls), executed, "stand-ins executed a different set of jobs")
            if "--direct" not in extra:
                self.assertGreater(batches, 1)
            if part == 0:
                self.closing(d, mark, winner_text)
        return KILLS["sweep"] - before

    def closing(self, d, before_last, winner_text):
        """winner and report with state.json one command behind the journal (as a kill after
        the last append leaves it), then repair: every write point of each."""
        finished = Checkpoint(d, "r")
        report = os.path.join(d, ".arena", "r", "report.html")
        for argv in (["winner", "--run", "r"], ["report", "--run", "r"], ["repair", "--run", "r"]):
            if argv[0] != "repair":
                with open(finished.state, "wb") as f:
                    f.write(before_last.data)  # the journal has events this state lacks
            lagging = Checkpoint(d, "r")
            kinds, want = point_kinds(d, argv)
            made = read_bytes(report) if argv[0] == "report" else None
            self.assertTrue(kinds, argv)
            for k in range(1, len(kinds) + 1):
                lagging.restore()
                killed, _, _, err = forked(d, argv, kill_at=k)
                self.assertTrue(killed, "%s: point %d not reached: %s" % (argv[0], k, err))
                KILLS["sweep"] += 1
                code, out, err = cli(d, *argv)
                self.assertEqual((code, about_the_run(out)), (0, about_the_run(want)), argv)
                with open(finished.state, "rb") as f:
                    self.assertEqual(f.read(), finished.data, "%s killed at point %d" % (argv[0], k))
                if made is not None:  # the same page, but for the elapsed time it shows
                    self.assertEqual(without_clock(read_bytes(report)), without_clock(made))
            if argv[0] == "winner":
                self.assertEqual(about_the_run(want), about_the_run(winner_text))

    def test_every_write_point_16_agents_conductor(self):
        self.play(16, 4, ("--waves", "--baseline-file", "task.md"))

    def test_every_write_point_100_agents_direct(self):
        self.play(100, 5, ("--direct",))




def one_line_error(test, code, out, err, *words):
    test.assertEqual(code, 2, "expected exit 2, got %s: %s %s" % (code, out, err))
    test.assertNotIn("Traceback", err + out)
    test.assertEqual(len(err.strip().splitlines()), 1, err)
    test.assertTrue(err.startswith("bracket.py: "), err)
    for w in words:
        test.assertIn(w, err)


class DamagedFiles(unittest.TestCase):
    """Each damage is reported in one line with a way forward, never silently run on."""

    def setUp(self):
        self.tmp = tmpdir()
        self.d = self.tmp.name
        init(self.d, 4, 9)
        self.agent = Agent(self.d, 9)
        self.drv = Driver(self.d, "r", self.agent)
        out = self.drv.call("next")
        calls = parse_wave(out)
        for c in calls:
            self.agent(c)
        # spawns collected with their usage reports, as the driver would, and attacks issued
        self.drv.call("next", "--used", *["%s=%s" % (c["description"], usage_of(c["description"])) for c in calls])
        self.state = os.path.join(self.d, ".arena", "r", "state.json")
        self.journal = os.path.join(self.d, ".arena", "r", "journal.jsonl")
        with open(self.state, "rb") as f:
            self.good = f.read()

    def tearDown(self):
        self.tmp.cleanup()

    def damage(self, data):
        with open(self.state, "wb") as f:
            f.write(data)

    def assert_refused_then_repaired(self, *words):
        with open(self.state, "rb") as f:
            damaged = f.read()
        for cmd in (["next"], ["status"], ["winner"], ["collect"], ["advance"]):
            code, out, err = cli(self.d, *cmd + ["--run", "r"])
            one_line_error(self, code, out, err, *words)
            with open(self.state, "rb") as f:
                self.assertEqual(f.read(), damaged, "%s touched a damaged state" % cmd)
        code, out, err = cli(self.d, "repair", "--run", "r")
        self.assertEqual(code, 0, err)
        with open(self.state, "rb") as f:
            self.assertEqual(f.read(), self.good)
        self.drv.play()

    def test_truncated_state(self):
        self.damage(self.good[:len(self.good) // 2])
        self.assert_refused_then_repaired("damaged", "bracket.py repair --run r")

    def test_truncated_to_nothing(self):
        self.damage(b"")
        self.assert_refused_then_repaired("damaged", "repair")

    def test_one_byte_edited(self):
        at = self.good.index(b'"seed":9') + len(b'"seed":')
        self.damage(self.good[:at] + b"8" + self.good[at + 1:])
        self.assert_refused_then_repaired("checksum", "repair --run r")

    def test_wrong_format_version(self):
        body = self.good.split(b'"state": ', 1)[1]
        self.damage(self.good.replace(b'{"format": 1,', b'{"format": 7,', 1))
        code, out, err = cli(self.d, "next", "--run", "r")
        one_line_error(self, code, out, err, "format 7", "format %d" % FORMAT)
        self.assertTrue(body)

    def test_torn_journal_line_is_cut_and_the_run_goes_on(self):
        with open(self.journal, "ab") as f:
            f.write(b'{"e":"done","job":"spawn-a0')
        code, out, err = cli(self.d, "status", "--run", "r")
        self.assertEqual(code, 0, err)
        with open(self.journal, "rb") as f:
            data = f.read()
        self.assertTrue(data.endswith(b"\n"))
        self.assertNotIn(b'"job":"spawn-a0\n', data + b"\n")
        self.assertEqual(state_of(self.d)["seq"], len(journal_of(self.d)))
        self.drv.play()
        reference, ran = play_clean(4, 9)
        self.assertEqual(outcome(self.d), reference)

    def test_missing_state_is_rebuilt_and_said(self):
        os.remove(self.state)
        code, out, err = cli(self.d, "status", "--run", "r")
        self.assertEqual(code, 0, err)
        self.assertIn("rebuilt it from journal.jsonl", err)
        with open(self.state, "rb") as f:
            self.assertEqual(f.read(), self.good)

    def test_missing_journal(self):
        os.remove(self.journal)
        code, out, err = cli(self.d, "next", "--run", "r")
        one_line_error(self, code, out, err, "ahead of journal.jsonl", "repair")
        code, out, err = cli(self.d, "repair", "--run", "r")
        one_line_error(self, code, out, err, "no journal.jsonl")
        with open(self.state, "rb") as f:
            self.assertEqual(f.read(), self.good)

    def test_damaged_journal_middle_without_state(self):
        with open(self.journal, "rb") as f:
            lines = f.read().split(b"\n")
        lines[2] = lines[2][:10] + b"#" + lines[2][11:]
        with open(self.journal, "wb") as f:
            f.write(b"\n".join(lines))
        os.remove(self.state)
        code, out, err = cli(self.d, "next", "--run", "r")
        one_line_error(self, code, out, err, "line 3 is damaged")
        self.assertFalse(os.path.exists(self.state))

    def test_state_replaced_by_garbage_bytes(self):
        self.damage(b"\xff\xfe\x00garbage" * 10)
        self.assert_refused_then_repaired("damaged")


# What a misbehaving sub-agent writes: kind -> [(how, times it does so)].
# TRIES: spawn 2, atk 2, def 2, judge 3; `times` >= TRIES exhausts the budget.
BAD_PLAN = {
    "spawn": [("empty", 1), ("huge", 1), ("not-utf8", 1), ("symlink", 1), ("other-job", 1), ("wrong-path", 1),
              ("missing", 2)],
    "atk": [("attacks:" + "".join("## ATTACK %d MINOR: x\n" % k for k in range(1, 9)), 1),
            ("attacks:## ATTACK 1 SEVERE: x\n", 1), ("attacks:## ATTACK 2 MAJOR: x\n", 1),
            ("attacks:## ATTACK 1 FATAL: x\n## Note\n", 1), ("not-utf8", 2)],
    "def": [("unanswered", 1), ("other-job", 1), ("unanswered", 2)],
    "judge": [("verdict:" + e, 1) for e in ("not-json", "no-fatal", "no-scores", "no-crit", "unknown-label", "over-max",
                                            "negative", "float", "string", "bool", "fatal-string", "other-job")]
    + [("verdict:array", 3)],
}


class BadOutput(unittest.TestCase):
    """Every kind of bad output: a one-line reason, a re-issue, then the documented fallback."""

    def test_bad_outputs(self):
        with tmpdir() as d:
            init(d, 16, 4)
            agent = Agent(d, 4)
            agent.queue = {k: list(v) for k, v in BAD_PLAN.items()}
            drv = Driver(d, "r", agent)
            drv.play()
            for kind, plan in agent.queue.items():
                self.assertEqual(plan, [], "bad outputs of %s never used" % kind)
            with open(os.path.join(d, "outside-secret.txt")) as f:
                self.assertTrue(f.read().endswith("secret\n"), "a retry wrote through the symlink")
            st = state_of(d)
            journal = journal_of(d)
            text = "\n".join(drv.outputs)
            waves = [ev["jobs"] for ev in journal if ev["e"] == "issue"]
            for job, (how, times) in sorted(agent.assigned.items()):
                kind = job_kind(job)
                fails = [ev for ev in journal if ev["e"] == "fail" and ev["job"] == job]
                self.assertEqual(len(fails), min(times, TRIES[kind]), (job, how))
                lines = [line for line in text.splitlines() if re.match(r"invalid, [^:]+: %s: " % job, line)]
                self.assertEqual(len(lines), len(fails), (job, how, lines))
                # every refusal but a job's last one says it is re-issued; the last says what happens instead
                again = [line.startswith("invalid, will be re-issued: ") for line in lines]
                self.assertEqual(again, [True] * (len(fails) - 1) + [times < TRIES[kind]], (job, lines))
                issued = [k for k, w in enumerate(waves) if job in w]
                if times < TRIES[kind]:
                    self.assertEqual(len(issued), times + 1, (job, how))
                    self.assertEqual(st["jobs"][job]["s"], "done")
                    self.assertFalse(st["summ"].get(job, {}).get("missing"))
                    self.assertEqual(agent.calls.count(job), times + 1)
                    continue
                self.assertEqual(len(issued), TRIES[kind], (job, how))
                if kind == "spawn":
                    who = job[len("spawn-"):]
                    res = [r for r in st["results"].values() if who in (r["w"], r["l"])][0]
                    self.assertEqual((res["how"], res["l"]), ("forfeit", who))
                elif kind in ("atk", "def"):
                    self.assertTrue(st["summ"][job]["missing"], job)
                    if kind == "def":  # keeps the solution it had
                        who = job.split("-")[3]
                        self.assertNotIn(match_of(job) + "-sol-", st["sol"].get(who) or "")
                else:
                    mid = match_of(job)
                    m = find_match(st, mid)
                    self.assertIn('run: record %s <%s|%s> --reason "..."' % (mid, m["a"], m["b"]), text)
                    self.assertEqual(st["results"][mid]["how"], "record")
            self.assertIn("is 31, max is 30", text)
            self.assertIn("over the 524288-byte limit", text)
            self.assertIn("is a symbolic link", text)
            self.assertIn("is not UTF-8 text", text)
            self.assertIn("names job spawn-a00", text)
            self.assertIn("has 8 attacks; at most 7", text)
            self.assertIn("not a whole number", text)
            self.assertIsNotNone(st["champion"])
            code, out, err = cli(d, "winner", "--run", "r")
            self.assertEqual(code, 0, err)
            self.assertIn("winner %s" % st["champion"], out)


def snapshot_dir(top):
    files = {}
    for dirpath, _, names in os.walk(top):
        for name in names:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                files[os.path.relpath(path, top)] = f.read()
    return files


def restore_dir(files, top):
    for rel, data in files.items():
        path = os.path.join(top, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    for sub in ("b", "j", "out"):
        os.makedirs(os.path.join(top, ".arena", "r", sub), exist_ok=True)


def tearDownModule():
    fixed = KILLS["sweep"] + KILLS["hook"]
    timed = KILLS["hook-mixed"] + KILLS["timed-fork"] + KILLS["timed-process"]
    sys.stderr.write("\n[kill points] %d at exact write points, the same on every run (%d in the sweeps of every "
                     "journal and state write, %d at seeded points); %d more at random moments, a number that "
                     "varies with the machine's speed\n" % (fixed, KILLS["sweep"], KILLS["hook"], timed))


if __name__ == "__main__":
    unittest.main()
