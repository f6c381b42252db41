"""Hidden check for cronnext: a slow, obviously-correct oracle and a scorer."""
import datetime as dt, importlib.util, os, random, re, signal, sys, tempfile

NAMES = {3: ["JAN","FEB","MAR","APR","MAY","JUN","JUL","AUG","SEP","OCT","NOV","DEC"],
         4: ["SUN","MON","TUE","WED","THU","FRI","SAT"]}
RANGES = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]
MACROS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
          "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}


def value(tok, i):
    lo, hi = RANGES[i]
    if re.fullmatch(r"[0-9]+", tok):
        v = int(tok)
    elif i in NAMES and tok.upper() in NAMES[i]:
        v = NAMES[i].index(tok.upper()) + (1 if i == 3 else 0)
    else:
        raise ValueError(tok)
    if not lo <= v <= hi:
        raise ValueError(tok)
    return v


def field(text, i):
    lo, hi = RANGES[i]
    out = set()
    for item in text.split(","):
        m = re.fullmatch(r"([^/]+)(?:/([0-9]+))?", item)
        if not m:
            raise ValueError(item)
        base, step = m.group(1), m.group(2)
        if step is not None:
            step = int(step)
            if step < 1:
                raise ValueError(item)
        if base == "*":
            a, b = lo, hi
        elif "-" in base:
            x, y = base.split("-", 1)
            a, b = value(x, i), value(y, i)
            if a > b:
                raise ValueError(item)
        else:
            a = value(base, i)
            b = hi if step is not None else a
        out.update(range(a, b + 1, step or 1))
    if i == 4:
        out = {0 if v == 7 else v for v in out}
    return out


def parse(expr):
    e = expr.strip()
    if e.startswith("@"):
        if e.lower() not in MACROS:
            raise ValueError(expr)
        e = MACROS[e.lower()]
    parts = e.split()
    if len(parts) != 5 or any(c not in " \t" for c in re.findall(r"\s", e)):
        raise ValueError(expr)
    sets = [field(p, i) for i, p in enumerate(parts)]
    return sets, parts[2].startswith("*") or parts[4].startswith("*")


def oracle(expr, after):
    (mins, hours, doms, months, dows), star = parse(expr)
    start = after.replace(second=0, microsecond=0) + dt.timedelta(minutes=1)
    day = start.date()
    end = day + dt.timedelta(days=366 * 400)
    while day <= end:
        if day.month in months:
            dm, dw = day.day in doms, (day.isoweekday() % 7) in dows
            if (dm and dw) if star else (dm or dw):
                for h in sorted(hours):
                    for m in sorted(mins):
                        t = dt.datetime(day.year, day.month, day.day, h, m)
                        if t >= start:
                            return t
        day += dt.timedelta(days=1)
    raise ValueError("never")


FIXED = ["* * * * *", "*/15 * * * *", "0 0 * * *", "0 0 29 2 *", "0 0 29 2 1", "0 12 * * MON-FRI", "0 12 1 * MON",
         "30 4 1,15 * 5", "0 0 * * 7", "0 0 * * 0", "0 0 */2 * 1", "0 0 1 * */2", "5-10/2 1-3 * JAN-mar sun",
         "0 0 31 * *", "0 0 31 4,6,9,11 *", "0 0 30 2 *", "59 23 31 12 *", "0 0 1 1 *", "@yearly", "@ANNUALLY",
         "@monthly", "@weekly", "@daily", "@midnight", "@hourly", "  0\t0  * * *  ", "0 9-17/3 * * 1-5",
         "0 0 13 * 5", "0 0 29 2 0", "10/20 * * * *", "0 5/6 * * *", "0 0 1-7 * 1", "0 0 8-14 * 2/3",
         "0 0 * feb sat", "0 0 * * SUN,sat", "0-59/59 * * * *", "0 0 29 2 7", "1,2,3 4 5 6 *", "0 0 31 2,4 *",
         "0 0 * * *\n", "\t0 0 * * * \n", "\n@daily\n"]
INVALID = ["* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * 32 * *", "* * * 13 *",
           "* * * 0 *", "* * * * 8", "*/0 * * * *", "5-1 * * * *", "*/ * * * *", "1,,2 * * * *", ", * * * *",
           "@reboot", "@every", "* * * * MON-", "* * * JAN-FOO *", "* * * * FRI-MON", "a * * * *", "1.5 * * * *",
           "* * * MON *", "* * * * JAN", "-1 * * * *", "*/-1 * * * *", "1-2-3 * * * *", "", "   ", "* * * * * ;",
           "@yearly 1", "*/1/2 * * * *", "0x1 * * * *", "١ * * * *", "* *\n* * *", "*\x0b* * * *"]


def load(sol):
    text = open(sol, encoding="utf-8").read()
    m = re.search(r"^```python[ \t]*\n(.*?)^```", text, re.S | re.M)
    if not m:
        return None
    d = tempfile.mkdtemp()
    p = os.path.join(d, "cron_sol.py")
    open(p, "w").write(m.group(1))
    spec = importlib.util.spec_from_file_location("cron_sol", p)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def guarded(fn, *a, seconds=2):
    def h(*_):
        raise TimeoutError()
    signal.signal(signal.SIGALRM, h)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn(*a)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def random_expr(rng):
    parts = []
    for i, (lo, hi) in enumerate(RANGES):
        k = rng.random()
        if k < 0.35:
            parts.append("*")
        elif k < 0.5:
            parts.append("*/%d" % rng.randint(1, max(1, (hi - lo) // 2)))
        else:
            items = []
            for _ in range(rng.randint(1, 3)):
                a = rng.randint(lo, hi)
                b = rng.randint(a, hi)
                r = rng.random()
                items.append(str(a) if r < 0.4 else "%d-%d" % (a, b) if r < 0.7 else "%d-%d/%d" % (a, b, rng.randint(1, 5))
                             if r < 0.9 else "%d/%d" % (a, rng.randint(1, 7)))
            parts.append(",".join(items))
    return " ".join(parts)


def cases(n=300, seed=7):
    rng = random.Random(seed)
    out = []
    starts = [dt.datetime(2024, 2, 28, 23, 59, 30), dt.datetime(2023, 12, 31, 23, 59), dt.datetime(2026, 11, 30, 22, 5, 1),
              dt.datetime(2099, 12, 31, 23, 59), dt.datetime(2000, 1, 1)]
    for e in FIXED:
        for s in starts:
            out.append((e, s))
    for _ in range(n):
        s = dt.datetime(2000, 1, 1) + dt.timedelta(minutes=rng.randint(0, 60 * 24 * 365 * 100), seconds=rng.randint(0, 59))
        out.append((random_expr(rng), s))
    return out


def score(sol):
    try:
        mod = load(sol)
    except Exception as e:
        return 0, 1, "load error %r" % e
    if mod is None or not hasattr(mod, "next_fire"):
        return 0, 1, "no python block or no next_fire"
    ok = total = 0
    fails = []
    for e, s in cases():
        try:
            want = oracle(e, s)
        except ValueError:
            want = ValueError
        total += 1
        try:
            got = guarded(mod.next_fire, e, s)
        except ValueError:
            got = ValueError
        except Exception as x:
            got = "error %s" % type(x).__name__
        if got == want:
            ok += 1
        else:
            fails.append("%r@%s: %s != %s" % (e, s, got, want))
    for e in INVALID:
        total += 1
        try:
            guarded(mod.next_fire, e, dt.datetime(2026, 1, 1))
            fails.append("accepted %r" % e)
        except ValueError:
            ok += 1
        except Exception as x:
            fails.append("%r raised %s" % (e, type(x).__name__))
    return ok, total, "; ".join(fails[:6])


if __name__ == "__main__":
    for sol in sys.argv[1:]:
        ok, total, why = score(sol)
        print("%s: %d/%d %s" % (sol, ok, total, why))
