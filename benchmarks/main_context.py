"""How much an /arena run adds to the MAIN session's context, measured through the real CLI.

    python3 benchmarks/main_context.py                       # N = 8 and 32, both modes, every installed version
    python3 benchmarks/main_context.py --agents 8 32 100 --versions 2.1.332 --modes conductor lanes
    python3 benchmarks/main_context.py --plugin-size         # the `claude plugin details` token estimates

Each run is `claude -p "/arena --agents N --seed 3 <task>"` against the scripted policy
of tests/e2e/arena_policy.py (not a model: it does what SKILL.md says) served by
tests/e2e/fake_api.py. The main session's context is the `messages` of its last request;
"added" is everything after the first user turn (the /arena command and the skill text).
It is split into:
  arena    what arena's own text puts there: bracket.py commands and their output,
           the Agent call inputs, the sub-agents' replies (receipts, conductor lines),
           the task file Write
  framing  what Claude Code wraps around it: tool_use / tool_result JSON, the hand-back
           wrapper with agent id and usage, reminders and system messages
"per call" divides by the sub-agent calls of the run (competitors and judges, not conductors).
Prints a markdown table; numbers are bytes (UTF-8 of the JSON). Not a test: it asserts nothing.
"""

import argparse
import os
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tests.e2e.arena_policy import ArenaPolicy  # noqa: E402
from tests.e2e.arena_run import TASK, Setup, analyse, play, winner_of  # noqa: E402
from tests.e2e.fake_api import FakeAPI  # noqa: E402
from tests.e2e.run_claude import copy_plugin, find_claude_bins, make_home, run  # noqa: E402


def measure(binp, n, mode, seed=3):
    tmp = tempfile.mkdtemp(prefix="bench-ctx-")
    try:
        setup = Setup(tmp)
        t0 = time.time()
        res, api = play(binp, "/arena --agents %d --seed %d %s" % (n, seed, TASK), setup,
                        ArenaPolicy(direct=(mode == "direct"), init_flags="--waves" if mode == "conductor" else ""),
                        timeout=1800, max_requests=20000)
        secs = time.time() - t0
        if res.returncode != 0 or api.errors:
            raise SystemExit("run failed: rc=%s %s %s" % (res.returncode, res.stderr[-500:], api.errors[:1]))
        m = analyse(api)
        m["winner"] = winner_of(setup)[0]
        m["looks"], m["matches"] = second_looks(setup.cwd)
        m["seconds"] = secs
        return m
    finally:
        shutil.rmtree(tmp, True)


def second_looks(cwd):
    """(matches judged twice, matches judged) of the run in cwd, from its state."""
    import glob
    import json
    path = glob.glob(os.path.join(cwd, ".arena", "*", "state.json"))[0]
    with open(path, encoding="utf-8") as f:
        results = json.load(f)["state"]["results"].values()
    judged = [r for r in results if r["how"] in ("judge", "panel")]
    return sum(1 for r in judged if r.get("n", 1) >= 2), len(judged)


def plugin_size(bins):
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from test_claude_plugin import details_tokens
    tmp = tempfile.mkdtemp(prefix="bench-plugin-")
    try:
        src = copy_plugin(os.path.join(tmp, "clone"))
        with FakeAPI(None, None) as api:
            for ver, binp in bins.items():
                home = make_home(tmp)
                for args in (["plugin", "marketplace", "add", src], ["plugin", "install", "arena-skill@arena-skill"],
                             ["plugin", "details", "arena-skill@arena-skill"]):
                    r = run(binp, args, home=home, cwd=tmp, base_url=api.base_url, timeout=90)
                total, always, invoke = details_tokens(r.stdout)
                print("| %s | ~%d | ~%d |" % (ver, total, invoke))
    finally:
        shutil.rmtree(tmp, True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--agents", type=int, nargs="+", default=[8, 32])
    ap.add_argument("--modes", nargs="+", default=["direct", "conductor"], choices=["direct", "conductor", "lanes"])
    ap.add_argument("--versions", nargs="+")
    ap.add_argument("--plugin-size", action="store_true")
    a = ap.parse_args()
    bins = find_claude_bins()
    if a.versions:
        bins = {v: p for v, p in bins.items() if v in a.versions}
    if not bins:
        raise SystemExit("no claude binary: bash .ci/install-claude.sh")
    if a.plugin_size:
        print("| claude | always-on (tokens) | on-invoke (tokens) |\n|---|---|---|")
        plugin_size(bins)
        return
    print("| claude | mode | N | sub-agent calls | main turns | added total | arena | framing | "
          "arena per call | total per call | arena: bash / Agent inputs / replies | winner | second looks | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for ver, binp in bins.items():
        for mode in a.modes:
            for n in a.agents:
                m = measure(binp, n, mode)
                c = m["main"]
                p = c["arena_parts"]
                print("| %s | %s | %d | %d | %d | %d | %d | %d | %.0f | %.0f | %d / %d / %d | %s | %d of %d | %.0f |" % (
                    ver, mode, n, m["calls"], c["turns"], c["added"], c["arena"], c["framing"],
                    c["arena"] / m["calls"], c["added"] / m["calls"], p["bash"], p["agent_inputs"], p["replies"],
                    m["winner"], m["looks"], m["matches"], m["seconds"]), flush=True)


if __name__ == "__main__":
    main()
