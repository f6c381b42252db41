"""benchmarks/wallclock.py: the wall-clock simulator plays small runs through the engine.

Simulated minutes only (no clock is read): every policy plays the same job graph,
never has more than W jobs in flight, and no policy beats the lower bound.
"""

import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import wallclock  # noqa: E402


class WallClockSimulator(unittest.TestCase):
    def test_small_runs(self):
        for n in (2, 3, 8, 13):
            for wave in (1, 3, 10):
                with self.subTest(agents=n, wave=wave):
                    r = wallclock.measure(n, 0.6, [1, 2], wave=wave, lane_jobs=2)
                    self.assertLessEqual(max(r["in_flight"]), wave)
                    for k in range(2):
                        bound, tight = r["bound"][k], r["barrier"][k]
                        self.assertLessEqual(bound, tight + 1e-9)
                        for policy in ("waves", "rolling", "lanes"):
                            self.assertGreaterEqual(r[policy][k], tight - 1e-9, policy)

    def test_rolling_in_flight_stays_within_w_and_beats_waves(self):
        for policy in ("rolling", "lanes", "waves"):
            sim = wallclock.Sim(32, 5, 1.0, policy, wave=4, lane_jobs=3).play()
            self.assertEqual(sim.max_in_flight, 4, policy)
            self.assertTrue(wallclock.finished(sim.st))
        waves = wallclock.Sim(32, 5, 1.0, "waves", wave=4).play().clock
        rolling = wallclock.Sim(32, 5, 1.0, "rolling", wave=4).play().clock
        self.assertLess(rolling, waves)

    def test_the_table_prints(self):
        import io
        from contextlib import redirect_stdout
        buf = io.StringIO()
        with redirect_stdout(buf):
            wallclock.main(["--runs", "1", "--agents", "4", "--cv", "0.3"])
        rows = [line for line in buf.getvalue().splitlines() if line.startswith("| 4 |")]
        self.assertEqual(len(rows), 1)


if __name__ == "__main__":
    unittest.main()
