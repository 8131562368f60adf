"""The trace list's state, pure: what the user asked for (the query line, the sort, errors only,
the time range, live mode, the optional columns), what the server was asked for the rows that
are loaded, how the paging goes, and from these, what is left to do to the loaded rows.

A TraceListState is immutable: each key or answer is one small transition that returns a new
state (`submitted`, `errors_toggled`, `page_loaded`...). The screen (tui/ui/screens/traces.py)
keeps the input, the requests and the drawing; tui/model/trace_list_rows.py applies a state to
the loaded rows.

One sort vocabulary: a Sort is a key of GET /v1/traces's `sort` (TRACE_SORTS) and an order.
`s` steps through SORT_STEPS; a query's `sort:` wins over it while the query is on.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

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
        short = any(len(term) < MIN_WORD for term in text_terms(wanted.q))
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


# The conditions that hold one value each (text and tags are lists of them).
SINGLE_CONDITIONS = (
    "status",
    "model",
    "name",
    "user_id",
    "session_id",
    "min_latency_ms",
    "max_latency_ms",
    "min_cost_usd",
)


def keeps_within(narrow: TraceFilter, wide: TraceFilter) -> bool:
    """Whether every trace `narrow` keeps is one `wide` keeps too (the sort aside): then the
    rows loaded for `wide` hold all of `narrow`'s among them."""
    for name in ("status", "user_id", "session_id"):
        if getattr(wide, name) is not None and getattr(narrow, name) != getattr(wide, name):
            return False
    for name in ("model", "name"):
        value = getattr(wide, name)
        if value is not None and (getattr(narrow, name) or "").casefold() != value.casefold():
            return False
    if not set(wide.tags) <= set(narrow.tags):
        return False
    for low, high in (
        (narrow.min_latency_ms, wide.min_latency_ms),
        (narrow.min_cost_usd, wide.min_cost_usd),
    ):
        if high is not None and (low is None or low < high):
            return False
    if wide.max_latency_ms is not None and (
        narrow.max_latency_ms is None or narrow.max_latency_ms > wide.max_latency_ms
    ):
        return False
    # A trace holding a narrow word holds each word that is part of it ("refunds": "refund").
    words = [term.casefold() for term in text_terms(narrow.q)]
    return all(any(term.casefold() in word for word in words) for term in text_terms(wide.q))


def left_to_do(narrow: TraceFilter, done: TraceFilter) -> TraceFilter:
    """The conditions of `narrow` that `done` (a filter the server applied) did not apply
    already, exactly: applying one again here could only lose rows (the server searches the
    whole trace's text, a loaded row carries a little of it)."""
    same = {
        field: None for field in SINGLE_CONDITIONS if getattr(narrow, field) == getattr(done, field)
    }
    tags = tuple(tag for tag in narrow.tags if tag not in done.tags)
    done_words = {term.casefold() for term in text_terms(done.q)}
    words = [term for term in text_terms(narrow.q) if term.casefold() not in done_words]
    q = " ".join(f'"{word}"' if any(c.isspace() for c in word) else word for word in words)
    return replace(narrow, **same, tags=tags, q=q or None, sort=None, order=None)
