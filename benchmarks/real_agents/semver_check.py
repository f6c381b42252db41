"""Hidden check for the semver task: extract the ```python block of a solution file and score it."""
import importlib.util, re, sys, os, tempfile, signal

VALID = ["0.0.4", "1.2.3", "10.20.30", "1.1.2-prerelease+meta", "1.1.2+meta", "1.1.2+meta-valid", "1.0.0-alpha",
 "1.0.0-beta", "1.0.0-alpha.beta", "1.0.0-alpha.beta.1", "1.0.0-alpha.1", "1.0.0-alpha0.valid", "1.0.0-alpha.0valid",
 "1.0.0-alpha-a.b-c-somethinglong+build.1-aef.1-its-okay", "1.0.0-rc.1+build.1", "2.0.0-rc.1+build.123",
 "1.2.3-beta", "10.2.3-DEV-SNAPSHOT", "1.2.3-SNAPSHOT-123", "1.0.0", "2.0.0", "1.1.7", "2.0.0+build.1848",
 "2.0.1-alpha.1227", "1.0.0-alpha+beta", "1.2.3----RC-SNAPSHOT.12.9.1--.12+788", "1.2.3----R-S.12.9.1--.12+meta",
 "1.2.3----RC-SNAPSHOT.12.9.1--.12", "1.0.0+0.build.1-rc.10000aaa-kk-0.1",
 "99999999999999999999999.999999999999999999.99999999999999999", "1.0.0-0A.is.legal", "1.0.0+01", "1.0.0-0", "1.0.0-x-0"]
INVALID = ["1", "1.2", "1.2.3-0123", "1.2.3-0123.0123", "1.1.2+.123", "+invalid", "-invalid", "-invalid+invalid",
 "-invalid.01", "alpha", "alpha.beta", "alpha.beta.1", "alpha.1", "alpha+beta", "alpha_beta", "alpha.", "alpha..",
 "beta", "1.0.0-alpha_beta", "-alpha.", "1.0.0-alpha..", "1.0.0-alpha..1", "1.0.0-alpha...1", "1.0.0-alpha....1",
 "1.0.0-alpha.....1", "1.0.0-alpha......1", "1.0.0-alpha.......1", "01.1.1", "1.01.1", "1.1.01", "1.2", "1.2.3.DEV",
 "1.2-SNAPSHOT", "1.2.31.2.3----RC-SNAPSHOT.12.09.1--..12+788", "1.2-RC-SNAPSHOT", "-1.0.3-gamma+b7718",
 "+justmeta", "9.8.7+meta+meta", "9.8.7-whatever+meta+meta",
 "99999999999999999999999.999999999999999999.99999999999999999----RC-SNAPSHOT.12.09.1--------------------------------..12",
 "v1.2.3", " 1.2.3", "1.2.3 ", "1.2.3\n", "1.2.3-", "1.2.3+", "1.2.3-+", "1.2.3-a+", "1.2.3-é", "1.2.3+é", "", "1.2.3-a b",
 "١.2.3", "1.٢.3", "1.2.3-٣", "1.2.3-00", "0.0.0-01", "1.2.-3", "1.-2.3", "+1.2.3", "1.2.3-a.+b", "1.2.3-a.b.", "1.2.3+a."]
ORDER = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
 "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "2.0.0", "2.1.0", "2.1.1"]
MORE = [("1.0.0+a", "1.0.0+b", 0), ("1.0.0-1", "1.0.0-a", -1), ("1.0.0-2", "1.0.0-10", -1), ("1.0.0-a", "1.0.0-b", -1),
 ("1.0.0-B", "1.0.0-a", -1), ("1.0.0-a.1", "1.0.0-a", 1), ("1.0.0-a-b", "1.0.0-a", 1), ("1.0.0-0.0", "1.0.0-0", 1),
 ("1.0.0-10", "1.0.0-9", 1), ("1.0.0-a10", "1.0.0-a9", -1),
 ("99999999999999999999999.0.0", "99999999999999999999998.0.0", 1), ("1.0.0-99999999999999999999", "1.0.0-99999999999999999998", 1),
 ("1.0.0-alpha+x", "1.0.0-alpha+y", 0), ("1.0.0-rc.1+b", "1.0.0", -1), ("0.0.0", "0.0.0-0", 1), ("1.0.0-a.b.c", "1.0.0-a.b", 1),
 ("1.0.0-1.a", "1.0.0-1.1", 1), ("1.0.0--", "1.0.0-0", 1), ("1.0.0-a-", "1.0.0-a", 1), ("1.0.0-Z", "1.0.0-a", -1)]
BUMP = [("1.2.3", "patch", "1.2.4"), ("1.2.3", "minor", "1.3.0"), ("1.2.3", "major", "2.0.0"), ("1.2.3-rc.1", "patch", "1.2.3"),
 ("1.2.0-rc.1", "minor", "1.2.0"), ("1.0.0-rc.1", "major", "1.0.0"), ("1.2.3-rc.1", "minor", "1.3.0"),
 ("1.2.0-rc.1", "major", "2.0.0"), ("1.2.3+b", "patch", "1.2.4"), ("1.2.3-a+b", "patch", "1.2.3"),
 ("0.0.0-0", "patch", "0.0.0"), ("1.0.0-0", "minor", "1.0.0"), ("2.0.0-x", "major", "2.0.0"), ("1.0.1-x", "major", "2.0.0"),
 ("99999999999999999999.0.0", "major", "100000000000000000000.0.0")]


def load(sol):
    text = open(sol, encoding="utf-8").read()
    m = re.search(r"^```python[ \t]*\n(.*?)^```", text, re.S | re.M)
    if not m:
        return None
    d = tempfile.mkdtemp()
    p = os.path.join(d, "semver_sol.py")
    open(p, "w").write(m.group(1))
    spec = importlib.util.spec_from_file_location("semver_sol", p)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Timeout(Exception):
    pass


def guarded(fn, *a):
    def h(*_):
        raise Timeout()
    signal.signal(signal.SIGALRM, h)
    signal.alarm(2)
    try:
        return fn(*a)
    finally:
        signal.alarm(0)


def score(sol):
    try:
        mod = load(sol)
    except Exception as e:
        return 0, 1, "load error %r" % e
    if mod is None:
        return 0, 1, "no python block"
    ok = total = 0
    fails = []
    def check(name, cond):
        nonlocal ok, total
        total += 1
        if cond:
            ok += 1
        else:
            fails.append(name)
    for v in VALID:
        try:
            r = guarded(mod.parse, v)
            core = v.split("+")[0].split("-")[0].split(".")
            check("valid " + v, isinstance(r, tuple) and len(r) == 5 and list(r[:3]) == [int(x) for x in core])
        except Exception:
            check("valid " + v, False)
    for v in INVALID:
        try:
            guarded(mod.parse, v)
            check("invalid " + repr(v), False)
        except ValueError:
            check("invalid " + repr(v), True)
        except Exception:
            check("invalid " + repr(v), False)
    try:
        r = guarded(mod.parse, "1.0.0-alpha.1.x-y+build.007")
        check("parse shape", r == (1, 0, 0, ("alpha", 1, "x-y"), ("build", "007")))
    except Exception:
        check("parse shape", False)
    for i, a in enumerate(ORDER):
        for j, b in enumerate(ORDER):
            try:
                check("cmp %s %s" % (a, b), guarded(mod.compare, a, b) == (i > j) - (i < j))
            except Exception:
                check("cmp %s %s" % (a, b), False)
    for a, b, want in MORE:
        for x, y, w in ((a, b, want), (b, a, -want)):
            try:
                check("cmp %s %s" % (x, y), guarded(mod.compare, x, y) == w)
            except Exception:
                check("cmp %s %s" % (x, y), False)
    for bad in ("1.0", "01.0.0", "1.0.0-"):
        try:
            guarded(mod.compare, bad, "1.0.0")
            check("cmp invalid " + bad, False)
        except ValueError:
            check("cmp invalid " + bad, True)
        except Exception:
            check("cmp invalid " + bad, False)
    for v, part, want in BUMP:
        try:
            check("bump %s %s" % (v, part), guarded(mod.bump, v, part) == want)
        except Exception:
            check("bump %s %s" % (v, part), False)
    for v, part in (("1.2.3", "build"), ("1.2", "patch"), ("1.2.3", "")):
        try:
            guarded(mod.bump, v, part)
            check("bump invalid", False)
        except ValueError:
            check("bump invalid", True)
        except Exception:
            check("bump invalid", False)
    # speed: long but valid, and long invalid
    longv = "1.2.3-" + ".".join(["a1"] * 3000)
    longbad = "1.2.3-" + "a" * 10000 + "_"
    for s, valid in ((longv, True), (longbad, False), ("1." * 5000 + "1", False)):
        try:
            guarded(mod.parse, s)
            check("long", valid)
        except ValueError:
            check("long", not valid)
        except Exception:
            check("long", False)
    # very large numbers: beyond Python's default 4,300-digit limit for int(str)
    big = "9" * 5000
    for name, fn in (("big parse", lambda: guarded(mod.parse, big + ".0.0")[0] == 10 ** 5000 - 1),
                     ("big prerelease", lambda: guarded(mod.parse, "1.0.0-" + big)[3][0] == 10 ** 5000 - 1),
                     ("big compare", lambda: guarded(mod.compare, big + ".0.0", "1" + "0" * 5000 + ".0.0") == -1),
                     ("big pre compare", lambda: guarded(mod.compare, "1.0.0-" + big, "1.0.0-1" + "0" * 5000) == -1),
                     ("big bump", lambda: guarded(mod.bump, big + ".1.1", "major") == "1" + "0" * 5000 + ".0.0"),
                     ("big minor bump", lambda: guarded(mod.bump, "1." + big + ".1", "minor") == "1.1" + "0" * 5000 + ".0")):
        try:
            check(name, fn())
        except Exception:
            check(name, False)
    return ok, total, ("; ".join(fails[:8]))


if __name__ == "__main__":
    for sol in sys.argv[1:]:
        ok, total, why = score(sol)
        print("%s: %d/%d %s" % (sol, ok, total, why))
