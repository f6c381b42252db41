"""The checked merge: after the final, a challenger built from both finalists meets the winner in
a full match and ships only if it wins.

Runs are played through the command line by the product's stand-ins, which learned to merge
(the challenger's hidden quality comes from the two finalists', now and then worse); the
independent checker recomputes the merge match like every other, and the baseline check must
compare the text that ships.
"""

import json
import os
import re
import unittest

import checker
import standin
from standin import Orchestrator, StandIn, init_run, run_cli, run_here, state_of


def play(test, n, seed, *extra, **agent_args):
    cwd = init_run(test, n, seed, "--direct", *extra, run="t")
    agent = StandIn(cwd, seed=seed, **agent_args)
    orch = Orchestrator(cwd, agent, "t", runner=run_here)
    orch.play()
    return cwd, agent, state_of(cwd, "t")


class Merge(unittest.TestCase):
    def test_a_challenger_that_wins_ships_and_the_checker_agrees(self):
        cwd, agent, st = play(self, 8, 1, "--baseline-file", "task.md")
        info = st["merged"]
        self.assertEqual((info["base"], info["challenger"]), (st["champion"], "a000"))
        self.assertTrue(info["taken"])
        res = st["results"][info["match"]]
        self.assertEqual(res["w"], "a000")
        self.assertEqual(st["ship"], "a000")
        self.assertNotIn(st["champion"], st["out"], "the bracket's winner stays its champion")
        _, text, _ = run_cli(["winner", "--run", "t"], cwd)
        self.assertIn("solution: .arena/t/%s (the checked merge, which beat %s; see below)"
                      % (st["sol"]["a000"], st["champion"]), text)
        self.assertIn("checked merge: a challenger (a000) built on %s's solution took %d part" % (
            st["champion"], len(info["taken"])), text)
        self.assertIn("  TAKEN 1: %s" % info["taken"][0], text)
        self.assertIn("the challenger won the match against %s: its text ships" % st["champion"], text)
        self.assertRegex(text, r"\n%s vs a000: judge " % info["match"])
        # the baseline check judged the text that ships, and every match, the merge's too, recomputes
        with open(os.path.join(cwd, ".arena", "t", "j", "final", os.listdir(
                os.path.join(cwd, ".arena", "t", "j", "final"))[0]), encoding="utf-8") as f:
            self.assertTrue(f.read())
        mine = checker.check_run(self, cwd, "t", st, text)
        self.assertIn(info["match"], mine)
        # the report says it too; winner --report writes it and prints the winner first
        _, out, _ = run_cli(["winner", "--run", "t", "--report"], cwd)
        self.assertEqual(out, text + "report: .arena/t/report.html\n")
        with open(os.path.join(cwd, ".arena", "t", "report.html"), encoding="utf-8") as f:
            page = f.read()
        self.assertIn('id="merge"', page)
        self.assertIn("its text ships", page)

    def test_a_challenger_that_loses_leaves_the_winner_s_text(self):
        cwd, agent, st = play(self, 8, 7)
        info = st["merged"]
        self.assertEqual((st["results"][info["match"]]["w"], st["results"][info["match"]]["rule"]),
                         (st["champion"], "total"))
        self.assertEqual(st["ship"], st["champion"])
        _, text, _ = run_cli(["winner", "--run", "t"], cwd)
        self.assertIn("the challenger lost the match against %s: %s's own revised text ships"
                      % (st["champion"], st["champion"]), text)
        self.assertIn("solution: .arena/t/%s\n" % st["sol"][st["champion"]], text)
        checker.check_run(self, cwd, "t", st, text)

    def test_a_challenger_that_ties_on_equal_looks_leaves_the_winner_s_text(self):
        # seed 2: two of the merge match's three looks are level, whatever the third found
        cwd, agent, st = play(self, 8, 2)
        res = st["results"][st["merged"]["match"]]
        self.assertEqual((res["w"], res["rule"], res.get("tie"), res["n"]), (st["champion"], "equal", True, 3))
        self.assertGreater(res["tot"]["a000"] + 100, res["tot"][st["champion"]], "scores summed, yet a tie keeps it")
        self.assertEqual(st["ship"], st["champion"])
        _, text, _ = run_cli(["winner", "--run", "t"], cwd)
        self.assertIn("the match against %s was a tie on equal looks, which keeps the winner: %s's own revised text "
                      "ships" % (st["champion"], st["champion"]), text)
        self.assertIn("a tie, decided by the summed scores", text)
        checker.check_run(self, cwd, "t", st, text)

    def test_the_merge_brief_is_blind_and_says_what_it_may_not_do(self):
        cwd, agent, st = play(self, 8, 1)
        with open(os.path.join(cwd, ".arena", "t", "b", "merge.md"), encoding="utf-8") as f:
            brief = f.read()
        self.assertIn("the base solution (Base): .arena/t/j/merge/Base-solution.md", brief)
        self.assertIn("the other solution (Other): .arena/t/j/merge/Other-solution.md", brief)
        self.assertIn("attacks on it", brief)
        self.assertIn("its answers", brief)
        self.assertIn("You may not: add a claim", brief)
        self.assertIn("drop any fix either side made", brief)
        for name in os.listdir(os.path.join(cwd, ".arena", "t", "j", "merge")):
            with open(os.path.join(cwd, ".arena", "t", "j", "merge", name), encoding="utf-8") as f:
                self.assertIsNone(re.search(r"\ba\d{3}\b", f.read()), name)
        self.assertIsNone(re.search(r"\ba\d{3}\b", brief.split("## Inputs")[1]))

    def test_off_failed_empty_equivalent_or_unaffordable_and_the_winner_ships(self):
        cwd, agent, st = play(self, 4, 3, "--merge", "off")
        self.assertNotIn("merge", agent.calls)
        self.assertEqual(st["ship"], st["champion"])
        cwd, agent, st = play(self, 4, 3, always={"merge": "missing"})
        self.assertEqual(agent.calls.count("merge"), 2)
        self.assertIn("failed", st["merged"])
        self.assertEqual(st["ship"], st["champion"])
        self.assertIn("checked merge: the merge job failed", run_cli(["winner", "--run", "t"], cwd)[1])
        # the finalists equivalent: not tried
        cwd, agent, st = play(self, 4, 3, "--settle", "never", equal=True)
        self.assertNotIn("merge", agent.calls)
        self.assertIn("merge: not tried, the finalists were judged equivalent", st["cuts"])
        # a cap that pays for the bracket only
        cwd, agent, st = play(self, 4, 3, "--max-calls", "19")
        self.assertNotIn("merge", agent.calls)
        self.assertIn("merge: skipped for the budget (it needs about 6 calls)", st["cuts"])
        self.assertLessEqual(len(agent.calls), 19)

    def test_a_merge_that_takes_nothing_plays_no_match(self):
        cwd = init_run(self, 2, 1, "--direct", run="t")
        agent = StandIn(cwd, seed=1)
        orch = Orchestrator(cwd, agent, "t", runner=run_here)
        out = orch.next()
        while "merge" not in [c["description"] for c in standin.parse_wave(out)]:
            out = orch.step(out)
        head = "<!-- arena job: merge -->\n"
        for rel, text in (("out/merge.md", head), ("out/merge-sol.md", head + "the same as the winner\n")):
            with open(os.path.join(cwd, ".arena", "t", rel), "w") as f:
                f.write(text)
        out = orch.next()
        self.assertIn("\nFinished.", out)
        st = state_of(cwd, "t")
        self.assertEqual(st["merged"]["taken"], [])
        self.assertNotIn("match", st["merged"])
        self.assertEqual(st["ship"], st["champion"])
        self.assertIn("nothing of %s's (the runner-up) was worth taking" % st["merged"]["other"],
                      run_cli(["winner", "--run", "t"], cwd)[1])

    def test_a_tie_keeps_the_winner(self):
        # the merge match's one look finds the two equivalent: the challenger did not beat the
        # winner, so the winner's text ships, whatever a coin would have said
        cwd = init_run(self, 2, 3, "--direct", run="t")
        agent = StandIn(cwd, seed=3)
        out = run_here(["next", "--run", "t"], cwd)[1]
        for _ in range(30):
            jobs = [c["description"] for c in standin.parse_wave(out)]
            if "r2-m01-judge" in jobs:
                break
            for call in standin.parse_wave(out):
                agent(call)
            out = run_here(["next", "--run", "t"], cwd)[1]
        st = state_of(cwd, "t")
        champion, (order, labels) = st["champion"], st["jobs"]["r2-m01-judge"]["lab"]
        label = dict(zip(order, labels))
        # the challenger even scores a point more: equivalent still keeps the winner
        card = {c: 9 for c, _ in checker.rubric()}
        more = dict(card, correctness=10)
        with open(os.path.join(cwd, ".arena", "t", "out", "r2-m01-judge.json"), "w") as f:
            json.dump({"job": "r2-m01-judge", "scores": {label[champion]: card, label["a000"]: more},
                       "fatal": {labels[0]: False, labels[1]: False}, "equivalent": True,
                       "confidence": "high", "reason": "the same behaviour"}, f)
        out = run_here(["next", "--run", "t"], cwd)[1]
        self.assertIn("\nFinished.", out)
        st = state_of(cwd, "t")
        res = st["results"]["r2-m01"]
        self.assertEqual((res["w"], res["rule"], res.get("eq")), (champion, "equivalent", True))
        self.assertEqual(st["ship"], champion)
        text = run_cli(["winner", "--run", "t"], cwd)[1]
        self.assertIn("the match against %s was judged equivalent, which keeps the winner: %s's own "
                      "revised text ships" % (champion, champion), text)
        checker.check_run(self, cwd, "t", st, text)


if __name__ == "__main__":
    unittest.main()
