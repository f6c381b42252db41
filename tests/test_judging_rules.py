"""Rated pairing and looks to a majority: the pure functions and the state rules around them."""

import unittest
from fractions import Fraction

import standin  # noqa: F401  (puts skills/arena on sys.path)
from standin import card
from arena.base import ArenaError, MOST_LOOKS, below, rng_for  # noqa: E402
from arena.jobs import judge_id  # noqa: E402
from arena.judging import ended_equal, equal_votes, first_looks, is_equal_vote, merge_verdicts, wants_more  # noqa: E402
from arena.estimate import packed_waves, round_jobs  # noqa: E402
from arena.pairing import forced_same_mode, make_round, rated_pairs  # noqa: E402
from arena.state import apply, judge_sides, more_looks, new_state, rating_values, ratings  # noqa: E402
from arena.wording import looks_short, looks_text, pairing_text  # noqa: E402
from arena.estimate import expected_looks  # noqa: E402


def brute_min_same(agents, modes):
    """The fewest same-mode pairs over every perfect matching (small fields only)."""
    if not agents:
        return 0
    a, rest = agents[0], agents[1:]
    return min((modes[a] == modes[b]) + brute_min_same([x for x in rest if x != b], modes) for b in rest)


class RatedPairsTest(unittest.TestCase):
    def test_fold_when_modes_allow(self):
        alive = ["a%03d" % i for i in range(1, 9)]
        modes = {a: i for i, a in enumerate(alive)}
        rating = {a: 10 - i for i, a in enumerate(alive)}  # a001 strongest
        self.assertEqual(rated_pairs(alive, modes, rating),
                         [("a001", "a008"), ("a002", "a007"), ("a003", "a006"), ("a004", "a005")])

    def test_ties_go_by_id_and_input_order_does_not_matter(self):
        alive = ["a004", "a002", "a003", "a001"]
        modes = {a: 0 for a in alive}
        modes["a004"] = 1
        rating = {a: 5 for a in alive}
        self.assertEqual(rated_pairs(alive, modes, rating), rated_pairs(sorted(alive), modes, rating))
        self.assertEqual(rated_pairs(alive, modes, rating)[0], ("a001", "a004"))

    def test_same_mode_matches_stay_minimal(self):
        for seed in range(300):
            rng = rng_for(seed, "rated")
            n = 2 + 2 * below(rng, 6)
            alive = ["a%03d" % i for i in range(1, n + 1)]
            modes = {a: below(rng, 1 + below(rng, 4)) for a in alive}
            rating = {a: Fraction(below(rng, 50), 1 + below(rng, 4)) for a in alive}
            pairs = rated_pairs(alive, modes, rating)
            self.assertEqual(sorted(x for p in pairs for x in p), alive)
            same = sum(1 for a, b in pairs if modes[a] == modes[b])
            self.assertEqual(same, brute_min_same(alive, modes), seed)
            counts = {}
            for a in alive:
                counts[modes[a]] = counts.get(modes[a], 0) + 1
            self.assertEqual(same, forced_same_mode(list(counts.values())), seed)
            for a, b in pairs:  # the first of a pair is the stronger (or equal, lower id)
                self.assertGreaterEqual((rating[a], b), (rating[b], a))

    def test_strongest_meets_weakest_of_another_mode(self):
        alive = ["a001", "a002", "a003", "a004"]
        modes = {"a001": 1, "a002": 2, "a003": 3, "a004": 1}
        rating = {"a001": 4, "a002": 3, "a003": 2, "a004": 1}
        self.assertEqual(rated_pairs(alive, modes, rating), [("a001", "a003"), ("a002", "a004")])


class RatedRoundTest(unittest.TestCase):
    def test_round_one_is_drawn_as_before(self):
        alive = ["a%03d" % i for i in range(1, 12)]
        modes = {a: i % 4 for i, a in enumerate(alive)}
        self.assertEqual(make_round(1, alive, {}, modes, 5), make_round(1, alive, {}, modes, 5, None))

    def test_bye_rule_and_coins_are_kept(self):
        alive = ["a%03d" % i for i in range(1, 8)]
        modes = {a: i % 3 for i, a in enumerate(alive)}
        rating = {a: i for i, a in enumerate(alive)}
        byes = {a: 1 for a in alive if a != "a005"}
        drawn = make_round(3, alive, byes, modes, 9)
        rated = make_round(3, alive, byes, modes, 9, rating)
        self.assertEqual(rated["bye"], "a005")  # the only agent without a bye
        self.assertEqual(drawn["bye"], rated["bye"])
        self.assertEqual([m["a"] for m in rated["matches"]], ["a007", "a006", "a004"])
        self.assertEqual([m["b"] for m in rated["matches"]], ["a002", "a001", "a003"])  # a007 and a001 share a mode
        for m in rated["matches"]:
            self.assertIn(m["coin"], (m["a"], m["b"]))
        self.assertEqual(rated, make_round(3, list(reversed(alive)), byes, modes, 9, rating))

    def test_ratings_average_every_look_and_place_the_unjudged_mid_field(self):
        self.assertEqual(rating_values({"x": [150, 2], "y": [61, 1], "z": [0, 0]}),
                         {"x": Fraction(75), "y": Fraction(61), "z": Fraction(68)})
        self.assertEqual(rating_values({"x": [0, 0]}), {"x": Fraction(0)})


def verdict(m, ta, tb, fa=False, fb=False, conf="high"):
    return {"sc": {m["a"]: card(ta), m["b"]: card(tb)}, "fat": {m["a"]: fa, m["b"]: fb}, "conf": conf}


def init(n, recheck=4, rules=("rated", list(MOST_LOOKS)), final_judges=1, wave=10, seed=3):
    return {"e": "init", "seq": 1, "run": "t", "agents": n, "seed": seed, "wave": wave, "at": 0.0,
            "fence": "=====ARENA-DATA-000000000000=====", "baseline": False, "recheck": recheck,
            "final_judges": final_judges, "pack": True, "batch_waves": 10, "mode": "direct",
            "sizes": [15, 12, 12], "pairing": rules[0], "most_looks": rules[1]}


def play(ev, judge, events=None):
    """Play a bracket in memory: judge(st, job, m) gives each verdict. Returns (state, events)."""
    st = new_state(ev, ev["sizes"])
    st["seq"] = 1
    log = []

    def put(e):
        e["seq"] = st["seq"] + 1
        log.append(e)
        apply(st, e, checked=False)
    while st["champion"] is None:
        ready = sorted(j for j, info in st["jobs"].items() if info["s"] == "ready")
        if not ready:
            put({"e": "advance", "round": len(st["rounds"])})
            continue
        for j in ready:
            kind = j.split("-")[2] if j.startswith("r") else "spawn"
            if kind == "spawn":
                out = {"sol": "out/%s.md" % j}
            elif kind == "atk":
                out = {"labels": ""}
            elif kind == "def":
                out = {"ans": ""}
            else:
                mid = "-".join(j.split("-")[:2])
                m = [x for r in st["rounds"] for x in r["matches"] if x["id"] == mid][0]
                out = judge(st, j, m)
            put({"e": "done", "job": j, "out": out})
    return st, log


def by_strength(st, job, m):
    """A judge that scores agents by their number (the highest best) with a look-dependent wobble."""
    look = int(job.rsplit("judge", 1)[1] or 1)
    wobble = {1: 3, 2: -3, 3: 1, 4: -1, 5: 0}[look]
    return verdict(m, 40 + int(m["a"][1:]) + wobble, 40 + int(m["b"][1:]) - wobble)


class LooksTest(unittest.TestCase):
    m = {"id": "r1-m01", "a": "x", "b": "y", "coin": "x"}

    def state(self, field, recheck=4, most=MOST_LOOKS, wave=10):
        matches = [{"id": "r1-m%02d" % k, "a": "x", "b": "y", "coin": "x"} for k in range(1, field // 2 + 1)]
        return {"recheck": recheck, "most_looks": list(most), "wave": wave,
                "rounds": [{"n": 1, "matches": matches, "bye": "z" if field % 2 else None}]}

    def more(self, st, looks, picks):
        return more_looks(st, self.m, looks, merge_verdicts(looks, self.m), picks)

    def test_one_look_asks_again_only_when_close(self):
        st = self.state(50)
        self.assertEqual(self.more(st, [verdict(self.m, 70, 67)], ["x"]), 1)
        self.assertEqual(self.more(st, [verdict(self.m, 70, 60)], ["x"]), 0)
        self.assertEqual(self.more(st, [verdict(self.m, 70, 60, conf="low")], ["x"]), 1)
        self.assertEqual(self.more(self.state(50, recheck=None), [verdict(self.m, 70, 67)], ["x"]), 0)

    def test_small_rounds_always_look_twice_and_the_last_two_three_times(self):
        far = [verdict(self.m, 80, 50)]
        self.assertEqual(self.more(self.state(10), far, ["x"]), 1)        # 5 matches: 2 x 5 <= W
        self.assertEqual(self.more(self.state(10, wave=9), far, ["x"]), 0)
        for field in (4, 3, 2):
            self.assertEqual(self.more(self.state(field), far, ["x"]), 2, field)
            self.assertEqual(self.more(self.state(field, wave=1), far, ["x"]), 2, field)

    def test_an_equivalent_first_look_needs_no_other_unless_a_fatal_flag_stands(self):
        same = dict(verdict(self.m, 70, 70), eq=True)
        for field in (50, 10, 4, 2):
            self.assertEqual(self.more(self.state(field), [same], ["x"]), 0, field)
        fatal = dict(verdict(self.m, 70, 70, fb=True), eq=True)
        self.assertEqual(self.more(self.state(50), [fatal], ["x"]), 1)
        self.assertEqual(self.more(self.state(4), [fatal], ["x"]), 2)
        # equivalence ends a panel's looks too: the final of --final-judges 3 with a split
        panel = [same, verdict(self.m, 70, 72), verdict(self.m, 71, 70)]
        self.assertEqual(self.more(self.state(2), panel, ["x", "y", "x"]), 0)

    def test_split_looks_get_a_third_and_no_more(self):
        st = self.state(50)
        looks = [verdict(self.m, 70, 67)] * 3
        self.assertEqual(self.more(st, looks[:2], ["x", "x"]), 0)
        self.assertEqual(self.more(st, looks[:2], ["x", "y"]), 1)
        self.assertEqual(self.more(st, looks, ["x", "y", "y"]), 0)

    def test_last_two_rounds_play_to_three_of_five(self):
        looks = [verdict(self.m, 70, 67)] * 5
        for field in (4, 3, 2):
            st = self.state(field)
            for picks, more in ((["x", "x", "x"], 0), (["x", "y", "x"], 1), (["x", "y", "x", "x"], 0),
                                (["x", "y", "x", "y"], 1), (["x", "y", "x", "y", "y"], 0)):
                self.assertEqual(self.more(st, looks[:len(picks)], picks), more, (field, picks))
        self.assertEqual(self.more(self.state(5), looks[:2], ["x", "x"]), 0)

    def test_fatal_stands_when_more_than_half_saw_it(self):
        looks = [verdict(self.m, 70, 60, fa=True), verdict(self.m, 70, 60, fa=True), verdict(self.m, 70, 60)]
        self.assertTrue(merge_verdicts(looks, self.m)["fat"]["x"])
        self.assertFalse(merge_verdicts(looks[1:], self.m)["fat"]["x"])
        self.assertEqual(sum(merge_verdicts(looks, self.m)["sc"]["x"]), 210)

    def test_first_looks(self):
        self.assertEqual(first_looks(50, 100), 1)
        self.assertEqual(first_looks(3, 7), 1)
        self.assertEqual(first_looks(1, 2), 1)
        self.assertEqual(first_looks(1, 2, final_judges=3), 3)
        self.assertEqual(first_looks(2, 4, final_judges=3), 1)

    def test_texts(self):
        m = {"id": "r1-m01", "a": "x", "b": "y", "coin": "x"}
        jobs = {"r1-m01-judge": {"s": "done"}, "r1-m01-judge2": {"s": "done"}, "r1-m01-judge3": {"s": "done"}}
        # two looks with the same totals (one of them the same scorecard), one a point apart
        summ = {"r1-m01-judge": verdict(m, 70, 70), "r1-m01-judge2": verdict(m, 71, 71),
                "r1-m01-judge3": verdict(m, 70, 69)}
        st = {"jobs": jobs, "summ": summ}
        self.assertEqual(looks_text(st, m, {"how": "judge", "n": 3, "agree": True, "votes": 3, "w": "x", "l": "y"}),
                         "3 looks: equal, equal, x by 1; scores summed")
        self.assertEqual(looks_short(st, m, {"how": "judge", "n": 3, "w": "x", "l": "y"}), "3 looks, 1-0, 2 equal")
        one = {"jobs": {"r1-m01-judge": {"s": "done"}}, "summ": {"r1-m01-judge": dict(verdict(m, 70, 70), eq=True)}}
        self.assertEqual(looks_text(one, m, {"how": "judge", "n": 1, "eq": True}), "equivalent (look 1)")
        self.assertEqual(looks_text(one, m, {"how": "judge", "n": 1}), "")
        fatal = {"jobs": jobs, "summ": {"r1-m01-judge": verdict(m, 60, 70, fb=True), "r1-m01-judge2": verdict(m, 70, 60),
                                        "r1-m01-judge3": verdict(m, 60, 70)}}
        self.assertEqual(looks_text(fatal, m, {"how": "judge", "n": 3}),
                         "3 looks: x (FATAL on y), x by 10, y by 10; scores summed")
        rnd = {"rated": [["a007", 150, 2], ["a003", 0, 0], ["a001", 61, 1]]}
        self.assertEqual(pairing_text(rnd, {"a": "a007", "b": "a001"}),
                         "paired strongest-with-weakest by average score so far: a007 1st of 3 (average 75) "
                         "vs a001 3rd of 3 (average 61)")
        self.assertIn("a003 2nd of 3 (no looks yet", pairing_text(rnd, {"a": "a003", "b": "a001"}))
        self.assertEqual(pairing_text({}, {"a": "a007", "b": "a001"}), "")


class EqualVotesTest(LooksTest):
    """A look is an equal vote when it found no decided difference or its totals are within the
    margin (FATAL flagged alike); equal votes that outnumber the rest end the match as a tie.
    Every look also counts for the side it favours."""

    def more(self, st, looks, picks, margin=0):
        return more_looks(st, self.m, looks, merge_verdicts(looks, self.m), picks, equal_votes(looks, self.m, margin))

    def test_what_counts_as_an_equal_vote(self):
        self.assertTrue(is_equal_vote(verdict(self.m, 70, 70), self.m, 0))
        self.assertFalse(is_equal_vote(verdict(self.m, 70, 71), self.m, 0))
        self.assertTrue(is_equal_vote(verdict(self.m, 70, 72), self.m, 2))
        self.assertTrue(is_equal_vote(dict(verdict(self.m, 90, 60), eq=True), self.m, 0), "equivalent, whatever the totals")
        self.assertFalse(is_equal_vote(verdict(self.m, 70, 70, fa=True), self.m, 0), "a FATAL on one side decides")
        self.assertTrue(is_equal_vote(verdict(self.m, 70, 70, fa=True, fb=True), self.m, 0))
        self.assertFalse(is_equal_vote(verdict(self.m, 70, 70), self.m, None), "a run from before equal votes")
        self.assertEqual(equal_votes([verdict(self.m, 70, 60), verdict(self.m, 70, 70)], self.m, 0), [False, True])

    def test_an_equal_first_look_gets_one_more_everywhere(self):
        level = [verdict(self.m, 70, 70)]
        for field in (50, 10, 4, 2):
            self.assertEqual(self.more(self.state(field), level, ["x"]), 1, field)
        self.assertEqual(self.more(self.state(4, most=(3, 1)), level, ["x"]), 0, "no second look allowed")
        self.assertEqual(self.more(self.state(4), [verdict(self.m, 70, 71)], ["y"]), 2, "a point apart is a pick")

    def test_two_equal_votes_end_a_match_in_the_last_two_rounds(self):
        looks = [verdict(self.m, 70, 70), verdict(self.m, 72, 72)]
        for field in (4, 2):
            self.assertEqual(self.more(self.state(field), looks, ["x", "x"]), 0, field)
        # an equal look, then one that picks: on to three of five, the equal one counting for its side
        looks = [verdict(self.m, 70, 70), verdict(self.m, 70, 60)]
        self.assertEqual(self.more(self.state(4), looks, ["x", "x"]), 1)

    def test_a_tie_needs_more_than_half_of_the_looks(self):
        self.assertTrue(ended_equal([True, True]))
        self.assertTrue(ended_equal([False, True, True]))
        self.assertFalse(ended_equal([True, False]))
        self.assertFalse(ended_equal([True]))
        self.assertFalse(ended_equal([False, True, True, False]))

    def test_looks_go_on_until_a_majority_or_a_tie(self):
        sides = ("x", "y")
        self.assertTrue(wants_more(["x", "x"], sides, 5, [True, False]))
        self.assertFalse(wants_more(["x", "y", "y"], sides, 5, [False, True, True]), "a tie")
        self.assertFalse(wants_more(["x", "x", "x"], sides, 5, [True, False, False]), "a majority of five")
        self.assertFalse(wants_more(["x", "y", "x"], sides, 3, [False, True, False]), "the most looks are in")
        # without equal votes the rule is the old one: until a side has a majority of the most looks
        for picks in (["x", "y"], ["x", "y", "x", "y"]):
            self.assertTrue(wants_more(picks, sides, 5), picks)

    def test_a_tie_is_decided_by_the_summed_scores_and_said_so(self):
        st = new_state(dict(init(2), equal_margin=0), (15, 12, 12))
        st["seq"] = 1
        m = st["rounds"][0]["matches"][0]
        for k, (ta, tb) in enumerate(((70, 70), (72, 72)), 1):
            job = judge_id(m["id"], k)
            apply(st, {"e": "done", "job": job, "out": verdict(m, ta, tb), "seq": st["seq"] + 1}, checked=False)
        res = st["results"][m["id"]]
        self.assertEqual((res["n"], res.get("tie"), res.get("eq"), res["equal"]), (2, True, None, 2))
        self.assertIn("2 looks: equal, equal; a tie, decided by the summed scores", looks_text(st, m, res))


class BracketTest(unittest.TestCase):
    def test_the_strongest_meet_late_and_every_match_is_explained(self):
        st, _ = play(init(16), by_strength)
        self.assertEqual(st["champion"], "a016")
        final = st["rounds"][-1]["matches"][0]
        self.assertEqual(sorted((final["a"], final["b"])), ["a015", "a016"])
        for rnd in st["rounds"][1:]:
            self.assertEqual(len(rnd["rated"]), 2 * len(rnd["matches"]))
            order = [row[0] for row in rnd["rated"]]
            self.assertEqual((rnd["matches"][0]["a"], rnd["matches"][0]["b"]), (order[0], order[-1]))
        for mid, res in st["results"].items():
            looks = [k for k in range(1, 10) if judge_id(mid, k) in st["jobs"]]
            self.assertEqual(looks, list(range(1, res["n"] + 1)), mid)

    def test_same_verdicts_same_bracket_and_the_journal_rebuilds_it(self):
        st1, log = play(init(23), by_strength)
        st2, _ = play(init(23), by_strength)
        self.assertEqual(st1, st2)
        again = new_state(init(23), [15, 12, 12])
        again["seq"] = 1
        for e in log:
            apply(again, e, checked=False)
        self.assertEqual(again, st1)

    def test_split_looks_in_the_final_go_to_five(self):
        def stubborn(st, job, m):
            look = int(job.rsplit("judge", 1)[1] or 1)
            if len(st["rounds"]) < 3:
                return by_strength(st, job, m)
            # looks alternate sides; b wins looks 1 and 3 by 1 point, a wins 2 and 4 by 10, 5 by 1
            gap = {1: -1, 2: 10, 3: -1, 4: 10, 5: 1}[look]
            return verdict(m, 60 + gap, 60)
        st, _ = play(init(4), stubborn)
        res = st["results"][st["rounds"][-1]["matches"][0]["id"]]
        self.assertEqual((res["how"], res["n"], res["agree"]), ("judge", 5, False))
        self.assertEqual(res["votes"], 3)

    def test_later_looks_alternate_the_order(self):
        st, _ = play(init(4), by_strength)
        mid = st["rounds"][-1]["matches"][0]["id"]
        orders = [judge_sides(st, judge_id(mid, k), 1)[0] for k in range(1, 6)]
        self.assertEqual(orders[1], orders[0][::-1])
        self.assertEqual(orders[2], orders[0])
        self.assertEqual(orders[3], orders[1])
        names = [judge_sides(st, judge_id(mid, k), 1)[1] for k in range(1, 4)]
        self.assertFalse(set(names[0]) & set(names[2]))

    def test_a_run_under_the_old_rules_is_refused_in_one_line(self):
        with self.assertRaises(ArenaError) as caught:
            new_state(init(16, rules=("drawn", None)), [15, 12, 12])
        self.assertIn("older bracket.py", str(caught.exception))

    def test_ratings_count_every_look(self):
        st, _ = play(init(8), by_strength)
        rated = ratings(st, sorted(st["cards"]))
        looks = sum(1 for j, info in st["jobs"].items() if "-judge" in j and info["s"] == "done")
        self.assertEqual(sum(k for _, k in rated.values()), 2 * looks)


class PlanTest(unittest.TestCase):
    def test_judges_in_the_wave_plan(self):
        jobs = round_jobs(7, 1, None, 10, (3, 3.8))
        judges = sorted(j for j in jobs if j.startswith(("j", "k")))
        self.assertEqual(judges, ["j0", "k0-2", "k0-3", "k0-4"])
        self.assertEqual(jobs["k0-4"][1], ["j0", "k0-2", "k0-3"])
        self.assertEqual(round_jobs(7, 4, None, 10, (1, 1.0)), round_jobs(7, 4, None, 10))
        self.assertGreaterEqual(packed_waves(100, 10, most_looks=MOST_LOOKS)[0], packed_waves(100, 10)[0])

    def test_expected_looks(self):
        # 100 agents, W=10: rounds of 50, 25, 12, 6 matches judged once unless close or split,
        # then 3 matches two at a time, then the last two rounds to three of five
        self.assertEqual(expected_looks(100, 10), 46)


if __name__ == "__main__":
    unittest.main()
