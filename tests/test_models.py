"""A mixed field (--models): the dealer's fourth part, every call on its competitor's model,
and what plan, status, winner and the report say about the models."""

import itertools
import os
import re
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "skills", "arena"))
sys.path.insert(0, HERE)

from arena.base import rng_for  # noqa: E402
from arena.cards import PARTS, card_sizes, deal_cards, deal_models, load_cards, model_counts  # noqa: E402
from arena.jobs import is_judging  # noqa: E402
from arena.state import job_model, model_of, model_table  # noqa: E402
import standin  # noqa: E402

SIZES = card_sizes(load_cards())
MIXES = ([1, 1], [2, 1], [1, 1, 1], [2, 1, 1], [3, 1], [1, 2, 3])
TASK = "Name three prime numbers.\n"


def spread(cards, models, counts):
    """The farthest any model's count among the agents of one part's value is from its share."""
    n, worst = len(cards), 0.0
    for p in range(len(PARTS)):
        by_value = {}
        for card, m in zip(cards, models):
            by_value.setdefault(card[p], [0] * len(counts))[m] += 1
        for row in by_value.values():
            for m, k in enumerate(row):
                worst = max(worst, abs(k - sum(row) * counts[m] / float(n)))
    return worst


class Dealer(unittest.TestCase):
    def test_counts_follow_the_shares_by_largest_remainder(self):
        self.assertEqual(model_counts(8, [2, 1]), [5, 3])      # 5.33 and 2.67: the larger remainder gets the one left
        self.assertEqual(model_counts(10, [1, 1, 1]), [4, 3, 3])  # a tie goes to the model listed first
        self.assertEqual(model_counts(2, [1, 1, 1]), [1, 1, 0])
        self.assertEqual(model_counts(100, [2, 1, 1]), [50, 25, 25])
        for n, mix in itertools.product(range(1, 80), MIXES):
            counts = model_counts(n, mix)
            self.assertEqual(sum(counts), n)
            for k, share in zip(counts, mix):
                self.assertLess(abs(k - n * share / float(sum(mix))), 1)

    def test_four_parts_keep_every_guarantee(self):
        cases = [(n, mix) for n in list(range(1, 41)) + [64, 100, 144, 300] for mix in MIXES if n >= len(mix)]
        cases += [(2160, [2, 1, 1]), (1000, [1, 1])]
        for n, mix in cases:
            with self.subTest(n=n, mix=mix):
                seed = n * 7 + len(mix)
                three = deal_cards(n, SIZES, rng_for(seed, "deal"))
                models = deal_models(three, mix, rng_for(seed, "deal-models"))
                counts = model_counts(n, mix)
                # every model exactly as the shares say
                self.assertEqual([models.count(m) for m in range(len(mix))], counts)
                # no two agents with the same card, four parts and three
                self.assertEqual(len({tuple(c) + (m,) for c, m in zip(three, models)}), n)
                self.assertEqual(len({tuple(c) for c in three}), n)
                # each model spread over the other parts' values in proportion
                self.assertLessEqual(spread(three, models, counts), 2.0)
                # the same seed deals the same models
                self.assertEqual(deal_models(three, mix, rng_for(seed, "deal-models")), models)

    def test_spread_is_tight_where_the_swaps_run(self):
        worst = max(spread(c, deal_models(c, mix, rng_for(n, "deal-models")), model_counts(n, mix))
                    for n in (8, 16, 32, 100) for mix in MIXES
                    for c in [deal_cards(n, SIZES, rng_for(n, "deal"))])
        self.assertLess(worst, 1.75)


class Runs(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="arena-models-")
        self.addCleanup(self.tmp.cleanup)
        self.cwd = self.tmp.name
        with open(os.path.join(self.cwd, "task.md"), "w") as f:
            f.write(TASK)

    def cli(self, *args, check=True):
        return standin.run_cli(list(args), self.cwd, check=check)

    def state(self, run):
        return standin.state_of(self.cwd, run)

    def test_the_first_three_parts_and_the_first_round_do_not_change(self):
        self.cli("init", "--agents", "24", "--seed", "5", "--task-file", "task.md", "--run", "plain")
        self.cli("init", "--agents", "24", "--seed", "5", "--task-file", "task.md", "--run", "mixed",
                 "--models", "opus:2,sonnet,haiku")
        plain, mixed = self.state("plain"), self.state("mixed")
        self.assertEqual({a: c for a, c in plain["cards"].items()},
                         {a: c[:len(PARTS)] for a, c in mixed["cards"].items()})
        self.assertEqual(plain["rounds"][0]["matches"], mixed["rounds"][0]["matches"])
        self.assertEqual(mixed["models"], [["opus", 2], ["sonnet", 1], ["haiku", 1]])
        self.assertEqual(sorted(model_of(mixed, a) for a in mixed["cards"]).count("opus"), 12)
        self.assertIsNone(plain["models"])
        self.assertEqual({model_of(plain, a) for a in plain["cards"]}, {None})

    def test_bad_mixes_are_one_line_errors(self):
        for args, words in ((["--models", "opus,gpt"], "not a model"), (["--models", "opus,opus"], "named twice"),
                            (["--models", "opus:0,haiku"], "not a share"), (["--models", "opus"], "two models"),
                            (["--models", "opus,haiku", "--model", "opus"], "pick one"),
                            (["--models", "opus,sonnet,haiku", "--agents", "2"], "haiku with no agent")):
            for cmd in ("plan", "init"):
                more = ["--task-file", "task.md", "--run", "x"] if cmd == "init" else []
                code, out, err = self.cli(cmd, *(args + more), check=False)
                with self.subTest(cmd=cmd, args=args):
                    self.assertEqual(code, 2, err)
                    self.assertIn(words, err)
                    self.assertEqual(len(err.strip().splitlines()), 1, err)
                    self.assertNotIn("Traceback", err)
        self.assertFalse(os.path.exists(os.path.join(self.cwd, ".arena", "x")))

    def test_plan_shows_the_field_and_tokens_by_model(self):
        _, out, _ = self.cli("plan", "--agents", "8", "--models", "opus:2,sonnet", "--judge-model", "haiku",
                             "--task-file", "task.md")
        self.assertIn("field by model: opus 5, sonnet 3 (of 8 agents, by shares 2:1); judges on haiku", out)
        est = re.search(r"^tokens \(estimate\): about ([\d.]+)M input.*?and (\d+)k output", out, re.M)
        split = re.search(r"^tokens by model .*: opus about ([\d.]+)M, sonnet about (\d+)k; judges about ([\d.]+)M$",
                          out, re.M)
        self.assertTrue(est and split, out)
        total = float(est.group(1)) * 1000 + int(est.group(2))
        parts = float(split.group(1)) * 1000 + int(split.group(2)) + float(split.group(3)) * 1000
        self.assertLess(abs(total - parts), 150, out)  # the same calls, rounded for print
        # 5 of 8 agents: opus gets 5/3 of sonnet's competitor tokens
        self.assertAlmostEqual(float(split.group(1)) * 1000 / int(split.group(2)), 5 / 3.0, delta=0.05)
        _, plain, _ = self.cli("plan", "--agents", "8", "--task-file", "task.md")
        self.assertNotIn("by model", plain)

    def play(self, run, mode, seed=4, n=12, mix="opus,sonnet,haiku", wave=4):
        self.cli("init", "--agents", str(n), "--seed", str(seed), "--task-file", "task.md", "--run", run,
                 "--models", mix, "--wave", str(wave), *mode)
        agent = standin.StandIn(self.cwd, seed=seed)
        orch = standin.Orchestrator(self.cwd, agent, run, wave=wave)
        orch.play()
        return agent, self.state(run)

    def test_every_call_names_its_competitors_model_in_every_loop(self):
        for mode in ((), ("--waves",), ("--direct",)):
            with self.subTest(mode=mode):
                run = "m" + "".join(mode).replace("-", "")
                agent, st = self.play(run, mode)
                self.assertIsNotNone(st["champion"])
                self.assertEqual(set(agent.models), {j for j, i in st["jobs"].items() if i["s"] == "done"})
                for job, model in agent.models.items():
                    self.assertEqual(model, job_model(st, job), job)
                    if is_judging(job):
                        self.assertIsNone(model, job)  # the judges: the session's model
                played = {m for j, m in agent.models.items() if not is_judging(j)}
                self.assertEqual(played, {"opus", "sonnet", "haiku"})
                if st["merged"]:
                    # the merge runs on the winner's model; its challenger plays on the runner-up's
                    self.assertEqual(agent.models.get("merge"), model_of(st, st["merged"]["base"]))
                    self.assertEqual(model_of(st, st["merged"]["challenger"]), model_of(st, st["merged"]["other"]))

    def test_winner_status_and_report_show_the_models(self):
        _, st = self.play("w", ("--direct",), n=16, seed=11)
        _, win, _ = self.cli("winner", "--run", "w")
        self.assertIn("model: %s\n" % model_of(st, st["champion"]), win)
        table = model_table(st)
        self.assertEqual(sum(row[3] for row in table), len(st["results"]))
        self.assertEqual(sum(row[4] for row in table), len(st["results"]))
        self.assertEqual(sum(row[1] for row in table), 16)
        self.assertEqual(sum(row[5] for row in table), sum(row[6] for row in table))
        for name, agents, alive, won, lost, won_x, lost_x in table:
            line = "  %s: %d agents, %d still in; matches won %d, lost %d (against another model: won %d, lost %d)" % (
                name, agents, alive, won, lost, won_x, lost_x)
            self.assertIn(line, win)
        _, status, _ = self.cli("status", "--run", "w")
        self.assertIn("models: a mixed field (--models opus,sonnet,haiku); judges on the session's model", status)
        self.cli("report", "--run", "w")
        with open(os.path.join(self.cwd, ".arena", "w", "report.html"), encoding="utf-8") as f:
            page = f.read()
        self.assertIn('<section id="models">', page)
        self.assertIn('<span class="part">model</span> <b>%s</b>' % model_of(st, st["champion"]), page)
        for name, agents, _, won, lost, won_x, lost_x in table:
            self.assertIn('<tr><td>%s</td><td class="n">%d</td><td class="n">%d</td><td class="n">%d</td>'
                          '<td class="n">%d</td><td class="n">%d</td></tr>' % (name, agents, won, lost, won_x, lost_x),
                          page)

    def test_the_stand_ins_play_by_model(self):
        # on opus a stand-in plays better, on haiku worse: over a few seeds opus wins more of
        # the matches between two models than haiku does
        won = {"opus": 0, "haiku": 0}
        for seed in range(6):
            _, st = self.play("s%d" % seed, ("--direct",), seed=seed, n=16, mix="opus,haiku", wave=8)
            for name, _, _, _, _, won_x, _ in model_table(st):
                won[name] += won_x
        self.assertGreater(won["opus"], won["haiku"] * 1.5, won)

    def test_demo_takes_a_mixed_field(self):
        code, out, err = standin.run_cli(["demo", "--agents", "8", "--seed", "2", "--models", "opus:1,haiku:1"],
                                         self.cwd)
        self.assertEqual(code, 0, err)
        self.assertIn("models: a mixed field (--models opus,haiku)", out)
        self.assertRegex(out, r"(?m)^model: (opus|haiku)$")


if __name__ == "__main__":
    unittest.main()
