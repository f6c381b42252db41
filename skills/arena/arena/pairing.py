"""Pairing survivors and drawing the bye for one round.

Pure functions of (alive agents, byes so far, reasoning modes, seed, ratings): same-mode
matches are avoided where the field allows, and no agent gets a second bye while another
alive agent has had none. Round 1 is drawn; later rounds may be rated: the strongest
survivor so far meets the weakest, so the strongest meet late. It must not read or write
the state; state.py computes the ratings and calls make_round.
"""


from .base import below, rng_for, shuffled
from .jobs import match_id


def pick_bye(alive, byes, modes, rng):
    """The agent sitting out an odd round.

    Only agents with the fewest byes so far are eligible (the Swiss rule);
    among them one from the largest reasoning-mode group, since taking it out
    leaves the fewest forced same-mode matches.
    """
    fewest = min(byes.get(a, 0) for a in alive)
    eligible = [a for a in alive if byes.get(a, 0) == fewest]
    group = {}
    for a in alive:
        group[modes[a]] = group.get(modes[a], 0) + 1
    biggest = max(group[modes[a]] for a in eligible)
    eligible = [a for a in eligible if group[modes[a]] == biggest]
    return eligible[below(rng, len(eligible))]


def pair_survivors(alive, modes, rng):
    """Pairs with as few same-mode matches as possible.

    Repeatedly matching one agent of the largest mode group with one of the
    second largest leaves same-mode pairs only when one group outnumbers all
    the others together, which is the unavoidable minimum.
    """
    groups = {}
    for a in shuffled(rng, sorted(alive)):
        groups.setdefault(modes[a], []).append(a)
    pairs = []
    while groups:
        order = sorted(groups, key=lambda m: (-len(groups[m]), m))
        first = groups[order[0]]
        second = groups[order[1]] if len(order) > 1 else first
        a = first.pop()
        b = second.pop()
        pairs.append((a, b) if below(rng, 2) else (b, a))
        for m in order[:2]:
            if not groups[m]:
                del groups[m]
    return shuffled(rng, pairs)


def forced_same_mode(counts):
    """Same-mode matches no pairing of a field can avoid, from its mode group sizes:
    only a group larger than all the others together leaves some of its own to meet."""
    total = sum(counts)
    biggest = max(counts) if counts else 0
    return max(0, biggest - (total - biggest)) // 2


def rated_pairs(alive, modes, rating):
    """Strongest with weakest, second with second weakest, and so on (a fold).

    rating: {agent: a comparable number, higher = stronger}; ties go by agent id.
    The strongest unpaired agent takes the weakest partner that keeps the field's
    same-mode matches at the unavoidable minimum, so the fold bends only where a
    mode would otherwise have to meet itself. Returns (stronger, weaker) pairs,
    strongest first.
    """
    order = sorted(alive, key=lambda a: (-rating[a], a))
    counts = {}
    for a in order:
        counts[modes[a]] = counts.get(modes[a], 0) + 1
    allowed = forced_same_mode(list(counts.values()))
    pairs = []
    while order:
        a = order.pop(0)
        counts[modes[a]] -= 1
        for b in reversed(order):
            counts[modes[b]] -= 1
            same = modes[a] == modes[b]
            if same + forced_same_mode(list(counts.values())) <= allowed:
                allowed -= same
                break
            counts[modes[b]] += 1
        order.remove(b)
        pairs.append((a, b))
    return pairs


def make_round(number, alive, byes, modes, seed, rating=None):
    """Pairings of one round: matches (id, a, b, coin) and the bye.

    Without ratings the pairs are drawn at random; with them (later rounds) they
    fold the field by rating and each match's a is the stronger side. The bye, the
    coins and match ids are drawn the same way in both.
    """
    rng = rng_for(seed, "round", number)
    alive = sorted(alive)
    bye = None
    if len(alive) % 2:
        bye = pick_bye(alive, byes, modes, rng)
        alive.remove(bye)
    pairs = pair_survivors(alive, modes, rng) if rating is None else rated_pairs(alive, modes, rating)
    matches = []
    for k, (a, b) in enumerate(pairs, 1):
        coin = a if below(rng, 2) else b
        matches.append({"id": match_id(number, k, len(pairs)), "a": a, "b": b, "coin": coin})
    return {"n": number, "matches": matches, "bye": bye}
