"""Pure (no Textual, no I/O): which earlier trace is B's "last good one", and how to ask.

The last good one is the newest trace that started before B, has B's root name, and has no
error. A server that filters its list by name and status (the local service, learnt from its
OpenAPI document) is asked for exactly those; a server that filters by status only (Phoenix) is
asked for those and the name is checked here; a server that filters nothing (the spec alone)
has its list paged and both are checked here. The spec does not say in which order a server
lists traces, so the time before B is looked at in widening windows (the last hour, day, week),
each listed whole before the next: the newest match of the first window holding one is the
newest of all. At most MAX_LOOKED_AT traces are looked at, and the sentence that reports the
choice says how far the search went.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from tui.api.models import Trace, TraceFilter
from tui.model import formatting as fmt

WINDOWS = (timedelta(hours=1), timedelta(days=1), timedelta(days=7))
MAX_LOOKED_AT = 2_000  # traces listed while looking, over all the windows
CANDIDATES_KEPT = 50  # earlier traces of the name kept for the user to pick another


@dataclass(frozen=True)
class Search:
    """How to ask a server for B's earlier traces of the same name."""

    name: str
    before: datetime
    filters: TraceFilter | None  # what the server is asked to filter (None: nothing)
    name_here: bool  # the name is checked here (the server cannot filter by it)
    status_here: bool  # the error status is checked here

    def windows(self) -> list[tuple[datetime, datetime]]:
        """The windows looked at, newest first: [start, end) each."""
        out, end = [], self.before
        for width in WINDOWS:
            start = self.before - width
            out.append((start, end))
            end = start
        return out

    def way(self) -> str:
        """How the search asks, in words."""
        if not self.name_here and not self.status_here:
            return "asked the server for traces of that name without errors"
        if not self.status_here:
            return "asked the server for traces without errors and kept those of that name"
        return "listed the traces and kept those of that name without errors"


def search_for(b: Trace, name: str, offered: frozenset[str]) -> Search | None:
    """How to look for the last good trace before `b`, whose root is `name`, on a server that
    offers the trace list filters `offered`; None when `b` has no start time to look before."""
    if b.started_at is None:
        return None
    by_name = "name" in offered
    by_status = "status" in offered
    filters = TraceFilter(name=name if by_name else None, status="ok" if by_status else None)
    return Search(
        name,
        b.started_at,
        None if filters.is_empty else filters,
        name_here=not by_name,
        status_here=not by_status,
    )


def same_name_before(trace: Trace, b: Trace, name: str) -> bool:
    """Whether `trace` is one of B's earlier traces of the same root name."""
    return (
        trace.id != b.id
        and trace.name == name
        and trace.started_at is not None
        and b.started_at is not None
        and trace.started_at < b.started_at
    )


def is_good(trace: Trace) -> bool:
    return not trace.is_error


@dataclass
class Found:
    """What a search found: the chosen trace (None: none), the earlier traces of the name seen
    (newest first, good or not: to pick another), and how many traces it looked at."""

    search: Search
    chosen: Trace | None = None
    candidates: list[Trace] = field(default_factory=list)
    looked_at: int = 0
    complete: bool = True  # every window was listed whole (the bound was not reached)
    window: timedelta | None = None  # the widest window looked in

    def take(self, traces: list[Trace], b: Trace) -> None:
        """The traces of one page: counted, and the earlier ones of the name kept."""
        self.looked_at += len(traces)
        for trace in traces:
            if same_name_before(trace, b, self.search.name) and all(
                trace.id != kept.id for kept in self.candidates
            ):
                self.candidates.append(trace)
        self.candidates.sort(key=_start, reverse=True)
        del self.candidates[CANDIDATES_KEPT:]

    def choose(self) -> Trace | None:
        good = [t for t in self.candidates if is_good(t)]
        self.chosen = good[0] if good else None
        return self.chosen

    def sentence(self, hint: str = "", short: bool = False) -> str:
        """Which trace was chosen and why, or that none was, and how far the search looked
        (not `short`); `hint` says how to pick another."""
        how = f"looked at {fmt.counted(self.looked_at, 'trace')}"
        if self.window is not None:
            how += f" over the {_window_words(self.window)} before B"
        if not self.complete:
            how += f", stopping at {MAX_LOOKED_AT:,}"
        if short:
            how, hint = hint, ""
        else:
            hint = f"; {hint}" if hint else ""
        chosen = self.chosen
        if chosen is None:
            return f"No earlier trace named {self.search.name} without an error ({how}{hint})"
        gap = (
            fmt.duration((self.search.before - chosen.started_at).total_seconds() * 1000)
            if chosen.started_at is not None
            else "?"
        )
        return f"A is the last good {self.search.name}, {gap} before B ({how}{hint})"


def _start(trace: Trace) -> float:
    return trace.started_at.timestamp() if trace.started_at is not None else 0.0


def _window_words(width: timedelta) -> str:
    hours = width.total_seconds() / 3600
    if hours <= 1:
        return "hour"
    if hours <= 24:
        return "day"
    return f"{hours / 24:.0f} days"
