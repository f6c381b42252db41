"""What the Agent tool's result tells the parent about a sub-agent's usage (NOTES.md section 10).

    python3 tests/e2e/usage_probe.py

For every installed Claude Code, one session whose main model starts one sub-agent; the
sub-agent makes three requests with known usage (two Bash calls, then its reply), and the
main session's next request shows what the client handed back. Prints that hand-back.
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tests.e2e.fake_api import FakeAPI, classify, tool_results  # noqa: E402
from tests.e2e.run_claude import find_claude_bins, make_home, run_claude  # noqa: E402

MAIN_USAGE = {"input_tokens": 1234, "output_tokens": 567, "cache_read_input_tokens": 40000,
              "cache_creation_input_tokens": 2000}
# the sub-agent's three requests: expect subagent_tokens = the last one's four fields summed (8230)
SUB_USAGE = [{"input_tokens": 100, "output_tokens": 10, "cache_read_input_tokens": 5000, "cache_creation_input_tokens": 700},
             {"input_tokens": 200, "output_tokens": 20, "cache_read_input_tokens": 60000, "cache_creation_input_tokens": 800},
             {"input_tokens": 300, "output_tokens": 30, "cache_read_input_tokens": 7000, "cache_creation_input_tokens": 900}]


class Probe:
    def __init__(self):
        self.seen = []

    def __call__(self, req):
        if classify(req) == "subagent":
            turn = sum(1 for m in req["messages"] if m["role"] == "assistant")
            if turn < 2:
                return {"content": [{"type": "tool_use", "name": "Bash",
                                     "input": {"command": "echo %d" % turn, "description": "x"}}],
                        "usage": SUB_USAGE[turn]}
            return {"content": [{"type": "text", "text": "done spawn-a001"}], "usage": SUB_USAGE[2]}
        results = tool_results(req)
        if results:
            self.seen.append(results)
            return {"content": [{"type": "text", "text": "finished"}], "usage": MAIN_USAGE}
        return {"content": [{"type": "tool_use", "name": "Agent",
                             "input": {"description": "spawn-a001", "prompt": "Do the thing.",
                                       "subagent_type": "general-purpose", "run_in_background": False}}],
                "usage": MAIN_USAGE}


def main():
    for version, binary in sorted(find_claude_bins().items()):
        probe = Probe()
        with tempfile.TemporaryDirectory() as log, FakeAPI(probe, os.path.join(log, "api")) as api:
            res = run_claude(binary, "go", base_url=api.base_url, home=make_home(), cwd=tempfile.mkdtemp(),
                             timeout=90, extra_args=["--allowedTools", "Bash(echo *)", "Agent"])
        print("=====", version, "exit", res.returncode)
        for results in probe.seen:
            print(json.dumps(results, indent=1)[:3000])


if __name__ == "__main__":
    main()
