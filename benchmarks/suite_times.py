#!/usr/bin/env python3
"""suite_times.py: the test suite one module after another, with wall and CPU time per module.

    python3 benchmarks/suite_times.py

Runs `unittest discover -s tests` in this process and prints, per test module, the wall
time and the CPU time (this process and the child processes it waited for: bracket.py,
claude, Chromium), then the totals and the load average, since other work on the machine
stretches the wall times. Asserts nothing. The README's test command, `tests/run.py`,
runs the same modules side by side and prints the same two times per module.
"""

import collections
import os
import resource
import sys
import time
import unittest

TESTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests")


def cpu():
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main():
    wall, used = collections.defaultdict(float), collections.defaultdict(float)

    class Timed(unittest.TextTestResult):
        def startTest(self, test):
            self.began = (time.time(), cpu())
            super().startTest(test)

        def stopTest(self, test):
            super().stopTest(test)
            module = test.id().split(".")[0]
            wall[module] += time.time() - self.began[0]
            used[module] += cpu() - self.began[1]

    sys.path.insert(0, TESTS)
    start, start_cpu = time.time(), cpu()
    suite = unittest.defaultTestLoader.discover(TESTS, top_level_dir=TESTS)
    result = unittest.TextTestRunner(resultclass=Timed, verbosity=0).run(suite)
    print("| module | wall s | CPU s |\n|---|---:|---:|")
    for module in sorted(wall, key=lambda m: -wall[m]):
        print("| %s | %.0f | %.0f |" % (module, wall[module], used[module]))
    print("total: wall %.0f s, CPU %.0f s, %d tests, %s; load average at the end %s" % (
        time.time() - start, cpu() - start_cpu, result.testsRun, "ok" if result.wasSuccessful() else "FAILED",
        " ".join("%.1f" % x for x in os.getloadavg())))


if __name__ == "__main__":
    main()
