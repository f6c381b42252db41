"""Conductor batches with stand-ins: early stops, idle conductors, overlapping ones."""

import os
import subprocess
import unittest

import standin
from arena.storage import Run


class ConductorTest(unittest.TestCase):
    def workspace(self, n, seed, *extra):
        # conductors run waves; lanes (the default) are tested in test_lanes.py
        return standin.init_run(self, n, seed, *(extra if "--direct" in extra else extra + ("--waves",)))

    def outcome(self, cwd):
        st = Run("c", os.path.join(cwd, ".arena")).load()
        return st["champion"], {m: (r["w"], r["how"]) for m, r in st["results"].items()}

    def reference(self, n, seed, *extra):
        cwd = self.workspace(n, seed, *extra)
        orch = standin.Orchestrator(cwd, standin.StandIn(cwd, seed=seed), "c", runner=standin.run_here)
        orch.play()
        return self.outcome(cwd), orch

    def test_batches_end_after_the_set_number_of_waves(self):
        (_, _), orch = self.reference(16, 3, "--batch-waves", "3")
        self.assertGreaterEqual(orch.conductors, len(orch.waves) // 3)
        # every conductor ran at most 3 waves: count waves between conductor launches
        per_batch, count = [], 0
        for out in orch.outputs:
            if "Start the conductor" in out:
                per_batch.append(count)
                count = 0
            elif "\nWave " in out:
                count += 1
        per_batch.append(count)
        self.assertLessEqual(max(per_batch), 3)

    def test_conductor_stopping_early_or_idle_loses_nothing(self):
        expected, _ = self.reference(16, 5)
        for stop_after in (0, 1, 2, 5):
            with self.subTest(stop_after=stop_after):
                cwd = self.workspace(16, 5)
                agent = standin.StandIn(cwd, seed=5)
                orch = standin.Orchestrator(cwd, agent, "c", runner=standin.run_here)
                # a conductor that dies after `stop_after` waves, its last wave half done
                out = orch.next()
                self.assertIn("Start the conductor", out)
                out = orch.next("--conductor")
                for _ in range(stop_after):
                    out = orch.step(out, flags=("--conductor",))
                calls = standin.parse_wave(out)
                for call in calls[: len(calls) // 2]:
                    agent(call)
                # an idle conductor: the main session starts one that does nothing
                orch.next()
                orch.play()
                self.assertEqual(self.outcome(cwd), expected)
                executed = {}
                for job in agent.calls:
                    executed[job] = executed.get(job, 0) + 1
                self.assertEqual(max(executed.values()), 1, "a job ran twice")

    def test_overlapping_conductors_never_hand_out_a_job_twice(self):
        cwd = self.workspace(16, 7, "--direct")
        agent = standin.StandIn(cwd, seed=7)
        handed = []
        for _ in range(6):
            procs = [subprocess.Popen(standin.ENGINE + ["next", "--run", "c", "--conductor"], cwd=cwd,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
            outs = [p.communicate(timeout=60) for p in procs]
            waves = [standin.parse_wave(o) for o, _ in outs]
            self.assertEqual(sum(1 for w in waves if w), 1, "both overlapping calls handed out a wave")
            for (o, e), w in zip(outs, waves):
                self.assertNotIn("Traceback", e)
                if not w:
                    self.assertIn("Waiting for", o)
            for call in [c for w in waves for c in w]:
                handed.append(call["prompt"])
                agent(call)
        self.assertEqual(len(handed), len(set(handed)))


if __name__ == "__main__":
    unittest.main()
