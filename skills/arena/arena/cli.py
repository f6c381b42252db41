"""The command line: argument parsing and one function per command.

Each command that works on a run opens it with context.open_run ("lock, load, decide,
journal, save") and hands the Context to the modules below; this is the only module that
prints to the user or exits. Errors a user or a sub-agent can cause are ArenaError: one
line on stderr and exit code 2.
"""

import argparse
import contextlib
import hashlib
import io
import json
import os
import random
import re
import sys
import time

from .base import (ArenaError, DEFAULT_AGENTS, DEFAULT_BATCH, DEFAULT_LANE_JOBS, DEFAULT_LANE_WAIT, DEFAULT_RECHECK,
                   DEFAULT_WAVE, EQUAL_MARGIN, MAX_WAVE, MODELS, MOST_LOOKS, QUICK_AGENTS, plural, read_text, rng_for)
from .cards import card_count as cards_allow, card_names, card_sizes, load_cards, load_rubric, model_counts
from .jobs import (DONE, ISSUED, KIND, KINDS_IN_ORDER, OPEN, READY, STUCK, agent_of, attack_id, count_in, defence_id, job_kind,
                   judge_copy, match_of, outputs_of, parse_job, round_of)
from .state import (alive_agents, bracket_rounds, card_of, deps_done, entered, field_look_for, field_offered, find_match, model_of, model_table,
                    new_state, opponent, path_of)
from .storage import Run, atomic_write, find_run
from .context import Context, open_run
from .outputs import attacks_on, changed_since_collected, check_output, label_tries
from .briefs import last_judged_copy, load_template, write_brief, write_conductor_brief, write_lane_brief
from .schedule import planned_waves
from .wording import (unplayed_lines, baseline_verdict, code_lines, fatal_note, field_look_line, field_text, fixes_text, looks_text, merge_lines, mix_text,
                      lane_text, match_bench_lines, survivor_bench_lines, model_lines, next_text, pairing_text, points, progress_line, reproducer_note,
                      spend_lines)
from .decision import collect_and_advance, lane_step, measure_runs, plan_next
from .audit import RECORDS, digest, fingerprint, load_record, tree_changes
from .bench import COMMAND_SECONDS as BENCH_SECONDS, SCORER_SECONDS, report_lines as bench_lines, run_bench, unconfirmed
from .sandbox import env_names, home_changes, home_snapshot, run_script, temp_changes, temp_snapshot
from .workspace import EXEC_MAX_SECONDS, EXEC_SECONDS, PHASE_MINUTES, format_minutes, parse_job_minutes, resolve_in, work_folder
from .estimate import (ASSUMED, budget_lines, estimate_tokens, format_estimate, job_counts, measured_sizes, per_call,
                       plan_model_lines, plan_table, tokens_of)


def cmd_plan(args):
    take_budget(args)
    n = QUICK_AGENTS if args.quick else args.agents
    check_numbers(n, args.wave)
    check_models(n, args)
    merge = args.merge == "on"
    # read the task before printing anything: a bad --task-file is one line, not a table and then an error
    task = read_input(args.task_file, "--task-file") if args.task_file else None
    print(plan_table(n, args.wave, args.baseline, args.recheck != "off", merge))
    calls = job_counts(n, args.wave, args.baseline, args.recheck != "off", merge)
    if task is not None:
        print(format_estimate(estimate_tokens(calls, tokens_of(task), ASSUMED, args.run_code), "assumed"))
    for line in plan_model_lines(n, args.models, args.model, args.judge_model, calls,
                                 per_call(tokens_of(task), ASSUMED, args.run_code) if task is not None else None):
        print(line)
    for line in budget_lines(n, args.wave, args.baseline, args.recheck != "off", args.max_calls, args.max_tokens,
                             per_call(tokens_of(task) if task else 1, ASSUMED, args.run_code), cards_allow(load_cards())):
        print(line)
    for line in code_lines(args.run_code, "<run>", args.run_code_env):
        print(line)
    print("time per job: %s minutes (--job-minutes)" % format_minutes(parse_job_minutes(args.job_minutes)))
    print(field_look_line(n, args.wave, args.settle, args.run_code))


def card_count():
    """How many distinct cards cards.md allows, for --help ("?" when cards.md cannot be read)."""
    try:
        return cards_allow(load_cards())
    except ArenaError:
        return "?"


def check_numbers(n, wave, cards=None):
    top = cards_allow(cards or load_cards())
    if not 1 <= n <= top:
        raise ArenaError("--agents must be 1 to %d (the number of distinct cards), not %d" % (top, n))
    if not 1 <= wave <= MAX_WAVE:
        raise ArenaError("--wave must be 1 to %d (Claude Code refuses more concurrent sub-agents), not %d"
                         % (MAX_WAVE, wave))


# every brief a run may write, read once at init so a missing or unreadable one is refused before anything starts
BRIEF_TEMPLATES = tuple(k.template for k in KINDS_IN_ORDER) + (
    "conductor", "lane", "part-workspace", "part-run-code-on", "part-run-code-off", "part-evidence-on",
    "part-evidence-off", "part-check", "part-reproducers")


def cmd_init(args):
    take_budget(args)
    cards = load_cards()
    load_rubric()  # refuse to start with a rubric the judges could not be scored on
    n = QUICK_AGENTS if args.quick else args.agents
    check_numbers(n, args.wave, cards)
    check_models(n, args)
    if args.seed is not None and args.seed < 0:
        raise ArenaError("--seed must be a whole number 0 or above")
    if args.batch_waves < 1:
        raise ArenaError("--batch-waves must be 1 or more, not %d" % args.batch_waves)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10 ** 6)
    minutes = parse_job_minutes(args.job_minutes)
    task = getattr(args, "task_text", None) or read_input(args.task_file, "--task-file")
    baseline = read_input(args.baseline_file, "--baseline-file") if args.baseline_file else None
    if args.lane_jobs < 1:
        raise ArenaError("--lane-jobs must be 1 or more, not %d" % args.lane_jobs)
    if args.run_code_env and not args.run_code:
        raise ArenaError("--run-code-env names variables for the scripts of --run-code; add --run-code or drop it")
    if args.direct and args.waves:
        raise ArenaError("--direct and --waves are two different loops; pick one")
    each = per_call(tokens_of(task), ASSUMED, args.run_code, args.bench)
    refuse_small_caps(n, baseline is not None, args.max_calls, args.max_tokens, each, cards_allow(cards))
    for kind in BRIEF_TEMPLATES:
        load_template(kind)
    name = args.run if args.run is not None else time.strftime("%Y%m%d-%H%M%S") + "-s%d" % seed
    root = ".arena"
    if os.path.islink(root) or (os.path.exists(root) and not os.path.isdir(root)):
        raise ArenaError(".arena must be a plain folder, not a link or a file")
    run = Run(name, root)
    if os.path.exists(run.dir):
        run.check_folder()
        if run.started():
            if not cut_short(run, n, args.seed, args.wave, task):
                raise ArenaError("run %s already exists; pick another --run name or continue it with next --run %s"
                                 % (name, name))
            # the same init, killed after its first journal line: finish what it left undone
            with run.lock():
                st = run.load()
            return init_done(run, st, cards, each)
        # an init killed before its first journal line left only files it writes again
    fp, complete = fingerprint(".")
    for sub in ("b", "out", "j"):
        os.makedirs(run.path(sub), exist_ok=True)
    if not os.path.exists(os.path.join(root, ".gitignore")):
        atomic_write(os.path.join(root, ".gitignore"), "*\n")
    atomic_write(run.path("task.md"), task)
    if baseline is not None:
        atomic_write(run.path("baseline.md"), baseline)
    # the audit's records; their checksums go into the init event, so a damaged one shows
    records = {"fingerprint.json": json.dumps({"complete": complete, "files": fp}),
               "tempdir.json": json.dumps(temp_snapshot()), "homedir.json": json.dumps(home_snapshot())}
    for record in RECORDS:
        atomic_write(run.path(record), records[record])
    os.makedirs(run.path("work"), exist_ok=True)
    rng = rng_for(seed, "fence", hashlib.sha256(task.encode("utf-8")).hexdigest())
    fence = "=====ARENA-DATA-%012x=====" % rng.getrandbits(48)
    while fence in task or (baseline and fence in baseline):
        fence = "=====ARENA-DATA-%012x=====" % rng.getrandbits(48)
    sizes = card_sizes(cards)
    ev = {"e": "init", "seq": 1, "run": name, "agents": n, "seed": seed, "wave": args.wave, "at": round(time.time(), 3),
          "fence": fence, "baseline": baseline is not None, "model": args.model, "judge_model": args.judge_model,
          "models": args.models,
          "recheck": None if args.recheck == "off" else int(args.recheck), "final_judges": args.final_judges,
          "pack": not args.no_pack, "batch_waves": args.batch_waves,
          "mode": "direct" if args.direct else "conductor" if args.waves else "lanes", "lane_jobs": args.lane_jobs,
          "sizes": list(sizes), "run_code": bool(args.run_code), "minutes": minutes,
          "bench": bool(args.bench and args.run_code),
          "pairing": "rated", "most_looks": list(MOST_LOOKS), "equal_margin": EQUAL_MARGIN, "per_call": each,
          "max_calls": args.max_calls, "max_tokens": args.max_tokens, "settle": args.settle,
          "merge": args.merge == "on", "run_code_env": args.run_code_env,
          "field_look": field_look_for(n, args.wave, args.settle),
          "records": {record: digest(text) for record, text in records.items()}}
    ev["plan_waves"] = planned_waves(ev)
    with run.lock():
        run.append([ev])
        st = new_state(ev, sizes)
        st["seq"] = 1
        run.save(st)
    init_done(run, st, cards, each)


def cut_short(run, agents, seed, wave, task):
    """The run's journal holds only an init of this field, seed (if given), wave and task: the same init
    was killed after its first journal line, and running it again finishes it."""
    try:
        events = list(run.events())
        same_task = read_text(run.path("task.md"), exact=True) == task
    except ArenaError:
        return False
    # lane.md is the last file init writes: with it there, that init ran whole
    if len(events) != 1 or events[0]["e"] != "init" or not same_task or os.path.exists(run.path("lane.md")):
        return False
    ev = events[0]
    return ev["agents"] == agents and seed in (None, ev["seed"]) and ev["wave"] == wave


def init_done(run, st, cards, each):
    """The part of init after its state is saved: the loop briefs, the current run, what it prints."""
    name, n = st["run"], st["agents"]
    atomic_write(os.path.join(run.root, "current"), name + "\n")
    write_conductor_brief(run, st)
    write_lane_brief(run, st)
    print("run %s: %s, seed %d, wave %d, %s mode; task in %s" % (
        name, plural(n, "agent"), st["seed"], st["wave"], st["mode"], run.path("task.md")))
    for line in code_lines(st["run_code"], name, st["run_code_env"]):
        print(line)
    for line in model_lines(st)[:1]:
        print(line + ": " + field_text(st["models"], [row[1] for row in model_table(st)]) if st["models"] else line)
    for line in budget_lines(n, st["wave"], st["baseline"], st["recheck"] is not None, st["max_calls"],
                             st["max_tokens"], each, cards_allow(cards)):
        print(line)
    print("next: next --run %s" % name)


DEMO_AGENTS = 16
DEMO_TASK = """Write parse_duration(text) in Python, turning "1h30m" into 5400 seconds.

"45s" gives 45 and "2h" gives 7200. Accept hours, minutes and seconds (h, m, s) in that order, each at most once, with no spaces.
Anything else raises ValueError with a message that names the bad input. A good answer gives
the function, five tests that would catch a wrong version, and one sentence per edge case.

(This is the task of `bracket.py demo`: stand-ins play it, no model reads it.)
"""


def cmd_demo(args):
    """A whole run, offline, with the stand-ins of arena.demo as sub-agents."""
    from . import demo
    if args.seed is not None and args.seed < 0:
        raise ArenaError("--seed must be a whole number 0 or above")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10 ** 6)
    name = args.run or free_run_name("demo-%d-s%d" % (args.agents, seed))
    # init's own parser, so the demo starts with init's defaults for every option init has
    argv = ["init", "--agents", str(args.agents), "--seed", str(seed), "--wave", str(args.wave), "--run", name,
            "--direct", "--task-file", "-"]
    init = build_parser().parse_args(argv)
    init.task_text, init.models = DEMO_TASK, args.models
    with contextlib.redirect_stdout(io.StringIO()):  # init's "next:" advice does not apply here
        cmd_init(init)
    print("demo: a whole run offline with %s, no model and no tokens: each has a hidden quality, "
          "and a judge that reads them with noise decides every match" % plural(args.agents, "stand-in agent"))
    shown_round, retry = 0, False
    while True:
        with open_run(name) as ctx:
            act = plan_next(ctx, retry=retry)
            if act["action"] == "wave":
                ctx.commit([{"e": "shown", "wave": act["wave"]}])
        if act["progress"]["round"] != shown_round or act["action"] == "finished":
            shown_round = act["progress"]["round"]
            print(act["line"])
        if act["action"] == "finished":
            break
        if act["action"] == "wave":
            for call in act["calls"]:
                demo.play(".", call["prompt"], seed, call.get("model"))
        elif act["action"] == "settle":
            # no one to ask here, so the bracket goes on, as SKILL.md says for a run without a user
            print("the field looks settled: %s; the demo plays on" % act["settle"]["why"])
            with open_run(name) as ctx:
                ctx.commit([{"e": "settle", "choice": "continue"}])
        elif act["action"] != "wait" or retry:
            raise ArenaError("the demo stopped at '%s'; run 'bracket.py status --run %s' and report this as a bug"
                             % (act["action"], name))
        # the stand-ins answer at once, so a job still waiting never wrote its output: hand it out again
        retry = act["action"] == "wait"
    with open_run(name) as ctx:
        st = ctx.st
    # what no real run can know: how good each competitor really was
    quality = {agent: demo.quality_of(seed, agent, model_of(st, agent)) for agent in st["cards"]}
    ranked = sorted(quality, key=lambda agent: (-quality[agent], agent))
    bracket = [res for res in st["results"].values() if res["w"] in quality and res["l"] in quality]
    upsets = sum(1 for res in bracket if quality[res["w"]] < quality[res["l"]])
    if st["results"]:
        print("hidden quality, known only to the demo: the winner %s started as #%d of %d; the weaker side won %d of %s"
              % (st["champion"], ranked.index(st["champion"]) + 1, len(ranked), upsets,
                 plural(len(bracket), "match")))
    cmd_winner(argparse.Namespace(run=name, report=True))


def free_run_name(base):
    """base, or base-2, base-3 ...: the first name no run under .arena/ has yet."""
    name, k = base, 1
    while os.path.exists(os.path.join(".arena", name)):
        k += 1
        name = "%s-%d" % (base, k)
    return name


def read_input(path, flag):
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ArenaError("%s %s: %s" % (flag, path, e.strerror or e))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ArenaError("%s %s is not UTF-8 text" % (flag, path))
    if not text.strip():
        raise ArenaError("%s %s is empty; write the whole task into it" % (flag, path))
    return text


def refuse_small_caps(n, baseline, max_calls, max_tokens, each, top):
    """A cap below what the bracket needs at the least is refused at init, with what would fit."""
    for line in budget_lines(n, DEFAULT_WAVE, baseline, False, max_calls, max_tokens, each, top):
        if " is below " in line:
            raise ArenaError(line[len("budget: "):] + ": pass that many --agents, or raise the cap")


USED = re.compile(r"^\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*$")


def parse_used(text):
    """[subagent_tokens, tool uses, duration ms] from `--used 8230,2,191` or from the text of
    Claude Code's <usage> block pasted as it is ("subagent_tokens: 8230 tool_uses: 2 duration_ms: 191")."""
    m = USED.match(text or "")
    if m:
        values = [int(x) for x in m.groups()]
    else:
        found = [re.search(r"%s:\s*(\d+)" % key, text or "") for key in ("subagent_tokens", "tool_uses", "duration_ms")]
        if not all(found):
            raise ArenaError("--used %r is not a usage report: pass the three numbers Claude Code prints after the "
                             "Agent call, like --used 8230,2,191 (subagent_tokens, tool_uses, duration_ms)" % text[:60])
        values = [int(f.group(1)) for f in found]
    if values[0] > 10 ** 9 or values[1] > 10 ** 6 or values[2] > 10 ** 9:
        raise ArenaError("--used %r holds numbers too large to be one sub-agent's usage" % text[:60])
    return values


def parse_used_for(text):
    """(job, usage) from `JOB=8230,2,191`."""
    job, sep, rest = (text or "").partition("=")
    if not sep:
        raise ArenaError("next --used takes JOB=tokens,tool_uses,ms for each job, like r1-m02-judge=8230,2,191; "
                         "not %r" % text[:60])
    return job.strip(), parse_used(rest)


def budget_value(text):
    """--budget: 50 -> ("max_calls", 50); 20M or 500k -> ("max_tokens", 20000000)."""
    if re.match(r"^\s*\d+\s*$", text or ""):
        return "max_calls", int(text)
    if re.match(r"^\s*\d+(?:\.\d+)?\s*[kKmM]\s*$", text or ""):
        return "max_tokens", token_count(text)
    raise argparse.ArgumentTypeError("%r is not a budget: a number of calls (50) or of tokens (20M, 500k)" % text)


def take_budget(args):
    """Put --budget where --max-calls or --max-tokens would be; both for one cap is an error."""
    if not getattr(args, "budget", None):
        return
    key, value = args.budget
    if getattr(args, key) is not None:
        raise ArenaError("--budget and --%s both cap the %s; give one" % (key.replace("_", "-"), key[4:]))
    setattr(args, key, value)


def token_count(text):
    """A token count from the command line: 2000000, 2M, 500k."""
    m = re.match(r"^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$", text or "")
    if not m:
        raise argparse.ArgumentTypeError("%r is not a token count (like 2000000, 2M or 500k)" % text)
    return int(float(m.group(1)) * {"": 1, "k": 1000, "m": 1000000}[m.group(2).lower()])


def print_action(act, text, as_json):
    """A decision as the orchestrator reads it: the rendered lines, or the JSON object."""
    if as_json:
        act.pop("line", None)
        print(json.dumps(act, sort_keys=True))
    else:
        print(text)


def cmd_next(args):
    if args.direct and args.waves:
        raise ArenaError("--direct and --waves are two different loops; pick one")
    # a finished round's survivors are measured on the bench with the run unlocked, for at most
    # this long, between two decisions; what is left is run by the next command
    deadline = time.time() + BENCH_SECONDS
    used = dict(parse_used_for(text) for text in args.used or [])
    notes = []
    while True:
        with open_run(args.run) as ctx:
            st = ctx.st
            if args.direct and st["mode"] != "direct":
                ctx.commit([{"e": "mode", "mode": "direct"}])
            if args.waves and st["mode"] != "conductor":
                ctx.commit([{"e": "mode", "mode": "conductor"}])
            ctx.cards  # refuse a cards.md that no longer fits the run before anything is handed out
            act = plan_next(ctx, retry=args.retry, conductor=args.conductor, returned=args.returned, used=used)
            notes, act["notes"], used = notes + act["notes"], notes + act["notes"], None
            if act["action"] != "measure" or time.time() + act["need"] > deadline:
                print_action(act, next_text(act, ctx.run), args.json)
                sys.stdout.flush()
                if act["action"] == "wave":
                    # only now has the orchestrator seen the wave; until then next shows it again
                    ctx.commit([{"e": "shown", "wave": act["wave"]}])
                if act["cuts"] and not args.conductor:
                    ctx.commit([{"e": "shown", "cuts": len(st["cuts"])}])
                return
        if measure_runs(ctx.run, st, deadline - time.time()) >= act["left"]:
            time.sleep(LANE_POLL)  # another command is measuring: its results are kept for this one


# A lane number: the set of lanes, then the lane in it ("2.3").
LANE_ID = re.compile(r"^[1-9][0-9]{0,5}[.][1-9][0-9]?$")

# Seconds between a waiting lane's looks at the state (each takes the lock for a few ms).
LANE_POLL = 1.0


def cmd_lane(args):
    """One lane's turn; waits (lock released) until a job is ready, the lanes are over,
    or --wait seconds have passed."""
    if not LANE_ID.match(args.lane or ""):
        raise ArenaError("--lane %r is not a lane number like 2.3 (the number the lane's prompt gives)" % args.lane)
    if not 0 <= args.wait <= 3600:
        raise ArenaError("--wait must be 0 to 3600 seconds, not %d" % args.wait)
    deadline = time.time() + args.wait
    measured = False
    while True:
        with open_run(args.run) as ctx:
            ctx.cards  # refuse a cards.md that no longer fits the run
            act = lane_step(ctx, args.lane, refused=args.refused, used=parse_used(args.used) if args.used else None)
            # a lane measures the survivors on the bench at least once, whatever its --wait
            waiting = act["action"] == "again" and (time.time() < deadline or (act.get("measure") and not measured))
            if not waiting:
                print_action(act, lane_text(act), args.json)
                if act["action"] == "job":
                    sys.stdout.flush()
                    # only now has the lane seen its job; until then lane shows it again
                    ctx.commit([{"e": "shown", "job": act["call"]["job"]}])
        if not waiting:
            return
        if act.get("measure"):
            # the round's survivors are measured on the bench, the run unlocked (another lane may be at
            # it); the first time with room for one scorer run, later only inside --wait
            left = deadline - time.time()
            measure_runs(ctx.run, ctx.st, min(BENCH_SECONDS, left if measured else max(left, SCORER_SECONDS + 1)))
            measured = True
        time.sleep(LANE_POLL)


def cmd_collect(args):
    with open_run(args.run) as ctx:
        before = count_in(ctx.st, DONE)
        notes = collect_and_advance(ctx, retry=False)
        after = count_in(ctx.st, DONE)
        print("collected %d output(s); %d invalid" % (after - before, len(notes)))
        for note in notes:
            print("invalid, " + note[:200])


# the phases `prompts` writes by hand: the bracket's own, not the jobs the engine adds between rounds
PHASES = {k.word: k.name for k in KINDS_IN_ORDER if k.name not in ("probe", "merge")}


def cmd_prompts(args):
    with open_run(args.run) as ctx:
        st = ctx.st
        kind = PHASES[args.phase]
        rnd = len(st["rounds"])
        jobs = sorted(j for j in st["jobs"] if job_kind(j) == kind and (kind in ("spawn", "final") or parse_job(j)[1] == rnd))
        if not jobs:
            raise ArenaError("round %d has no %s jobs" % (rnd, args.phase))
        wrote = 0
        for j in jobs:
            info = st["jobs"][j]
            if info["s"] in OPEN and deps_done(st, j):
                write_brief(ctx, j, info["t"] + (info["s"] == READY))
                wrote += 1
        print("%s: %d job(s), %d brief(s) written under %s" % (args.phase, len(jobs), wrote, ctx.run.path("b")))
        for k in range(0, len(jobs), st["wave"]):
            print("wave %d: %s" % (k // st["wave"] + 1, " ".join(jobs[k:k + st["wave"]])))


def cmd_pairings(args):
    with open_run(args.run) as ctx:
        st = ctx.st
        if not st["rounds"]:
            print("no matches: a single agent has no one to play")
            return
        rnd = st["rounds"][-1]
        reasoning = ctx.cards["reasoning"]
        modes = lambda a: reasoning[card_of(st, a)[0]][0]  # the merge's challenger plays on the runner-up's card
        print("round %d: %s%s" % (rnd["n"], plural(len(rnd["matches"]), "match"), ", bye " + rnd["bye"] if rnd["bye"] else ""))
        for m in rnd["matches"]:
            res = st["results"].get(m["id"])
            tail = "  -> %s (%s)" % (res["w"], res["how"]) if res else ""
            print("%s  %s (%s) vs %s (%s)%s" % (m["id"], m["a"], modes(m["a"]), m["b"], modes(m["b"]), tail))


def cmd_settle(args):
    """Answer a settle offer: play the bracket out, or finish now with the leader."""
    with open_run(args.run) as ctx:
        st = ctx.st
        field = field_offered(st)
        ctx.commit([{"e": "settle", "choice": args.choice}])
        if field and args.choice == "finish":
            print("spawning stopped after %d first solutions: %d agents withdrawn, round 1 paired again among the %d "
                  "left" % (st["field"]["at"], len(st["field"]["withdrawn"]), entered(st)))
        elif field:
            print("the whole field is written: spawning goes on")
        elif args.choice == "finish":
            print("finished early after round %d: %s wins (the leader by average score so far)"
                  % (st["settle"]["round"], st["champion"]))
        else:
            print("the bracket goes on: round %d paired" % len(st["rounds"]))
        print("next: next --run %s" % st["run"])


def cmd_record(args):
    with open_run(args.run) as ctx:
        reason = (args.reason or "").strip()
        ctx.commit([{"e": "record", "match": args.match, "winner": args.agent, "why": reason[:300]}])
        print("%s: %s goes through (recorded by hand)" % (args.match, args.agent))


def cmd_advance(args):
    with open_run(args.run) as ctx:
        st = ctx.st
        # by hand, pairing does not wait for a bye's first solution: its jobs wait for it
        ctx.commit([{"e": "advance", "round": len(st["rounds"])}])
        if st["champion"]:
            print("one agent left: %s" % st["champion"])
        else:
            r = st["rounds"][-1]
            print("round %d paired: %s%s" % (r["n"], plural(len(r["matches"]), "match"), ", bye " + r["bye"] if r["bye"] else ""))


def cmd_report(args):
    with open_run(args.run) as ctx:
        from . import report  # loaded only here: the other commands never need it
        print("report: %s" % report.write_report(ctx))


def cmd_repair(args):
    run = find_run(args.run)
    run.check_folder()
    with run.lock():
        st = run.rebuild()
        run.save(st)
    print("rebuilt state.json of run %s from %d journal events" % (run.name, st["seq"]))


def cmd_status(args):
    with open_run(args.run) as ctx:
        st, run = ctx.st, ctx.run
        print(progress_line(st))
        print("run %s: %s, seed %d, wave %d, %s mode, second look %s" % (
            st["run"], plural(st["agents"], "agent"), st["seed"], st["wave"], st["mode"],
            "off" if st["recheck"] is None else "within %d points" % st["recheck"]))
        for rnd in st["rounds"]:
            decided = [st["results"][m["id"]] for m in rnd["matches"] if m["id"] in st["results"]]
            looks = sum(1 for r in decided if r.get("n", 1) >= 2)
            print("round %d: %d alive, %s, %d decided%s%s" % (
                rnd["n"], 2 * len(rnd["matches"]) + (1 if rnd["bye"] else 0), plural(len(rnd["matches"]), "match"),
                len(decided), ", " + plural(looks, "second look") if looks else "", ", bye " + rnd["bye"] if rnd["bye"] else ""))
        alive = alive_agents(st)
        print("alive: %d%s" % (len(alive), " (" + " ".join(alive) + ")" if len(alive) <= 16 else ""))
        failing = sorted((j, i["why"]) for j, i in st["jobs"].items() if i.get("why") and i["s"] in (READY, STUCK))
        for job, why in failing[:10]:
            print("retry %s: %s" % (job, why[:120]))
        for mid, why in sorted(st["manual"].items()):
            print("needs a decision by hand: %s (%s)" % (mid, why))
        calls = job_counts(st["agents"], st["wave"], st["baseline"], st["recheck"] is not None, st["merge_on"])
        task = tokens_of(read_text(run.path("task.md")))
        run_code, bench = bool(st.get("run_code")), bool(st.get("bench_on"))
        print(format_estimate(estimate_tokens(calls, task, measured_sizes(run, st), run_code, bench), "measured"))
        print(format_estimate(estimate_tokens(calls, task, ASSUMED, run_code, bench), "assumed"))
        for line in spend_lines(st):
            print(line)
        for line in model_lines(st):
            print(line)
        for line in code_lines(st["run_code"], st["run"], st["run_code_env"]):
            print(line)
        print_handed_out(st, time.time())
        print_tree_changes(ctx)


def print_handed_out(st, now):
    """Each job out with an agent now, longest first, against the minutes it is worth."""
    minutes = st.get("minutes", PHASE_MINUTES)
    out = sorted(((now - i["at"]) / 60.0, j) for j, i in st["jobs"].items() if i["s"] == ISSUED and i.get("at"))
    print("time per job: %s minutes; handed out now: %d" % (format_minutes(minutes), len(out)))
    for elapsed, job in sorted(out, reverse=True)[:10]:
        budget = minutes.get(job_kind(job), 0)
        print("  %s: %d min since handed out%s" % (job, int(elapsed), ", over its %d" % budget
                                                   if elapsed > budget else ""))


def cmd_exec(args):
    if not 1 <= args.timeout <= EXEC_MAX_SECONDS:
        raise ArenaError("--timeout must be 1 to %d seconds, not %d" % (EXEC_MAX_SECONDS, args.timeout))
    with open_run(args.run) as ctx:
        st = ctx.st
        if not st.get("run_code"):
            raise ArenaError("run %s does not run code (it was started without --run-code): check the code by "
                             "reasoning instead and finish the job without running it" % st["run"])
        info = st["jobs"].get(args.job)
        if info is None:
            raise ArenaError("run %s has no job %r; use the job id your brief names" % (st["run"], args.job[:40]))
        if info["s"] != ISSUED:
            raise ArenaError("job %s is not handed out now; code runs only for a job while its agent works on it"
                             % args.job)
        folder = ctx.run.path(work_folder(args.job))
        path = resolve_in(folder, args.file)
        if path is None:
            raise ArenaError("%s is not a file in the work folder %s/; write the script there first"
                             % (args.file[:120], folder))
        keep = st["run_code_env"]
    # the run is not locked while the script runs: it may take minutes and next must not wait
    ran = run_script(path, args.args, folder, args.timeout, keep=keep, project=".")
    text = ran["text"]
    sys.stdout.write(text if not text or text.endswith("\n") else text + "\n")
    if ran["limit"]:
        print("[%s]" % ran["limit"])
    if ran["status"] is None:
        print("[timed out after %d s and killed; --timeout S allows up to %d]" % (args.timeout, EXEC_MAX_SECONDS))
    else:
        print("[exit status %d after %.1f s]" % (ran["status"], ran["seconds"]))
    if ran["outside"]:
        shown = ran["outside"][:10]
        print("[outside the work folder, these changed while it ran (by it or by another program): %s%s]" % (
            ", ".join(shown), ", ..." if len(ran["outside"]) > 10 else ""))


def bench_job_sides(ctx, job):
    """[(label, text to run, text results are kept by)] of the solutions a job runs the bench on:
    a judging job's blinded copies under its labels, an attacker's target and its own, a
    defender's revision (once written) and its opponent's."""
    st, run = ctx.st, ctx.run
    raw = lambda agent: read_text(run.path(st["sol"][agent]))
    kind = job_kind(job)
    if kind in ("judge", "probe"):
        sides, names = label_tries(st, job)[0]
        out = []
        for side, name in zip(sides, names):
            copy = run.path(judge_copy(job, name, "solution"))
            out.append((name, read_text(copy) if os.path.isfile(copy) else raw(side), raw(side)))
        return out
    m = find_match(st, match_of(job))
    who = agent_of(job)
    other = opponent(m, who)
    if kind == "atk":
        return [("target", raw(other), raw(other)), ("yours", raw(who), raw(who))]
    revised = run.path(outputs_of(job)[1])
    mine = read_text(revised) if os.path.isfile(revised) and not os.path.islink(revised) else raw(who)
    return [("yours", mine, mine), ("opponent", raw(other), raw(other))]


def cmd_bench(args):
    with open_run(args.run) as ctx:
        st = ctx.st
        if not st.get("bench_on"):
            raise ArenaError("run %s keeps no bench (it was started without --run-code and --bench); test what you "
                             "need yourself" % st["run"])
        info = st["jobs"].get(args.job)
        if info is None:
            raise ArenaError("run %s has no job %r; use the job id your brief names" % (st["run"], args.job[:40]))
        if info["s"] != ISSUED:
            raise ArenaError("job %s is not handed out now; the bench runs only for a job while its agent works on it"
                             % args.job)
        if job_kind(args.job) not in ("atk", "def", "judge", "probe"):
            raise ArenaError("job %s is a %s; the bench runs for attacks, defences, judges and probes"
                             % (args.job, KIND[job_kind(args.job)].word))
        unknown = [e for e in args.entry if e not in {b["id"] for b in st["bench"]}]
        if unknown:
            raise ArenaError("the bench has no entry %s; it has %s" % (
                unknown[0][:20], ", ".join(b["id"] for b in st["bench"]) or "none yet"))
        if not st["bench"]:
            print("the bench is empty: no job has added a test or a scorer yet; test what you need yourself, and "
                  "add what decides something to the bench (your brief says how)")
            return 0
        sides = bench_job_sides(ctx, args.job)
        folder = ctx.run.path(work_folder(args.job))
    # the run is not locked while the entries run, as for exec
    results = run_bench(ctx.run, st, sides, folder, only=set(args.entry))
    labels = [label for label, _, _ in sides]
    print("bench: %d entr%s, run on %s; each result is kept by solution, so every job sees the same figures"
          % (len(results), "y" if len(results) == 1 else "ies", " and ".join(labels)))
    for line in bench_lines(st, results, labels):
        print(line)
    if any(r is None for row in results.values() for r in row.values()) or unconfirmed(st, results, labels):
        print("some entries were not run in this command's %d seconds: run it again, it goes on where it stopped"
              % BENCH_SECONDS)


def cmd_check(args):
    """Check one handed-out job's output files as collect will, changing nothing."""
    run = find_run(args.run)
    ctx = Context(run, run.peek())
    info = ctx.st["jobs"].get(args.job)
    if info is None:
        raise ArenaError("run %s has no job %r; use the job id your brief names" % (ctx.st["run"], args.job[:40]))
    if info["s"] == DONE:
        return check_collected(ctx, args.job)
    if info["s"] != ISSUED:
        raise ArenaError("job %s is not handed out now (it is %s); nothing to check" % (args.job, info["s"]))
    verdict, detail = check_output(ctx, args.job)
    if verdict == "done":
        print("ok")
        return
    if verdict is None:
        print("not written yet: %s" % " ".join(run.path(p) for p in outputs_of(args.job)))
    else:
        print("refused: %s" % detail[:400])
    print("fix that and run this check again; the engine reads the file(s) exactly this way")
    return 1


def check_collected(ctx, job):
    """check on a job the engine has collected: whether its files are still what it read."""
    changed = changed_since_collected(ctx, job)
    if not changed:
        print("ok: job %s was collected, and its file(s) are still the text the engine read" % job)
        return 0
    verdict, detail = check_output(ctx, job)
    print("job %s was collected, and since then %s changed: the engine reads it again before another job uses "
          "it, and keeps the new text only if it still passes and counts as before" % (job, " and ".join(changed)))
    if verdict == "done":
        print("the new text: ok")
        return 0
    print("the new text: %s" % ("refused: " + detail[:400] if verdict == "fail" else "a file is missing"))
    return 1


def print_tree_changes(ctx):
    """What changed outside .arena/ since init: the project tree, this user's new entries in
    the system temp folder, new or changed entries at the top of the home folder."""
    run, digests = ctx.run, ctx.st["records"]
    changes, note, damaged = tree_changes(run, digests)
    if changes is None:
        print("files outside .arena/: %s (%s)" % ("UNKNOWN" if damaged else "not checked", note))
    elif not changes:
        print("files outside .arena/: none changed since init%s" % note)
    else:
        print("files outside .arena/ changed since init%s: %d" % (note, len(changes)))
        for c in changes[:20]:
            print("  " + c)
    print_folder_changes(run, digests, "tempdir.json", "system temp folder", temp_changes,
                         "new entries of yours", "(changes inside older entries are not seen)")
    print_folder_changes(run, digests, "homedir.json", "home folder", home_changes,
                         "new or changed entries at its top level", "(changes deeper down are not seen)")


def print_folder_changes(run, digests, record, what, changes_since, kind, blind_spot):
    """One line on a folder outside the project a script could write to."""
    before, problem, damaged = load_record(run, record, digests)
    if problem:
        print("%s: %s (%s)" % (what, "UNKNOWN" if damaged else "not checked", problem))
        return
    top, names = changes_since(before)
    if names is None:
        print("%s %s: not checked (it cannot be listed)" % (what, top))
    elif not names:
        print("%s %s: no %s since init %s" % (what, top, kind, blind_spot))
    else:
        print("%s %s: %d %s since init, from any program you ran, sub-agents included: %s" % (
            what, top, len(names), kind, ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")))


def cmd_winner(args):
    with open_run(args.run) as ctx:
        print_winner(ctx)
        if args.report:
            # one command for the end of a run: the result and the page (a turn less in the session)
            from . import report
            print("report: %s" % report.write_report(ctx))


def print_winner(ctx):
    run, st = ctx.run, ctx.st
    if st["champion"] is None:
        raise ArenaError("no winner yet: %s; keep running next" % progress_line(st))
    champ = st["champion"]
    shipped = st["ship"] or champ
    sol = st["sol"].get(shipped)
    rounds = len(bracket_rounds(st))
    gone = st["agents"] - entered(st)
    print("winner %s of %s%s after %s (seed %d)" % (
        champ, plural(entered(st), "agent"), " (%d more withdrawn before writing)" % gone if gone else "",
        plural(rounds, "round"), st["seed"]))
    print("card: %s" % " / ".join(card_names(ctx.cards, st["cards"][champ])))
    if st["models"]:
        print("model: %s" % model_of(st, champ))
    if sol and shipped != champ:
        print("solution: %s (the checked merge, which beat %s; see below)" % (run.path(sol), champ))
    else:
        print("solution: %s" % (run.path(sol) if sol else "none: no competitor produced a valid solution"))
    judged = last_judged_copy(ctx, shipped) if sol else None
    if judged and not judged[1]:
        print("warning: that file changed after the judges last read it (a late write by an earlier try, "
              "or an edit); the text they judged is %s (agent ids replaced by labels)" % run.path(judged[0]))
    for line in unplayed_lines(st):
        print(line)
    for m, res in path_of(st, champ):
        print_match(ctx, m, res, champ)
    byes = [r["n"] for r in st["rounds"] if r["bye"] == champ]
    if byes:
        print("byes: round %s" % ", ".join(str(b) for b in byes))
    for line in merge_lines(st):
        print(line)
    if st["merged"] and st["merged"].get("match") in st["results"]:
        m = find_match(st, st["merged"]["match"])
        print_match(ctx, m, st["results"][m["id"]], champ)
    print_final(st)
    for line in survivor_bench_lines(st):
        print(line)
    for line in model_lines(st):
        print(line)
    for line in spend_lines(st):
        print(line)
    report = run.path("report.html")
    if os.path.exists(report):
        print("report: %s" % report)
    print_tree_changes(ctx)


def print_match(ctx, m, res, champ):
    """One match of the champion's: the score, how the looks went, the attacks on it and what
    each side fixed."""
    st = ctx.st
    opp = opponent(m, champ)
    line = "%s vs %s: %s" % (m["id"], opp, res["how"])
    if res.get("tot"):
        looks = res.get("n", 1)
        line += " %s-%s (margin %s)" % (points(res["tot"][champ], looks), points(res["tot"][opp], looks),
                                         points(res["tot"][champ] - res["tot"][opp], looks))
    if looks_text(st, m, res):
        line += ", " + looks_text(st, m, res)
    if res.get("rule") == "fatal":
        line += ", " + fatal_note("opponent" if res["w"] == champ else champ)
    print(line)
    why = pairing_text(st["rounds"][round_of(m["id"]) - 1], m)
    if why:
        print("  " + why)
    answers = st["summ"].get(defence_id(m["id"], champ), {}).get("ans", "")
    for k, (label, summary) in enumerate(attacks_on(ctx, attack_id(m["id"], opp))):
        reply = {"C": "conceded and fixed", "R": "rebutted"}.get(answers[k:k + 1], "unanswered")
        note = reproducer_note(st, m["id"], champ, k + 1)
        print("  %s %s -> %s%s" % (label, summary.strip()[:100], reply, "; " + note if note else ""))
    if res["how"] != "forfeit":
        print("  %s; %s" % (fixes_text(st, m, champ), fixes_text(st, m, opp)))
    for line in match_bench_lines(st, m["id"], [champ, opp]):
        print("  " + line)


def print_final(st):
    if not st["baseline"]:
        return
    f = st["final"]
    if f is None and not st["sol"].get(st["ship"] or st["champion"]):
        print("baseline check: not run: the run has no solution to compare with the old answer")
    elif f is None:
        print("baseline check: not run yet (run next)")
    elif f.get("missing"):
        print("baseline check: failed (%s); compare by hand" % f.get("why", "no verdict"))
    else:
        w, b, verdict, _ = baseline_verdict(f)
        print("baseline check (blind): arena answer %d, old answer %d: %s" % (w, b, verdict))


class Parser(argparse.ArgumentParser):
    def parse_args(self, args=None, namespace=None):
        # argparse reports a stray option from the top-level parser, whose help does not list
        # the command's options: report it from the command's own parser instead
        found, extra = self.parse_known_args(args, namespace)
        if extra:
            command = self._subparsers._group_actions[0].choices.get(getattr(found, "cmd", None), self)
            command.error("unrecognized arguments: %s" % " ".join(extra))
        return found

    def error(self, message):
        sys.stderr.write("bracket.py: %s; see '%s --help'\n" % (message, self.prog))
        sys.exit(2)


def env_list(text):
    try:
        return env_names(text)
    except ArenaError as e:
        raise argparse.ArgumentTypeError(str(e).split(" takes ", 1)[-1])


def model_mix(text):
    """--models: opus,sonnet (equal shares) or opus:2,sonnet:1 -> [[name, share], ...] in the order given."""
    mix = []
    for item in (text or "").split(","):
        name, _, share = item.strip().partition(":")
        if name not in MODELS:
            raise argparse.ArgumentTypeError("%r is not a model; models are %s" % (name, ", ".join(MODELS)))
        if any(name == m for m, _ in mix):
            raise argparse.ArgumentTypeError("%s is named twice" % name)
        if share and not (share.isdigit() and int(share) > 0):
            raise argparse.ArgumentTypeError("%r is not a share; give a whole number of 1 or more, like %s:2"
                                             % (share, name))
        mix.append([name, int(share) if share else 1])
    if len(mix) < 2:
        raise argparse.ArgumentTypeError("a mixed field needs two models or more; for one, use --model %s"
                                         % mix[0][0])
    return mix


def check_models(n, args):
    """Refuse a --models the field cannot honour: with --model, or a model left with no agent."""
    if not args.models:
        return
    if args.model:
        raise ArenaError("--model gives every competitor one model and --models deals several; pick one")
    counts = model_counts(n, [share for _, share in args.models])
    empty = [name for (name, _), k in zip(args.models, counts) if k == 0]
    if empty:
        raise ArenaError("%s of %s leaves %s with no agent; use more agents or fewer models" % (
            mix_text(args.models), plural(n, "agent"), " and ".join(empty)))


def whole(text):
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a whole number" % text)


def recheck_value(text):
    if text == "off":
        return "off"
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("must be a whole number of points or off")
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError("must be 0 to 100 points, or off")
    return str(value)


def parents():
    """Options several commands take, defined once: {name: parser to pass as a parent}."""
    def group(*specs):
        p = argparse.ArgumentParser(add_help=False)
        for flags, kw in specs:
            p.add_argument(*flags, **kw)
        return p

    wave_help = "sub-agents running at once, 1 to %d (default %d)" % (MAX_WAVE, DEFAULT_WAVE)
    return {
        "run": group((("--run",), dict(help="the run's folder name under .arena/ (default: the latest init)"))),
        "field": group(
            (("--agents",), dict(type=whole, default=DEFAULT_AGENTS, metavar="N",
                                 help="competitors, 1 to %s (default %d)" % (card_count(), DEFAULT_AGENTS))),
            (("--quick",), dict(action="store_true", help="8 agents")),
            (("--wave",), dict(type=whole, default=DEFAULT_WAVE, metavar="W", help=wave_help))),
        "wave": group((("--wave",), dict(type=whole, default=DEFAULT_WAVE, metavar="W", help=wave_help))),
        "seed": group((("--seed",), dict(type=whole, metavar="S",
                                         help="the same seed deals the same cards and first round (default: "
                                              "drawn, and shown in the run's name)"))),
        "judging": group((("--recheck",), dict(default=str(DEFAULT_RECHECK), type=recheck_value, metavar="M",
                                               help="second judge when totals are within M points (default %d), "
                                                    "or off" % DEFAULT_RECHECK))),
        "code": group(
            (("--run-code",), dict(action="store_true", help="let sub-agents run Python scripts they write in their "
                                                             "work folders (bracket.py exec)")),
            (("--run-code-env",), dict(type=env_list, default=[], metavar="NAME,...",
                                       help="variables of yours the scripts may see (by default none but PATH and "
                                            "the locale)")),
            (("--job-minutes",), dict(help="minutes each job is worth, stated in its brief: N (spawn N, the rest in "
                                           "proportion; default %s) or phase=N pairs like spawn=20,judge=6"
                                           % format_minutes(PHASE_MINUTES)))),
        "json": group((("--json",), dict(action="store_true", help="print the action as JSON"))),
        "models": group(
            (("--model",), dict(choices=MODELS, help="model for competitors (default: the session's)")),
            (("--models",), dict(type=model_mix, metavar="M1,M2",
                                 help="a mixed field: each competitor's model dealt with its card, in shares "
                                      "like opus,sonnet or opus:2,sonnet:1,haiku:1")),
            (("--judge-model",), dict(choices=MODELS, help="model for judges (default: the session's)"))),
        "settle": group((("--settle",), dict(choices=("ask", "auto", "never"), default="ask",
                                             help="when the survivors (or the first solutions) look interchangeable: "
                                                  "ask whether to finish early (default), finish at once (auto), or "
                                                  "always play the whole field and bracket out (never)"))),
        "merge": group((("--merge",), dict(choices=("on", "off"), default="on",
                                           help="after the final, a challenger built from both finalists must beat "
                                                "the winner to ship (default on)"))),
        "budget": group(
            (("--budget",), dict(type=budget_value, metavar="N|T", help="the skill's cap: N sub-agent calls "
                                                                      "(as --max-calls), or T tokens when it ends "
                                                                      "in k or M (as --max-tokens)")),
            (("--max-calls",), dict(type=whole, metavar="N", help="never more than N sub-agent calls for the "
                                                                 "tournament's jobs; optional work goes first")),
            (("--max-tokens",), dict(type=token_count, metavar="T", help="never more than about T tokens (2M, 500k), "
                                                                         "kept by the estimate"))),
    }


def build_parser():
    p = Parser(prog="bracket.py", description="Bookkeeping for /arena tournaments. State lives in .arena/<run>/.")
    sub = p.add_subparsers(dest="cmd", metavar="command", parser_class=Parser)
    sub.required = True
    shared = parents()

    def command(name, fn, help_text, *uses):
        c = sub.add_parser(name, help=help_text, description=help_text, parents=[shared[u] for u in uses])
        c.set_defaults(fn=fn)
        return c

    c = command("plan", cmd_plan, "show rounds, sub-agent calls and waves for N agents; writes nothing",
                "field", "judging", "models", "merge", "code", "budget", "settle")
    c.add_argument("--baseline", action="store_true", help="add the final check against the old answer")
    c.add_argument("--task-file", help="estimate tokens for this task")

    c = command("init", cmd_init, "start a run: deal cards, pair round 1, write the state",
                "field", "seed", "judging", "models", "merge", "code", "budget", "settle")
    c.add_argument("--task-file", required=True)
    c.add_argument("--baseline-file")
    c.add_argument("--run", help="folder name under .arena/ (default: date-time and seed)")
    c.add_argument("--final-judges", type=int, choices=(1, 3), default=1, help="judges for the final match")
    # the bench (docs/code-tasks.md): off until it is measured with real sub-agents
    c.add_argument("--bench", action="store_true", help=argparse.SUPPRESS)
    c.add_argument("--no-pack", action="store_true", help="one phase per wave, as the per-phase table counts")
    c.add_argument("--direct", action="store_true", help="the main session runs every wave itself")
    c.add_argument("--waves", action="store_true", help="a conductor runs waves (no lanes)")
    c.add_argument("--lane-jobs", type=whole, default=DEFAULT_LANE_JOBS,
                   help="jobs per lane before a set of lanes hands back (default %d)" % DEFAULT_LANE_JOBS)
    c.add_argument("--batch-waves", type=whole, default=DEFAULT_BATCH, help="waves per conductor")

    c = command("demo", cmd_demo, "play a whole run offline with stand-in agents, then print the winner and "
                "the report's path; writes under .arena/ like a real run", "seed", "wave")
    c.add_argument("--agents", type=whole, default=DEMO_AGENTS, metavar="N",
                   help="stand-in competitors, 1 to %s (default %d)" % (card_count(), DEMO_AGENTS))
    c.add_argument("--run", help="folder name under .arena/ (default: demo-N-sS, numbered if taken)")
    c.add_argument("--models", type=model_mix, metavar="M1,M2",
                   help="a mixed field, as init takes it; a stand-in on opus plays better, on haiku worse")

    c = command("next", cmd_next, "collect what arrived and print exactly what to do now", "run", "json")
    c.add_argument("--retry", action="store_true", help="the last wave's agents have returned: re-issue what is missing")
    c.add_argument("--direct", action="store_true", help="switch this run to the direct loop (no conductor)")
    c.add_argument("--waves", action="store_true", help="switch this run to a conductor running waves (no lanes)")
    c.add_argument("--returned", nargs="+", action="extend", metavar="JOB",
                   help="these jobs' agents have returned while others still run: collect them and refill their slots")
    c.add_argument("--conductor", action="store_true", help="called by a conductor sub-agent")
    c.add_argument("--used", nargs="+", action="extend", metavar="JOB=N,K,D",
                   help="what Claude Code reported for these jobs' sub-agents: subagent_tokens, tool_uses, duration_ms")

    c = command("lane", cmd_lane, "a lane's turn: collect its last job, print its next Agent call (waits for one)",
                "run", "json")
    c.add_argument("--lane", required=True, help="the lane number its prompt gives, like 2.3")
    c.add_argument("--refused", action="store_true",
                   help="the lane's last Agent call was refused by Claude Code (never ran): no try is spent")
    c.add_argument("--used", metavar="N,K,D",
                   help="what Claude Code reported for the last job's sub-agent: subagent_tokens, tool_uses, duration_ms")
    c.add_argument("--wait", type=whole, default=DEFAULT_LANE_WAIT,
                   help="seconds to wait for a ready job (default %d)" % DEFAULT_LANE_WAIT)

    c = command("prompts", cmd_prompts, "write the briefs of a phase of this round and list its jobs in waves", "run")
    c.add_argument("phase", choices=sorted(PHASES))
    command("pairings", cmd_pairings, "this round's matches and the bye", "run")
    command("collect", cmd_collect, "read and check the outputs that arrived, record verdicts", "run")
    c = command("record", cmd_record, "decide one match by hand", "run")
    c.add_argument("match")
    c.add_argument("agent")
    c.add_argument("--reason", required=True)
    command("advance", cmd_advance, "eliminate the losers and pair the survivors", "run")
    c = command("settle", cmd_settle, "answer a settle offer: continue the bracket, or finish now with the leader",
                "run")
    c.add_argument("choice", choices=("continue", "finish"))
    command("status", cmd_status, "progress, rounds, alive agents, and files changed outside .arena/", "run")
    c = command("winner", cmd_winner, "the survivor, its card, path, the attacks it survived, the baseline check",
                "run")
    c.add_argument("--report", action="store_true", help="also write report.html, as the report command does")
    command("report", cmd_report, "write report.html: the bracket, scores, attacks and the winner's path", "run")
    command("repair", cmd_repair, "rebuild state.json from journal.jsonl", "run")
    c = command("check", cmd_check, "check a handed-out job's output files exactly as collect will; prints ok "
                "or what is wrong, changes nothing (for the job's own sub-agent)", "run")
    c.add_argument("--job", required=True, help="the job whose output to check")
    c = command("exec", cmd_exec, "run a Python script from a job's work folder, for its agent (runs "
                "started with --run-code only)", "run")
    c.add_argument("--job", required=True, help="the job whose work folder holds the script")
    c.add_argument("--timeout", type=whole, default=EXEC_SECONDS,
                   help="seconds before the script is killed (default %d, at most %d)" % (EXEC_SECONDS, EXEC_MAX_SECONDS))
    c.add_argument("file", help="the script, in the job's work folder")
    c.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    c = command("bench", cmd_bench, "run the run's bench (its kept tests and scorer) on the solutions a job works "
                "with, confined as exec; prints each result and what it decides (runs with --run-code only)", "run")
    c.add_argument("--job", required=True, help="the job whose solutions to run it on")
    c.add_argument("--entry", action="append", default=[], metavar="ID", help="only this entry (b01, ...); repeatable")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        code = args.fn(args)  # a command may return an exit code of its own (check: 1 for a refused file)
    except ArenaError as e:
        sys.stderr.write("bracket.py: %s\n" % e)
        return 2
    except BrokenPipeError:  # the reader stopped early (e.g. `| head`): nothing to report
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except KeyboardInterrupt:
        sys.stderr.write("bracket.py: interrupted; the state is as the last finished step left it, run next\n")
        return 130
    except Exception as e:  # never a traceback for the user; ARENA_DEBUG=1 shows it
        if os.environ.get("ARENA_DEBUG"):
            raise
        sys.stderr.write("bracket.py: internal error (%s: %s); the state was not changed by the failed step; "
                         "set ARENA_DEBUG=1 to see where\n" % (type(e).__name__, str(e)[:200]))
        return 1
    return code or 0
