"""Hidden check for schedule.py: total tardiness on 40 fixed instances, against the earliest-due-date rule.

    python3 benchmarks/real_agents/tardiness_check.py <solution.md>...

Prints, per solution, whether every answer was a valid order in time, its total tardiness over
all instances, and that total as a share of earliest-due-date's (lower is better; 1.0 = EDD)."""
import importlib.util, os, random, re, signal, sys, tempfile, time


def instances(seed=11):
    rng = random.Random(seed)
    out = []
    for n in [20] * 10 + [80] * 10 + [200] * 10 + [300] * 10:
        p = [rng.randint(1, 100) for _ in range(n)]
        total = sum(p)
        # tight and loose due dates alike: the rule of thumb of the literature (tardiness factor, range)
        tf, rdd = rng.choice([0.2, 0.4, 0.6, 0.8]), rng.choice([0.2, 0.6, 1.0])
        lo, hi = max(0, int(total * (1 - tf - rdd / 2))), int(total * (1 - tf + rdd / 2))
        d = [min(total, max(0, rng.randint(lo, max(lo, hi)))) for _ in range(n)]
        ids = rng.sample(range(1000, 100000), n)
        out.append([(ids[k], p[k], d[k]) for k in range(n)])
    return out


def tardiness(jobs, order):
    info = {j: (p, d) for j, p, d in jobs}
    t = total = 0
    for j in order:
        p, d = info[j]
        t += p
        total += max(0, t - d)
    return total


def edd(jobs):
    return [j for j, _, _ in sorted(jobs, key=lambda x: (x[2], x[1], x[0]))]


def load(path):
    text = open(path, encoding="utf-8").read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    if not blocks:
        raise SystemExit("%s: no ```python block" % path)
    folder = tempfile.mkdtemp()
    with open(os.path.join(folder, "schedule.py"), "w") as f:
        f.write(blocks[0])
    spec = importlib.util.spec_from_file_location("schedule_under_test", os.path.join(folder, "schedule.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def score(path):
    signal.alarm(300)
    mod = load(path)
    ok, total, base, slowest = True, 0, 0, 0.0
    if list(mod.schedule([])) != []:
        ok = False
    for jobs in instances():
        start = time.perf_counter()
        order = list(mod.schedule(list(jobs)))
        slowest = max(slowest, time.perf_counter() - start)
        if sorted(order) != sorted(j for j, _, _ in jobs):
            ok = False
            continue
        total += tardiness(jobs, order)
        base += tardiness(jobs, edd(jobs))
    return ok, total, base, slowest


if __name__ == "__main__":
    for path in sys.argv[1:]:
        try:
            ok, total, base, slowest = score(path)
            print("%s: %s, total tardiness %d (%.3f of EDD's %d), slowest instance %.2f s" % (
                path, "valid" if ok else "INVALID", total, total / float(base), base, slowest))
        except BaseException as e:
            print("%s: failed to run (%s)" % (path, str(e)[:100]))
