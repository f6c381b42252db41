"""Hidden check for roman.py: every numeral, every bad number, and thousands of bad strings.

    python3 benchmarks/real_agents/roman_check.py <solution.md>...

Prints, per solution, the share of cases it gets right (a case is right when it returns the
same value as the reference, or raises ValueError where the reference does)."""
import importlib.util, os, random, re, signal, sys, tempfile

PAIRS = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"),
         (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


def ref_to(n):
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 3999:
        raise ValueError(n)
    out = ""
    for v, s in PAIRS:
        while n >= v:
            out, n = out + s, n - v
    return out


CANON = {ref_to(n): n for n in range(1, 4000)}


def ref_from(s):
    if not isinstance(s, str) or s not in CANON:
        raise ValueError(s)
    return CANON[s]


def cases(seed=7):
    rng = random.Random(seed)
    to = list(range(1, 4000)) + [0, -1, -3999, 4000, 10 ** 6, True, False, 2.0, "5", None, 3.5]
    frm = list(CANON) + ["", " I", "I ", "i", "iv", "IIII", "IC", "VX", "MMMM", "XXXX", "VV", "LL", "DD", "IL",
                         "XM", "CMM", "MCMC", "IXI", None, 5, b"IV"]
    for _ in range(6000):
        k = rng.randrange(1, 9)
        frm.append("".join(rng.choice("IVXLCDM") for _ in range(k)))
    for _ in range(500):
        s = ref_to(rng.randrange(1, 4000))
        i = rng.randrange(len(s) + 1)
        frm.append(s[:i] + rng.choice("IVXLCDMivx ") + s[i:])
    return to, frm


def load(path):
    text = open(path, encoding="utf-8").read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    if not blocks:
        raise SystemExit("%s: no ```python block" % path)
    folder = tempfile.mkdtemp()
    with open(os.path.join(folder, "roman.py"), "w") as f:
        f.write(blocks[0])
    spec = importlib.util.spec_from_file_location("roman_under_test", os.path.join(folder, "roman.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def same(fn, ref, x):
    try:
        want = ("ok", ref(x))
    except ValueError:
        want = ("error",)
    try:
        got = ("ok", fn(x))
    except ValueError:
        got = ("error",)
    except Exception as e:  # any other exception is a wrong answer
        got = ("other", type(e).__name__)
    return got == want


def score(path):
    signal.alarm(60)
    mod = load(path)
    to, frm = cases()
    right = sum(same(mod.to_roman, ref_to, x) for x in to) + sum(same(mod.from_roman, ref_from, x) for x in frm)
    return right, len(to) + len(frm)


if __name__ == "__main__":
    for path in sys.argv[1:]:
        try:
            right, total = score(path)
            print("%s: %d of %d cases right (%.2f%%)" % (path, right, total, 100.0 * right / total))
        except BaseException as e:
            print("%s: failed to run (%s)" % (path, str(e)[:100]))
