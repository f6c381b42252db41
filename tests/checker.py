"""An independent referee for finished runs: every match recomputed from the files.

It reads the verdict files (out/<judge>.json), the judges' blinded copies (to tell which
label stood for which agent) and rubric.md, and applies the rules as docs/judging.md
states them; from the state it takes only what was drawn before
any judging: the pairings, each match's coin and the run's settings. It shares no code
with the engine, so a change to the rules in either place shows up as a difference.
"""

import json
import os
import re

import standin

RUBRIC = os.path.join(standin.ROOT, "skills", "arena", "rubric.md")
HEADER = re.compile(r"^\ufeff?<!-- arena job: [A-Za-z0-9-]+ -->[ \t]*\r?\n?")


class Mismatch(AssertionError):
    pass


def rubric():
    """[(criterion, max)] in rubric order, from rubric.md as a person reads it."""
    with open(RUBRIC, encoding="utf-8") as f:
        return [(name, int(top)) for name, top in re.findall(r"^- (\S+) \((\d+)\): ", f.read(), re.M)]


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


class Referee:
    def __init__(self, cwd, run, state):
        self.dir = os.path.join(cwd, ".arena", run)
        self.st = state
        self.crit = rubric()

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    # -- which label stood for which agent
    def judged_solution(self, mid, agent):
        """The solution file a judge of mid read for agent: this match's revision, or the last before it."""
        rnd = int(mid.split("-")[0][1:])
        for r in range(rnd, 0, -1):
            for name in sorted(os.listdir(self.path("out"))):
                if re.match(r"^r%d-m\d+-sol-%s\.md$" % (r, agent), name) and (r < rnd or name.startswith(mid + "-")):
                    return self.path("out", name)
        merged = self.st.get("merged") or {}
        if agent == merged.get("challenger"):
            return self.path("out", "merge-sol.md")
        return self.path("out", "spawn-%s.md" % agent)

    def blinded(self, src, names):
        text = HEADER.sub("", read(src), count=1).replace(self.st["fence"], "(fence line removed)")
        for agent, label in names.items():
            text = re.sub(r"\b%s\b" % agent, label, text)
        return text

    def sides_of(self, job, labels, sources):
        """{label: side} for a verdict, by matching each blinded copy with the file it came from."""
        folder = self.path("j", job)
        fits = []
        for order in (list(sources), list(reversed(list(sources)))):
            names = dict(zip([s for s in order if s in self.agents_of(job)], labels))
            ok = all(read(os.path.join(folder, "%s-solution.md" % label)) == self.blinded(sources[side], names)
                     for side, label in zip(order, labels))
            if ok:
                fits.append(dict(zip(labels, order)))
        if len(fits) == 2 and self.drawn_labels(job, labels):
            # the two solutions read the same (a field every agent solved): the labels were drawn
            # when the judge was handed out, before any verdict, and the journal holds them
            fits = [self.drawn_labels(job, labels)]
        if len(fits) != 1:
            raise Mismatch("%s: the blinded copies match %d ways of reading the labels" % (job, len(fits)))
        return fits[0]

    def drawn_labels(self, job, labels):
        """{label: side} from the journal's issue event of the try that used these labels, if any."""
        with open(self.path("journal.jsonl"), encoding="utf-8") as f:
            for line in f:
                ev = json.loads(line)
                drawn = ev.get("labels", {}).get(job) if ev["e"] == "issue" else None
                if drawn and sorted(drawn[1]) == sorted(labels):
                    return dict(zip(drawn[1], drawn[0]))
        return None

    def agents_of(self, job):
        if job == "final":
            return [self.st["champion"]]
        m = self.match(job.split("-judge")[0])
        return [m["a"], m["b"]]

    def match(self, mid):
        for rnd in self.st["rounds"]:
            for m in rnd["matches"]:
                if m["id"] == mid:
                    return m
        raise Mismatch("no match " + mid)

    def look(self, job, sources):
        """One verdict file as {side: (scores in rubric order, fatal)} plus its confidence."""
        v = json.loads(read(self.path("out", job + ".json")))
        labels = list(v["scores"])
        sides = self.sides_of(job, labels, sources)
        out = {}
        for label, side in sides.items():
            card = [v["scores"][label][c] for c, _ in self.crit]
            for (c, top), x in zip(self.crit, card):
                if not (isinstance(x, int) and 0 <= x <= top):
                    raise Mismatch("%s: %s %s=%r is outside 0..%d" % (job, label, c, x, top))
            out[side] = (card, v["fatal"][label] is True)
        # a verdict listing its decided differences is equivalent when it lists none
        same = not v["decided"] if "decided" in v else v.get("equivalent") is True
        return out, v.get("confidence", "high"), same

    # -- the rules as README.md states them
    def decide(self, cards, fatal, m):
        a, b = m["a"], m["b"]
        if fatal[a] != fatal[b]:
            return (b if fatal[a] else a), "fatal"
        ta, tb = sum(cards[a]), sum(cards[b])
        if ta != tb:
            return (a if ta > tb else b), "total"
        for i in range(len(self.crit)):
            if cards[a][i] != cards[b][i]:
                return (a if cards[a][i] > cards[b][i] else b), "criterion %d" % (i + 1)
        return m["coin"], "coin"

    def close(self, look, conf, m):
        """A first look that calls for a second: near totals, an unsure judge, or a FATAL
        flag that overturned the totals."""
        a, b = m["a"], m["b"]
        ta, tb = sum(look[a][0]), sum(look[b][0])
        if conf == "low" or abs(ta - tb) <= self.st["recheck"]:
            return True
        fa, fb = look[a][1], look[b][1]
        return fa != fb and (ta if fa else tb) >= max(ta, tb)

    def match_result(self, m, rnd):
        """What the rules say about one match: None for a match no judge decided."""
        mid = m["id"]
        files = [k for k in range(1, 10)
                 if os.path.exists(self.path("out", "%s-judge%s.json" % (mid, "" if k == 1 else k)))]
        if not files:
            return None
        sources = {x: self.judged_solution(mid, x) for x in (m["a"], m["b"])}
        looks = []
        for k in files:
            job = "%s-judge%s" % (mid, "" if k == 1 else k)
            looks.append(self.look(job, sources))
        alive = 2 * len(rnd["matches"]) + (1 if rnd["bye"] else 0)
        return self.majority_result(m, rnd, alive, looks)

    def equal_vote(self, look, eq, m):
        """A look that is an equal vote: FATAL flagged on both sides or neither, and no decided
        difference or totals within the run's equal margin."""
        sides = (m["a"], m["b"])
        margin = self.st.get("equal_margin")
        fatal = [look[x][1] for x in sides]
        if margin is None or fatal[0] != fatal[1]:
            return False
        return (eq and not any(fatal)) or abs(sum(look[m["a"]][0]) - sum(look[m["b"]][0])) <= margin

    def majority_result(self, m, rnd, alive, looks):
        """Looks to a majority: one first look (the final's panel with --final-judges 3); none
        more when it found the two equivalent and flagged no FATAL; after a first look that was an
        equal vote, a second; else a second in rounds whose judges fit in half a wave or after a
        close first, two more in rounds of at most 4 agents; then one at a time until a side has
        won a majority of the most looks (MOST_LOOKS: 3, or 5 in rounds of at most 4 agents; every
        look counts for the side it favours), equal votes are more than half of the looks (a
        tie), or the most looks are taken. Scorecards summed, a FATAL
        stands when more than half of the looks saw it."""
        sides = (m["a"], m["b"])
        matches, wave = len(rnd["matches"]), self.st["wave"]
        most = self.st["most_looks"][1 if alive <= 4 else 0]
        need = most // 2 + 1
        picks = [self.decide({x: lk[x][0] for x in sides}, {x: lk[x][1] for x in sides}, m)[0] for lk, _, _ in looks]
        equal = [self.equal_vote(lk, eq, m) for lk, _, eq in looks]
        first, conf, eq = looks[0]
        equivalent = eq and not any(fat for _, fat in first.values())

        def tie(flags):
            return len(flags) >= 2 and 2 * sum(flags) > len(flags)

        want = self.st["final_judges"] if alive == 2 and self.st["final_judges"] > 1 else 1
        if self.st["recheck"] is not None and not equivalent:
            if want == 1:
                if equal[0]:
                    want = 2 if most >= 2 else 1
                elif alive <= 4:
                    want = 3
                elif 2 * matches <= wave or self.close(first, conf, m):
                    want = 2
            while want <= len(looks) and want >= 2:
                lead = max(picks[:want].count(x) for x in sides)
                if want >= most or tie(equal[:want]) or lead >= need:
                    break
                want += 1
        if len(looks) != want:
            raise Mismatch("%s: %d looks on file, the rules ask for %d" % (m["id"], len(looks), want))
        cards = {x: [sum(lk[x][0][i] for lk, _, _ in looks) for i in range(len(self.crit))] for x in sides}
        fatal = {x: 2 * sum(1 for lk, _, _ in looks if lk[x][1]) > len(looks) for x in sides}
        winner, rule = self.decide(cards, fatal, m)
        tied = tie(equal)
        same = sum(1 for lk, _, e in looks if e and not any(f for _, f in lk.values()))
        equivalent = equivalent or tied and 2 * same > len(looks)
        if (equivalent or tied) and rnd.get("merge"):
            # the checked merge: a tie keeps the winner (side a), whatever the totals
            winner, rule = m["a"], "equivalent" if equivalent else "equal"
        tot = {x: sum(cards[x]) for x in sides}
        out = {"w": winner, "tot": tot, "n": len(looks), "rule": rule, "fatal": fatal}
        if equivalent:
            out["eq"] = True
        if tied:
            out["tie"] = True
        if self.st.get("equal_margin") is not None and len(looks) >= 2:
            out["equal"] = sum(equal)
        # what each look found, as winner and the report say it
        out["found"] = []
        for (lk, _, e), level in zip(looks, equal):
            pick, how = self.decide({x: lk[x][0] for x in sides}, {x: lk[x][1] for x in sides}, m)
            other = m["b"] if pick == m["a"] else m["a"]
            by = sum(lk[pick][0]) - sum(lk[other][0])
            if level and e and not any(f for _, f in lk.values()):
                out["found"].append("equivalent")
            elif level and by:
                out["found"].append("equal (%s by %d)" % (pick, by))
            elif level or how not in ("fatal", "total"):
                out["found"].append("equal")
            elif how == "fatal":
                out["found"].append("%s (FATAL on %s)" % (pick, other))
            else:
                out["found"].append("%s by %d" % (pick, by))
        if len(looks) >= 2:
            out["agree"] = len(set(picks)) == 1
            out["votes"] = picks.count(winner)
        return out

    def all_matches(self):
        """{match id: recomputed result} for every judged match."""
        found = {}
        for rnd in self.st["rounds"]:
            for m in rnd["matches"]:
                r = self.match_result(m, rnd)
                if r is not None:
                    found[m["id"]] = r
        return found

    def final(self):
        """(winner total, baseline total, winner fatal, baseline fatal) of the blind baseline check."""
        if not os.path.exists(self.path("out", "final.json")):
            return None
        champ = self.st.get("ship") or self.st["champion"]  # the text that ships is what the check compares
        sources = {"winner": self.path(self.st["sol"][champ]), "baseline": self.path("baseline.md")}
        v = json.loads(read(self.path("out", "final.json")))
        labels = list(v["scores"])
        sides = None
        for order in (("winner", "baseline"), ("baseline", "winner")):
            names = {champ: labels[order.index("winner")]}
            if all(read(self.path("j", "final", "%s-solution.md" % lab)) == self.blinded(sources[side], names)
                   for side, lab in zip(order, labels)):
                if sides is not None:
                    raise Mismatch("final: the blinded copies match both ways")
                sides = dict(zip(labels, order))
        if sides is None:
            raise Mismatch("final: the blinded copies match neither file")
        tot = {side: sum(v["scores"][lab][c] for c, _ in self.crit) for lab, side in sides.items()}
        fat = {side: v["fatal"][lab] for lab, side in sides.items()}
        return tot["winner"], tot["baseline"], fat["winner"], fat["baseline"]


def points(total, looks):
    value = total / float(looks or 1)
    return "%d" % value if value == int(value) else "%.1f" % value


def check_run(test, cwd, run, state, winner_text, report_html=None):
    """Recompute every match and compare with the state, `winner` and the report.

    Returns the recomputed {match id: result}, so callers can count rules and looks."""
    ref = Referee(cwd, run, state)
    mine = ref.all_matches()
    # every judged match in the state, and no other, is one the files decide the same way
    judged = {mid for mid, r in state["results"].items() if r["how"] == "judge"}
    test.assertEqual(sorted(judged), sorted(mine), "matches decided by judges")
    for mid, r in mine.items():
        got = state["results"][mid]
        for key, value in r.items():
            if key == "found":
                continue
            test.assertEqual(got.get(key), value, "%s: %s is %r in the state, %r from the files" % (
                mid, key, got.get(key), value))
    # the champion is the one player who lost no match of the bracket (the checked merge's is apart)
    merge = (state.get("merged") or {}).get("match")
    losers = {r["l"] for mid, r in state["results"].items() if mid != merge}
    # (agents the early look at the field withdrew never played)
    gone = set((state.get("field") or {}).get("withdrawn", []))
    alive = [a for a in state["cards"] if a not in losers and a not in gone]
    test.assertEqual(alive, [state["champion"]])
    champ = state["champion"]
    for mid, r in mine.items():
        m = ref.match(mid)
        if champ not in (m["a"], m["b"]):
            continue
        opp = m["b"] if champ == m["a"] else m["a"]
        line = re.search(r"^%s vs %s: (.*)$" % (mid, opp), winner_text, re.M)
        test.assertIsNotNone(line, "winner does not list " + mid)
        n = r["n"]
        test.assertIn(" %s-%s (margin %s)" % (points(r["tot"][champ], n), points(r["tot"][opp], n),
                                              points(r["tot"][champ] - r["tot"][opp], n)), line.group(1), mid)
        if r.get("eq") and n == 1:
            test.assertIn("equivalent (look 1)", line.group(1), mid)
        if n >= 2:
            how = "a tie, decided by the summed scores" if r.get("tie") else "scores summed"
            test.assertIn("%d looks: %s; %s" % (n, ", ".join(r["found"]), how), line.group(1), mid)
        if r.get("rule") == "fatal":
            test.assertIn("opponent had a verified FATAL flaw", line.group(1), mid)
    final = ref.final()
    if final is not None:
        w, b, fw, fb = final
        # a verified FATAL flaw on one side decides; otherwise the totals
        if fw != fb:
            said = "the old answer is better" if fw else "the arena answer is better"
        else:
            said = "the arena answer scored higher" if w > b else "the OLD answer scored higher" if b > w else "a tie"
        test.assertIn("baseline check (blind): arena answer %d, old answer %d: %s" % (w, b, said), winner_text)
    if report_html is not None:
        for mid, r in mine.items():
            m = ref.match(mid)
            row = re.search(r'<div class="match" id="%s" data-winner="(\w+)"[^>]*>(.*?)<div class="score">(.*?)</div>'
                            % mid, report_html, re.S)
            test.assertIsNotNone(row, "report has no row for " + mid)
            test.assertEqual(row.group(1), r["w"], mid)
            test.assertEqual(row.group(3), "%s<span>–</span>%s" % (points(r["tot"][m["a"]], r["n"]),
                                                                  points(r["tot"][m["b"]], r["n"])), mid)
    return mine
