"""The trace list's query, sort and errors-only, wherever they are done: sent to the server
when it offers every parameter they need (offers.trace_filters), else applied to the loaded
rows. `QueriedList` is the base of TracesScreen (tui/ui/screens/traces.py), which loads the
pages and draws them; here is what decides what to ask for, and the query line's handlers."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.widgets import Input

from tui.api import ApiError, Trace
from tui.api.models import TraceFilter
from tui.model.query import MIN_WORD, QueryError, parse_query, text_terms
from tui.model.text import safe_text
from tui.ui.screens.base import AppScreen
from tui.ui.widgets.trace_table import TraceTable

if TYPE_CHECKING:
    from tui.api.offers import Offers

SORTS = ("start", "duration", "cost")
SORT_LABELS = {"start": "newest first", "duration": "slowest first", "cost": "costliest first"}

# What `s` asks a server that sorts for; and how a `sort:` of the query reads in the header.
SORT_PARAMS = {"duration": "duration_ms", "cost": "total_cost_usd"}
QUERY_SORT_LABELS = {
    ("started_at", "desc"): "newest first",
    ("started_at", "asc"): "oldest first",
    ("duration_ms", "desc"): "slowest first",
    ("duration_ms", "asc"): "fastest first",
    ("total_cost_usd", "desc"): "costliest first",
    ("total_cost_usd", "asc"): "cheapest first",
    ("total_tokens", "desc"): "most tokens first",
    ("total_tokens", "asc"): "fewest tokens first",
}


def has_answer(trace: Trace) -> bool:
    return bool(trace.output_preview or trace.user_id or trace.session_id or trace.tags)


def answer_line(trace: Trace) -> Text:
    """The selected trace's answer at a glance, then who and where (one line, cut)."""
    line = Text(no_wrap=True, overflow="ellipsis")
    if trace.output_preview:
        line.append("→ ", style="bold")
        line.append_text(safe_text(trace.output_preview, 200))
    for label, value in (
        ("user", trace.user_id),
        ("session", trace.session_id),
        ("tags", ",".join(trace.tags)),
    ):
        if value:
            if line.plain:
                line.append(" · ", style="dim")
            line.append(f"{label} ", style="dim")
            line.append_text(safe_text(value, 40))
    return line


class QueriedList(AppScreen):
    """What the trace list knows of its query, and how it asks for it."""

    def __init__(self) -> None:
        super().__init__()
        self.filter_text = ""  # the query line as submitted
        self.trace_query = TraceFilter()  # ... as read
        self.typed: TraceFilter | None = None  # what is being typed, previewed on loaded rows
        # What the server was asked to filter and sort by for the rows loaded (None: nothing;
        # the query, sort and errors-only then apply to the loaded rows), and for which query.
        self.sent: TraceFilter | None = None
        self.sent_for = TraceFilter()
        self.errors_only = False  # `e`: the errored traces of the range
        self.sort = "start"
        # Set while a ranking (sort by duration or cost) pages in the rest of the range.
        self.loading_all = False
        self.ended = False

    # Done by the screen that loads and draws the rows.
    @property
    def fetching(self) -> bool:
        raise NotImplementedError

    def load_page(self, first: bool = False, filters: TraceFilter | None = None) -> None:
        raise NotImplementedError

    def apply_view(self, keep: Trace | None) -> None:
        raise NotImplementedError

    def update_header(self) -> None:
        raise NotImplementedError

    @property
    def ranks_loaded_rows(self) -> bool:
        """Whether the sort or errors-only is done here, over the whole range paged in."""
        sent = self.sent or TraceFilter()
        return (self.sort != "start" and sent.sort is None and self.trace_query.sort is None) or (
            self.errors_only and sent.status != "error"
        )

    @property
    def filters_loaded_rows(self) -> TraceFilter | None:
        """The query as it applies to the loaded rows: what is being typed (a preview), or the
        query when the server did not filter the rows by it; None when nothing applies here."""
        if self.typed is not None:
            return self.typed
        if self.trace_query.is_empty or (
            self.sent_for == self.trace_query and self.sent is not None
        ):
            return None
        return self.trace_query

    @property
    def sort_label(self) -> str:
        if self.trace_query.sort is not None:
            label = QUERY_SORT_LABELS.get(
                (self.trace_query.sort, self.trace_query.order or "desc"), ""
            )
            sent = self.sent or TraceFilter()
            return label if sent.sort == self.trace_query.sort else f"{label} (loaded rows)"
        return SORT_LABELS[self.sort]

    def action_errors(self) -> None:
        """Only the errored traces, of the whole range: the server's where it filters by
        status, else the rest of the range is paged in (esc stops, as for a ranking); `e`
        again shows every trace."""
        self.errors_only = not self.errors_only
        self.requery()

    def requery(self) -> None:
        """Ask the server again when it can do all the query, sort and errors-only want (or
        when what is loaded was filtered by it); else apply them to the loaded rows."""
        try:
            client = self.tui.client
        except RuntimeError:  # the client is still loading
            self._apply_here()
            return
        if client.offers_known:
            self._decide(client.offers)
            return
        self.call_api(
            lambda client: client.discover_offers(),
            self._decide,
            group="offers",
            failed=self._offers_unknown,
        )
        self.update_header()

    def _offers_unknown(self, _error: ApiError) -> bool:
        self._apply_here()  # nothing known to be offered: the loaded rows it is
        return True

    def _decide(self, offers: Offers) -> None:
        wanted = self._wanted(offers)
        if wanted is None and self.sent is None:
            self._apply_here()
            return
        self.loading_all = False
        self.load_page(first=True, filters=wanted)

    def _wanted(self, offers: Offers) -> TraceFilter | None:
        """The filter to send: the query, the sort and errors-only together, when the server
        offers every parameter they need; None when it does not (or there is nothing)."""
        wanted = self.trace_query
        if wanted.sort is None and self.sort in SORT_PARAMS:
            wanted = replace(wanted, sort=SORT_PARAMS[self.sort], order="desc")
        if self.errors_only:
            wanted = replace(wanted, status="error")
        short = any(len(term) < MIN_WORD for term in text_terms(wanted.q))
        if wanted.is_empty or short or not wanted.parameter_names <= offers.trace_filters:
            return None
        return wanted

    def _apply_here(self) -> None:
        """The query, sort and errors-only over the loaded rows; a ranking or errors-only
        pages the rest of the range in."""
        self.apply_view(keep=None)
        self.query_one(TraceTable).move_to(0)
        self.loading_all = self.ranks_loaded_rows and not self.ended
        if self.loading_all and not self.fetching:
            self.load_page()
        self.update_header()

    def action_filter(self) -> None:
        field = self.query_one("#filter", Input)
        field.add_class("-open")
        field.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_query":
            return bool(self.filter_text)
        return super().check_action(action, parameters)

    def action_clear_query(self) -> None:
        """Close the query line and drop the query: every trace of the range again."""
        field = self.query_one("#filter", Input)
        field.remove_class("-open")
        self.query_one(TraceTable).focus()
        had_query = bool(self.filter_text) or self.typed is not None
        self.typed = None
        if field.value:
            with field.prevent(Input.Changed):
                field.value = ""
        if had_query:
            self.filter_text, self.trace_query = "", TraceFilter()
            self.refresh_bindings()
            self.requery()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        """While typing, the loaded rows show what the query would keep (a query that does
        not read yet keeps the last one that did)."""
        try:
            self.typed = parse_query(event.value)
        except QueryError:
            return
        self.apply_view(keep=self.query_one(TraceTable).selected)

    @on(Input.Submitted, "#filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        try:
            query = parse_query(event.value)
        except QueryError as error:
            self.notify(str(error), title="Query", severity="error", timeout=6)
            return
        self.typed = None
        self.query_one(TraceTable).focus()
        self.filter_text, self.trace_query = event.value.strip(), query
        # The header shows the query from now on; `/` opens the line on it again.
        self.query_one("#filter", Input).remove_class("-open")
        self.refresh_bindings()
        self.requery()

    def action_sort(self) -> None:
        if self.trace_query.sort is not None:
            self.notify("The query sorts (sort:…): change it with /.", timeout=4)
            return
        self.sort = SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]
        # A new order starts at its top, not on the row that happened to be selected.
        self.requery()
