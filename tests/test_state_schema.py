"""docs/state.md names every key of the run state, and every key it names turns up in a real run.

The runs below go through every path a key belongs to (lanes and a refused Agent call, a
conductor, a baseline check, --run-code with reproducers, outputs refused until their
fallback, a judge that fails every try and a decision by hand, equivalent verdicts, a cap,
usage reports passed on); their journals are
replayed event by event through state.apply, and every state on the way is walked.
"""

import json
import os
import re
import unittest

import standin
from standin import Orchestrator, StandIn, init_run, run_here, state_of
from arena.cards import load_cards
from arena.state import apply, new_state

DOC = os.path.join(standin.ROOT, "docs", "state.md")


def documented():
    """{section title: keys its table lists} from docs/state.md."""
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    out = {}
    for section in re.split(r"^## ", text, flags=re.M)[1:]:
        title, body = section.split("\n", 1)
        keys = set()
        for first, second in re.findall(r"^\| ([^|]+) \| ([^|]+) \|", body, re.M):
            if title.strip() == "Events":
                if first.strip().startswith("`"):
                    out.setdefault("event " + first.strip().strip("`"), set()).update(
                        re.findall(r"`(\w+)`", second))
                continue
            keys |= set(re.findall(r"`(\w+)`", first))
        if keys:
            out[title.strip()] = keys
    return out


def walk(st, found):
    """Add the keys of every object in one state to found: {object: keys}."""
    def add(obj, record):
        found.setdefault(obj, set()).update(record)
    add("state", st)
    for rnd in st["rounds"]:
        add("round", rnd)
        for m in rnd["matches"]:
            add("match", m)
    for res in st["results"].values():
        add("result", res)
    for info in st["jobs"].values():
        add("job", info)
    for summary in list(st["summ"].values()) + ([st["final"]] if st["final"] else []):
        add("summary", summary)
    for wave in st["waves"]:
        add("wave", wave)
    for spend in st["spend"].values():
        add("spend", spend)
    if st["settle"]:
        add("settle", st["settle"])
    if st["merged"]:
        add("merge", st["merged"])
    if st["field"]:
        add("field", st["field"])
    for obj in ("batch", "lanes"):
        if st[obj]:
            add(obj, st[obj])


def replay(cwd, run, found):
    """Every state the run's journal passes through, walked; the events' keys too."""
    st = None
    with open(os.path.join(cwd, ".arena", run, "journal.jsonl"), encoding="utf-8") as f:
        for line in f:
            ev = json.loads(line)
            if ev["e"] == "init":
                st = new_state(ev, tuple(ev["sizes"]))
                st["seq"] = ev["seq"]
            else:
                found.setdefault("event " + ev["e"], set()).update(set(ev) - {"e", "seq"})
                apply(st, ev)
            walk(st, found)
    return st


def play(cwd, agent, run="c", wave=10):
    Orchestrator(cwd, agent, run, wave=wave, runner=run_here, usage=True).play()


class Schema(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.found = {}
        test = unittest.TestCase()
        cls.cleanups = test
        # lanes with a baseline, and one Agent call refused by the client
        cwd = init_run(test, 8, 3, "--baseline-file", "task.md", run="c")
        run_here(["next", "--run", "c"], cwd)
        run_here(["lane", "--run", "c", "--lane", "1.1", "--wait", "0"], cwd)
        run_here(["lane", "--run", "c", "--lane", "1.1", "--wait", "0", "--refused"], cwd)
        play(cwd, StandIn(cwd, seed=3))
        cls.walked(cwd, "c")
        # a conductor, switched to from lanes
        cwd = init_run(test, 5, 4, run="c")
        run_here(["next", "--run", "c", "--waves"], cwd)
        play(cwd, StandIn(cwd, seed=4))
        cls.walked(cwd, "c")
        # --run-code: attacks with reproducers, judges that re-run them
        cwd = init_run(test, 4, 5, "--run-code", "--direct", run="c")
        play(cwd, StandIn(cwd, seed=5, run_code=True, checks=False))
        cls.walked(cwd, "c")
        # refusals to the last try: a spawn that forfeits, an attack and a defence that fall
        # back, a judge refused once (a retry with fresh labels) and one refused every time
        cwd = init_run(test, 8, 6, "--direct", run="c")
        matches = state_of(cwd, "c")["rounds"][0]["matches"]
        m1, m2, m3 = matches[1], matches[2], matches[3]
        always = {"spawn-" + matches[0]["a"]: "missing",
                  "%s-atk-%s" % (m1["id"], m1["a"]): "too-many", "%s-def-%s" % (m1["id"], m1["b"]): "unanswered",
                  "%s-judge" % m3["id"]: "not-json"}
        play(cwd, StandIn(cwd, seed=6, always=always, misbehave={"%s-judge" % m2["id"]: "fields"}))
        cls.walked(cwd, "c")
        # a field every agent solved (equivalent verdicts), under a cap at the floor (budget notes),
        # a settle offer answered; a --run-code run whose probe finds two behaviours
        cwd = init_run(test, 4, 7, "--direct", "--max-calls", "19", run="c")
        play(cwd, StandIn(cwd, seed=7, equal=True, misbehave={"spawn-a002": "missing"}))
        cls.walked(cwd, "c")
        cwd = init_run(test, 8, 4, "--direct", "--run-code", run="c")
        better = {m["a"]: 90.0 for m in state_of(cwd, "c")["rounds"][0]["matches"][:1]}
        play(cwd, StandIn(cwd, seed=4, equal=True, quality=better, checks=False))
        cls.walked(cwd, "c")
        # the early look at the field: a probe of the first solutions, finished there
        cwd = init_run(test, 16, 3, "--direct", "--wave", "4", "--run-code", run="c")
        orch = Orchestrator(cwd, StandIn(cwd, seed=3, equal=True, run_code=True, checks=False), "c", wave=4,
                            runner=run_here, usage=True)
        orch.settle_answer = ["finish", "continue"]
        orch.play()
        cls.walked(cwd, "c")
        # and without --run-code, the round-1 matches among them
        cwd = init_run(test, 16, 4, "--direct", "--wave", "4", run="c")
        play(cwd, StandIn(cwd, seed=4, equal=True), wave=4)
        cls.walked(cwd, "c")
        # a merge match that ends as a tie on level looks
        cwd = init_run(test, 8, 2, "--direct", run="c")
        play(cwd, StandIn(cwd, seed=2))
        cls.walked(cwd, "c")
        # a bench whose upheld test splits the survivors of a round its judges found mostly equal
        from test_bench import BenchStandIn, split_field
        cwd = init_run(test, 8, 5, "--run-code", "--bench", "--merge", "off", "--wave", "4", "--direct", run="c")
        play(cwd, BenchStandIn(cwd, marked=split_field(cwd, "c"), equal=True), wave=4)
        cls.walked(cwd, "c")
        # and one whose judges dispute the bench's test
        cwd = init_run(test, 4, 5, "--run-code", "--bench", "--merge", "off", "--wave", "4", "--direct", run="c")
        play(cwd, BenchStandIn(cwd, equal=True, dispute=True), wave=4)
        cls.walked(cwd, "c")
        # a merge that fails every try
        cwd = init_run(test, 2, 8, "--direct", run="c")
        play(cwd, StandIn(cwd, seed=8, always={"merge": "missing"}))
        cls.walked(cwd, "c")

    @classmethod
    def tearDownClass(cls):
        cls.cleanups.doCleanups()

    @classmethod
    def walked(cls, cwd, run):
        replay(cwd, run, cls.found)

    def test_every_key_of_a_real_state_is_documented(self):
        doc = documented()
        for obj, keys in sorted(self.found.items()):
            self.assertIn(obj, doc, "docs/state.md has no table for %s" % obj)
            self.assertEqual(sorted(keys - doc[obj]), [], "keys of %s that docs/state.md does not name" % obj)

    def test_every_documented_key_turns_up(self):
        for obj, keys in sorted(documented().items()):
            self.assertEqual(sorted(keys - self.found.get(obj, set())), [],
                             "docs/state.md names keys of %s that no run here has" % obj)

    def test_the_replayed_state_is_the_saved_one(self):
        # the walk above is of real states: the last one is what state.json holds
        cwd = standin.finished(7).cwd
        self.assertEqual(replay(cwd, "t", {}), state_of(cwd, "t"))

    def test_card_indices_fit_cards_md(self):
        cards = load_cards()
        st = standin.finished(7).state()
        parts = [len(v) for v in cards.values()]
        for card in st["cards"].values():
            self.assertTrue(all(0 <= i < n for i, n in zip(card, parts)))


if __name__ == "__main__":
    unittest.main()
