"""Lanes: each lane runs one job at a time and asks `lane` for the next.

Checks, with stand-in sub-agents: the same bracket as waves; never more jobs in
flight than lanes (and W); lane commands killed at write points change nothing; a job handed to one lane only, never twice while it may
still run (even when its output is already on disk or invalid); a lane command killed
before printing shows the same job again; lanes of an old set stop; a set of lanes
stops after its budget; real concurrent lane processes race for jobs safely.
"""

import collections
import os
import re
import subprocess
import sys
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import standin  # noqa: E402
from standin import run_cli  # noqa: E402
from arena.storage import Run  # noqa: E402

CALL = re.compile(r'^run_in_background false(?:, model "(\w+)")?, description "([^"]+)", prompt "([^"]+)"$', re.M)


def call_of(out):
    m = CALL.search(out)
    if not m:
        return None
    call = {"prompt": m.group(3), "description": m.group(2), "run_in_background": False}
    if m.group(1):
        call["model"] = m.group(1)
    return call


class LaneWorkspace(unittest.TestCase):
    def workspace(self, n, seed, *extra):
        return standin.init_run(self, n, seed, *extra)

    def outcome(self, cwd):
        st = Run("c", os.path.join(cwd, ".arena")).load()
        return st["champion"], {m: (r["w"], r["how"]) for m, r in st["results"].items()}

    def lane(self, cwd, lane, *extra):
        return run_cli(["lane", "--run", "c", "--lane", lane, "--wait", "0"] + list(extra), cwd)[1]


class Lanes(LaneWorkspace):

    def test_same_bracket_as_waves_and_within_w(self):
        for wave, lane_jobs in ((3, 30), (10, 2)):
            with self.subTest(wave=wave, lane_jobs=lane_jobs):
                # W decides which rounds judge twice side by side, so the reference has the same W
                ref = self.workspace(16, 4, "--waves", "--wave", str(wave))
                standin.Orchestrator(ref, standin.StandIn(ref, seed=4), "c", wave=wave, runner=standin.run_here).play()
                cwd = self.workspace(16, 4, "--wave", str(wave), "--lane-jobs", str(lane_jobs))
                agent = standin.StandIn(cwd, seed=4)
                orch = standin.Orchestrator(cwd, agent, "c", wave=wave, runner=standin.run_here)
                orch.play()
                self.assertEqual(self.outcome(cwd), self.outcome(ref))
                self.assertEqual(max(collections.Counter(agent.calls).values()), 1, "a job ran twice")
                self.assertEqual(orch.max_running, wave)
                if lane_jobs == 2:
                    self.assertGreater(orch.lane_sets, 3, "a set of lanes stops after its budget")

    def test_a_job_goes_to_its_own_lane_only(self):
        cwd = self.workspace(4, 2, "--wave", "2")
        run_cli(["next", "--run", "c"], cwd)
        agent = standin.StandIn(cwd, seed=2, misbehave={})
        first = call_of(self.lane(cwd, "1.1"))
        second = call_of(self.lane(cwd, "1.2"))
        self.assertNotEqual(first["description"], second["description"])
        # both slots are taken: a third lane (there are only two) and lane 1.2 again get nothing new
        self.assertIn("LANE OVER", self.lane(cwd, "1.3"))
        # lane 1.1's job writes its output, but only lane 1.1 collects it
        agent(first)
        out = self.lane(cwd, "1.2")
        self.assertIn("0/", out.splitlines()[0])
        st = Run("c", os.path.join(cwd, ".arena")).load()
        self.assertEqual(st["jobs"][first["description"]]["s"], "issued", "collected by another lane")

    def test_invalid_output_waits_for_its_lane(self):
        cwd = self.workspace(4, 2, "--wave", "2")
        run_cli(["next", "--run", "c"], cwd)
        bad = standin.StandIn(cwd, seed=2, always={})
        first = call_of(self.lane(cwd, "1.1"))
        job = first["description"]
        bad.always[job] = "empty"
        bad(first)
        # another lane looks while the job's sub-agent may still be fixing its file: not re-issued
        out = self.lane(cwd, "1.2")
        self.assertNotIn(job, out)
        # its own lane asks again: the output is refused and the job goes back to the queue
        out = self.lane(cwd, "1.1")
        self.assertIn("invalid, will be re-issued: %s" % job, out)

    def test_a_lane_killed_before_printing_sees_the_same_job(self):
        cwd = self.workspace(4, 2, "--wave", "2")
        run_cli(["next", "--run", "c"], cwd)
        # the issue event is journaled, the kill comes before the job was printed
        code = subprocess.run(standin.ENGINE + ["lane", "--run", "c", "--lane", "1.1", "--wait", "0"],
                              cwd=cwd, env=dict(os.environ, ARENA_KILL_AT=str(kill_point_after_issue(cwd))),
                              capture_output=True).returncode
        self.assertEqual(code, -9)
        st = Run("c", os.path.join(cwd, ".arena")).load()
        mine = [j for j, i in st["jobs"].items() if i["s"] == "issued"]
        self.assertEqual(len(mine), 1)
        out = self.lane(cwd, "1.1")
        self.assertEqual(call_of(out)["description"], mine[0])
        st = Run("c", os.path.join(cwd, ".arena")).load()
        self.assertEqual(st["jobs"][mine[0]]["t"], 1, "shown again, not handed out again")

    def test_a_refused_agent_call_spends_no_try(self):
        cwd = self.workspace(4, 2, "--wave", "2")
        run_cli(["next", "--run", "c"], cwd)
        job = call_of(self.lane(cwd, "1.1"))["description"]
        # the client refused the call (its cap on sub-agents): the lane stops, the job goes back untouched
        self.assertIn("LANE OVER", self.lane(cwd, "1.1", "--refused"))
        st = Run("c", os.path.join(cwd, ".arena")).load()
        self.assertEqual((st["jobs"][job]["s"], st["jobs"][job]["t"]), ("ready", 0))
        self.assertEqual(call_of(self.lane(cwd, "1.2"))["description"], job)
        st = Run("c", os.path.join(cwd, ".arena")).load()
        self.assertEqual(st["jobs"][job]["t"], 1)
        # replaying the journal gives the same state
        self.assertEqual(run_cli(["repair", "--run", "c"], cwd)[0], 0)
        self.assertEqual(Run("c", os.path.join(cwd, ".arena")).load()["jobs"][job], st["jobs"][job])

    def test_after_a_kill_next_waits_then_retries_and_old_lanes_stop(self):
        cwd = self.workspace(4, 2, "--wave", "2")
        run_cli(["next", "--run", "c"], cwd)
        job = call_of(self.lane(cwd, "1.1"))["description"]
        # the session died with lane 1.1's job in flight: a new session's next waits for it
        out = run_cli(["next", "--run", "c"], cwd)[1]
        self.assertIn("Waiting for 1 job(s)", out)
        self.assertIn(job, out)
        out = run_cli(["next", "--run", "c", "--retry"], cwd)[1]
        self.assertIn("Start 2 lanes", out)
        self.assertIn("<n> = 2.1 2.2", out)
        # a lane of the old set that somehow lives on is told to stop
        self.assertIn("LANE OVER", self.lane(cwd, "1.2"))
        # the job is handed out again, once
        got = [call_of(self.lane(cwd, lane)) for lane in ("2.1", "2.2")]
        self.assertEqual(sum(1 for c in got if c and c["description"] == job), 1)

    def test_concurrent_lane_processes(self):
        ref = self.workspace(8, 6, "--waves", "--wave", "4")
        standin.Orchestrator(ref, standin.StandIn(ref, seed=6), "c", wave=4).play()
        cwd = self.workspace(8, 6, "--wave", "4")
        agent = standin.StandIn(cwd, seed=6)
        lock = threading.Lock()
        seen, errors = [], []
        out = run_cli(["next", "--run", "c"], cwd)[1]
        lanes = re.search(r"^<n> = (.*)$", out, re.M).group(1).split()

        def lane(name):
            try:
                while True:
                    code, got, err = run_cli(["lane", "--run", "c", "--lane", name, "--wait", "30"], cwd, check=False)
                    if code != 0:
                        errors.append(err)
                        return
                    if "LANE OVER" in got:
                        return
                    with lock:
                        seen.append(int(re.search(r", (\d+) running", got).group(1)))
                    call = call_of(got)
                    if call:
                        with lock:
                            agent(call)
            except Exception as e:  # reported below
                errors.append(repr(e))

        threads = [threading.Thread(target=lane, args=(n,)) for n in lanes]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        self.assertEqual(errors, [])
        out = run_cli(["next", "--run", "c"], cwd)[1]
        while "Finished." not in out:  # a set can end on its budget before the run does
            self.assertRegex(out, r"Start \d+ lanes")
            for name in re.search(r"^<n> = (.*)$", out, re.M).group(1).split():
                while True:
                    got = self.lane(cwd, name)
                    if "LANE OVER" in got:
                        break
                    if call_of(got):
                        agent(call_of(got))
            out = run_cli(["next", "--run", "c"], cwd)[1]
        self.assertLessEqual(max(seen), 4)
        self.assertEqual(max(collections.Counter(agent.calls).values()), 1, "a job ran twice")
        self.assertEqual(self.outcome(cwd), self.outcome(ref))


def kill_point_after_issue(cwd):
    """The first ARENA_KILL_AT point at which a lane dies with its issue event journaled
    but no shown event yet; found by trying each point on a copy of the workspace."""
    import json
    import shutil
    for point in range(1, 30):
        probe = tempfile.mkdtemp()
        try:
            shutil.copytree(os.path.join(cwd, ".arena"), os.path.join(probe, ".arena"))
            shutil.copy(os.path.join(cwd, "task.md"), probe)
            subprocess.run(standin.ENGINE + ["lane", "--run", "c", "--lane", "1.1", "--wait", "0"],
                           cwd=probe, env=dict(os.environ, ARENA_KILL_AT=str(point)), capture_output=True)
            with open(os.path.join(probe, ".arena", "c", "journal.jsonl"), encoding="utf-8") as f:
                events = [json.loads(line) for line in f if line.endswith("\n")]
            if any(e["e"] == "issue" for e in events) and not any(e["e"] == "shown" for e in events):
                return point
        finally:
            shutil.rmtree(probe, True)
    raise AssertionError("no kill point between a lane's issue and its shown event")


if __name__ == "__main__":
    unittest.main()


class RollingNext(LaneWorkspace):
    """`next --returned JOB...`: a client told of each completion refills the freed slots at once."""

    def test_returned_jobs_free_their_slots(self):
        import json
        cwd = self.workspace(8, 6, "--direct", "--wave", "3")
        agent = standin.StandIn(cwd, seed=6)
        act = json.loads(run_cli(["next", "--run", "c", "--json"], cwd)[1])
        running = [c["job"] for c in act["calls"]]
        self.assertEqual(len(running), 3)
        calls = {c["job"]: c for c in act["calls"]}
        # nothing returned yet: next waits, as before
        self.assertEqual(json.loads(run_cli(["next", "--run", "c", "--json"], cwd)[1])["action"], "wait")
        # one returns: exactly one new job goes out, the other two keep running
        agent(calls[running[0]])
        act = json.loads(run_cli(["next", "--run", "c", "--json", "--returned", running[0]], cwd)[1])
        self.assertEqual(act["action"], "wave")
        self.assertEqual(len(act["calls"]), 1)
        self.assertEqual(sorted(act["running"]), sorted(running[1:]))
        self.assertNotIn(act["calls"][0]["job"], running)
        # a job whose file is on disk but whose agent was not reported returned keeps its slot
        agent(calls[running[1]])
        st = Run("c", os.path.join(cwd, ".arena")).load()
        issued = [j for j, i in st["jobs"].items() if i["s"] == "issued"]
        self.assertLessEqual(len(issued), 3)
        # a job reported returned without output is charged a try and may go out again at once
        act = json.loads(run_cli(["next", "--run", "c", "--json", "--returned", running[2]], cwd)[1])
        st = Run("c", os.path.join(cwd, ".arena")).load()
        self.assertEqual(st["jobs"][running[2]]["t"], 2 if st["jobs"][running[2]]["s"] == "issued" else 1)
        self.assertLessEqual(sum(1 for i in st["jobs"].values() if i["s"] == "issued"), 3)
        # play the rest the rolling way, one return at a time, to the end
        pending = {c["job"]: c for c in act.get("calls", [])}
        pending.update({j: calls[j] for j in running[1:2]})
        for _ in range(500):
            if not pending:
                out = run_cli(["next", "--run", "c", "--json", "--retry"], cwd)[1]
            else:
                job = sorted(pending)[0]
                call = pending.pop(job)
                if job != running[1]:
                    agent(call)
                out = run_cli(["next", "--run", "c", "--json", "--returned", job], cwd)[1]
            act = json.loads(out)
            if act["action"] == "finished":
                break
            if act["action"] == "manual":
                m = act["matches"][0]
                run_cli(["record", m["match"], m["agents"][0], "--run", "c", "--reason", "stand-in"], cwd)
            st = Run("c", os.path.join(cwd, ".arena")).load()
            self.assertLessEqual(sum(1 for i in st["jobs"].values() if i["s"] == "issued"), 3)
            for c in act.get("calls", []):
                pending[c["job"]] = c
        self.assertEqual(act["action"], "finished")
        self.assertEqual(max(collections.Counter(agent.calls).values()), 1, "a job ran twice")

    def test_returned_must_name_a_job(self):
        cwd = self.workspace(4, 2, "--direct")
        code, out, err = run_cli(["next", "--run", "c", "--returned", "r9-m99-judge"], cwd, check=False)
        self.assertEqual(code, 2)
        self.assertEqual(len(err.strip().splitlines()), 1)


class LanesKilled(LaneWorkspace):
    """Every lane command of a run killed once at a journal or state write point (the
    ARENA_KILL_AT hook), then asked again, as a lane whose Bash call failed does."""

    def test_killed_lane_commands_change_nothing(self):
        ref = self.workspace(4, 3, "--wave", "2")
        ref_agent = standin.StandIn(ref, seed=3)
        standin.Orchestrator(ref, ref_agent, "c", wave=2).play()
        cwd = self.workspace(4, 3, "--wave", "2")
        agent = standin.StandIn(cwd, seed=3)
        kills = 0
        out = run_cli(["next", "--run", "c"], cwd)[1]
        for step in range(2000):
            if "Finished." in out:
                break
            if "Waiting for" in out:
                out = run_cli(["next", "--run", "c", "--retry"], cwd)[1]
                continue
            lanes = re.search(r"^<n> = (.*)$", out, re.M).group(1).split()
            live = list(lanes)
            while live:
                for lane in list(live):
                    argv = standin.ENGINE + ["lane", "--run", "c", "--lane", lane, "--wait", "0"]
                    point = 1 + (step + len(agent.calls)) % 9
                    p = subprocess.run(argv, cwd=cwd, env=dict(os.environ, ARENA_KILL_AT=str(point)),
                                       capture_output=True, text=True)
                    got = p.stdout
                    self.assertIn(p.returncode, (0, -9), p.stderr)
                    if p.returncode == -9:
                        # the brief: a command that failed is run again (whatever it printed)
                        kills += 1
                        got = self.lane(cwd, lane)
                    if "LANE OVER" in got:
                        live.remove(lane)
                    elif call_of(got):
                        agent(call_of(got))
            out = run_cli(["next", "--run", "c"], cwd)[1]
        self.assertIn("Finished.", out)
        self.assertGreater(kills, 10)
        self.assertEqual(self.outcome(cwd), self.outcome(ref))
        self.assertEqual(sorted(agent.calls), sorted(ref_agent.calls), "a job ran twice, or another set of jobs ran")
        self.assertEqual(max(collections.Counter(agent.calls).values()), 1)
        # the journal rebuilds the same state
        before = Run("c", os.path.join(cwd, ".arena")).load()
        run_cli(["repair", "--run", "c"], cwd)
        self.assertEqual(Run("c", os.path.join(cwd, ".arena")).load()["jobs"], before["jobs"])
