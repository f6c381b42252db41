#!/usr/bin/env python3
"""rolling_e2e.py: lanes vs waves in the real Claude Code client, with uneven sub-agents.

Runs `/arena --agents 8 --seed 3 --wave 3` through each installed claude binary against
the scripted Messages API (tests/e2e/), once with lanes (the default) and once with a
conductor running waves (`--waves`). Every job's sub-agent waits FAST seconds before it
starts, one job in four (by a hash of its id) SLOW seconds, so the slow ones take 5x as
long. Prints the wall-clock of each session, the ratio, and the most competitor/judge
sub-agents that ran at once (from the fake API's request log).

    python3 benchmarks/rolling_e2e.py                   # FAST 1 s, SLOW 5 s
    python3 benchmarks/rolling_e2e.py --fast 0.4 --slow 2
"""

import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from tests.e2e.arena_run import Setup, rolling_run, winner_of  # noqa: E402
from tests.e2e.run_claude import find_claude_bins  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fast", type=float, default=1.0)
    ap.add_argument("--slow", type=float, default=5.0)
    args = ap.parse_args()
    bins = find_claude_bins()
    if not bins:
        raise SystemExit("no claude binary: run bash .ci/install-claude.sh")
    print("| Claude Code | mode | wall-clock | sub-agent calls | most at once (W = 3) | winner |")
    print("|---|---|---|---|---|---|")
    for ver, path in bins.items():
        walls = {}
        for mode in ("lanes", "waves"):
            tmp = tempfile.mkdtemp(prefix="arena-rolling-")
            try:
                setup = Setup(tmp)
                m, wall, res, api = rolling_run(path, setup, mode, args.fast, args.slow)
                if res.returncode != 0 or api.errors:
                    raise SystemExit("claude %s %s failed: %s %s" % (ver, mode, res.stderr[-500:], api.errors[:1]))
                walls[mode] = wall
                print("| %s | %s | %.1f s | %d | %d | %s |" % (ver, mode, wall, m["calls"], m["max_subagents"],
                                                              winner_of(setup)[0]))
            finally:
                shutil.rmtree(tmp, True)
        print("| %s | lanes / waves | %.2f | | | |" % (ver, walls["lanes"] / walls["waves"]))


if __name__ == "__main__":
    main()
