"""The judging rules: how looks at a match combine and decide it, and how many looks it gets.

Pure functions of verdicts (each side's scorecard and FATAL flag, as outputs.py reads them)
and of a round's shape. state.py applies them as verdicts arrive; estimate.py plans with
them; the judging simulator (benchmarks/judging.py) plays them. A verdict here is
{"sc": {agent: [scores in rubric order]}, "fat": {agent: bool}, "conf": "high"|"low"}.
"""

from .base import LATE_FIELD


def decide(v, m, ncrit):
    """(winner, rule) for one match from one (merged) verdict.

    A verified FATAL loses to a solution without one; otherwise the higher
    total; then correctness, completeness, ... in rubric order; then the
    match's seeded coin.
    """
    a, b = m["a"], m["b"]
    fa, fb = v["fat"][a], v["fat"][b]
    if fa != fb:
        return (b if fa else a), "fatal"
    ta, tb = sum(v["sc"][a]), sum(v["sc"][b])
    if ta != tb:
        return (a if ta > tb else b), "total"
    for i in range(ncrit):
        if v["sc"][a][i] != v["sc"][b][i]:
            return (a if v["sc"][a][i] > v["sc"][b][i] else b), "criterion %d" % (i + 1)
    return m["coin"], "coin"


def merge_verdicts(verdicts, m):
    """Looks combine by summing scorecards; a FATAL stands only if more than half of
    the looks saw it (both of two)."""
    if len(verdicts) == 1:
        return verdicts[0]
    sides = (m["a"], m["b"])
    sc = {a: [sum(v["sc"][a][i] for v in verdicts) for i in range(len(verdicts[0]["sc"][a]))] for a in sides}
    fat = {a: 2 * sum(1 for v in verdicts if v["fat"][a]) > len(verdicts) for a in sides}
    return {"sc": sc, "fat": fat, "conf": "high"}


def is_close(v, m, margin):
    """A match worth a second judge: near totals, low confidence, or a FATAL
    flag that overturned the totals."""
    a, b = m["a"], m["b"]
    ta, tb = sum(v["sc"][a]), sum(v["sc"][b])
    if v.get("conf") == "low" or abs(ta - tb) <= margin:
        return True
    if v["fat"][a] != v["fat"][b]:
        flagged_total = ta if v["fat"][a] else tb
        return flagged_total == max(ta, tb)
    return False


# A round whose judges found every match equivalent, or at least SETTLE_SHARE of them, suggests
# the survivors are interchangeable: a settle offer. A share, not "every match", since a judge
# misses now and then that two solutions are the same, and one miss in fifty would otherwise
# hide a settled field. A --run-code run looks instead when not all but PROBE_SHARE were: a
# probe runs every survivor's code, better evidence than the share. benchmarks/judging.py
# measures the choice.
SETTLE_SHARE = (2, 3)
PROBE_SHARE = (1, 2)


def at_least(count, total, share):
    """count of total is at least share (a (numerator, denominator) pair), total > 0."""
    return total > 0 and count * share[1] >= share[0] * total


def is_late(field):
    """The last two rounds (semifinal and final), where a wrong call costs the most."""
    return field <= LATE_FIELD


def most_looks_in(field, most_looks):
    """Most looks one match of a round of this field may take, from the run's pair
    (earlier rounds, the last two rounds)."""
    early, late = most_looks
    return late if is_late(field) else early


def round_kind(matches, field, wave):
    """late: the last two rounds; small: judges of two looks fit in half a wave; big: the rest."""
    if is_late(field):
        return "late"
    return "small" if 2 * matches <= wave else "big"


def first_looks(matches, field, final_judges=1):
    """Judges each match of a round starts with: one, or the final's panel (--final-judges 3).

    Every further look waits for the first, since a first look that finds the two
    equivalent needs no other.
    """
    return final_judges if matches == 1 and field == 2 else 1


def is_equivalent(v, m):
    """A look that found the two solutions equivalent for the task; a FATAL flag on either
    side overrides it (one of them fails the task, so they are not interchangeable)."""
    return bool(v.get("eq")) and not v["fat"][m["a"]] and not v["fat"][m["b"]]


def is_equal_vote(v, m, margin):
    """A look that found the two equal: no decided difference, or totals within margin points
    (base.EQUAL_MARGIN; a run records the margin it started with, None for a run from before
    equal votes, which has none), with FATAL flagged on both sides or on neither. It still
    counts for the side it favours toward a majority; equal votes outnumbering the rest make
    a tie (ended_equal)."""
    if margin is None:
        return False
    a, b = m["a"], m["b"]
    if v["fat"][a] != v["fat"][b]:
        return False
    return is_equivalent(v, m) or abs(sum(v["sc"][a]) - sum(v["sc"][b])) <= margin


def equal_votes(verdicts, m, margin):
    """Which looks were equal votes, in look order."""
    return [is_equal_vote(v, m, margin) for v in verdicts]


def looks_after_first(kind, close, most, equal=False):
    """Looks to add after a first look that did not find the two equivalent.

    A first look that was an equal vote gets one more look wherever a second is possible:
    a second equal vote ends the match. Otherwise rounds small enough to judge twice in half
    a wave always take a second look; the last two rounds take two more at once, towards
    three of five; other rounds a second look only when the first was close.
    """
    if equal:
        return 1 if most >= 2 else 0
    if kind == "late" and most >= 3:
        return 2
    if kind in ("late", "small"):
        return 1
    return 1 if close else 0


def ended_equal(equal):
    """Equal votes are more than half of the looks taken, two or more: the match is a tie,
    and no further look is bought to break it."""
    return len(equal) >= 2 and 2 * sum(1 for e in equal if e) > len(equal)


def wants_more(picks, sides, most, equal=()):
    """After two or more looks: another while no side has won a majority of the most looks
    the match may take (each look counts for the side it favours, an equal vote too), unless
    equal votes already outnumber the rest (a tie)."""
    if len(picks) >= most or ended_equal(equal):
        return False
    return max(picks.count(sides[0]), picks.count(sides[1])) <= most // 2
