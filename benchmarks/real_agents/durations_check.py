#!/usr/bin/env python3
"""The hidden check of the durations bug-fix task: the solution's one python block against a
reference, on the task's examples, every planted bug's case and generated inputs.

    python3 benchmarks/real_agents/durations_check.py <solution.md>...
"""

import random
import re
import sys

UNITS = [("w", 604800), ("d", 86400), ("h", 3600), ("m", 60), ("s", 1)]
VALID = re.compile(r"(?:([0-9]+)w)?(?:([0-9]+)d)?(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?")


def ref_parse(text):
    if not isinstance(text, str):
        raise TypeError
    m = VALID.fullmatch(text)
    if not text or not m or not any(g is not None for g in m.groups()):
        raise ValueError
    return sum(int(g) * size for g, (_, size) in zip(m.groups(), UNITS) if g is not None)


def ref_format(seconds):
    if isinstance(seconds, bool) or not isinstance(seconds, int):
        raise TypeError
    if seconds < 0:
        raise ValueError
    if seconds == 0:
        return "0s"
    parts = []
    for unit, size in UNITS:
        count, seconds = divmod(seconds, size)
        if count:
            parts.append("%d%s" % (count, unit))
    return "".join(parts)


def outcome(fn, arg):
    try:
        return ("ok", fn(arg))
    except (TypeError, ValueError) as e:
        return (type(e).__name__, None)
    except Exception as e:  # a crash of another kind is wrong too
        return ("crash " + type(e).__name__, None)


def cases():
    rng = random.Random(7)
    texts = ["1h30m", "2w", "0s", "1d1s", "01h", "", "h", "1", "1.5h", "1H", " 1h", "1h ", "-1h", "1x", "30m1h",
             "1h1h", "1d", "7d", "1w1d1h1m1s", "99999999999999999999s", "0w0d0h0m0s", "1h\n", "1 h", "1m1h", "1s1s"]
    # (digits other than 0-9 are left out: the task does not say whether they count)
    for _ in range(3000):
        parts = [(u, rng.randrange(0, 10 ** rng.randrange(1, 6))) for u, _ in UNITS if rng.random() < 0.5]
        if rng.random() < 0.2:
            rng.shuffle(parts)
        texts.append("".join("%d%s" % (n, u) for u, n in parts))
    ints = [0, 1, 59, 60, 61, 3599, 3600, 5400, 86399, 86400, 86401, 604799, 604800, 1209600, -1, True, 2.0, "5",
            10 ** 30] + [rng.randrange(0, 10 ** rng.randrange(1, 12)) for _ in range(3000)]
    return texts, ints + [None]


def main(argv):
    texts, ints = cases()
    for path in argv:
        with open(path, encoding="utf-8") as f:
            blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
        if not blocks:
            print("%s: no python block" % path)
            continue
        space = {}
        try:
            exec(blocks[0], space)
        except Exception as e:
            print("%s: does not load (%s)" % (path, e))
            continue
        right = total = 0
        wrong = []
        for name, ref, fn, args in (("parse", ref_parse, space["parse_duration"], texts + [None, 5]),
                                    ("format", ref_format, space["format_duration"], ints)):
            for arg in args:
                total += 1
                want, got = outcome(ref, arg), outcome(fn, arg)
                if want == got:
                    right += 1
                elif len(wrong) < 3:
                    wrong.append("%s %r: %s, want %s" % (name, arg, got, want))
        print("%s: %d of %d cases right (%.2f%%)%s" % (path, right, total, 100.0 * right / total,
                                                      "; " + "; ".join(wrong) if wrong else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
