#!/usr/bin/env python3
"""run_summary.py: the figures of one finished run, read from its state and verdict files.

Prints calls, looks per match by round, equal votes, the decided and open differences every
verdict and probe listed, the offers made and how they were answered, and the text that ships.

    python3 benchmarks/real_agents/run_summary.py <project folder> <run>
"""

import json
import os
import sys


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip())
        return 2
    folder, run = argv
    base = os.path.join(folder, ".arena", run)
    with open(os.path.join(base, "state.json"), encoding="utf-8") as f:
        st = json.load(f)["state"]
    calls = sum(1 for info in st["jobs"].values() if info["s"] == "done")
    minutes = job_minutes(base)
    print("run %s: %d agents entered of %d, %d calls" % (run, st["agents"] - len((st.get("field") or {}).get(
        "withdrawn", [])), st["agents"], calls))
    for rnd in st["rounds"]:
        looks = []
        for m in rnd["matches"]:
            res = st["results"].get(m["id"], {})
            looks.append("%s %s%s%s" % (m["id"], res.get("n", "-") if res.get("how") == "judge" else res.get("how", "-"),
                                        " eq" if res.get("eq") else "", " tie" if res.get("tie") else ""))
        print("round %d%s: %s" % (rnd["n"], " (merge)" if rnd.get("merge") else "", ", ".join(looks)))
    decided = open_ = 0
    for name in sorted(os.listdir(os.path.join(base, "out"))):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(base, "out", name), encoding="utf-8") as f:
            try:
                v = json.load(f)
            except ValueError:
                continue
        if "decided" in v:
            decided += len(v["decided"])
            open_ += len(v.get("open", []))
            totals = {k: sum(c.values()) for k, c in v.get("scores", {}).items()}
            print("  %s: %s, %d decided, %d open%s" % (
                name[:-5], " / ".join("%s %d" % kv for kv in sorted(totals.items())) if totals else
                "%d groups" % len(v.get("groups", [])), len(v["decided"]), len(v.get("open", [])),
                ", confidence %s" % v["confidence"] if "confidence" in v else ""))
    print("differences listed: %d decided, %d open" % (decided, open_))
    field = st.get("field")
    if field:
        print("early look: %s (%s)" % (field.get("why"), field.get("choice")))
    if st.get("settle"):
        print("settle offer after round %d: %s (%s)" % (st["settle"]["round"], st["settle"]["why"],
                                                        st["settle"]["choice"]))
    print("ships: %s, %s" % (st.get("ship") or st.get("champion"), st["sol"].get(st.get("ship") or
                                                                             st.get("champion"))))
    for kind, values in sorted(minutes.items()):
        values.sort()
        print("minutes per %s: median %.1f over %d (from hand-out to collection)" % (
            kind, values[len(values) // 2], len(values)))
    return 0


def job_minutes(base):
    """{job kind: [minutes from a job's hand-out to its collection]}, from the journal."""
    out, issued = {}, {}
    with open(os.path.join(base, "journal.jsonl"), encoding="utf-8") as f:
        for line in f:
            ev = json.loads(line)
            if ev["e"] == "issue":
                for job in ev["jobs"]:
                    issued[job] = ev["at"]
            elif ev["e"] == "done" and ev["job"] in issued and "at" in ev:
                kind = "judge" if "-judge" in ev["job"] else ev["job"].split("-")[2] if ev["job"].startswith("r") \
                    else ev["job"].split("-")[0]
                out.setdefault(kind, []).append((ev["at"] - issued[ev["job"]]) / 60.0)
    return out


if __name__ == "__main__":
    sys.exit(main())
