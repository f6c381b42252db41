"""Hidden check for the outage summary: twelve facts and rules, each met or not.

    python3 benchmarks/real_agents/postmortem_check.py <solution.md>...

Prints, per solution, its score out of 12 and what it missed. The first line of a solution file
(the job header) is left out. Written before the run; the agents never saw it."""
import re, sys

def body_of(text):
    lines = [l for l in text.splitlines() if not l.startswith("<!-- arena job")]
    return "\n".join(lines).strip()

T = r"(\b|^)"
CHECKS = [
    ("title line first", lambda t, b: bool(re.match(r"\s*title:\s*\S", t, re.I))),
    ("start 14:07 or 14:09 UTC", lambda t, b: bool(re.search(r"14[:.]0[79]", b))),
    ("end 15:52", lambda t, b: bool(re.search(r"15[:.]52", b))),
    ("duration 1 h 43/45 min", lambda t, b: bool(re.search(
        r"(1\s*h(ou)?r?s?\s*(and\s*)?4[35]\s*m|10[35]\s*min|1:4[35]\b|one hour (and )?4[35]|an hour and 4[35])", b, re.I))),
    ("eu-west and us-east affected", lambda t, b: bool(re.search(r"eu-?west", b, re.I) and re.search(r"us-?east", b, re.I))),
    ("ap-south not affected", lambda t, b: bool(re.search(r"ap-?south", b, re.I))),
    ("5,415 customers in all", lambda t, b: bool(re.search(r"5[,. ]?415", b))),
    ("webhooks late, none lost, by 16:40", lambda t, b: bool(re.search(r"webhook", b, re.I) and re.search(r"16[:.]40", b)
                                                       and re.search(r"(no(ne)?\b.{0,40}lost|not lost|without loss|none were lost|no .{0,20}lost)", b, re.I))),
    ("20% credit", lambda t, b: bool(re.search(r"\b20\s*(%|per ?cent)", b, re.I))),
    ("nothing to do for it", lambda t, b: bool(re.search(r"(automatic|no action|nothing to do|need(s)? (to )?do nothing|don't need to|do not need to|without (any )?action)", b, re.I))),
    ("both follow-ups", lambda t, b: bool(re.search(r"(one region|single region|a region first|region at a time|staged|canary)", b, re.I)
                                           and re.search(r"\b5\s*(%|per ?cent)", b, re.I))),
    ("at most 170 words, no banned words", lambda t, b: len(re.findall(r"\S+", "\n".join(b.splitlines()[1:]) if re.match(r"\s*title:", b, re.I) else b)) <= 170
                                            and not re.search(r"unfortunately|glitch|hiccup", b, re.I)),
]

def score(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    body = body_of(text)
    missed = [name for name, ok in CHECKS if not ok(body, body)]
    return len(CHECKS) - len(missed), missed

if __name__ == "__main__":
    for path in sys.argv[1:]:
        k, missed = score(path)
        print("%s: %d of %d%s" % (path, k, len(CHECKS), ": missed " + "; ".join(missed) if missed else ""))
