"""The trace list's state, pure: what the user asked for (the query line, the sort, errors only,
the time range, live mode, the optional columns), what the server was asked for the rows that
are loaded, how the paging goes, and from these, what is left to do to the loaded rows.

A TraceListState is immutable: each key or answer is one small transition that returns a new
state (`submitted`, `errors_toggled`, `page_loaded`...). The screen (tui/ui/screens/traces.py)
keeps the input, the requests and the drawing; tui/model/trace_list_rows.py applies a state to
the loaded rows (and previews what is typed), tui/model/trace_list_text.py says it. Which row
the cursor is on across refreshes is the table's (VirtualRows' Spot: the row's trace id).

One sort vocabulary: a Sort is a key of GET /v1/traces's `sort` (TRACE_SORTS) and an order.
`s` steps through SORT_STEPS; a query's `sort:` wins over it while the query is on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from tui.api.models import TraceFilter
from tui.model.query import MIN_WORD, QueryError, parse_query, text_terms
from tui.model.timerange import TimeRange

SORT_LABELS = {
    ("started_at", "desc"): "newest first",
    ("started_at", "asc"): "oldest first",
    ("duration_ms", "desc"): "slowest first",
    ("duration_ms", "asc"): "fastest first",
    ("total_cost_usd", "desc"): "costliest first",
    ("total_cost_usd", "asc"): "cheapest first",
    ("total_tokens", "desc"): "most tokens first",
    ("total_tokens", "asc"): "fewest tokens first",
}


@dataclass(frozen=True)
class Sort:
    """An order of the list: a TRACE_SORTS key, "desc" or "asc"."""

    key: str = "started_at"
    order: str = "desc"

    @property
    def label(self) -> str:
        return SORT_LABELS.get((self.key, self.order), f"by {self.key}")

    @classmethod
    def of(cls, query: TraceFilter | None) -> Sort | None:
        """The order a filter asks for (None: none, the server's default)."""
        if query is None or query.sort is None:
            return None
        return cls(query.sort, query.order or "desc")


NEWEST = Sort()
# What `s` steps through: the server's default order, then the two rankings.
SORT_STEPS = (NEWEST, Sort("duration_ms"), Sort("total_cost_usd"))


@dataclass(frozen=True)
class Paging:
    """How loading the list goes, as the requests report it."""

    ended: bool = False  # the last page of the range is loaded
    # The rest of the range is being paged in: a ranking or errors-only is done on loaded rows,
    # which must then be the whole range.
    loading_all: bool = False
    error: str | None = None  # the last request's failure in one line (what was loaded stays)
    gone: bool = False  # the server answered that it has no such project (any more)
    dropped: int = 0  # list items that were not records at all (see Page.dropped)


@dataclass(frozen=True)
class Typing:
    """What the open query line holds: its text, and what it reads as (or why it does not)."""

    text: str
    query: TraceFilter | None = None  # None: it does not read
    error: str | None = None  # ... and why, for the user

    @classmethod
    def of(cls, text: str) -> Typing:
        try:
            return cls(text, parse_query(text))
        except QueryError as error:
            return cls(text, None, str(error))


@dataclass(frozen=True)
class TraceListState:
    """Everything the trace list knows besides the rows themselves."""

    time_range: TimeRange = field(default_factory=TimeRange)
    query_text: str = ""  # the query line as submitted
    query: TraceFilter = field(default_factory=TraceFilter)  # ... as read
    picked_sort: Sort = NEWEST  # `s`; the query's sort, when it has one, wins
    errors_only: bool = False  # `e`: the errored traces of the range
    live: bool = False  # new traces are polled for and added on top
    who_columns: bool = False  # the user, session and tags columns show
    # What the server was asked to filter and sort by for the rows loaded (None: nothing; the
    # query, sort and errors-only then apply to the loaded rows), and for which query.
    asked: TraceFilter | None = None
    asked_for: TraceFilter = field(default_factory=TraceFilter)
    typing: Typing | None = None  # the open query line's text, previewed on the loaded rows
    paging: Paging = Paging()

    # -- transitions -----------------------------------------------------------------------------

    def submitted(self, text: str) -> TraceListState:
        """The query line submitted; QueryError (the state unchanged) if it does not read."""
        query = parse_query(text)
        return replace(self, query_text=text.strip(), query=query, typing=None)

    def query_cleared(self) -> TraceListState:
        return replace(self, query_text="", query=TraceFilter(), typing=None)

    def line_typed(self, text: str) -> TraceListState:
        """The open query line holds `text` now."""
        return replace(self, typing=Typing.of(text))

    def line_closed(self) -> TraceListState:
        return replace(self, typing=None)

    def sort_stepped(self) -> TraceListState:
        """The next of SORT_STEPS (nothing changes while the query sorts)."""
        if self.query_sorts:
            return self
        at = SORT_STEPS.index(self.picked_sort) if self.picked_sort in SORT_STEPS else -1
        return replace(self, picked_sort=SORT_STEPS[(at + 1) % len(SORT_STEPS)])

    def errors_toggled(self) -> TraceListState:
        return replace(self, errors_only=not self.errors_only)

    def ranged(self, time_range: TimeRange) -> TraceListState:
        return replace(self, time_range=time_range)

    def live_set(self, on: bool) -> TraceListState:
        return replace(self, live=on and self.live_possible and not self.paging.gone)

    def who_toggled(self) -> TraceListState:
        return replace(self, who_columns=not self.who_columns)

    def loading_all_set(self, on: bool) -> TraceListState:
        return replace(self, paging=replace(self.paging, loading_all=on))

    def page_loaded(
        self, first: bool, asked: TraceFilter | None, ended: bool, dropped: int
    ) -> TraceListState:
        """A page arrived: the first (it replaces what was loaded; `asked` is what it was asked
        with) or the next one."""
        paging = self.paging
        state = self
        if first:
            state = replace(self, asked=asked, asked_for=self.query)
            paging = replace(paging, dropped=0)
        paging = replace(
            paging,
            ended=ended,
            error=None,
            gone=False,
            dropped=paging.dropped + dropped,
            loading_all=paging.loading_all and not ended,
        )
        return replace(state, paging=paging)

    def page_failed(self, error: str) -> TraceListState:
        """A request for a page failed: what was loaded stays, the error is said."""
        return replace(self, paging=replace(self.paging, error=error))

    def project_gone(self) -> TraceListState:
        """The server has no such project (it was deleted, or the service started on another
        database): nothing more comes, live mode stops; what was loaded stays."""
        paging = replace(self.paging, gone=True, error=None, loading_all=False)
        return replace(self, live=False, paging=paging)

    # -- what follows from it --------------------------------------------------------------------

    @property
    def query_sorts(self) -> bool:
        return self.query.sort is not None

    @property
    def sort(self) -> Sort:
        """The order the list is shown in: the query's, else the one `s` picked."""
        return Sort.of(self.query) or self.picked_sort

    @property
    def live_possible(self) -> bool:
        """Live mode needs a range that moves with now."""
        return self.time_range.preset is not None

    @property
    def rows_order(self) -> Sort:
        """The order the server gave the loaded rows in."""
        return Sort.of(self.asked) or NEWEST

    @property
    def query_here(self) -> TraceFilter | None:
        """The query as it applies to the loaded rows: when the server did not filter the rows
        by it; None when nothing applies here."""
        if self.query.is_empty or (self.asked is not None and self.asked_for == self.query):
            return None
        return self.query

    @property
    def errors_here(self) -> bool:
        """Whether errors-only is done on the loaded rows (the server did not filter by it)."""
        return self.errors_only and (self.asked is None or self.asked.status != "error")

    @property
    def sort_here(self) -> Sort | None:
        """The order the loaded rows are put in here (None: as the server gave them)."""
        return None if self.sort == self.rows_order else self.sort

    @property
    def ranking_here(self) -> bool:
        """Whether a ranking `s` picked (by duration or cost) is done on the loaded rows."""
        return not self.query_sorts and self.sort_here not in (None, NEWEST)

    @property
    def ranks_here(self) -> bool:
        """Whether a ranking or errors-only is done here: over the whole range, paged in."""
        return self.ranking_here or self.errors_here

    @property
    def may_prefetch(self) -> bool:
        """Whether moving down the list asks for the next page: not while the loaded rows are
        filtered or ranked here (more pages come by `r`, or by the ranking's own paging)."""
        return self.query_here is None and not self.ranks_here

    @property
    def sort_label(self) -> str:
        label = self.sort.label
        if self.query_sorts and self.sort_here is not None:
            return f"{label} (loaded rows)"
        return label

    def wanted(self, offered: frozenset[str]) -> TraceFilter | None:
        """The filter to ask the server for: the query, the sort and errors-only together, when
        the server offers every parameter they need (`offered`); None when it does not (or there
        is nothing to ask)."""
        wanted = self.query
        if wanted.sort is None and self.picked_sort != NEWEST:
            wanted = replace(wanted, sort=self.picked_sort.key, order=self.picked_sort.order)
        if self.errors_only:
            wanted = replace(wanted, status="error")
        texts = [*text_terms(wanted.q), *wanted.inputs, *wanted.outputs]
        short = any(len(term.strip()) < MIN_WORD for term in texts)
        if wanted.is_empty or short or not wanted.parameter_names <= offered:
            return None
        return wanted

    @property
    def found_by_server(self) -> bool:
        """Whether the loaded rows are what the server found for a filter."""
        return self.asked is not None and not self.asked.is_empty

    # -- what is typed, before it is submitted ---------------------------------------------------

    @property
    def as_typed(self) -> TraceListState | None:
        """The state were what is typed submitted (None: the line is closed, or what it holds
        does not read)."""
        typing = self.typing
        if typing is None or typing.query is None:
            return None
        return replace(self, query_text=typing.text.strip(), query=typing.query, typing=None)

    @property
    def typed_filter(self) -> TraceFilter | None:
        """What the loaded rows would be filtered by, were what is typed submitted: its
        conditions and errors-only (None: nothing that reads is typed)."""
        typed = self.as_typed
        if typed is None:
            return None
        wanted = replace(typed.query, sort=None, order=None)
        return replace(wanted, status="error") if self.errors_only else wanted

    def enter_does(self, offered: frozenset[str] | None) -> str:
        """What Enter on the query line would do: "server" (ask it), "here" (filter the loaded
        rows), "all" (show every trace), "unknown" (what the server offers is not known yet),
        or "nothing" (what is typed does not read)."""
        typed = self.as_typed
        if typed is None:
            return "nothing"
        if offered is None:
            return "unknown"
        if typed.wanted(offered) is not None:
            return "server"
        return "all" if typed.query.is_empty and not typed.errors_only else "here"


@dataclass(frozen=True)
class SessionsOf:
    """Which sessions `S` opens from a filtered trace list: the user's (asked of the server),
    and for any other condition, only those of the traces the list shows."""

    words: str  # what the list was filtered by, as the user wrote it
    start: datetime  # the list's range
    end: datetime
    user_id: str | None = None
    # The sessions of the traces shown (None: any session); `traces` of them, all there are
    # in the range unless `partial` (the list had more to load).
    session_ids: frozenset[str] | None = None
    traces: int = 0
    partial: bool = False

    def keep(self, sessions: Sequence[Any]) -> list[Any]:
        """The sessions of a page this asks for."""
        if self.session_ids is None:
            return list(sessions)
        return [session for session in sessions if session.id in self.session_ids]


def sessions_of(state: TraceListState, shown: Sequence[Any], now: datetime) -> SessionsOf | None:
    """What `S` opens from the list as it is (None: everyone's sessions, unfiltered).
    `shown`: the rows the list shows."""
    conditions = replace(state.query, sort=None, order=None)
    if conditions.is_empty and not state.errors_only:
        return None
    start, end = state.time_range.bounds(now)
    words = " · ".join(
        part for part in (state.query_text, "errors only" if state.errors_only else "") if part
    )
    ids = None
    if not replace(conditions, user_id=None).is_empty or state.errors_only:
        ids = frozenset(row.session_id for row in shown if getattr(row, "session_id", None))
    return SessionsOf(
        words,
        start,
        end,
        user_id=conditions.user_id,
        session_ids=ids,
        traces=len(shown),
        partial=not state.paging.ended,
    )
