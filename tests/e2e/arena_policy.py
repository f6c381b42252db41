"""A scripted model that plays /arena through the real Claude Code CLI.

This is NOT a language model and it does not pretend to be one. It is a fixed
policy, served by tests/e2e/fake_api.py, that does exactly what the skill's text
tells each role to do, so that a test can watch the real client (slash-command
expansion, tools, permissions, sub-agents, concurrency) carry an arena run from
`/arena ...` to the winner. Everything it decides comes from the request it is
answering: the system prompt marker `cc_is_subagent=true`, the first user text,
and the tool calls and results so far. It keeps no shared state between
requests (only counters for the test to read).

Roles:
- main        the -p session: writes .arena/incoming/task.md, runs plan and init,
              then loops `next` and acts on what it prints (SKILL.md steps 1-5,
              or Recovery when the session starts with a plain prompt).
- conductor   a sub-agent whose prompt names conductor.md: reads it, loops
              `next --conductor`, replies with the line it is asked for.
- job         a sub-agent whose prompt names a brief: reads it, writes its
              output file(s) in the format the brief shows, replies the receipt.

Sub-agents write what the product's stand-in `arena.demo` writes for their brief:
competitors with a hidden quality drawn from the seed, a judge that scores its blinded
copies with noise and a first-position bonus. Everything follows from the seed, the
job and the files read, so the winner does not depend on timing, blind labels,
retries or the conductor/direct mode.
"""

import os
import re
import shlex
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "skills", "arena"))
from arena import demo  # noqa: E402

ROLE_SUB = "cc_is_subagent=true"
BRIEF_PROMPT = re.compile(r"Read (\S+) and follow it\.")
LANE_PROMPT = re.compile(r"Read (\S+/lane\.md) and follow it as lane (\d+\.\d+)\.")


# ---------------------------------------------------------------- reading a request
def _system(req):
    s = req.get("system")
    if isinstance(s, list):
        return "\n".join(b.get("text", "") for b in s if isinstance(b, dict))
    return s or ""


def _text(content):
    if isinstance(content, str):
        return content
    out = []
    for b in content or []:
        if isinstance(b, dict):
            if b.get("type") == "text":
                out.append(b.get("text", ""))
            elif b.get("type") == "tool_result":
                out.append(_text(b.get("content")))
    return "\n".join(out)


def all_text(req):
    """Every user/system message text of the conversation, in order."""
    return "\n".join(_text(m.get("content")) for m in req.get("messages") or [] if m.get("role") != "assistant")


def first_user(req):
    for m in req.get("messages") or []:
        if m.get("role") == "user":
            return _text(m.get("content"))
    return ""


def steps(req):
    """[(tool_uses, {tool_use_id: (text, is_error)})] per assistant message, in order."""
    msgs = req.get("messages") or []
    results = {}
    for m in msgs:
        if m.get("role") == "user" and isinstance(m.get("content"), list):
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    results[b.get("tool_use_id")] = (_text(b.get("content")), bool(b.get("is_error")))
    out = []
    for m in msgs:
        if m.get("role") != "assistant" or not isinstance(m.get("content"), list):
            continue
        uses = [b for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]
        if uses:
            out.append((uses, results))
    return out


def last_calls(req):
    """[(name, input, result_text, is_error)] of the last assistant message with tool calls."""
    st = steps(req)
    if not st:
        return []
    uses, results = st[-1]
    return [(u["name"], u.get("input") or {}, *results.get(u.get("id"), ("", False))) for u in uses]


def bash_outputs(req):
    """[(command, output)] of every Bash call so far."""
    out = []
    for uses, results in steps(req):
        for u in uses:
            if u["name"] == "Bash":
                out.append((u["input"].get("command", ""), results.get(u.get("id"), ("", False))[0]))
    return out


def cwd_of(req):
    # main sessions and 2.1.332 sub-agents: "Primary working directory: ..."; 2.1.197
    # sub-agents: "<env>\nWorking directory: ..." in the system prompt
    m = re.search(r"(?:Primary working directory|^Working directory): (\S+)", all_text(req) + "\n" + _system(req), re.M)
    if not m:
        raise ValueError("no working directory in the request")
    return m.group(1)


def strip_numbers(read_result):
    """The file text of a Read tool result (drop the `   12\\t` / `12→` line numbers)."""
    lines = []
    for line in read_result.splitlines():
        m = re.match(r"^\s*\d+[\t\u2192](.*)$", line)
        if m:
            lines.append(m.group(1))
    return "\n".join(lines)


def role_of(req):
    """("main"|"conductor"|"job"|"other", key) from the request alone."""
    if ROLE_SUB not in _system(req)[:600]:
        return "main", "main"
    m = LANE_PROMPT.search(first_user(req))
    if m:
        return "lane", m.group(2)
    m = BRIEF_PROMPT.search(first_user(req))
    if not m:
        return "other", ""
    path = m.group(1)
    if path.endswith("conductor.md"):
        return "conductor", path
    return "job", path.rsplit("/", 1)[-1][:-3]


def tool(name, **inp):
    return {"type": "tool_use", "name": name, "input": inp}


def text(t):
    return [{"type": "text", "text": t}]


def wave_calls(out):
    """The Agent calls a `next` wave lists, each with exactly the printed parameters."""
    calls = []
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("<id> = "):
            continue
        tpl = lines[i - 1]
        params = dict(re.findall(r'(\w+) "([^"]*)"', tpl))
        if "run_in_background false" not in tpl:
            raise ValueError("wave template without run_in_background false: " + tpl)
        for job in line[len("<id> = "):].split():
            inp = {k: v.replace("<id>", job) for k, v in params.items()}
            inp["run_in_background"] = False
            calls.append(tool("Agent", **inp))
    return calls


# ---------------------------------------------------------------- the policy
class ArenaPolicy:
    """Callable for FakeAPI. Options are the test's knobs, not the model's memory:

    direct               the main session runs `init --direct` (no conductor)
    conductor_gives_up   the conductor that issued wave K replies nonsense when the wave
                         returns, instead of running next (a conductor lost mid-batch)
    conductor_http_error the same conductor's request gets HTTP 500 instead (every retry too)
    """

    def __init__(self, direct=False, conductor_gives_up=None, conductor_http_error=None, seed=3, init_flags="",
                 job_seconds=None, model_edge=False):
        self.direct, self.seed = direct, seed
        self.model_edge = model_edge          # a stand-in plays better on opus, worse on haiku (a mixed field)
        self.init_flags = init_flags          # more init flags, e.g. "--waves"
        self.job_seconds = job_seconds        # job id -> seconds its sub-agent takes (slept in its first request)
        self.conductor_gives_up = conductor_gives_up
        self.conductor_http_error = conductor_http_error
        self.lock = threading.Lock()
        self.counts = {}          # role -> requests answered
        self.sabotaged = []       # the sabotages done, in order: "gives_up", "http_error"

    def __call__(self, req):
        role, key = role_of(req)
        with self.lock:
            self.counts[role] = self.counts.get(role, 0) + 1
        if role == "main":
            return self.main(req)
        if role == "conductor":
            return self.conductor(req, key)
        if role == "lane":
            return self.lane(req, key)
        if role == "job":
            return self.job(req, key)
        return text("ok")

    # ---- main session (SKILL.md)
    def main(self, req):
        everything = all_text(req)
        base = re.search(r"Base directory for this skill: (\S+)", everything)
        last = last_calls(req)
        if not base:
            # A plain prompt ("continue the arena run"): the skill is only listed; a model
            # invokes it through the Skill tool, whose result loads SKILL.md.
            listed = re.search(r"^- ((?:[\w-]+:)?arena): ", everything, re.M)
            if not listed:
                return text("FINAL: no arena skill is available")
            if last and last[0][0] == "Skill":
                return text("FINAL: could not load the arena skill: " + last[0][2][:300])
            return [tool("Skill", skill=listed.group(1))]
        engine = re.search(r"Engine: `([^`]+)`", everything)  # the command SKILL.md names
        b = engine.group(1) if engine else 'python3 "%s/bracket.py"' % base.group(1)
        args = re.search(r"<command-args>(.*?)</command-args>", everything, re.S)
        if not last or last[0][0] == "Skill":
            if args and args.group(1).strip():
                opts, task = self.parse_args(args.group(1))
                path = cwd_of(req) + "/.arena/incoming/task.md"
                return [tool("Write", file_path=path, content=task + "\n")]
            return [tool("Bash", command=b + " next", description="continue the arena run")]  # Recovery
        name, inp, out, err = last[0]
        opts, _ = self.parse_args(args.group(1)) if args else ({}, "")
        if name == "Write":
            return [tool("Bash", command="%s plan %s --task-file .arena/incoming/task.md" % (b, self.flags(opts, "agents")),
                         description="arena preview")]
        cmd = inp.get("command", "") if name == "Bash" else ""
        if " plan " in cmd:
            more = (" --direct" if self.direct else "") + (" " + self.init_flags if self.init_flags else "")
            return [tool("Bash", command="%s init %s --task-file .arena/incoming/task.md%s" % (
                b, self.flags(opts, "agents", "seed", "wave"), more), description="arena start")]
        run = self.run_name(req)
        if " winner " in cmd:
            # SKILL.md: winner --report prints the result and writes the page in one command
            return text("FINAL: " + out.splitlines()[0] + "\nReport: " + out.strip().splitlines()[-1])
        if name == "Agent":
            flag = " --direct" if any("NO-AGENT-TOOL" in o for _, _, o, _ in last) else ""
            return [tool("Bash", command="%s next --run %s%s" % (b, run, flag), description="arena next")]
        if " record " in cmd or " init " in cmd:
            return [tool("Bash", command="%s next --run %s" % (b, run), description="arena next")]
        if " next" in cmd:
            return self.act(out, b, run, "", final=lambda: [tool("Bash", command="%s winner --run %s --report" % (b, run),
                                                                     description="arena winner")])
        raise ValueError("main: no rule for the last call %s %r" % (name, cmd))

    @staticmethod
    def parse_args(s):
        words = s.split()
        opts = {}
        while words and words[0].startswith("--"):
            flag = words.pop(0)[2:]
            if flag == "quick":
                opts["agents"] = "8"
            else:
                opts[flag] = words.pop(0)
        return opts, " ".join(words)

    @staticmethod
    def flags(opts, *names):
        return " ".join("--%s %s" % (n, shlex.quote(opts[n])) for n in names if n in opts)

    @staticmethod
    def run_name(req):
        for cmd, out in reversed(bash_outputs(req)):
            m = re.search(r"^run (\S+): ", out, re.M) or re.search(r"^arena (\S+): ", out, re.M)
            if m:
                return m.group(1)
        raise ValueError("no run name in any bracket.py output yet")

    def act(self, out, b, run, extra, final):
        """Do what a `next` output says (SKILL.md step 4 / conductor.md step 3)."""
        if "Finished." in out or "BATCH OVER" in out or ("needs a decision by hand" in out and extra):
            return final()
        if "needs a decision by hand" in out:
            m = re.search(r"run: record (\S+) <(\w+)\|", out)
            return [tool("Bash", command='%s record %s %s --run %s --reason "scripted pick"' % (
                b, m.group(1), m.group(2), run), description="arena record")]
        m = re.search(r"^Start \d+ lanes: .*\n(.*)\n<n> = (.*)$", out, re.M)
        if m:
            params = dict(re.findall(r'(\w+) "([^"]*)"', m.group(1)))
            return [tool("Agent", subagent_type="general-purpose", run_in_background=False,
                         description=params["description"].replace("<n>", n), prompt=params["prompt"].replace("<n>", n))
                    for n in m.group(2).split()]
        m = re.search(r'Start the conductor: .*description "([^"]+)", prompt "([^"]+)"', out)
        if m:
            return [tool("Agent", subagent_type="general-purpose", run_in_background=False,
                         description=m.group(1), prompt=m.group(2))]
        if re.search(r"^Wave \d+: ", out, re.M):
            return wave_calls(out)
        if "Waiting for" in out:
            return [tool("Bash", command="%s next --run %s%s --retry" % (b, run, extra), description="arena retry")]
        raise ValueError("next printed nothing this policy knows:\n" + out)

    # ---- conductor sub-agent (briefs/conductor.md)
    def conductor(self, req, brief):
        last = last_calls(req)
        if not last:
            return [tool("Read", file_path=cwd_of(req) + "/" + brief)]
        brief_text = strip_numbers(first_read(req))
        m = re.search(r"Run `(.+?) next --run (\S+) --conductor`", brief_text)
        b, run = m.group(1), m.group(2)
        nxt = [tool("Bash", command="%s next --run %s --conductor" % (b, run), description="arena next")]
        name, inp, out, err = last[0]
        if name == "Read":
            return nxt
        if name == "Agent":
            wave = self.last_wave(req)
            if wave is not None and wave == self.conductor_gives_up:
                with self.lock:
                    self.sabotaged.append("gives_up")
                return text("I lost track of the bracket, sorry.")
            if wave is not None and wave == self.conductor_http_error:
                with self.lock:
                    self.sabotaged.append("http_error")
                return {"http_status": 500}
            return nxt
        first = out.splitlines()[0] if out else ""
        return self.act(out, b, run, " --conductor", final=lambda: text(self.batch_line(out) or first))

    # ---- lane sub-agent (briefs/lane.md)
    def lane(self, req, lane):
        last = last_calls(req)
        if not last:
            return [tool("Read", file_path=cwd_of(req) + "/" + LANE_PROMPT.search(first_user(req)).group(1))]
        brief_text = strip_numbers(first_read(req))
        cmd = re.search(r"Run `(.+? lane --run \S+ --lane )<lane>`", brief_text).group(1) + lane
        again = [tool("Bash", command=cmd, description="arena lane", timeout=600000)]
        name, inp, out, err = last[0]
        if name == "Agent" and err:  # Claude Code refused the call itself: the job never ran
            return [tool("Bash", command=cmd + " --refused", description="arena lane", timeout=600000)]
        if name in ("Read", "Agent"):
            return again
        if "LANE OVER" in out:
            return text(re.search(r"Reply with exactly this line and stop: (.*)$", out, re.M).group(1))
        m = re.search(r'^run_in_background false(?:, model "(\w+)")?, description "([^"]+)", prompt "([^"]+)"$', out, re.M)
        if "make this one Agent call" in out and m:
            call = {"subagent_type": "general-purpose", "run_in_background": False, "description": m.group(2),
                    "prompt": m.group(3)}
            if m.group(1):
                call["model"] = m.group(1)
            return [tool("Agent", **call)]
        if "nothing ready yet" in out or err:
            return again
        raise ValueError("lane printed nothing this policy knows:\n" + out)

    @staticmethod
    def last_wave(req):
        """The number of the wave this conductor last issued (from the `next` output it acted on)."""
        outs = [o for c, o in bash_outputs(req) if " next " in c]
        m = re.search(r"^Wave (\d+): ", outs[-1], re.M) if outs else None
        return int(m.group(1)) if m else None

    @staticmethod
    def batch_line(out):
        m = re.search(r"Reply with exactly this line and stop: (.*)$", out, re.M)
        return m.group(1) if m else None

    # ---- competitor / judge sub-agent (briefs/*.md)
    def job(self, req, job):
        last = last_calls(req)
        cwd = cwd_of(req)
        if not last and self.job_seconds:
            time.sleep(self.job_seconds(job))  # the sub-agent "thinks" this long before it starts
        brief_rel = BRIEF_PROMPT.search(first_user(req)).group(1)
        if not last:
            return [tool("Read", file_path=cwd + "/" + brief_rel)]
        if last[0][0] == "Write":
            brief = strip_numbers(first_read(req))
            return text(re.search(r"^(done \S+)$", brief, re.M).group(1))
        # what the sub-agent writes is the product's own stand-in (arena.demo): competitors
        # with a hidden quality, a judge that scores its blinded copies with noise
        _, files = demo.outputs(cwd, brief_rel, self.seed, model_alias(req) if self.model_edge else None)
        return [tool("Write", file_path=cwd + "/" + rel, content=content) for rel, content in files]


def model_alias(req):
    """opus, sonnet or haiku: the model the client sent this request to, by its alias."""
    model = (req.get("model") or "").lower()
    return next((alias for alias in ("opus", "sonnet", "haiku") if alias in model), None)


def first_read(req):
    """The result text of the first Read call (the brief)."""
    for uses, results in steps(req):
        for u in uses:
            if u["name"] == "Read":
                return results.get(u.get("id"), ("", False))[0]
    return ""
