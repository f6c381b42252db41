"""Hidden check for packing.py: used height on 14 fixed instances, against each instance's
optimum (every instance is a known strip cut into pieces, so a perfect packing exists).

    python3 benchmarks/real_agents/packing_check.py <solution.md>...

Prints, per solution, whether every answer was valid, deterministic and in time (1.5 s, the
task's 1 s with room for a loaded machine), its total used height over all instances, that
total as a share of the optima's (1.0 = optimal; lower is better), and the share per instance."""
import importlib.util, os, random, re, signal, sys, tempfile, time


def cut(rng, x, y, w, h, pieces, out):
    """Cut the box (w x h) into about `pieces` rectangles by guillotine cuts."""
    if pieces <= 1 or (w < 2 and h < 2):
        out.append((w, h))
        return
    vertical = (w >= 2 and (h < 2 or rng.random() < w / float(w + h)))
    if vertical:
        k = rng.randint(1, w - 1)
        share = max(1, min(pieces - 1, round(pieces * k / float(w))))
        cut(rng, x, y, k, h, share, out)
        cut(rng, x + k, y, w - k, h, pieces - share, out)
    else:
        k = rng.randint(1, h - 1)
        share = max(1, min(pieces - 1, round(pieces * k / float(h))))
        cut(rng, x, y, w, k, share, out)
        cut(rng, x, y + k, w, h - k, pieces - share, out)


def instances(seed=31):
    rng = random.Random(seed)
    out = []
    for n in [20, 40, 60, 80, 100, 120, 150, 180, 200, 220, 250, 270, 290, 300]:
        width = rng.choice([40, 60, 100, 150, 250, 400])
        height = rng.randint(width // 2, width * 3)
        sizes = []
        cut(rng, 0, 0, width, height, n, sizes)
        sizes = [(w, h) for w, h in sizes if h <= 1000]
        rng.shuffle(sizes)
        ids = rng.sample(range(1, 100000), len(sizes))
        rects = []
        for i, (w, h) in enumerate(sizes):
            if h <= width and rng.random() < 0.5:
                w, h = h, w  # given turned: the optimum needs some turned back
            rects.append((ids[i], w, h))
        out.append((width, rects, height))
    return out


def load_module(path):
    text = open(path, encoding="utf-8").read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    if not blocks:
        raise ValueError("no python block")
    folder = tempfile.mkdtemp()
    target = os.path.join(folder, "packing_%d.py" % abs(hash(path)))
    with open(target, "w") as f:
        f.write(blocks[0])
    spec = importlib.util.spec_from_file_location("packing_%d" % abs(hash(path)), target)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def used_height(width, rects, placed):
    """The used height, or None when the answer breaks a rule."""
    dims = {r[0]: (r[1], r[2]) for r in rects}
    if sorted(p[0] for p in placed) != sorted(dims):
        return None
    boxes = []
    for rid, x, y, turned in placed:
        w, h = dims[rid]
        if turned:
            w, h = h, w
        if not all(isinstance(v, int) for v in (x, y)) or x < 0 or y < 0 or x + w > width:
            return None
        boxes.append((x, y, x + w, y + h))
    boxes.sort()
    for i, a in enumerate(boxes):  # sweep by x: only boxes starting before a ends can overlap it
        for b in boxes[i + 1:]:
            if b[0] >= a[2]:
                break
            if b[1] < a[3] and a[1] < b[3]:
                return None
    return max((b[3] for b in boxes), default=0)


def score(path):
    signal.alarm(600)
    mod = load_module(path)
    ok, total, best, slowest, shares = True, 0, 0, 0.0, []
    if list(mod.pack(50, [])) != []:
        ok = False
    for k, (width, rects, optimum) in enumerate(instances()):
        start = time.perf_counter()
        placed = [tuple(p) for p in mod.pack(width, list(rects))]
        took = time.perf_counter() - start
        slowest = max(slowest, took)
        h = used_height(width, rects, placed)
        if k == 0 and [tuple(p) for p in mod.pack(width, list(rects))] != placed:
            ok = False
        if h is None or took > 1.5:
            ok = False
            h = 2 * optimum
            shares.append(float("nan"))
        else:
            shares.append(h / float(optimum))
        total += h
        best += optimum
    return ok, total, best, slowest, shares


if __name__ == "__main__":
    for path in sys.argv[1:]:
        try:
            ok, total, best, slowest, shares = score(path)
            print("%s: %s, total height %d (%.4f of the optima's %d), slowest instance %.2f s; per instance %s" % (
                path, "valid" if ok else "INVALID", total, total / float(best), best, slowest,
                " ".join("%.3f" % s for s in shares)))
        except BaseException as e:
            print("%s: failed to run (%s)" % (path, str(e)[:100]))
