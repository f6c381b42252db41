"""The HTML report of one arena run (`bracket.py report`); it reads the state, never changes it.

write_report(ctx) writes .arena/<run>/report.html: one self-contained page (the
CSS and JavaScript of report.css and report.js beside this file, inlined; no network) with the
winner's path at the top, the baseline check, the bracket round by round,
every agent's card and links to every file the run wrote. It works on a run
in progress too: undecided matches show as pending.

Everything read from a file a sub-agent wrote is escaped: it is untrusted.
Standard library only, Python 3.8 or newer.
"""

import html
import json
import os
import re
import time

from .attacks import SEVERITY
from .base import ArenaError, read_text
from .cards import PARTS, card_names, load_cards, load_rubric
from .estimate import field_sizes
from .jobs import DONE, attack_id, defence_id, job_kind, judge_id, revision_file, round_of
from .state import alive_agents, bracket_rounds, card_of, entered, find_match, looks_of, model_of, model_table, opponent, path_of
from .storage import atomic_write
from .outputs import HEADER, attacks_on
from .budget import ORCHESTRATION, SPEND_KINDS
from .bench import best_first
from .wording import (SPEND_NAMES, fmt_figure, grouped_text, baseline_verdict, budget_lines, unplayed_lines, fatal_note, fixes_text, judges_on, looks_short, looks_text,
                      match_bench_lines, merge_lines, minutes, mix_text, pairing_text, points, progress_line, reproducer_note, spend_lines,
                      tokens)

# Rounds with more matches than this start collapsed, so 2,160 agents stay usable.
OPEN_ROUND_MAX = 32
# The winning solution is shown inline up to this size; the link has all of it.
SHOWN_SOLUTION_CHARS = 200000
SHOWN_TASK_CHARS = 20000
# The bracket picture shows at most this many last rounds, each of at most TREE_MAX matches.
TREE_ROUNDS = 4
TREE_MAX = 8
HOW = {"judge": "judge", "forfeit": "forfeit", "record": "by hand"}
ANSWERS = {"C": ("conceded and fixed", "c"), "R": ("rebutted", "r")}


def esc(text):
    return html.escape("%s" % (text,), quote=True)


# How the report names the sides of the final check in place of the judge's labels.
FINAL_SIDES = {"winner": "the arena answer", "baseline": "the old answer"}


def shortened(text, limit):
    """text cut to at most limit characters at a word boundary, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    if not text[limit - 1].isspace() and " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:-") + "\u2026"


def unblind(text, names):
    """A judge's text with each blind label replaced by the side it stood for (an agent id,
    or the arena answer / the old answer in the final check). Unchanged without the labels."""
    for label, side in sorted((names or {}).items()):
        text = re.sub(r"\b%s\b" % re.escape(label), FINAL_SIDES.get(side, side), text)
    return text


def write_report(ctx):
    """Write report.html for the run atomically; returns its path."""
    path = ctx.run.path("report.html")
    atomic_write(path, render(ctx))
    return path


def render(ctx):
    return Report(ctx).page()


def asset(name):
    """report.css or report.js, as the page inlines it."""
    return "\n" + read_text(os.path.join(os.path.dirname(os.path.abspath(__file__)), name))


class Report:
    """The page of one run: a pass over the state, reading only the files it shows."""

    def __init__(self, ctx):
        self.ctx, self.run, self.st = ctx, ctx.run, ctx.st
        run, st = ctx.run, ctx.st
        # cards.md as it is now, even if it changed since the run began: the report shows what it can
        self.cards = load_cards()
        self.rubric = load_rubric()
        try:
            self.files = set(os.listdir(run.path("out")))
        except OSError:
            self.files = set()
        try:  # outputs refused and moved aside, named <job>.try<N>.<ext>
            self.refused = sorted(os.listdir(run.path("out", "refused")))
        except OSError:
            self.refused = []
        self.champ = st["champion"]
        self.path_ids = {m["id"] for m, _ in path_of(st, self.champ)} if self.champ else set()
        self.lost_in = {res["l"]: mid for mid, res in st["results"].items()}

    # -- small pieces
    def card(self, agent):
        """The card's three part names, or its raw indices if cards.md changed since."""
        try:
            return card_names(self.cards, card_of(self.st, agent))
        except (IndexError, KeyError, TypeError):
            return ["part %s" % i for i in self.st["cards"].get(agent, [])]

    def link(self, rel, text, cls=None):
        """A relative link to a file under out/ if it exists, else nothing."""
        if not rel.startswith("out/") or rel[4:] not in self.files:
            return ""
        return '<a href="%s"%s>%s</a>' % (esc(rel), ' class="%s"' % cls if cls else "", text)

    def looks(self, mid):
        """The scorecards of every judge of a match that reported, in order."""
        return looks_of(self.st, mid)

    def reason(self, job):
        """A judge's one-line reason, read from its verdict file (the state keeps only scores),
        with the blind labels it was written with turned back into the agents they stood for."""
        names = self.st["summ"].get(job, {}).get("names")
        try:
            with open(self.run.path("out", job + ".json"), encoding="utf-8") as f:
                v = json.load(f)
            why, scores = v.get("reason", ""), v.get("scores")
        except (OSError, ValueError, AttributeError):
            return ""
        if names and isinstance(scores, dict) and set(scores) != set(names):
            # another try of the judge wrote its file after the verdict that counted was read
            return "(its verdict file was rewritten by another try of this judge; the scores shown are the ones that counted)"
        return unblind(why[:300], names) if isinstance(why, str) else ""

    def read_solution(self, rel):
        try:
            text = read_text(self.run.path(rel))
        except ArenaError:
            return None
        return HEADER.sub("", text, count=1)

    def task_text(self):
        try:
            return read_text(self.run.path("task.md"))
        except ArenaError:
            return ""

    # -- the page
    def page(self):
        st = self.st
        task = self.task_text()
        first = next((line.strip() for line in task.splitlines() if line.strip()), "(no task.md)")
        title = "Arena %s: %s" % (st["run"], shortened(first, 80))
        body = [self.header(first, task), self.winner(), self.merge(), self.baseline(), self.solution(), self.bracket(),
                self.bench(), self.spend(), self.models(),
                self.agents(), self.glossary(), '<footer>Written by bracket.py report at %s. Links are relative to this file.'
                '</footer>' % esc(time.strftime("%Y-%m-%d %H:%M"))]
        return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                "<title>%s</title><style>%s</style></head><body><main>%s</main><script>%s</script></body></html>\n"
                % (esc(title), asset("report.css"), "\n".join(b for b in body if b), asset("report.js")))

    def header(self, first, task):
        st = self.st
        bracket = bracket_rounds(st)
        decided = sum(1 for r in bracket for m in r["matches"] if m["id"] in st["results"])
        matches = sum(len(r["matches"]) for r in bracket)
        n = entered(st)
        rounds = len(field_sizes(n)) - 1
        if self.champ:
            status = '<span class="pill win">winner %s</span>' % esc(self.champ)
        else:
            status = '<span class="pill live">in progress</span>'
        agents = st["agents"] if n == st["agents"] else "%d of %d (the rest withdrawn)" % (n, st["agents"])
        facts = [("run", st["run"]), ("seed", st["seed"]), ("agents", agents),
                 ("rounds", "%d of %d" % (len(bracket), rounds)),
                 ("matches decided", "%d of %d" % (decided, max(0, n - 1)))]
        if matches and matches < n - 1 and not self.champ:
            facts[-1] = ("matches decided", "%d of %d (%d paired)" % (decided, n - 1, matches))
        full = ""
        if task.strip() and task.strip() != first:
            shown = task if len(task) <= SHOWN_TASK_CHARS else task[:SHOWN_TASK_CHARS] + "\n[... cut; see task.md]"
            full = '<details class="task"><summary>Whole task</summary><pre>%s</pre></details>' % esc(shown)
        return ('<header id="top"><div class="kicker">Arena report %s</div><h1 id="task">%s</h1>'
                '<dl class="facts">%s</dl><p id="progress" class="progress">%s</p>%s</header>' % (
                    status, esc(shortened(first, 300)),
                    "".join("<div><dt>%s</dt><dd>%s</dd></div>" % (esc(k), esc(v)) for k, v in facts),
                    esc(progress_line(st)), full))

    # -- the winner and its path
    def winner(self):
        st, champ = self.st, self.champ
        if not champ:
            alive = alive_agents(st)
            return ('<section id="winner" class="pending-winner" data-agent="">'
                    '<h2>Winner: in progress</h2><p>No champion yet: %d of %d agents still in the bracket. '
                    'Run <code>bracket.py report</code> again later to refresh this page.</p></section>'
                    % (len(alive), st["agents"]))
        names = self.card(champ)
        parts = []
        for (part, i), name in zip(zip(PARTS, st["cards"][champ]), names):
            try:
                text = self.cards[part][i][1]
            except IndexError:
                text = ""
            parts.append('<li><span class="part">%s</span> <b>%s</b> <span class="muted">%s</span></li>'
                         % (esc(part), esc(name), esc(text)))
        if st["models"]:
            parts.append('<li><span class="part">model</span> <b>%s</b> <span class="muted">dealt with the card, '
                         'from --models %s</span></li>' % (esc(model_of(st, champ)), esc(mix_text(st["models"]))))
        shipped = st["ship"] or champ
        sol = st["sol"].get(shipped)
        rounds = len(bracket_rounds(st))
        lead = ('<p class="lead"><b class="agent">%s</b> beat %d other agent%s in %d round%s. %s%s</p>'
                % (esc(champ), entered(st) - 1, "" if entered(st) == 2 else "s", rounds,
                   "" if rounds == 1 else "s",
                   ("Final solution: " + self.link(sol, esc(sol))) if sol and self.link(sol, "x")
                   else "No competitor produced a valid solution." if not sol else "",
                   " (the checked merge, which beat it)" if shipped != champ and sol else ""))
        # a field settled before it was written, or after a round: what the run did not play, and why
        lead += "".join('<p class="muted">%s</p>' % esc(x) for x in unplayed_lines(st))
        steps = []
        byes = {r["n"] for r in st["rounds"] if r["bye"] == champ}
        games = {m["id"]: (m, res) for m, res in path_of(st, champ)}
        merge = (st["merged"] or {}).get("match")
        if merge in st["results"]:
            games[merge] = (find_match(st, merge), st["results"][merge])
        for rnd in st["rounds"]:
            if rnd["n"] in byes:
                steps.append('<li class="step bye-step"><div class="step-head"><span class="rnd">Round %d</span> '
                             'bye: sat out this round</div></li>' % rnd["n"])
            for m in rnd["matches"]:
                if m["id"] in games:
                    steps.append(self.path_step(*games[m["id"]]))
        return ('<section id="winner" data-agent="%s"><h2>Winner <span class="agent">%s</span></h2>%s'
                '<ul class="card">%s</ul><h3>Path to the title</h3><ol class="path">%s</ol></section>'
                % (esc(champ), esc(champ), lead, "".join(parts), "".join(steps) or "<li>No matches played.</li>"))

    def merge(self):
        """The checked merge: what it took from whom, how its match went, which text ships."""
        lines = merge_lines(self.st)
        if not lines:
            return ""
        links = " ".join(x for x in (self.link("out/merge.md", "what it took"),
                                     self.link("out/merge-sol.md", "the challenger as written")) if x)
        return ('<section id="merge"><h2>The checked merge</h2><ul class="spent">%s</ul><div class="files">%s</div>'
                '</section>' % ("".join("<li>%s</li>" % esc(line.strip()) for line in lines), links))

    def solution(self):
        sol = self.st["sol"].get(self.st["ship"] or self.champ) if self.champ else None
        text = self.read_solution(sol) if sol else None
        if text is None:
            return ""
        cut = len(text) > SHOWN_SOLUTION_CHARS
        return ('<section id="solution"><details open><summary><h2>The winning solution</h2> <span class="muted">%s'
                '</span></summary><pre>%s%s</pre></details></section>' % (
                    esc(sol), esc(text[:SHOWN_SOLUTION_CHARS]), "\n[... cut; open the file]" if cut else ""))

    def path_step(self, m, res):
        champ, st = self.champ, self.st
        mid, opp = m["id"], opponent(m, champ)
        rnd = round_of(mid)
        merge = mid == (st["merged"] or {}).get("match")
        head = ('<div class="step-head"><span class="rnd">%s</span> <a class="mid" href="#%s">%s</a> '
                'vs <b class="agent">%s</b> <span class="muted">%s</span>%s</div>'
                % ("Checked merge" if merge else "Round %d" % rnd, esc(mid), esc(mid),
                   esc(opp + (" (the challenger)" if merge else "")), esc(" / ".join(self.card(opp))),
                   '<span class="how">%s</span>' % esc(self.decided_text(m, res)) if res else ""))
        looks = self.looks(mid)
        table = self.score_table(looks, [champ, opp], [champ, opp], res) if looks else ""
        reasons = [self.reason(judge_id(mid, k + 1)) for k in range(len(looks))]
        said = [("judge %d: " % (k + 1) if len(looks) > 1 else "judge: ") + why
                for k, why in enumerate(reasons) if why]
        why = '<p class="why">%s</p>' % esc(" · ".join(said)) if said else ""
        paired = pairing_text(st["rounds"][rnd - 1], m)
        if paired:
            why += '<p class="why muted">%s</p>' % esc(paired)
        if res and res["how"] in ("forfeit", "record") and res.get("why"):
            why += '<p class="why">%s</p>' % esc(res["why"])
        bench = match_bench_lines(st, mid, [champ, opp])
        if bench:
            why += '<p class="why bench">%s</p>' % esc(" · ".join(bench))
        answers = st["summ"].get(defence_id(mid, champ), {}).get("ans", "")
        items = []
        for k, (label, summary) in enumerate(attacks_on(self.ctx, attack_id(mid, opp))):
            said, cls = ANSWERS.get(answers[k:k + 1], ("unanswered", "u"))
            note = reproducer_note(st, mid, champ, k + 1)
            items.append('<li><span class="lab %s">%s</span> %s <span class="ans %s">%s</span>%s</li>'
                         % (SEVERITY[label], label, esc(summary.strip()[:300]), cls, said,
                            ' <span class="muted">%s</span>' % esc(note) if note else ""))
        attacks = ('<div class="attacks"><h4>Attacks survived (%d)</h4><ul>%s</ul></div>' % (len(items), "".join(items))
                   if items else '<div class="attacks"><h4>Attacks survived</h4><p class="muted">none made</p></div>')
        if res and res["how"] != "forfeit":
            # both sides revise against every attack of the match: say who fixed what, from which list
            attacks += '<p class="fixes">%s</p>' % esc("; ".join(fixes_text(st, m, x) for x in (champ, opp)))
        return '<li class="step">%s<div class="step-body"><div>%s%s</div>%s</div><div class="files">%s</div></li>' % (
            head, table, why, attacks, self.match_files(m))

    def decided_text(self, m, res):
        how = res["how"]
        if how == "judge":
            text = looks_text(self.st, m, res) or "judge"
            if res.get("rule") == "fatal":
                text += "; " + fatal_note("the loser")
            elif res.get("rule", "total") != "total":
                text += "; tie broken by %s" % self.rule_name(res["rule"])
            return text
        if how == "forfeit":
            return "forfeit"
        return "recorded by hand"

    def rule_name(self, rule):
        if rule.startswith("criterion "):
            k = int(rule.split()[1]) - 1
            return self.rubric[k][0] if 0 <= k < len(self.rubric) else rule
        if rule == "equivalent":
            return "the merge rule (an equivalent verdict keeps the winner)"
        return "the seeded coin" if rule == "coin" else rule

    def score_table(self, looks, sides, heads, res):
        """One row per side, one column per criterion: each score the average over the judges' looks."""
        n = len(looks)
        count = min(len(looks[0]["sc"][s]) for s in sides)
        crits = [(self.rubric[i][0], self.rubric[i][1]) if i < len(self.rubric) else ("criterion %d" % (i + 1), 0)
                 for i in range(count)]
        rows = []
        for s, head in zip(sides, heads):
            cells = []
            for i, (_, top) in enumerate(crits):
                value = sum(v["sc"][s][i] for v in looks) / float(n)
                width = max(0, min(100, int(100 * value / top))) if top else 0
                cells.append('<td><span class="num">%s</span><span class="bar"><i style="width:%d%%"></i></span></td>'
                             % (points(value, 1), width))
            seen = sum(1 for v in looks if v["fat"].get(s))
            verified = res["fatal"].get(s) if res and "fatal" in res else seen == n
            if seen and verified:
                fatal = '<span class="fatal">FATAL</span>'
            elif seen:
                fatal = '<span class="flag">%d of %d looks</span>' % (seen, n)
            else:
                fatal = '<span class="muted">none</span>'
            total = points(sum(sum(v["sc"][s]) for v in looks), n)
            rows.append('<tr><th>%s</th>%s<td class="tot">%s</td><td>%s</td></tr>' % (
                esc(head), "".join(cells), total, fatal))
        return ('<table class="scores"><thead><tr><th>%s</th>%s<th>total /%d</th><th>FATAL</th></tr></thead>'
                '<tbody>%s</tbody></table>' % (
                    "average of %d looks" % n if n > 1 else "",
                    "".join('<th>%s <span class="muted">/%s</span></th>' % (esc(c), top or "?") for c, top in crits),
                    sum(top for _, top in crits), "".join(rows)))

    def match_files(self, m):
        mid = m["id"]
        out = []
        for a in (m["a"], m["b"]):
            got = [self.link(revision_file(mid, a), "solution"),
                   self.link("out/%s.md" % attack_id(mid, a), "attacks"),
                   self.link("out/%s.md" % defence_id(mid, a), "defence")]
            got = [g for g in got if g]
            if got:
                out.append("<span><b>%s</b> %s</span>" % (esc(a), " ".join(got)))
        verdicts = [self.link("out/%s.json" % judge_id(mid, k), "verdict %d" % k) for k in range(1, 10)]
        verdicts = [v for v in verdicts if v]
        if verdicts:
            out.append("<span><b>judges</b> %s</span>" % " ".join(verdicts))
        refused = ['<a href="%s">%s</a>' % (esc("out/refused/" + name), esc(name[len(mid) + 1:]))
                   for name in self.refused if name.startswith(mid + "-")]
        if refused:
            out.append("<span><b>refused</b> %s</span>" % " ".join(refused))
        return " ".join(out)

    # -- the baseline check
    def baseline(self):
        st = self.st
        if not st["baseline"]:
            return ""
        f = st["final"]
        links = " ".join(x for x in (self.link("out/final.json", "verdict"),) if x)
        links += ' <a href="baseline.md">old answer</a>' if os.path.exists(self.run.path("baseline.md")) else ""
        if f is None:
            body = '<p class="muted">Not run yet: the winner is compared with the old answer once the bracket is over.</p>'
            cls = "pending"
        elif f.get("missing"):
            body = '<p>The check failed (%s); compare by hand.</p>' % esc(f.get("why", "no verdict"))
            cls = "pending"
        else:
            w, b, verdict, cls = baseline_verdict(f)
            body = ('<p class="verdict">Blind check: arena answer <b>%d</b>, old answer <b>%d</b>: %s.</p>%s%s'
                    % (w, b, esc(verdict), self.score_table([f], ["winner", "baseline"], ["arena answer", "old answer"],
                                                            None),
                       '<p class="why">Judge: %s</p>' % esc(unblind(f["why"], f.get("names"))) if f.get("why") else ""))
        return ('<section id="baseline" class="%s"><h2>Against the old answer</h2>%s<div class="files">%s</div>'
                '</section>' % (cls, body, links))

    # -- the bracket
    def bracket(self):
        st = self.st
        sizes = field_sizes(st["agents"])
        out = []
        for rnd in st["rounds"]:
            out.append(self.round_block(rnd, sizes))
        for n in range(len(st["rounds"]) + 1, len(sizes)):
            out.append('<div class="round future" id="round-%d"><span class="rt">Round %d</span> '
                       '<span class="muted">%d alive: not paired yet</span></div>' % (n, n, sizes[n - 1]))
        if not out:
            out.append('<p class="muted">A single agent has no one to play: no matches.</p>')
        return ('<section id="bracket"><div class="bracket-head"><h2>Bracket</h2><div class="tools">'
                '<input id="find" type="search" placeholder="find agent or match, e.g. a017 or r2-m03" '
                'aria-label="find agent or match"> <span id="found" class="muted"></span>'
                '<button type="button" id="expand">expand all</button><button type="button" id="collapse">'
                'collapse all</button></div></div>%s%s</section>' % (self.tree(), "".join(out)))

    def tree(self):
        """The last rounds as bracket columns: a picture of how the field narrowed to the winner."""
        st = self.st
        shown = [r for r in st["rounds"] if len(r["matches"]) <= TREE_MAX][-TREE_ROUNDS:]
        if not shown:
            return ""
        cols, came_from = [], {}
        for rnd in shown:
            tiles = []
            # a match sits level with the matches its players came from, so the columns read as a tree
            order = sorted(rnd["matches"], key=lambda m: min(came_from.get(m["a"], 0), came_from.get(m["b"], 0)))
            came_from = {}
            for pos, m in enumerate(order):
                came_from[m["a"]] = came_from[m["b"]] = pos
            if rnd["bye"]:
                came_from[rnd["bye"]] = len(order)
            for m in order:
                res = st["results"].get(m["id"])
                n = res.get("n", 1) if res else 1
                lines = []
                for x in (m["a"], m["b"]):
                    score = points(res["tot"][x], n) if res and res.get("tot") else ""
                    cls = "" if not res else ' class="w"' if res["w"] == x else ' class="l"'
                    lines.append("<span%s><b>%s</b><em>%s</em></span>" % (cls, esc(x), score))
                tiles.append('<a class="tile%s" href="#%s" title="%s">%s</a>' % (
                    " onpath" if m["id"] in self.path_ids else " open" if not res else "", esc(m["id"]),
                    esc(m["id"]), "".join(lines)))
            if rnd["bye"]:
                tiles.append('<span class="tile byetile"><span><b>%s</b><em>bye</em></span></span>' % esc(rnd["bye"]))
            cols.append('<div class="col"><div class="col-h">Round %d</div><div class="tiles">%s</div></div>'
                        % (rnd["n"], "".join(tiles)))
        if self.champ:
            cols.append('<div class="col champ-col"><div class="col-h">Winner</div><div class="tiles">'
                        '<span class="tile champ"><span><b>%s</b></span></span></div></div>' % esc(self.champ))
        return '<div class="tree" aria-label="the last rounds">%s</div>' % "".join(cols)

    def round_block(self, rnd, sizes):
        st = self.st
        matches = rnd["matches"]
        decided = [st["results"][m["id"]] for m in matches if m["id"] in st["results"]]
        hows = {}
        for r in decided:
            key = "second looks" if r.get("n") == 2 else "three or more looks" if r.get("n", 1) > 2 and \
                r["how"] == "judge" else {"forfeit": "forfeits", "record": "by hand"}.get(r["how"])
            if key:
                hows[key] = hows.get(key, 0) + 1
        alive = 2 * len(matches) + (1 if rnd["bye"] else 0)
        notes = ["%d alive" % alive, "%d match%s" % (len(matches), "" if len(matches) == 1 else "es"),
                 "%d decided" % len(decided) if len(decided) < len(matches) else "all decided"]
        notes += ["%d %s" % (v, k) for k, v in sorted(hows.items())]
        rows = [self.match_row(m) for m in matches]
        if rnd["bye"]:
            bye = rnd["bye"]
            rows.append('<div class="bye" data-agent="%s"><span class="mid">bye</span> <b>%s</b> <span class="muted">'
                        '%s</span> sits out round %d%s</div>' % (
                            esc(bye), esc(bye), esc(" / ".join(self.card(bye))), rnd["n"],
                            " (the winner)" if bye == self.champ else ""))
        on_path = any(m["id"] in self.path_ids for m in matches) or rnd["bye"] == self.champ
        state = "done" if len(decided) == len(matches) else "live"
        return ('<details class="round" id="round-%d" data-state="%s"%s><summary><span class="rt">%s</span> '
                '<span class="muted">%s</span>%s</summary><div class="rows">%s</div></details>' % (
                    rnd["n"], state, " open" if len(matches) <= OPEN_ROUND_MAX else "",
                    "Checked merge" if rnd.get("merge") else "Round %d" % rnd["n"],
                    esc(" · ".join(notes)), ' <span class="pill onpath">winner played here</span>' if on_path else "",
                    "".join(rows)))

    def match_row(self, m):
        st = self.st
        mid, a, b = m["id"], m["a"], m["b"]
        res = st["results"].get(mid)
        n = res.get("n", 1) if res else 1
        sides = []
        for x in (a, b):
            cls = "side" if not res else "side w" if res["w"] == x else "side l"
            atk = st["summ"].get(attack_id(mid, x), {}).get("labels")
            ans = st["summ"].get(defence_id(mid, x), {}).get("ans")
            fatal = res and res.get("fatal", {}).get(x)
            files = [self.link(revision_file(mid, x), "sol"),
                     self.link("out/%s.md" % attack_id(mid, x), "atk" + (" " + esc(atk) if atk else "")),
                     self.link("out/%s.md" % defence_id(mid, x), "def" + (" " + esc(ans) if ans else ""))]
            sides.append('<div class="%s"><b>%s</b>%s <small>%s</small><span class="fl">%s</span></div>' % (
                cls, esc(x), ' <span class="fatal">FATAL</span>' if fatal else "", esc(" / ".join(self.card(x))),
                " ".join(f for f in files if f)))
        if res and res.get("tot"):
            ta, tb = points(res["tot"][a], n), points(res["tot"][b], n)
            score = "%s<span>–</span>%s" % (ta, tb)
        elif res:
            score = "—"
        else:
            score = '<span class="muted">vs</span>'
        if res:
            how = esc(self.short_how(m, res))
            if res["how"] in ("forfeit", "record") and res.get("why"):
                how = '<span title="%s">%s</span>' % (esc(res["why"]), how)
        else:
            how = '<span class="wait">%s</span>' % esc(self.pending_text(mid))
        verdicts = [self.link("out/%s.json" % judge_id(mid, k), "verdict" if k == 1 else "look %d" % k)
                    for k in range(1, 10)]
        return ('<div class="match" id="%s" data-winner="%s" data-a="%s" data-b="%s" data-state="%s"%s>'
                '<span class="mid">%s</span>%s<div class="score">%s</div>%s<div class="how">%s</div>'
                '<div class="vl">%s</div></div>' % (
                    esc(mid), esc(res["w"]) if res else "", esc(a), esc(b),
                    res["how"] if res else "pending", ' data-path="1"' if mid in self.path_ids else "",
                    esc(mid), sides[0], score, sides[1], how, " ".join(v for v in verdicts if v)))

    def short_how(self, m, res):
        if res["how"] == "judge":
            text = looks_short(self.st, m, res) or "judge"
            rule = res.get("rule", "total")
            if rule == "fatal":
                text += ", FATAL rule"
            elif rule != "total":
                text += ", tie: " + self.rule_name(rule)
            return text
        return HOW.get(res["how"], res["how"])

    def pending_text(self, mid):
        if mid in self.st["manual"]:
            return "needs a decision by hand"
        jobs = self.st["jobs"]
        mine = [(j, info["s"]) for j, info in jobs.items() if j.startswith(mid + "-")]
        def count(kind):
            xs = [s for j, s in mine if job_kind(j) == kind]
            return sum(1 for s in xs if s == DONE), len(xs)
        (ad, an), (dd, dn), (jd, jn) = count("atk"), count("def"), count("judge")
        if ad < an:
            return "pending: attacks %d/%d" % (ad, an)
        if dd < dn:
            return "pending: defences %d/%d" % (dd, dn)
        return "pending: judges %d/%d" % (jd, jn)

    # -- the bench
    def bench(self):
        """What the run's bench holds (a --run-code run started with --bench): each entry, what it
        checks and the kind of job that added it; each match's figures are in its step above."""
        entries = self.st.get("bench") or []
        if not self.st.get("bench_on"):
            return ""
        if not entries:
            return '<section id="bench"><h2>The bench</h2><p class="muted">empty: no job added a test or a scorer</p></section>'
        rows = "".join("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
            esc(e["id"]), esc(e["kind"] + (", %s is better" % e["better"] if e.get("better") else "")), esc(e["for"]),
            esc(e.get("by", ""))) for e in entries)
        return ('<section id="bench"><h2>The bench</h2><p class="muted">Tests and the scorer jobs left for every later '
                'look; the engine ran them on both sides of a match and kept each result by solution.</p><table>'
                '<tr><th>entry</th><th>kind</th><th>what it checks</th><th>added by</th></tr>%s</table>%s</section>'
                % (rows, self.survivors_benched(entries)))

    def survivors_benched(self, entries):
        """Each round's survivors as the engine ran the bench on them before the round closed:
        every entry's result, best bench score first, and the group the tests put each in."""
        out = []
        for rnd in self.st["rounds"]:
            found = rnd.get("bench")
            if not found:
                continue
            group = {a: k for k, g in enumerate(found["groups"], 1) for a in g}
            head = "".join("<th>%s</th>" % esc(e["id"]) for e in entries)
            rows = "".join("<tr><td>%s</td>%s<td class=\"n\">%d</td></tr>" % (
                esc(a), "".join('<td class="n">%s</td>' % esc(fmt_figure(found["res"][a].get(e["id"]))) for e in entries),
                group.get(a, 0)) for a in best_first(self.st, found["res"]))
            out.append('<h3>Survivors of round %d</h3><p class="muted">%s</p><table><tr><th>agent</th>%s<th>group</th>'
                       '</tr>%s</table>' % (rnd["n"], esc(grouped_text(found, None)), head, rows))
        return "".join(out)

    # -- what the run spent
    def spend(self):
        st = self.st
        rows = []
        for kind in SPEND_KINDS:
            row = st["spend"].get(kind)
            if not row or not row["calls"]:
                continue
            job = kind not in ORCHESTRATION
            rows.append("<tr><td>%s</td><td class=\"n\">%d</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
                        "<td class=\"n\">%s</td></tr>" % (
                            esc(SPEND_NAMES.get(kind, kind)), row["calls"], tokens(row["tok"]) if job else "",
                            esc(minutes(row["sec"])) if row["sec"] else "", "%d of %d" % (row["rep"], row["calls"])
                            if job else ""))
        if not rows:
            return ""
        notes = "".join("<li>%s</li>" % esc(line) for line in spend_lines(st)[:1] + budget_lines(st))
        return ('<section id="spend"><h2>What the run spent</h2><table class="spend"><thead><tr><th>phase</th>'
                '<th>calls</th><th>tokens</th><th>sub-agent time</th><th>usage reported</th></tr></thead>'
                '<tbody>%s</tbody></table><ul class="spent">%s</ul></section>' % ("".join(rows), notes))

    def models(self):
        """A mixed field: each model's agents and the matches they won and lost."""
        table = model_table(self.st)
        if not table:
            return ""
        rows = "".join('<tr><td>%s</td><td class="n">%d</td><td class="n">%d</td><td class="n">%d</td>'
                       '<td class="n">%d</td><td class="n">%d</td></tr>' % (esc(name), agents, won, lost, won_x, lost_x)
                       for name, agents, _, won, lost, won_x, lost_x in table)
        return ('<section id="models"><h2>Models</h2><p>Each competitor\'s model was dealt with its card (--models %s); '
                'the %s never learned which model wrote what. A match between two agents of one model counts as a '
                'win and a loss for it.</p><table class="spend"><thead><tr><th>model</th><th>agents</th><th>won</th>'
                '<th>lost</th><th>won against another model</th><th>lost against another model</th></tr></thead>'
                '<tbody>%s</tbody></table></section>' % (esc(mix_text(self.st["models"])),
                                                         esc(judges_on(self.st["judge_model"])), rows))

    # -- agents and cards
    def agents(self):
        st = self.st
        rows = []
        for agent in sorted(st["cards"]):
            if agent == self.champ:
                fate = '<span class="pill win">winner</span>'
            elif st["out"].get(agent) == 0:
                fate = "withdrawn: spawning stopped before its solution"
            elif agent in st["out"]:
                mid = self.lost_in.get(agent, "")
                fate = 'out in round %d <a href="#%s">%s</a>' % (st["out"][agent], esc(mid), esc(mid))
            else:
                fate = "alive"
            sol = st["sol"].get(agent)
            files = [self.link("out/spawn-%s.md" % agent, "first"),
                     self.link(sol, "latest") if sol and not sol.startswith("out/spawn-") else ""]
            byes = st["byes"].get(agent, 0)
            names = self.card(agent) + ([model_of(st, agent)] if st["models"] else [])
            rows.append("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
                esc(agent), "</td><td>".join(esc(x) for x in names), fate, byes or "",
                " ".join(f for f in files if f)))
        return ('<section id="agents"><details><summary><h2>Agents and their cards (%d)</h2></summary>'
                '<table class="agents"><thead><tr><th>agent</th><th>reasoning</th><th>workflow</th><th>strategy</th>'
                '%s<th>result</th><th>byes</th><th>solutions</th></tr></thead><tbody>%s</tbody></table></details>'
                '</section>' % (len(rows), "<th>model</th>" if st["models"] else "", "".join(rows)))

    def glossary(self):
        parts = []
        for part in PARTS:
            items = "".join("<dt>%s</dt><dd>%s</dd>" % (esc(n), esc(t)) for n, t in self.cards.get(part, []))
            parts.append("<div><h3>%s</h3><dl>%s</dl></div>" % (esc(part), items))
        crit = "".join("<dt>%s <span class=\"muted\">(%d)</span></dt><dd>%s</dd>" % (esc(c), top, esc(d))
                       for c, top, d in self.rubric)
        return ('<section id="glossary"><details><summary><h2>Card parts and rubric</h2></summary>'
                '<div class="gloss">%s<div><h3>rubric</h3><dl>%s</dl></div></div></details></section>'
                % ("".join(parts), crit))


