#!/usr/bin/env python3
"""The hidden check of the split_args bug-fix task: the solution's one python block against a
reference, on the task's examples, every planted bug's case and generated lines.

    python3 benchmarks/real_agents/splitargs_check.py <solution.md>...
"""

import random
import re
import sys

SEPARATORS = " \t"


def ref_split(line):
    if not isinstance(line, str):
        raise TypeError
    out, buf, started, i, n = [], [], False, 0, len(line)
    while i < n:
        c = line[i]
        if c in SEPARATORS:
            if started:
                out.append("".join(buf))
                buf, started = [], False
            i += 1
        elif c == "#" and not started:
            break
        elif c == "\\":
            if i + 1 >= n:
                raise ValueError
            buf.append(line[i + 1])
            started, i = True, i + 2
        elif c == "'":
            end = line.find("'", i + 1)
            if end < 0:
                raise ValueError
            buf.append(line[i + 1:end])
            started, i = True, end + 1
        elif c == '"':
            i += 1
            while True:
                if i >= n:
                    raise ValueError
                if line[i] == '"':
                    break
                if line[i] == "\\" and i + 1 < n and line[i + 1] in '"\\':
                    buf.append(line[i + 1])
                    i += 2
                    continue
                buf.append(line[i])
                i += 1
            started, i = True, i + 1
        else:
            buf.append(c)
            started, i = True, i + 1
    if started:
        out.append("".join(buf))
    return out


def outcome(fn, arg):
    try:
        return ("ok", fn(arg))
    except (TypeError, ValueError) as e:
        return (type(e).__name__, None)
    except Exception as e:  # a crash of another kind is wrong too
        return ("crash " + type(e).__name__, None)


ALPHABET = ["a", "b", " ", "\t", "'", '"', "\\", "#", "\r", "\xa0", "\x0b", "\u00e9"]


def cases():
    rng = random.Random(11)
    lines = ['cp "my file" dest', "echo 'it''s' # done", "a\\ b\tc", "", "   ", "\t", "# all", "a #b", "a#b",
             "''", "a '' b", 'a "" b', "a''b", "''#x", "'' #x", "\\#a", "#", "a\\", "'abc", '"abc', '"a\\"',
             '"\\a"', '"\\\\"', '"\\""', "'\\'", "a\rb", "a\xa0b", "a\x0bb", "a\x0cb", "x\t\ty", ' "#" ',
             "a\\\\", "\\ ", "\\\t", "'a'\"b\"c", '"a\\$b"', "a # '", "a '#' b"]
    for _ in range(6000):
        lines.append("".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 15))))
    return lines + [None, 5, b"a b"]


def main(argv):
    args = cases()
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
        right, wrong = 0, []
        for arg in args:
            want, got = outcome(ref_split, arg), outcome(space["split_args"], arg)
            if want == got:
                right += 1
            elif len(wrong) < 3:
                wrong.append("%r: %s, want %s" % (arg, got, want))
        print("%s: %d of %d cases right (%.2f%%)%s" % (path, right, len(args), 100.0 * right / len(args),
                                                      "; " + "; ".join(wrong) if wrong else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
