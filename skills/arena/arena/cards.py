"""The editable data read from the skill folder (cards.md, rubric.md) and the dealer.

deal_cards gives N distinct cards, every part dealt as evenly as possible and, up to 144
agents, no two agents sharing two parts; deal_models adds a model as a fourth part when the
run has a mixed field. Pure functions of (N, sizes, shares, rng); nothing here touches a run
or its state.
"""

import os
import re

from .base import ArenaError, SKILL_DIR, below, read_text, shuffled


# A card's parts, in the order the state records a card's indices.
PARTS = ("reasoning", "workflow", "strategy")


def load_cards(path=None):
    """The card parts from cards.md: {"reasoning": [(name, text)], "workflow": ..., "strategy": ...}."""
    path = path or os.path.join(SKILL_DIR, "cards.md")
    parts, current = {}, None
    for line in read_text(path).splitlines():
        head = re.match(r"^## (\w+)\s*$", line)
        if head:
            current = parts.setdefault(head.group(1), [])
            continue
        entry = re.match(r"^- ([a-z0-9-]+): (.+)$", line)
        if entry and current is not None:
            current.append((entry.group(1), entry.group(2).strip()))
    for part in PARTS:
        names = [n for n, _ in parts.get(part, [])]
        if not names:
            raise ArenaError("cards.md has no '## %s' entries; restore it or add '- name: instruction' lines" % part)
        if len(set(names)) != len(names):
            raise ArenaError("cards.md lists a %s name twice; names must be unique" % part)
    m, w, s = card_sizes(parts)
    # The dealer's pair guarantee is an edge colouring of the workflow x strategy
    # grid with one colour per reasoning mode: it needs a square grid and enough colours.
    if w != s or m < w:
        raise ArenaError("cards.md has %d reasoning modes, %d workflows, %d strategies; the dealer needs as many "
                         "workflows as strategies and at least that many reasoning modes" % (m, w, s))
    return parts


def load_rubric(path=None):
    """[(criterion, max, description)] from rubric.md."""
    path = path or os.path.join(SKILL_DIR, "rubric.md")
    rubric = []
    for line in read_text(path).splitlines():
        m = re.match(r"^- ([a-z]+) \((\d+)\): (.+)$", line)
        if m:
            rubric.append((m.group(1), int(m.group(2)), m.group(3).strip()))
    if not rubric or len({c for c, _, _ in rubric}) != len(rubric):
        raise ArenaError("rubric.md needs one line per criterion, '- name (max): description', names unique")
    return rubric


def pick_grid_cells(n, size, rng):
    """n distinct cells of a size x size grid, every row and column used q or q+1 times.

    Cells come diagonal by diagonal (row i, column i+d), so a partial last
    diagonal still touches each row and column at most once.
    """
    diagonals = shuffled(rng, range(size))
    rows = shuffled(rng, range(size))
    cells = []
    for k in range(n):
        d, i = diagonals[k // size], rows[k % size]
        cells.append((i, (i + d) % size, k // size))
    return cells


def balance_colours(cells, colours, ncolours, rng):
    """Make colour counts differ by at most one, keeping each colour a matching.

    Edges coloured a or b form paths and even cycles; a path with one more
    a-edge than b-edges exists while a is used 2+ times more than b, and
    swapping its colours moves one edge from a to b (the standard equitable
    edge-colouring argument for bipartite graphs).
    """
    while True:
        counts = [0] * ncolours
        for c in colours:
            counts[c] += 1
        hi = max(range(ncolours), key=lambda c: (counts[c], -c))
        lo = min(range(ncolours), key=lambda c: (counts[c], c))
        if counts[hi] - counts[lo] <= 1:
            return colours
        at = {}
        for e, (r, s, _) in enumerate(cells):
            if colours[e] in (hi, lo):
                at.setdefault(("r", r), []).append(e)
                at.setdefault(("s", s), []).append(e)
        seen, paths = set(), []
        for e in range(len(cells)):
            if colours[e] not in (hi, lo) or e in seen:
                continue
            comp, stack = [], [e]
            seen.add(e)
            while stack:
                x = stack.pop()
                comp.append(x)
                r, s, _ = cells[x]
                for y in at[("r", r)] + at[("s", s)]:
                    if y not in seen:
                        seen.add(y)
                        stack.append(y)
            if sum(1 for x in comp if colours[x] == hi) > sum(1 for x in comp if colours[x] == lo):
                paths.append(comp)
        comp = paths[below(rng, len(paths))]
        for x in comp:
            colours[x] = lo if colours[x] == hi else hi


def deal_cards(n, sizes, rng):
    """n distinct cards (mode, workflow, strategy), each part dealt evenly.

    Up to workflows x strategies agents, no two cards share two parts: each
    (workflow, strategy) cell is used once, and modes colour the cells so that
    no row or column repeats a mode. Above that, each cell takes q or q+1
    different modes from one running cycle, which keeps modes balanced.
    """
    nm, nw, ns = sizes
    if not 1 <= n <= nm * nw * ns:
        raise ArenaError("--agents must be 1 to %d (the number of distinct cards), not %d" % (nm * nw * ns, n))
    grid = nw * ns
    if n <= grid:
        cells = pick_grid_cells(n, nw, rng)
        colours = balance_colours(cells, [d for _, _, d in cells], nm, rng)
        raw = [(colours[k], r, s) for k, (r, s, _) in enumerate(cells)]
    else:
        q, extra = divmod(n, grid)
        fat = {(r, s) for r, s, _ in pick_grid_cells(extra, nw, rng)} if extra else set()
        order = sorted(fat) + sorted((r, s) for r in range(nw) for s in range(ns) if (r, s) not in fat)
        raw, t = [], below(rng, nm)
        for r, s in order:
            for _ in range(q + 1 if (r, s) in fat else q):
                raw.append((t % nm, r, s))
                t += 1
    pm, pw, ps = shuffled(rng, range(nm)), shuffled(rng, range(nw)), shuffled(rng, range(ns))
    return shuffled(rng, [[pm[m], pw[w], ps[s]] for m, w, s in raw])


def model_counts(n, shares):
    """How many of n agents each model gets: n * share / total of shares, rounded down, and
    the agents left over one each to the largest remainders (ties to the model listed first)."""
    total = sum(shares)
    counts = [n * s // total for s in shares]
    by_remainder = sorted(range(len(shares)), key=lambda i: (-(n * shares[i] % total), i))
    for i in by_remainder[:n - sum(counts)]:
        counts[i] += 1
    return counts


# Above this many agents the dealer skips the swap passes (they cost about n^2 steps),
# and places each model by the greedy pass alone.
SWAP_AGENTS = 300
SWAP_PASSES = 3


def deal_models(cards, shares, rng):
    """A model index for each card: the counts of model_counts, spread over the other parts.

    Each model should hold its share of every reasoning mode, workflow and strategy. The
    cards are visited in a seeded order and each takes the model, among those with agents
    left to give, that moves the counts of its three parts least away from those shares
    (squared distance); then swapping two cards' models is tried while it brings the
    counts closer, for a few passes. The cards themselves are not changed.
    """
    n, k = len(cards), len(shares)
    counts = model_counts(n, shares)
    width = [max(c[p] for c in cards) + 1 for p in range(len(PARTS))]
    size = [[0] * w for w in width]
    for card in cards:
        for p in range(len(PARTS)):
            size[p][card[p]] += 1
    want = [[[size[p][v] * counts[m] / n for v in range(width[p])] for p in range(len(PARTS))] for m in range(k)]
    held = [[[0] * w for w in width] for _ in range(k)]

    def cost(m, card, step):
        # how much farther from the shares model m's counts get if card joins (+1) or leaves (-1) it
        total = 0.0
        for p in range(len(PARTS)):
            v = card[p]
            off = held[m][p][v] - want[m][p][v]
            total += (off + step) ** 2 - off ** 2
        return total

    def move(m, card, step):
        for p in range(len(PARTS)):
            held[m][p][card[p]] += step

    order = shuffled(rng, range(n))
    left, model = list(counts), [0] * n
    for a in order:
        model[a] = min((m for m in range(k) if left[m]), key=lambda m: (cost(m, cards[a], 1), m))
        left[model[a]] -= 1
        move(model[a], cards[a], 1)
    for _ in range(SWAP_PASSES if n <= SWAP_AGENTS else 0):
        swapped = False
        for i, a in enumerate(order):
            for b in order[i + 1:]:
                ma, mb = model[a], model[b]
                if ma == mb:
                    continue
                before = cost(ma, cards[a], -1)
                move(ma, cards[a], -1)
                before += cost(mb, cards[b], -1)
                move(mb, cards[b], -1)
                after = cost(mb, cards[a], 1)
                move(mb, cards[a], 1)
                after += cost(ma, cards[b], 1)
                move(ma, cards[b], 1)
                if before + after < -1e-9:
                    model[a], model[b] = mb, ma
                    swapped = True
                else:
                    move(mb, cards[a], -1)
                    move(ma, cards[b], -1)
                    move(ma, cards[a], 1)
                    move(mb, cards[b], 1)
        if not swapped:
            break
    return model


def card_sizes(cards):
    """How many entries each part has, in PARTS order."""
    return tuple(len(cards[p]) for p in PARTS)


def card_count(cards):
    """How many distinct cards the parts allow."""
    total = 1
    for size in card_sizes(cards):
        total *= size
    return total


def card_parts(cards, card):
    """[(part, name, instruction)] of one card (a list of indices, in PARTS order)."""
    return [(p,) + tuple(cards[p][i]) for p, i in zip(PARTS, card)]


def card_names(cards, card):
    return [name for _, name, _ in card_parts(cards, card)]
