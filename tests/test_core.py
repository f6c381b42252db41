"""The pure core: dealer, pairing, byes, scoring, plan arithmetic."""

import itertools
import unittest
from collections import Counter

import standin  # noqa: F401  (puts skills/arena on sys.path)
from arena.base import ArenaError, below, rng_for  # noqa: E402
from arena.cards import deal_cards, load_rubric  # noqa: E402
from arena.pairing import make_round, pair_survivors  # noqa: E402
from arena.estimate import field_sizes, list_schedule, packed_waves, plan_rows, round_jobs  # noqa: E402
from arena.judging import decide, is_close, merge_verdicts  # noqa: E402
from arena.outputs import BadOutput, parse_verdict  # noqa: E402
from arena.estimate import (BRIEF_TOKENS, CLIENT_TOKENS, RUN_CODE_TOKENS, TURNS, estimate_tokens,  # noqa: E402
                            job_counts)

SIZES = (15, 12, 12)


def counts_even(values):
    c = Counter(values)
    return max(c.values()) - min(c.values()) <= 1 if c else True


class DealerTest(unittest.TestCase):
    def check(self, n, seed):
        cards = deal_cards(n, SIZES, rng_for(seed, "deal"))
        self.assertEqual(len(cards), n)
        self.assertEqual(len({tuple(c) for c in cards}), n, "duplicate card for n=%d seed=%d" % (n, seed))
        for part, size in enumerate(SIZES):
            values = [c[part] for c in cards]
            self.assertTrue(all(0 <= v < size for v in values))
            full = Counter(values)
            for v in range(size):
                full.setdefault(v, 0)
            self.assertLessEqual(max(full.values()) - min(full.values()), 1,
                                 "part %d uneven for n=%d seed=%d: %s" % (part, n, seed, full))
        if n <= 144:
            for i, j in ((0, 1), (0, 2), (1, 2)):
                pairs = [(c[i], c[j]) for c in cards]
                self.assertEqual(len(set(pairs)), n, "two agents share parts %d,%d (n=%d seed=%d)" % (i, j, n, seed))

    def test_every_n_up_to_144_over_several_seeds(self):
        for seed in (0, 1, 2, 99):
            for n in range(1, 145):
                self.check(n, seed)

    def test_sample_of_large_fields(self):
        for n in (145, 146, 200, 287, 288, 500, 1000, 1439, 1440, 1441, 2000, 2159, 2160):
            self.check(n, 5)

    def test_out_of_range(self):
        for n in (0, 2161, -3):
            with self.assertRaises(ArenaError):
                deal_cards(n, SIZES, rng_for(1, "deal"))

    def test_fixed_values_for_reproducibility(self):
        # The same seed must give the same cards and round on every Python 3.8+.
        self.assertEqual(deal_cards(5, SIZES, rng_for(0, "deal")),
                         [[8, 9, 1], [0, 10, 3], [2, 5, 6], [10, 7, 10], [14, 8, 7]])
        self.assertEqual(deal_cards(5, SIZES, rng_for(7, "deal")),
                         [[14, 10, 10], [3, 9, 7], [0, 2, 5], [5, 3, 1], [11, 11, 11]])
        rnd = make_round(1, ["a001", "a002", "a003", "a004", "a005"], {},
                                 {"a001": 0, "a002": 0, "a003": 1, "a004": 2, "a005": 0}, 7)
        self.assertEqual(rnd, {"n": 1, "bye": "a001", "matches": [
            {"id": "r1-m01", "a": "a002", "b": "a004", "coin": "a004"},
            {"id": "r1-m02", "a": "a003", "b": "a005", "coin": "a003"}]})

    def test_different_seeds_differ(self):
        a = deal_cards(50, SIZES, rng_for(1, "deal"))
        b = deal_cards(50, SIZES, rng_for(2, "deal"))
        self.assertNotEqual(a, b)


def min_same_mode_pairs(modes):
    """The unavoidable number of same-mode pairs for an even multiset."""
    c = Counter(modes)
    biggest = max(c.values())
    return max(0, 2 * biggest - len(modes)) // 2


class PairingTest(unittest.TestCase):
    def test_same_mode_matches_are_minimal(self):
        for seed in range(300):
            rng = rng_for(seed, "t")
            n = 2 + 2 * below(rng, 20)
            k = 1 + below(rng, 6)
            alive = ["a%03d" % i for i in range(1, n + 1)]
            modes = {a: below(rng, k) for a in alive}
            pairs = pair_survivors(alive, modes, rng)
            self.assertEqual(sorted(x for p in pairs for x in p), sorted(alive))
            same = sum(1 for a, b in pairs if modes[a] == modes[b])
            self.assertEqual(same, min_same_mode_pairs(list(modes.values())), "seed %d" % seed)

    def test_bye_fairness_over_whole_brackets(self):
        for seed in range(40):
            for n in (3, 5, 7, 13, 25, 99, 100):
                byes, alive = {}, ["a%03d" % i for i in range(1, n + 1)]
                rng = rng_for(seed, n)
                modes = {a: below(rng, 15) for a in alive}
                number = 0
                while len(alive) > 1:
                    number += 1
                    rnd = make_round(number, alive, byes, modes, seed)
                    if len(alive) % 2:
                        self.assertIsNotNone(rnd["bye"])
                        fewest = min(byes.get(a, 0) for a in alive)
                        self.assertEqual(byes.get(rnd["bye"], 0), fewest,
                                         "second bye while another alive agent had fewer")
                        byes[rnd["bye"]] = byes.get(rnd["bye"], 0) + 1
                    else:
                        self.assertIsNone(rnd["bye"])
                    self.assertEqual(len(rnd["matches"]), len(alive) // 2)
                    # random winners
                    winners = [m["a"] if below(rng, 2) else m["b"] for m in rnd["matches"]]
                    alive = sorted(winners + ([rnd["bye"]] if rnd["bye"] else []))

    def test_bye_taken_from_largest_mode_group(self):
        alive = ["a001", "a002", "a003", "a004", "a005"]
        modes = {"a001": 1, "a002": 1, "a003": 1, "a004": 2, "a005": 3}
        for seed in range(20):
            rnd = make_round(1, alive, {}, modes, seed)
            self.assertEqual(modes[rnd["bye"]], 1)
            same = sum(1 for m in rnd["matches"] if modes[m["a"]] == modes[m["b"]])
            self.assertEqual(same, 0)


class ScoringTest(unittest.TestCase):
    m = {"a": "a001", "b": "a002", "coin": "a002"}

    def verdict(self, sa, sb, fa=False, fb=False):
        return {"sc": {"a001": sa, "a002": sb}, "fat": {"a001": fa, "a002": fb}, "conf": "high"}

    def test_fatal_beats_totals(self):
        v = self.verdict([30, 25, 20, 15, 10], [1, 1, 1, 1, 1], fa=True)
        self.assertEqual(decide(v, self.m, 5), ("a002", "fatal"))

    def test_both_fatal_falls_back_to_totals(self):
        v = self.verdict([20, 20, 10, 10, 5], [1, 1, 1, 1, 1], fa=True, fb=True)
        self.assertEqual(decide(v, self.m, 5), ("a001", "total"))

    def test_tie_breaks(self):
        v = self.verdict([20, 10, 10, 10, 5], [19, 11, 10, 10, 5])
        self.assertEqual(decide(v, self.m, 5), ("a001", "criterion 1"))
        v = self.verdict([20, 10, 10, 10, 5], [20, 10, 10, 10, 5])
        self.assertEqual(decide(v, self.m, 5), ("a002", "coin"))

    def test_merge_sums_and_needs_both_fatals(self):
        v1 = self.verdict([10, 10, 10, 10, 5], [12, 10, 10, 10, 5], fa=True)
        v2 = self.verdict([14, 10, 10, 10, 5], [10, 10, 10, 10, 5])
        merged = merge_verdicts([v1, v2], self.m)
        self.assertEqual(merged["sc"]["a001"], [24, 20, 20, 20, 10])
        self.assertFalse(merged["fat"]["a001"])
        self.assertEqual(decide(merged, self.m, 5)[0], "a001")

    def test_close(self):
        self.assertTrue(is_close(self.verdict([20, 20, 10, 10, 5], [20, 20, 10, 10, 1]), self.m, 6))
        self.assertFalse(is_close(self.verdict([29, 20, 10, 10, 5], [10, 20, 10, 10, 1]), self.m, 6))
        low = self.verdict([29, 20, 10, 10, 5], [10, 20, 10, 10, 1])
        low["conf"] = "low"
        self.assertTrue(is_close(low, self.m, 6))
        # a FATAL flag that overturned the totals is worth a second look
        self.assertTrue(is_close(self.verdict([29, 20, 10, 10, 5], [10, 20, 10, 10, 1], fa=True), self.m, 6))
        self.assertFalse(is_close(self.verdict([29, 20, 10, 10, 5], [10, 20, 10, 10, 1], fb=True), self.m, 6))

    def test_parse_verdict_checks_maxima(self):
        rubric = load_rubric()
        good = {"job": "r1-m01-judge", "scores": {"K": dict(zip([c for c, _, _ in rubric], [30, 25, 20, 15, 10])),
                                                  "Q": dict(zip([c for c, _, _ in rubric], [0, 0, 0, 0, 0]))},
                "fatal": {"K": False, "Q": True}, "confidence": "low", "reason": "r"}
        import json
        v = parse_verdict(json.dumps(good), "r1-m01-judge", ["K", "Q"], rubric, "p")
        self.assertEqual(v["sc"]["K"], [30, 25, 20, 15, 10])
        good["scores"]["K"]["correctness"] = 34
        with self.assertRaisesRegex(BadOutput, "correctness is 34, max is 30"):
            parse_verdict(json.dumps(good), "r1-m01-judge", ["K", "Q"], rubric, "p")


class PlanTest(unittest.TestCase):
    SPEC = {1: (1, 1), 2: (7, 4), 7: (37, 10), 8: (43, 10), 16: (91, 16), 32: (187, 28), 100: (595, 70),
            144: (859, 100), 2160: (12955, 1309)}

    def test_totals_match_the_spec(self):
        for n, (calls, waves) in self.SPEC.items():
            rows = plan_rows(n, 10)
            self.assertEqual((sum(r[4] for r in rows), sum(r[5] for r in rows)), (calls, waves), "n=%d" % n)

    def test_field_sizes(self):
        self.assertEqual(field_sizes(100), [100, 50, 25, 13, 7, 4, 2, 1])
        self.assertEqual(field_sizes(1), [1])

    def test_packed_never_worse(self):
        for n, w in itertools.product((2, 3, 7, 16, 25, 33, 100, 144), (1, 3, 10, 20)):
            packed, bound = packed_waves(n, w)
            self.assertLessEqual(packed, sum(r[5] for r in plan_rows(n, w)))
            self.assertGreaterEqual(packed, bound)

    def test_round_of_25_packs_into_6_waves(self):
        self.assertEqual(len(list_schedule(round_jobs(3, 12), 10)), 6)

    def test_token_estimate_arithmetic(self):
        calls = {"spawn": 2, "atk": 2, "def": 2, "judge": 1, "final": 0}
        size = {"solution": 100, "attack": 10, "defence": 5, "verdict": 1}
        tin, tout, _ = estimate_tokens(calls, 50, size)
        fixed = {k: TURNS * (CLIENT_TOKENS + BRIEF_TOKENS[k] + 50) for k in calls}
        self.assertEqual(tin, sum(calls[k] * fixed[k] for k in calls) + 2 * 200 + 2 * 110 + 1 * 2 * 115)
        with_code, _, _ = estimate_tokens(calls, 50, size, run_code=True)
        self.assertEqual(with_code - tin, TURNS * sum(calls[k] * RUN_CODE_TOKENS[k] for k in calls))
        self.assertEqual(tout, 2 * 100 + 2 * 10 + 2 * 105 + 1)
        self.assertEqual(job_counts(100, 10, True, False),
                         {"spawn": 100, "atk": 198, "def": 198, "judge": 99, "final": 1})


if __name__ == "__main__":
    unittest.main()
