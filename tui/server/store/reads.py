"""A bound on one request's reads: a time budget, and a way to stop them from another thread
(the client left). The HTTP edge makes a ReadGuard per search and applies it around the store
call in the thread that makes it (`ReadGuard.applied`); a store's reads in that thread then run
within it, each backend its own way:

- SQLite: a progress handler on the thread's connection, called every PROGRESS_STEPS virtual
  machine steps (FTS5's work included), aborts the statement once the budget is spent or the
  guard is cancelled;
- PostgreSQL: the read runs in a read-only transaction with `SET LOCAL statement_timeout` (what
  is left of the budget), and `cancel` sends the server a cancel request for the running
  statement; a connection a cancel was sent on is closed, not given back to the pool, so that a
  late cancel never reaches the next statement run on it.

Either way the read raises QueryStopped, which the service answers (docs/api.md, "Limits").
Outside a guard, reads are as they always were.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

# Between two looks at the guard, a SQLite statement runs this many virtual machine steps: a
# few milliseconds of work (a Python call each time: about 1% of a search's time).
PROGRESS_STEPS = 10_000

_current = threading.local()


class QueryStopped(Exception):
    """A read stopped by its guard: past its time budget (`timed_out`), or cancelled because
    its client left."""

    def __init__(self, timed_out: bool, budget_s: float) -> None:
        reason = f"past its {budget_s:g} s budget" if timed_out else "its client left"
        super().__init__(f"the read was stopped: {reason}")
        self.timed_out = timed_out
        self.budget_s = budget_s


class ReadGuard:
    """One request's reads: `budget_s` from its creation, until `cancel` is called."""

    def __init__(self, budget_s: float, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.budget_s = budget_s
        self._monotonic = monotonic
        self.deadline = monotonic() + budget_s
        self.cancelled = False
        self._lock = threading.Lock()
        self._canceller: Callable[[], None] | None = None  # the running read's, if any
        self._cancel_sent = False

    @property
    def stopped(self) -> bool:
        """Cancelled, or past the budget."""
        return self.cancelled or self._monotonic() >= self.deadline

    def progress(self) -> int:
        """SQLite's progress handler: non-zero stops the statement."""
        return 1 if self.stopped else 0

    def remaining_ms(self) -> int:
        """What is left of the budget, in whole ms (QueryStopped if nothing)."""
        left = int((self.deadline - self._monotonic()) * 1000)
        if self.cancelled or left < 1:
            raise self.error()
        return left

    def error(self) -> QueryStopped:
        return QueryStopped(not self.cancelled, self.budget_s)

    def cancel(self) -> None:
        """Stop the reads (from any thread): a read under way is cancelled (this may block
        while PostgreSQL is asked to), later ones stop at once."""
        with self._lock:
            self.cancelled = True
            canceller = self._canceller
            if canceller is not None:
                self._cancel_sent = True
                canceller()

    @contextmanager
    def watching(self, canceller: Callable[[], None]) -> Iterator[None]:
        """While inside, `cancel` calls `canceller` (PostgreSQL: the connection's cancel)."""
        with self._lock:
            self._canceller = canceller
            self._cancel_sent = False
        try:
            yield
        finally:
            with self._lock:
                self._canceller = None

    @property
    def cancel_sent(self) -> bool:
        """Whether a cancel was sent while watching (the connection is then not reused)."""
        return self._cancel_sent

    @contextmanager
    def applied(self) -> Iterator[None]:
        """While inside, this thread's store reads run within the guard."""
        before = getattr(_current, "guard", None)
        _current.guard = self
        try:
            yield
        finally:
            _current.guard = before


def current() -> ReadGuard | None:
    """The guard this thread's reads run within, if any."""
    guard: ReadGuard | None = getattr(_current, "guard", None)
    return guard
