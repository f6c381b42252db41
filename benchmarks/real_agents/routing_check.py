"""Hidden check for routing.py: total distance on 12 fixed instances, against the Clarke-Wright savings heuristic.

    python3 benchmarks/real_agents/routing_check.py <solution.md>...

Prints, per solution, whether every answer was valid and in time (2 s), its total distance over
all instances, that total as a share of plain savings' (lower is better; 1.0 = savings), and the
share per instance."""
import importlib.util, math, os, random, re, signal, sys, tempfile, time


def instances(seed=23):
    rng = random.Random(seed)
    out = []
    for k, n in enumerate([40, 60, 80, 100, 120, 140, 150, 160, 170, 180, 190, 200]):
        cap = rng.choice([30, 50, 100, 200])
        depot = (50.0, 50.0) if k % 3 else (rng.uniform(0, 100), rng.uniform(0, 100))
        if k % 2:  # clustered
            centres = [(rng.uniform(10, 90), rng.uniform(10, 90)) for _ in range(rng.randint(3, 8))]
            pts = []
            for _ in range(n):
                cx, cy = rng.choice(centres)
                pts.append((min(100.0, max(0.0, rng.gauss(cx, 6))), min(100.0, max(0.0, rng.gauss(cy, 6)))))
        else:
            pts = [(rng.uniform(0, 100), rng.uniform(0, 100)) for _ in range(n)]
        ids = rng.sample(range(1, 10000), n)
        custs = [(ids[i], pts[i][0], pts[i][1], rng.randint(1, max(1, cap // 4))) for i in range(n)]
        out.append((depot, custs, cap))
    return out


def cost(depot, custs, routes):
    at = {c[0]: (c[1], c[2]) for c in custs}
    total = 0.0
    for r in routes:
        prev = depot
        for c in r:
            total += math.hypot(at[c][0] - prev[0], at[c][1] - prev[1])
            prev = at[c]
        total += math.hypot(depot[0] - prev[0], depot[1] - prev[1])
    return total


def valid(custs, cap, routes):
    dem = {c[0]: c[3] for c in custs}
    seen = [c for r in routes for c in r]
    return (sorted(seen) == sorted(dem) and all(len(r) > 0 for r in routes)
            and all(sum(dem[c] for c in r) <= cap for r in routes))


def savings(depot, custs, cap):
    at = {c[0]: c for c in custs}
    d0 = {c[0]: math.hypot(c[1] - depot[0], c[2] - depot[1]) for c in custs}
    route_of = {c[0]: [c[0]] for c in custs}
    load = {c[0]: c[3] for c in custs}
    pairs = []
    ids = list(at)
    for i in range(len(ids)):
        for j in range(i + 1, len(ids)):
            a, b = at[ids[i]], at[ids[j]]
            pairs.append((d0[a[0]] + d0[b[0]] - math.hypot(a[1] - b[1], a[2] - b[2]), a[0], b[0]))
    pairs.sort(reverse=True)
    for s, a, b in pairs:
        ra, rb = route_of[a], route_of[b]
        if ra is rb or sum(at[c][3] for c in ra) + sum(at[c][3] for c in rb) > cap:
            continue
        if ra[-1] == a and rb[0] == b:
            new = ra + rb
        elif ra[0] == a and rb[-1] == b:
            new = rb + ra
        elif ra[0] == a and rb[0] == b:
            new = ra[::-1] + rb
        elif ra[-1] == a and rb[-1] == b:
            new = ra + rb[::-1]
        else:
            continue
        for c in new:
            route_of[c] = new
    out, seen = [], set()
    for r in route_of.values():
        if id(r) not in seen:
            seen.add(id(r))
            out.append(r)
    return out


def load_module(path):
    text = open(path, encoding="utf-8").read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    if not blocks:
        raise SystemExit("%s: no ```python block" % path)
    folder = tempfile.mkdtemp()
    with open(os.path.join(folder, "routing.py"), "w") as f:
        f.write(blocks[0])
    spec = importlib.util.spec_from_file_location("routing_under_test", os.path.join(folder, "routing.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def score(path):
    signal.alarm(600)
    mod = load_module(path)
    ok, total, base, slowest, shares = True, 0.0, 0.0, 0.0, []
    if list(mod.plan_routes((50.0, 50.0), [], 10)) != []:
        ok = False
    for depot, custs, cap in instances():
        start = time.perf_counter()
        routes = [list(r) for r in mod.plan_routes(depot, list(custs), cap)]
        took = time.perf_counter() - start
        slowest = max(slowest, took)
        ref = cost(depot, custs, savings(depot, custs, cap))
        if not valid(custs, cap, routes) or took > 2.0:
            ok = False
            shares.append(float("nan"))
            total += 2 * ref
        else:
            c = cost(depot, custs, routes)
            total += c
            shares.append(c / ref)
        base += ref
    return ok, total, base, slowest, shares


if __name__ == "__main__":
    for path in sys.argv[1:]:
        try:
            ok, total, base, slowest, shares = score(path)
            print("%s: %s, total distance %.1f (%.4f of savings' %.1f), slowest instance %.2f s; per instance %s" % (
                path, "valid" if ok else "INVALID", total, total / base, base, slowest,
                " ".join("%.3f" % s for s in shares)))
        except BaseException as e:
            print("%s: failed to run (%s)" % (path, str(e)[:100]))
