"""Hidden check for the library email: eight facts and four rules, each found or not.

    python3 benchmarks/real_agents/notice_check.py <solution.md>...

Prints, per solution, its score out of 12 and what it missed. The facts are looked for by
patterns that allow the usual ways of writing them (3 March / March 3 / 3/3, 12:00 / noon)."""
import re, sys

FACTS = [
    ("closed 3 March to 27 April", [r"(3(rd)?\s+march|march\s+3(rd)?)", r"(27(th)?\s+april|april\s+27(th)?)"]),
    ("roof and heating", [r"roof", r"heat"]),
    ("Eastside on Sundays 12-16", [r"eastside", r"sunday", r"(12(:00)?|noon)\s*(to|-|–|until|and)\s*(16(:00)?|4\s*(pm|p\.m\.))"]),
    ("loans extended to 2 May", [r"(2(nd)?\s+may|may\s+2(nd)?)", r"(extend|renew|due)"]),
    ("no late fees", [r"(no|without|free of)\s+(late\s+)?(fees|fines|charges)|late\s+(fees|fines)\s+(are\s+)?(waived|suspended)"]),
    ("returns box open", [r"return(s)?\s+(box|slot|chute)", r"(day and night|24|round the clock|all hours|any time|anytime|always open)"]),
    ("reopening party Saturday 3 May 10:00", [r"(3(rd)?\s+may|may\s+3(rd)?)", r"(10(:00)?\s*(am|a\.m\.)?|ten)", r"(party|celebrat|reopen)"]),
    ("help@citylib.example and 555-0142", [r"help@citylib\.example", r"555[-\s]?0142"]),
]
BANNED = ("unfortunately", "inconvenience", "exciting")


def check(text):
    text = text.strip()
    missed = []
    lines = text.splitlines()
    subject = lines[0] if lines else ""
    body = "\n".join(lines[1:])
    low = body.lower()
    for name, patterns in FACTS:
        if not all(re.search(p, low) for p in patterns):
            missed.append(name)
    words = len(re.findall(r"[A-Za-z0-9@.'’:-]+", body))
    rules = [("subject line", subject.startswith("Subject: ") and len(subject) > 10),
             ("110-140 words (%d)" % words, 110 <= words <= 140),
             ("no exclamation marks", "!" not in text),
             ("no banned words", not any(b in text.lower() for b in BANNED))]
    missed += [name for name, ok in rules if not ok]
    return 12 - len(missed), missed


def strip(text):
    """The email of a solution file: without the arena's job header and any code fence."""
    text = re.sub(r"^<!-- arena job: [^>]+ -->\n", "", text)
    fence = re.search(r"```[a-z]*\n(.*?)```", text, re.S)
    return fence.group(1) if fence else text


if __name__ == "__main__":
    for path in sys.argv[1:]:
        got, missed = check(strip(open(path, encoding="utf-8").read()))
        print("%s: %d of 12%s" % (path, got, (": missed " + "; ".join(missed)) if missed else ""))
