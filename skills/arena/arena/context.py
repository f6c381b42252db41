"""One command's hold on a run: the run folder, its state, and the data every step reads.

open_run(name) finds the run, takes its lock, loads the state (replaying any journal lines
state.json lacks) and yields a Context; the state is saved once when the block ends
without an error. The Context loads cards.md, rubric.md and the task once, on first use,
and refuses cards.md whose size no longer matches the run's. Every engine function that
works on a run takes the Context instead of a row of parameters.
"""

import contextlib

from .base import ArenaError, read_text
from .cards import PARTS, load_cards, load_rubric
from .storage import find_run


class Context:
    """The run in hand: ctx.run (the folder), ctx.st (the state), ctx.cards, ctx.rubric, ctx.task."""

    def __init__(self, run, st):
        self.run, self.st = run, st
        self._cards = self._rubric = self._task = None

    @property
    def cards(self):
        if self._cards is None:
            cards = load_cards()
            if [len(cards[p]) for p in PARTS] != self.st["sizes"]:
                raise ArenaError("cards.md changed its number of entries since this run started; restore it to "
                                 "finish the run")
            self._cards = cards
        return self._cards

    @property
    def rubric(self):
        if self._rubric is None:
            self._rubric = load_rubric()
        return self._rubric

    @property
    def task(self):
        """The task as written, line ends kept: it reaches every brief byte for byte."""
        if self._task is None:
            self._task = read_text(self.run.path("task.md"), exact=True)
        return self._task

    def commit(self, events):
        """Journal the events, then apply them to the state (saved when the command ends)."""
        self.run.commit(self.st, events)


@contextlib.contextmanager
def open_run(name):
    """Lock and load a run; the state is saved once at the end, and not after an error
    (the journal holds every committed event, and the next command replays it)."""
    run = find_run(name)
    run.check_folder()
    # read-only commands lock too: load may replay the journal and save
    with run.lock():
        ctx = Context(run, run.load())
        yield ctx
        run.flush(ctx.st)
