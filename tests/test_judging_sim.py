"""The judging simulator (benchmarks/judging.py): seeded, faithful to the engine, and sane at the extremes."""

import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import judging  # noqa: E402
from arena.jobs import judge_id, match_of  # noqa: E402

# A judge that sees the truth: no noise, no position bias, every real FATAL and no false one.
PERFECT = judging.PERFECT
# A judge whose error dwarfs every quality difference, and no fatal flaws anywhere.
RANDOM = judging.Judge(sigma=1000.0, bias=0.0, false_fatal=0.0, miss_fatal=0.0, fatal_share=0.0, low_conf=0, corr=0.0,
                       eq_miss=1.0, eq_false=0.0)


def plain_calls(n):
    """Spawn 1 per agent, then 2 attacks, 2 defences and 1 judge per match (the spec's cost table)."""
    return n + 5 * (n - 1)


class Reproducible(unittest.TestCase):
    def test_same_seed_same_numbers(self):
        cells = {"x": (16, judging.DEFAULT, 6, 1), "y": (7, judging.SETTINGS[4][1], None, 3)}
        first = judging.measure(cells, 12, base=3)
        self.assertEqual(first, judging.measure(cells, 12, base=3))
        self.assertNotEqual(first, judging.measure(cells, 12, base=4))

    def test_fixed_values_of_a_small_case(self):
        self.assertEqual([round(q, 6) for q in judging.field(5, 7).values()],
                         [-1.938632, 1.281243, 1.356657, 0.56788, 0.404656])
        self.assertEqual(judging.consistency(judging.DEFAULT, 2000, seed=1), 0.796)
        # (rank of the champion, calls, matches with more than one look, matches, close looks in big
        # rounds, matches of big rounds, then judge calls and matches of big, small and the last two
        # rounds, then settled early, merge shipped, equivalent looks, right ones, regret)
        self.assertEqual(judging.outcome(7, 11, judging.DEFAULT, None),
                         (1, 37, 0, 6, 0, 0, 0, 0, 3, 3, 3, 3, 0, 0, 0, 0, 0.0, 0))
        self.assertEqual(judging.outcome(16, 5, judging.DEFAULT, 6)[:16],
                         (2, 101, 10, 15, 3, 8, 11, 8, 8, 4, 6, 3, 0, 0, 0, 0))
        self.assertEqual(judging.outcome(16, 5, judging.DEFAULT, 4, 1, judging.RULES)[:16],
                         (2, 107, 9, 15, 2, 8, 10, 8, 10, 4, 11, 3, 0, 0, 0, 0))
        self.assertAlmostEqual(judging.outcome(16, 5, judging.DEFAULT, 4, 1, judging.RULES)[16], 0.835, 3)

    def test_scorecards_fit_the_rubric(self):
        for total in range(101):
            card = judging.split_total(total)
            self.assertEqual(sum(card), total)
            self.assertTrue(all(0 <= x <= top for x, top in zip(card, judging.RUBRIC_MAX)), card)
        self.assertEqual(judging.split_total(100), list(judging.RUBRIC_MAX))


class OldRules(unittest.TestCase):
    def test_the_old_rules_pair_at_random_and_stop_at_two_looks(self):
        champ, st, _, _ = judging.tournament(16, 3, judging.DEFAULT, 4, 1, judging.OLD_RULES)
        self.assertFalse(any("rated" in r for r in st["rounds"]))
        self.assertTrue(all(res.get("n", 1) <= 2 for res in st["results"].values()))
        _, new, _, _ = judging.tournament(16, 3, judging.DEFAULT, 4, 1, judging.RULES)
        self.assertTrue(any("rated" in r for r in new["rounds"]))
        self.assertTrue(any(res.get("n", 1) >= 3 for res in new["results"].values()))

    def test_the_engine_is_itself_again_afterwards(self):
        from arena import state
        before = (state.round_ratings, state.most_looks)
        judging.tournament(4, 1, judging.DEFAULT, 4, 1, judging.OLD_RULES)
        self.assertEqual((state.round_ratings, state.most_looks), before)


class Extremes(unittest.TestCase):
    def test_perfect_judge_crowns_the_best(self):
        """The champion has the field's top score; it is the best agent unless the 1-point rubric ties them."""
        distinct = 0
        for n in (2, 7, 16, 100):
            for seed in range(6):
                for recheck in (None, 6):
                    champ, st, _, _ = judging.tournament(n, seed, PERFECT, recheck, 1,
                                                      judging.RULES if recheck else judging.OLD_RULES)
                    quality = judging.field(n, seed)
                    score = {a: judging.seen_total(q) for a, q in quality.items()}
                    best = max(quality, key=quality.get)
                    self.assertEqual(score[champ], max(score.values()), (n, seed, recheck))
                    if sorted(score.values())[-2] < score[best]:
                        distinct += 1
                        self.assertEqual(champ, best, (n, seed, recheck))
        self.assertGreaterEqual(distinct, 40)  # the check above is not vacuous

    def test_random_judge_crowns_anyone(self):
        n, runs = 8, 2400
        wins = [0] * n
        for i in range(runs):
            rank = judging.outcome(n, judging.run_seed(9, n, i), RANDOM)[0]
            wins[rank - 1] += 1
        expected = runs / float(n)
        chi2 = sum((w - expected) ** 2 / expected for w in wins)
        # 7 degrees of freedom: 24.3 is the 99.9% point
        self.assertLess(chi2, 30.0, wins)


class Costs(unittest.TestCase):
    def test_no_second_look_when_recheck_is_off(self):
        for n in (2, 7, 16, 100):
            _, st, calls, _ = judging.tournament(n, 4, judging.SETTINGS[1][1], None)
            self.assertEqual(calls, plain_calls(n))
            self.assertFalse([j for j in st["jobs"] if j.endswith("-judge2")])

    def test_second_looks_are_the_only_extra_calls(self):
        for n in (2, 7, 16, 100):
            for seed in range(3):
                _, st, calls, _ = judging.tournament(n, seed, judging.DEFAULT, 6)
                looks = [j for j in st["jobs"] if j.endswith("-judge2")]
                self.assertEqual(calls, plain_calls(n) + len(looks))
                twice = sum(1 for r in st["results"].values() if r.get("n") == 2)
                self.assertEqual(len(looks), twice)
                _, st, calls, _ = judging.tournament(n, seed, judging.DEFAULT, 6, final_judges=3)
                extra = [j for j in st["jobs"] if j.endswith(("-judge2", "-judge3"))]
                self.assertEqual(calls, plain_calls(n) + len(extra))
                self.assertEqual(sum(1 for j in extra if j.endswith("-judge3")), 1)

    def test_looks_to_a_majority_are_the_only_extra_calls(self):
        for n in (2, 7, 16, 100):
            for seed in range(3):
                _, st, calls, _ = judging.tournament(n, seed, judging.DEFAULT, 4, 1, judging.RULES)
                extra = [j for j in st["jobs"] if "-judge" in j and not j.endswith("-judge")]
                self.assertEqual(calls, plain_calls(n) + len(extra))
                for res in st["results"].values():
                    self.assertLessEqual(res["n"], 5)
                    if res["n"] > 3:  # only the last two rounds go past three looks
                        self.assertIn(res["w"], [m["a"] for r in st["rounds"][-2:] for m in r["matches"]] +
                                      [m["b"] for r in st["rounds"][-2:] for m in r["matches"]])

    def test_plan_expects_the_judge_calls_the_simulator_makes(self):
        """arena.base.JUDGES_PER_MATCH, which plan uses, within 0.15 of what 60 runs of 100 agents make
        with a judge that never finds two solutions equivalent (what plan assumes)."""
        blind = dict(judging.SETTINGS)["blind to equivalence"]
        rows = [judging.outcome(100, judging.run_seed(2, 100, i), blind, 4, 1, judging.RULES)
                for i in range(60)]
        for kind, i in (("big", 6), ("small", 8), ("late", 10)):
            measured = sum(r[i] for r in rows) / float(sum(r[i + 1] for r in rows))
            self.assertAlmostEqual(measured, judging.JUDGES_PER_MATCH[kind], delta=0.15, msg=kind)

    def test_a_second_look_sees_the_pair_in_the_swapped_order(self):
        _, st, _, _ = judging.tournament(100, 2, judging.DEFAULT, 6)
        pairs = 0
        for job, out in st["summ"].items():
            if job.endswith("-judge2"):
                first = st["summ"][judge_id(match_of(job), 1)]
                self.assertEqual(out["order"], first["order"][::-1], job)
                pairs += 1
        self.assertGreater(pairs, 10)


if __name__ == "__main__":
    unittest.main()


class BenchAgree(unittest.TestCase):
    """benchmarks/bench_agree.py: its rules decide as its report says."""

    def test_agreement_decides_only_when_two_scorers_lean_one_way_and_none_the_other(self):
        import bench_agree
        exact = (0.0, 0.0, 0.0)
        self.assertEqual(bench_agree.verdict("agree", 1.0, 0.0, exact, 0.5), 1)
        self.assertEqual(bench_agree.verdict("agree", 0.0, 0.2, exact, 0.5), 0)  # within the margin
        self.assertEqual(bench_agree.verdict("none", 1.0, 0.0, exact, 0.5), 0)
        wild = (0.0, 0.0, 30.0)
        seen = set()
        for q in range(40):
            qa, qb = q / 7.0, q / 7.0 - 1
            a, b = bench_agree.scores(qa, wild), bench_agree.scores(qb, wild)
            wild_lean = bench_agree.lean(a[2], b[2], 0.5)
            seen.add(wild_lean)
            # two exact scorers lean for a: decided unless the wild one leans for b
            self.assertEqual(bench_agree.verdict("agree", qa, qb, wild, 0.5), 0 if wild_lean == -1 else 1)
            # one scorer: the first the run took, whatever the others say
            self.assertEqual(bench_agree.verdict("one", qa, qb, wild, 0.5, first=2), wild_lean)
            self.assertEqual(bench_agree.verdict("one", qa, qb, wild, 0.5, first=0), 1)
        self.assertIn(-1, seen)  # the wild scorer did lean the other way somewhere


class ScoredSettle(unittest.TestCase):
    """benchmarks/scored_settle.py: the rules it compares do what its report says."""

    def test_the_scorers_spread_holds_back_settles_the_tests_let_through(self):
        import scored_settle
        # an exact scorer (error 0) with a margin of 0.3 quality sd; every look inside it is equivalent
        rows = {rule: [scored_settle.outcome(16, judging.run_seed(7, 16, i), judging.DEFAULT, rule, 0.3, 0.0, 1.0)
                       for i in range(20)] for rule in scored_settle.RULES}
        settled = {rule: sum(r[12] for r in rows[rule]) for rule in rows}
        self.assertEqual(settled["never"], 0)
        self.assertGreater(settled["tests"], settled["scorer"])
        # the simulator is itself again afterwards
        self.assertEqual(judging.measured_groups.__module__, "judging")
