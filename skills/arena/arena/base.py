"""The ground floor: shared constants, the one error type users see, seeded randomness and text reading.

Everything else imports from here and this module imports nothing of the engine. The
random helpers use only getrandbits, so the same seed draws the same numbers on every
Python from 3.8 on. It must not know about runs, states or files beyond reading text.
"""

import hashlib
import os
import random
import re

# The first line of every file a sub-agent writes: which job wrote it (outputs.strip_header).
JOB_HEADER = re.compile(r"^\ufeff?<!-- arena job: ([A-Za-z0-9-]+) -->[ \t]*\r?\n?")


# The skill folder: the engine package sits inside it, beside the editable data.
SKILL_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BRACKET = os.path.join(SKILL_DIR, "bracket.py")


FORMAT = 1


MAX_WAVE = 20


DEFAULT_AGENTS = 100


DEFAULT_WAVE = 10


QUICK_AGENTS = 8


MAX_ATTACKS = 7


# A close match gets a second judge when the totals are this near: the
# cheapest margin that keeps the gain, measured by benchmarks/judging.py.
DEFAULT_RECHECK = 4


# Most looks a judged match may take: when two looks split, more are added until
# one side has won a majority of this many (earlier rounds, the last two rounds:
# semifinal and final). Measured by benchmarks/judging.py.
MOST_LOOKS = (3, 5)


# A look is an equal vote when it found no difference the task decides (equivalent), or when
# its totals are within this many points and it flags FATAL on both sides or on neither
# (judging.is_equal_vote). Level totals only: in the simulator (benchmarks/equal_votes.py) a
# margin of 1 or 2 ends close matches between different solutions too early and costs the
# best solution its win (P(best) -0.015 and -0.027 at 100 agents), while 0 costs nothing.
EQUAL_MARGIN = 0


# Most entries a run's bench keeps (bench.py), and most scorers among them.
BENCH_ENTRIES = 10
BENCH_SCORERS = 3


def run_scorers(st):
    """The run's bench scorers, in the order the bench took them."""
    return [e for e in st.get("bench", []) if e["kind"] == "scorer"]


# Rounds with at most this many agents are the last two (semifinal and final).
LATE_FIELD = 4


# Judge calls per match to expect with rated pairing and looks to a majority, by kind of
# round (jobs.round_kind), for `plan`: measured by benchmarks/judging.py at N=100 and W=10
# with a judge that never finds two solutions equivalent (its looks are the most a run pays
# for; equal votes leave them as they were), so plan does not count on verdicts to come.
JUDGES_PER_MATCH = {"big": 1.36, "small": 2.33, "late": 3.74}


# Waves a conductor runs before it hands back to the main session.
DEFAULT_BATCH = 10


# Lanes: sub-agents that each run one job at a time and ask the engine for the next,
# so a slot is refilled as soon as its job returns. A lane is a sub-agent too, and
# Claude Code 2.1.332 refuses a 21st sub-agent at once, so W lanes plus their W jobs
# stay within 20 only up to 10 lanes.
MAX_LANES = MAX_WAVE // 2


# Jobs each lane runs before the set of lanes hands back to the main session. Each set
# costs the main session one message of lane calls and a hand-back per lane (about 0.9 KB
# each in Claude Code 2.1.332), so a 100-agent run fits in one set; a lane's own context
# grows by about 1.4 KB per job, about 140 KB at 100 (benchmarks/main_context.py measures
# the first, benchmarks/wallclock.py what the hand-backs cost in time).
DEFAULT_LANE_JOBS = 100


# Seconds a lane command waits for a job to become ready before it says "ask again";
# the lane brief runs it with the Bash tool's longest timeout, 10 minutes.
DEFAULT_LANE_WAIT = 540


LABELS = ("Kestrel", "Heron", "Osprey", "Plover", "Wren", "Finch", "Lark",
          "Egret", "Swift", "Tern", "Merlin", "Robin", "Curlew", "Dunlin",
          "Gannet", "Avocet")


MODELS = ("opus", "sonnet", "haiku")


RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class ArenaError(Exception):
    """A problem the user or a sub-agent caused: one line, exit code 2."""


def rng_for(seed, *labels):
    text = ":".join([str(seed)] + [str(x) for x in labels])
    return random.Random(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big"))


def below(rng, n):
    """A uniform integer in [0, n)."""
    if n <= 1:
        return 0
    k = n.bit_length()
    while True:
        r = rng.getrandbits(k)
        if r < n:
            return r


def shuffled(rng, items):
    items = list(items)
    for i in range(len(items) - 1, 0, -1):
        j = below(rng, i + 1)
        items[i], items[j] = items[j], items[i]
    return items


def read_text(path, exact=False):
    """A UTF-8 file's text; exact keeps its line ends as written (the task reaches every brief byte for byte)."""
    try:
        with open(path, encoding="utf-8", newline="" if exact else None) as f:
            return f.read()
    except OSError as e:
        raise ArenaError("cannot read %s (%s)" % (path, e.strerror or e))
    except UnicodeDecodeError:
        raise ArenaError("%s is not UTF-8 text" % path)


def plural(n, word, words=None):
    """'1 match', '2 matches': a count with its noun."""
    if n == 1:
        return "%d %s" % (n, word)
    return "%d %s" % (n, words or (word + ("es" if word.endswith(("s", "sh", "ch", "x")) else "s")))
