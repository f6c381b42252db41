#!/usr/bin/env python3
"""bracket.py: the one command of the /arena skill (the engine lives in arena/ beside it).

One run lives in .arena/<run>/: state.json (the truth), journal.jsonl (every
change, in order, from which state.json can be rebuilt), the task, the briefs
sub-agents read (b/), the files they write (out/) and the judges' blinded
inputs (j/). Every command is "lock, load, decide, journal, save".

Standard library only, Python 3.8 or newer. Run `bracket.py -h` for the commands.
"""

import os
import sys

if __name__ == "__main__":
    here = os.path.dirname(os.path.realpath(__file__))
    # Compiled modules are cached beside them (a plugin or ~/.claude/skills install),
    # but a skill copied into the project itself must leave no __pycache__ there.
    if (here + os.sep).startswith(os.path.realpath(os.getcwd()) + os.sep):
        sys.dont_write_bytecode = True
    sys.path.insert(0, here)
    from arena.cli import main
    sys.exit(main())
