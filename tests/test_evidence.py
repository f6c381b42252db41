"""Spending that follows the evidence: equivalent verdicts, and sub-agents checking their own output.

A field every agent solved (stand-ins of equal quality) is judged equivalent match by match and
takes no second looks; the independent checker recomputes it from the files. `check` reads a
job's files exactly as collect does and changes nothing. Briefs show the real rubric in their
example verdict and start attacks from the difference.
"""

import json
import os
import re
import subprocess
import unittest

import checker
import standin
from standin import ENGINE, Orchestrator, StandIn, init_run, run_cli, run_here, state_bytes, state_of
from arena.schedule import progress  # noqa: E402  (standin puts the engine on the path)


def journal_bytes(cwd, run):
    with open(os.path.join(cwd, ".arena", run, "journal.jsonl"), "rb") as f:
        return f.read()


class EqualField(unittest.TestCase):
    def test_every_match_of_an_equal_field_is_equivalent_at_its_first_look(self):
        cwd = init_run(self, 8, 3, "--direct", "--settle", "never", run="t")
        agent = StandIn(cwd, seed=3, equal=True)
        Orchestrator(cwd, agent, "t", runner=run_here).play()
        st = state_of(cwd, "t")
        judged = [r for r in st["results"].values() if r["how"] == "judge"]
        self.assertEqual(len(judged), 7)
        self.assertTrue(all(r.get("eq") and r["n"] == 1 for r in judged), judged)
        self.assertEqual(sum(1 for j in agent.calls if "-judge" in j), 7, "no judge after an equivalent first look")
        _, out, _ = run_cli(["winner", "--run", "t"], cwd)
        self.assertIn("equivalent (look 1)", out)
        checker.check_run(self, cwd, "t", st, out)

    def test_a_fatal_flag_overrides_equivalence(self):
        cwd = init_run(self, 2, 3, "--direct", run="t")
        play_until(cwd, StandIn(cwd, seed=3, equal=True), "r1-m01-judge")
        labels = state_of(cwd, "t")["jobs"]["r1-m01-judge"]["lab"][1]
        card = {c: 10 for c, _ in checker.rubric()}
        verdict = {"job": "r1-m01-judge", "scores": {labels[0]: card, labels[1]: card},
                   "fatal": {labels[0]: True, labels[1]: False}, "equivalent": True, "confidence": "high",
                   "reason": "x"}
        with open(os.path.join(cwd, ".arena", "t", "out", "r1-m01-judge.json"), "w") as f:
            json.dump(verdict, f)
        run_here(["next", "--run", "t"], cwd)
        st = state_of(cwd, "t")
        self.assertNotIn("r1-m01", st["results"], "an equivalent look that flags a FATAL is not the last")
        self.assertIn("r1-m01-judge2", st["jobs"])


def play_until(cwd, agent, job, run="t"):
    """Run next and play every job it hands out until `job` is out; leave that one unplayed."""
    while True:
        run_here(["next", "--run", run], cwd)
        issued = [j for j, i in state_of(cwd, run)["jobs"].items() if i["s"] == "issued"]
        if job in issued:
            return
        for j in issued:
            agent({"prompt": "Read .arena/%s/b/%s.md and follow it." % (run, j)})


class Settle(unittest.TestCase):
    """A round whose every judged match was equivalent: next stops and asks; the answer is journaled."""

    def offer(self, *extra, n=8, seed=3):
        cwd = init_run(self, n, seed, "--direct", *extra, run="t")
        agent = StandIn(cwd, seed=seed, equal=True)
        orch = Orchestrator(cwd, agent, "t", runner=run_here)
        out = orch.next()
        while "The field looks settled" not in out and "\nFinished." not in out:
            out = orch.step(out)
        return cwd, agent, orch, out

    def test_next_asks_with_the_evidence_and_the_cost_and_changes_nothing_until_answered(self):
        cwd, agent, orch, out = self.offer()
        self.assertIn("The field looks settled: every match of round 1 that a judge decided (4) was judged "
                      "equivalent.", out)
        self.assertRegex(out, r"Finishing the bracket would still cost about \d+ sub-agent calls, [0-9.]+[kM] tokens "
                              r"and \S+ of sub-agent time\. Finishing now makes the leader by average score so far, "
                              r"a\d+, the winner\.")
        self.assertIn("run one of: settle continue --run t | settle finish --run t", out)
        before = state_bytes(cwd, "t")
        self.assertEqual(run_here(["next", "--run", "t"], cwd)[1].splitlines()[1:], out.splitlines()[1:])
        self.assertEqual(state_bytes(cwd, "t"), before, "a settle offer waits")
        leader = re.search(r"so far, (a\d+), the winner", out).group(1)
        _, said, _ = run_here(["settle", "finish", "--run", "t"], cwd)
        self.assertIn("finished early after round 1: %s wins" % leader, said)
        out = orch.next()
        while "\nFinished." not in out:
            out = orch.step(out)
        st = state_of(cwd, "t")
        self.assertEqual((st["champion"], st["settle"]["choice"]), (leader, "finish"))
        self.assertIsNone(st["merged"], "no merge after a settled field")
        self.assertIn("merge: not tried, the field was settled (its survivors judged interchangeable)", st["cuts"])
        _, text, _ = run_cli(["winner", "--run", "t"], cwd)
        self.assertIn("finished early after round 1: every match of round 1 that a judge decided (4) was judged "
                      "equivalent; the leader by average score so far stands", text)
        self.assertEqual(run_here(["settle", "finish", "--run", "t"], cwd, check=False)[0], 2)

    def test_continue_plays_the_bracket_out_and_asks_no_more(self):
        cwd, agent, orch, out = self.offer()
        run_here(["settle", "continue", "--run", "t"], cwd)
        out = orch.next()
        while "\nFinished." not in out:
            self.assertNotIn("The field looks settled", out)
            out = orch.step(out)
        st = state_of(cwd, "t")
        self.assertEqual(st["settle"]["choice"], "continue")
        self.assertEqual(len([r for r in st["rounds"] if not r.get("merge")]), 3)

    def test_auto_finishes_and_never_does_not_ask(self):
        cwd, agent, orch, out = self.offer("--settle", "auto")
        self.assertIn("\nFinished.", out)
        self.assertEqual(state_of(cwd, "t")["settle"]["choice"], "finish")
        cwd, agent, orch, out = self.offer("--settle", "never")
        self.assertIn("\nFinished.", out)
        st = state_of(cwd, "t")
        self.assertIsNone(st["settle"])
        self.assertEqual(len([r for r in st["rounds"] if not r.get("merge")]), 3)

    def shared(self, better, *extra):
        """An 8-agent run where `better` of the 4 first-round matches are won by a better solution
        and the rest judged equivalent; played until the first settle offer or the end."""
        cwd = init_run(self, 8, 4, "--direct", "--settle", "auto", *extra, run="t")
        matches = state_of(cwd, "t")["rounds"][0]["matches"]
        agent = StandIn(cwd, seed=4, equal=True, quality={m["a"]: 90.0 for m in matches[:better]}, checks=False)
        Orchestrator(cwd, agent, "t", runner=run_here).play()
        return state_of(cwd, "t"), agent

    def test_two_thirds_of_a_round_equivalent_is_an_offer_and_half_is_not(self):
        st, agent = self.shared(1)
        self.assertEqual(st["settle"]["round"], 1)
        self.assertEqual(st["settle"]["why"], "3 of the 4 matches of round 1 that a judge decided were judged "
                                              "equivalent")
        st, agent = self.shared(2)
        self.assertNotEqual((st["settle"] or {}).get("round"), 1, "2 of 4 equivalent is no offer")
        self.assertGreaterEqual(len(st["rounds"]), 2)
        # with --run-code, 3 of 4 asks a probe instead: running the code decides
        st, agent = self.shared(1, "--run-code")
        self.assertIn("probe-r1", agent.calls)

    def test_the_progress_line_counts_the_probe_and_a_finished_run_stops_its_clock(self):
        cwd = init_run(self, 8, 4, "--direct", "--run-code", run="t")
        matches = state_of(cwd, "t")["rounds"][0]["matches"]
        agent = StandIn(cwd, seed=4, equal=True, quality={matches[0]["a"]: 90.0}, checks=False)
        orch = Orchestrator(cwd, agent, "t", runner=run_here)
        orch.play()
        self.assertIn("probe-r1", agent.calls)
        counts = [tuple(map(int, re.search(r", (\d+)/(\d+) jobs,", out).groups())) for out in orch.outputs]
        self.assertTrue(all(done <= total for done, total in counts), counts)
        self.assertEqual(counts[-1][0], counts[-1][1])
        # a finished run's elapsed time is its first hand-out to its last output, whenever asked
        st = state_of(cwd, "t")
        st["last"] = st["waves"][0]["at"] + 125
        self.assertEqual(progress(st)["elapsed"], 125)

    def probed(self, better):
        """An 8-agent --run-code run where 2 x better matches are won by a better solution and the
        rest judged equivalent: at least half, so a probe runs on the survivors."""
        cwd = init_run(self, 8, 4, "--direct", "--run-code", run="t")
        matches = state_of(cwd, "t")["rounds"][0]["matches"]
        quality = {m["a"]: 90.0 for m in matches[:better]}
        agent = StandIn(cwd, seed=4, equal=True, quality=quality, checks=False)
        orch = Orchestrator(cwd, agent, "t", runner=run_here)
        out = orch.next()
        while "The field looks settled" not in out and "\nFinished." not in out and "probe-r1" not in agent.calls:
            out = orch.step(out)
        return cwd, agent, orch, out

    def test_a_probe_that_finds_one_behaviour_makes_the_offer(self):
        # one better solution: it wins its match, the three others are equivalent; the survivors
        # are one 90 and three 75s, so the probe finds two behaviours and round 2 is paired
        cwd, agent, orch, out = self.probed(1)
        self.assertIn("probe-r1", agent.calls)
        out = orch.step(out)
        st = state_of(cwd, "t")
        self.assertEqual(st["summ"]["probe-r1"]["inputs"], 200)
        self.assertEqual(len(st["summ"]["probe-r1"]["groups"]), 2)
        self.assertIsNone(st["settle"])
        self.assertEqual(len(st["rounds"]), 2, "two behaviours: the next round is paired")
        with open(os.path.join(cwd, ".arena", "t", "b", "probe-r1.md"), encoding="utf-8") as f:
            brief = f.read()
        self.assertIn("exec --run t --job probe-r1", brief)
        self.assertIsNone(re.search(r"\ba\d{3}\b", brief), "a probe sees labels, not agent ids")

    def test_a_probe_needs_half_of_the_round_equivalent(self):
        cwd, agent, orch, out = self.probed(3)
        self.assertNotIn("probe-r1", agent.calls)


class Check(unittest.TestCase):
    def setUp(self):
        self.cwd = init_run(self, 4, 2, "--direct", run="t")
        run_here(["next", "--run", "t"], self.cwd)

    def check(self, job):
        proc = subprocess.run(ENGINE + ["check", "--run", "t", "--job", job], cwd=self.cwd, capture_output=True,
                              text=True)
        return proc.returncode, proc.stdout, proc.stderr

    def test_check_reads_as_collect_does_and_changes_nothing(self):
        before = (state_bytes(self.cwd, "t"), journal_bytes(self.cwd, "t"))
        code, out, _ = self.check("spawn-a001")
        self.assertEqual(code, 1)
        self.assertIn("not written yet: .arena/t/out/spawn-a001.md", out)
        path = os.path.join(self.cwd, ".arena", "t", "out", "spawn-a001.md")
        with open(path, "w") as f:
            f.write("my answer without the header\n")
        code, out, _ = self.check("spawn-a001")
        self.assertEqual(code, 1)
        self.assertIn("refused: .arena/t/out/spawn-a001.md must start with the line '<!-- arena job: spawn-a001 -->'",
                      out)
        with open(path, "w") as f:
            f.write("<!-- arena job: spawn-a001 -->\nmy answer\n")
        self.assertEqual(self.check("spawn-a001"), (0, "ok\n", ""))
        self.assertEqual((state_bytes(self.cwd, "t"), journal_bytes(self.cwd, "t")), before)
        self.assertTrue(os.path.exists(path), "check moves nothing aside")

    def test_check_needs_no_lock(self):
        lock = subprocess.Popen([standin.sys.executable, "-c", "import sys, time; sys.path.insert(0, %r); "
                                 "from arena.storage import RunLock; l = RunLock(sys.argv[1]); l.__enter__(); "
                                 "print('held', flush=True); time.sleep(30)" % os.path.dirname(standin.BRACKET),
                                 os.path.join(self.cwd, ".arena", "t", "lock")], stdout=subprocess.PIPE, text=True)
        self.addCleanup(lock.stdout.close)
        self.addCleanup(lock.wait)
        self.addCleanup(lock.kill)
        self.assertEqual(lock.stdout.readline().strip(), "held")
        code, out, _ = self.check("spawn-a002")
        self.assertEqual(code, 1)
        self.assertIn("not written yet", out)

    def test_a_job_not_out_is_a_usage_error(self):
        code, out, err = self.check("r1-m01-judge")
        self.assertEqual((code, out), (2, ""))
        self.assertEqual(err.count("\n"), 1)
        self.assertIn("is not handed out now", err)
        code, _, err = self.check("r9-m99-judge")
        self.assertEqual(code, 2)
        self.assertIn("has no job", err)

    def test_a_verdict_with_wrong_labels_or_keys_is_refused_with_the_reason(self):
        play = StandIn(self.cwd, seed=2)
        for job in [j for j, i in state_of(self.cwd, "t")["jobs"].items() if i["s"] == "issued"]:
            play({"prompt": "Read .arena/t/b/%s.md and follow it." % job})
        job = "r1-m01-judge"
        play_until(self.cwd, play, job)
        play({"prompt": "Read .arena/t/b/%s.md and follow it." % job})
        self.assertEqual(self.check(job)[:2], (0, "ok\n"))
        path = os.path.join(self.cwd, ".arena", "t", "out", job + ".json")
        with open(path) as f:
            v = json.load(f)
        text = json.dumps(v) + ' "reproduced": {}}'
        with open(path, "w") as f:
            f.write(text)
        code, out, _ = self.check(job)
        self.assertEqual(code, 1)
        self.assertIn("is not valid JSON", out)
        v["equivalent"] = "yes"
        with open(path, "w") as f:
            json.dump(v, f)
        self.assertIn("equivalent must be true or false", self.check(job)[1])

    def test_decided_and_open_differences_are_checked_and_decide_equivalence(self):
        play = StandIn(self.cwd, seed=2)
        job = "r1-m01-judge"
        play_until(self.cwd, play, job)
        play({"prompt": "Read .arena/t/b/%s.md and follow it." % job})
        path = os.path.join(self.cwd, ".arena", "t", "out", job + ".json")
        with open(path) as f:
            v = json.load(f)
        v.pop("equivalent", None)
        a, b = sorted(v["scores"])
        top = {c: v["scores"][a][c] for c in v["scores"][a]}
        v["scores"][b] = dict(top)
        cases = [
            ({"decided": [], "open": ["a space after the prefix"]}, 0, "ok"),
            ({"decided": [{"difference": "the empty input", "supports": a}], "open": [], "equivalent": True}, 1,
             "equivalent means no difference the task decides"),
            ({"decided": [{"difference": "the empty input", "supports": "Nobody"}], "open": []}, 1,
             "'decided' must be a list of at most 20"),
            ({"decided": [], "open": ["x"] * 21}, 1, "'open' must be a list of at most 20 strings"),
            ({"decided": [], "open": [""]}, 1, "'open' must be a list"),
        ]
        for extra, code, said in cases:
            with open(path, "w") as f:
                json.dump(dict(v, **extra), f)
            got = self.check(job)
            self.assertEqual(got[0], code, (extra, got))
            self.assertIn(said, got[1] + got[2], extra)
        # every decided difference supports one side, yet the other scores higher where they count
        low = dict(v)
        low["scores"] = {a: dict(top, correctness=top["correctness"] - 3), b: dict(top)}
        with open(path, "w") as f:
            json.dump(dict(low, decided=[{"difference": "the empty input", "supports": a}], open=[]), f)
        self.assertIn("every decided difference supports %s, yet %s scores higher" % (a, b), self.check(job)[1])


class Briefs(unittest.TestCase):
    def test_the_example_verdict_is_built_from_the_rubric_and_the_brief_ends_with_check(self):
        f = standin.finished(4)
        folder = os.path.join(f.cwd, ".arena", "t", "b")
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                text = fh.read()
            job = name[:-3]
            self.assertIn('%s check --run t --job %s`' % (" ".join(['python3', '-S', '"%s"' % standin.BRACKET]), job),
                          text)
            if "-judge" not in job:
                continue
            example = json.loads(re.search(r"^```\n(\{.*\})\n```$", text, re.M).group(1))
            self.assertEqual(example["job"], job)
            crits = [c for c, _ in checker.rubric()]
            for card in example["scores"].values():
                self.assertEqual(list(card), crits)
            self.assertIn("decided", example)
            self.assertIn("open", example)
            self.assertEqual("reproduced" in example, "## Reproducers" in text)

    def test_an_attack_starts_from_the_difference(self):
        with open(os.path.join(standin.ROOT, "skills", "arena", "briefs", "attack.md"), encoding="utf-8") as f:
            text = f.read()
        steps = text.split("## Steps")[1]
        self.assertLess(steps.index("Compare them first"), steps.index("look for the opponent's other real flaws"))


if __name__ == "__main__":
    unittest.main()
