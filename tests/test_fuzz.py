"""Fuzz: the output parsers and the command line, with seeded random inputs.

The counts are fixed by the seeds, so every run checks the same cases; the
totals are printed at the end (the README quotes them).
"""

import concurrent.futures
import json
import os
import random
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import test_reliability as rel  # noqa: E402
from standin import BRACKET, ENGINE  # noqa: E402
from arena.base import MAX_ATTACKS  # noqa: E402
from arena.cards import load_rubric  # noqa: E402
from arena.outputs import BadOutput, check_solution, parse_answers, parse_attacks, parse_verdict, strip_header  # noqa: E402

CASES = {"parsers": 0, "cli-in-process": 0, "cli-process": 0}
RUBRIC = load_rubric()
LABELS = ["Kestrel", "Heron"]
JOB = "r1-m01-judge"

WEIRD = ["", " ", "\n", "\x00", "\ufeff", "\u202e", "é", "日本", "\U0001f600", "\ud800", "\\", "'", '"', "`",
         "{", "}", "[", "]", "## ", "#", "-->", "<!--", "\r\n", "\t", "NaN", "Infinity", "-0", "1e309",
         "9" * 40, "-" * 3, "../" * 5, "/etc/passwd", "=====ARENA-DATA-000000000000====="]


def rand_text(rng, n=None):
    n = rng.randrange(0, 12) if n is None else n
    return "".join(rng.choice(WEIRD + [chr(rng.randrange(32, 0x2fff))] * 3 + ["x" * rng.randrange(1, 30)])
                   for _ in range(n))


def rand_json(rng, depth=0):
    pick = rng.randrange(10 if depth < 4 else 6)
    if pick == 0:
        return rng.choice([None, True, False])
    if pick == 1:
        return rng.choice([0, -1, 1, 30, 31, 10 ** 30, -10 ** 30, rng.randrange(-5, 40)])
    if pick == 2:
        return rng.choice([0.5, 1e308, -0.0, 12.0, float("nan"), float("inf")])
    if pick in (3, 4, 5):
        return rng.choice(LABELS + [c for c, _, _ in RUBRIC] + ["job", "scores", "fatal", JOB, rand_text(rng)])
    if pick in (6, 7):
        return [rand_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = LABELS + [c for c, _, _ in RUBRIC] + ["job", "scores", "fatal", "confidence", "reason", rand_text(rng, 2)]
    return {rng.choice(keys): rand_json(rng, depth + 1) for _ in range(rng.randrange(6))}


def good_verdict(rng):
    return {"job": JOB, "scores": {lab: {c: rng.randrange(0, top + 1) for c, top, _ in RUBRIC} for lab in LABELS},
            "fatal": {lab: rng.random() < .3 for lab in LABELS}, "confidence": rng.choice(["high", "low"]),
            "reason": rand_text(rng)}


def mutate_verdict(rng):
    v = good_verdict(rng)
    for _ in range(rng.randrange(1, 4)):
        spots = [v, v.get("scores"), v.get("fatal")] + list((v.get("scores") or {}).values()) \
            if isinstance(v.get("scores"), dict) else [v]
        spots = [x for x in spots if isinstance(x, dict)]
        where = rng.choice(spots)
        key = rng.choice(list(where) + [rand_text(rng, 1)]) if where else rand_text(rng, 1)
        if rng.random() < 0.2:
            where.pop(key, None)
        else:
            where[key] = rand_json(rng)
    text = json.dumps(v, allow_nan=True)
    r = rng.random()
    if r < 0.2:
        cut = rng.randrange(len(text) + 1)
        text = text[:cut]
    elif r < 0.4:
        k = rng.randrange(len(text) + 1)
        text = text[:k] + rand_text(rng, 2) + text[k:]
    elif r < 0.45:
        text = "[" * rng.randrange(500, 200000)
    return text


def mutate_markdown(rng, word_a, words):
    lines = []
    for k in range(rng.randrange(0, 10)):
        num = str(k + 1) if rng.random() < 0.8 else rng.choice(["0", "x", str(k + 2), "1.", "01", rand_text(rng, 1)])
        word = rng.choice(words) if rng.random() < 0.85 else rand_text(rng, 1)
        head = rng.choice(["## %s %s %s: t" % (word_a, num, word), "## %s %s %s:" % (word_a, num, word),
                           "##%s %s %s: t" % (word_a, num, word), "## %s %s%s" % (word_a, num, word),
                           "## " + rand_text(rng, 2), rand_text(rng, 3)])
        lines.append(head)
        lines.append(rand_text(rng))
    return rng.choice(["\n", "\r\n"]).join(lines)


class ParserFuzz(unittest.TestCase):
    """Random malformed outputs: valid data or BadOutput, never another exception."""

    def run_case(self, fn, *args):
        CASES["parsers"] += 1
        try:
            return fn(*args)
        except BadOutput as e:
            self.assertTrue(str(e))
            return None
        except Exception as e:  # noqa: BLE001 - any other exception is the failure under test
            self.fail("%s raised %s: %s for %r" % (fn.__name__, type(e).__name__, e, [a for a in args][:1]))

    def test_parse_verdict(self):
        rng = random.Random(101)
        for _ in range(2500):
            text = mutate_verdict(rng) if rng.random() < 0.8 else json.dumps(rand_json(rng))
            v = self.run_case(parse_verdict, text, JOB, LABELS, RUBRIC, "out/x.json")
            if v is not None:
                for lab in LABELS:
                    row = v["sc"][lab]
                    self.assertEqual(len(row), len(RUBRIC))
                    for x, (_, top, _) in zip(row, RUBRIC):
                        self.assertIs(type(x), int)
                        self.assertTrue(0 <= x <= top)
                    self.assertIsInstance(v["fat"][lab], bool)
                self.assertIn(v["conf"], ("high", "low"))
                json.dumps(v)  # must go into the journal

    def test_parse_attacks_and_answers(self):
        rng = random.Random(202)
        for _ in range(2000):
            body = mutate_markdown(rng, "ATTACK", ["FATAL", "MAJOR", "MINOR"])
            attacks = self.run_case(parse_attacks, body, "out/a.md")
            if attacks is not None:
                self.assertLessEqual(len(attacks), MAX_ATTACKS)
                self.assertEqual([a.number for a in attacks], list(range(1, len(attacks) + 1)))
                self.assertTrue({a.label for a in attacks} <= {"FATAL", "MAJOR", "MINOR"})
            body = mutate_markdown(rng, "ANSWER", ["CONCEDE", "REBUT"])
            ans = self.run_case(parse_answers, body, rng.randrange(0, 9), "out/d.md")
            if ans is not None:
                self.assertTrue(set(ans) <= set("CR"))

    def test_strip_header(self):
        rng = random.Random(303)
        jobs = ["spawn-a001", "r1-m01-atk-a002", "final", rand_text(rng, 2)]
        for _ in range(1500):
            job = rng.choice(jobs)
            head = rng.choice(["<!-- arena job: %s -->" % rng.choice(jobs), "\ufeff<!-- arena job: %s -->" % job,
                               "<!-- arena job:%s -->" % job, "<!-- arena job: %s" % job, rand_text(rng, 3)])
            text = head + rng.choice(["\n", "\r\n", "", " \t\n"]) + rand_text(rng)
            body = self.run_case(strip_header, text, job, "out/x.md")
            if body is not None:
                self.assertTrue(text.endswith(body))
            self.run_case(check_solution, text, job, "out/x.md")

    def test_parsers_do_reject(self):
        """The fuzz can fail: these must be refused."""
        bad = dict(good_verdict(random.Random(1)))
        bad["scores"][LABELS[0]]["correctness"] = 31
        for text in (json.dumps(bad), "[" * 100000, "{}", "null"):
            with self.assertRaises(BadOutput):
                parse_verdict(text, JOB, LABELS, RUBRIC, "p")
        with self.assertRaises(BadOutput):
            parse_attacks("## ATTACK 1 FATAL: a\n## ATTACK 3 MINOR: b\n", "p")


# ---------------------------------------------------------------- the command line

COMMANDS = ["plan", "init", "next", "prompts", "pairings", "collect", "record", "advance", "status", "winner",
            "repair", "report", "nope", "", "-h", "--help"]
FLAGS = ["--run", "--agents", "--seed", "--wave", "--task-file", "--baseline-file", "--quick", "--retry", "--direct",
         "--conductor", "--json", "--reason", "--model", "--judge-model", "--recheck", "--final-judges", "--no-pack",
         "--batch-waves", "--baseline", "-h", "--", "-", "--run=r", "--agents=3"]
VALUES = ["r", "s", "r2", "../x", "/abs", "a/b", "..", ".", "r/../r", "~", "con", "r\x00", "-1", "0", "1", "2", "3",
          "7", "20", "21", "2160", "2161", "99999999999999999999999", "1e3", "0x10", "off", "opus", "gpt",
          "task.md", "missing.md", "../../etc/passwd", "/etc/hostname", ".arena/r/state.json", "r1-m01", "r1-m02",
          "r9-m99", "a001", "a002", "a999", "spawn", "attack", "judge", "final", "défi", "\U0001f600", "x" * 300,
          "--", "'; rm -rf /", "$(id)", "r1-m01-judge"]


def rand_argv(rng):
    argv = [rng.choice(COMMANDS)] if rng.random() < 0.95 else []
    for _ in range(rng.randrange(0, 6)):
        r = rng.random()
        if r < 0.45:
            argv.append(rng.choice(FLAGS))
        elif r < 0.9:
            argv.append(rng.choice(VALUES))
        else:
            argv.append(rand_text(rng, 2))
    if rng.random() < 0.5 and "--run" not in argv:
        argv += ["--run", rng.choice(["r", "r", "s", "../x", "nope"])]
    if argv and argv[0] == "init" and rng.random() < 0.7:
        argv += ["--task-file", "task.md", "--agents", rng.choice(["2", "3", "4", "9999"])]
    if argv and argv[0] == "report" and not os.path.exists(os.path.join(os.path.dirname(BRACKET), "arena", "report.py")):
        argv[0] = "status"
    return argv


def states(top):
    found = {}
    for dirpath, _, names in os.walk(os.path.join(top, ".arena")):
        for name in names:
            if name in ("state.json", "journal.jsonl", "current"):
                with open(os.path.join(dirpath, name), "rb") as f:
                    found[os.path.join(dirpath, name)] = f.read()
    return found


class CliFuzz(unittest.TestCase):

    def fixture(self, d):
        rel.init(d, 4, 5, "r")
        rel.init(d, 2, 6, "s")
        agent = rel.Agent(d, 5)
        out = rel.cli(d, "next", "--run", "r")[1]
        for c in rel.parse_wave(out):
            agent(c)

    def test_random_argv_in_process(self):
        rng = random.Random(404)
        with rel.tmpdir() as d:
            self.fixture(d)
            for k in range(1000):
                argv = rand_argv(rng)
                before = states(d)
                code, out, err = rel.cli(d, *argv)
                CASES["cli-in-process"] += 1
                self.assertIn(code, (0, 2), "%r exited %s: %s" % (argv, code, err))
                self.assertNotIn("Traceback", err + out, argv)
                if code != 0:
                    self.assertTrue(err.strip(), argv)
                    self.assertEqual(states(d), before, "failed %r changed a state file" % (argv,))
            self.assertTrue(os.path.isdir(os.path.join(d, ".arena", "r")))
            self.assertFalse(os.path.exists(os.path.join(os.path.dirname(d), "x")))

    def test_random_argv_real_processes(self):
        """Real processes, two workers side by side, each on its own folder."""
        def worker(seed, d):
            rng, problems = random.Random(seed), []
            if True:
                for k in range(60):
                    # exec cannot pass NUL or lone surrogates
                    argv = [a.replace("\x00", "").encode("utf-8", "replace").decode() for a in rand_argv(rng)]
                    before = states(d)
                    proc = subprocess.run(ENGINE + argv, cwd=d, capture_output=True, timeout=60)
                    CASES["cli-process"] += 1
                    err = proc.stderr.decode("utf-8", "replace")
                    if proc.returncode not in (0, 2) or "Traceback" in err:
                        problems.append("%r exited %s: %s" % (argv, proc.returncode, err[-300:]))
                    elif proc.returncode and states(d) != before:
                        problems.append("failed %r changed a state file" % (argv,))
            return problems
        with rel.tmpdir() as d1, rel.tmpdir() as d2:
            self.fixture(d1)  # in this thread: cli() changes the working folder
            self.fixture(d2)
            with concurrent.futures.ThreadPoolExecutor(2) as pool:
                problems = sum(pool.map(worker, (505, 506), (d1, d2)), [])
        self.assertEqual(problems, [])



def tearDownModule():
    sys.stderr.write("\n[fuzz cases] %s, total %d\n" % (CASES, sum(CASES.values())))


if __name__ == "__main__":
    unittest.main()
