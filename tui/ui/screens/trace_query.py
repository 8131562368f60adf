"""The trace list's query, sort and errors-only, wherever they are done: sent to the server
when it offers every parameter they need (offers.trace_filters), else applied to the loaded
rows. `QueriedList` is the base of TracesScreen (tui/ui/screens/traces.py), which loads the
pages and draws them; here are the keys that change the query, sort and errors-only, and what
is asked of the server after each. What they change is the screen's TraceListState
(tui/model/trace_list.py), which decides what to ask for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.widgets import Input

from tui.api import ApiError, Trace
from tui.api.models import TraceFilter
from tui.model.annotations import digest, summary_of
from tui.model.query import QueryError
from tui.model.text import safe_text
from tui.model.trace_list import TraceListState
from tui.ui.screens.base import AppScreen
from tui.ui.widgets.trace_table import TraceTable

if TYPE_CHECKING:
    from tui.api.offers import Offers


def has_answer(trace: Trace) -> bool:
    return bool(trace.output_preview or trace.user_id or trace.session_id or trace.tags) or bool(
        trace.annotations
    )


def answer_line(trace: Trace) -> Text:
    """The selected trace's annotations, its answer at a glance, then who and where (one line,
    cut)."""
    line = Text(no_wrap=True, overflow="ellipsis")
    annotated = digest(summary_of(trace))
    if annotated.plain:
        line.append_text(annotated)
        line.append(" · ", style="dim")
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
    """The keys that change what the trace list asks for, and the asking."""

    def __init__(self) -> None:
        super().__init__()
        self.state = TraceListState()

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

    def action_errors(self) -> None:
        """Only the errored traces, of the whole range: the server's where it filters by
        status, else the rest of the range is paged in (esc stops, as for a ranking); `e`
        again shows every trace."""
        self.state = self.state.errors_toggled()
        self.requery()

    def offered_filters(self) -> frozenset[str] | None:
        """The trace filters the server offers (None: not known yet)."""
        try:
            client = self.tui.client
        except RuntimeError:  # the client is still loading
            return None
        return client.offers.trace_filters if client.offers_known else None

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
        wanted = self.state.wanted(offers.trace_filters)
        if wanted is None and self.state.asked is None:
            self._apply_here()
            return
        self.state = self.state.loading_all_set(False)
        self.load_page(first=True, filters=wanted)

    def _apply_here(self) -> None:
        """The query, sort and errors-only over the loaded rows; a ranking or errors-only
        pages the rest of the range in."""
        self.apply_view(keep=None)
        self.query_one(TraceTable).move_to(0)
        self.state = self.state.loading_all_set(
            self.state.ranks_here and not self.state.paging.ended
        )
        if self.state.paging.loading_all and not self.fetching:
            self.load_page()
        self.update_header()

    def action_filter(self) -> None:
        """Open the query line on the query (or what was typed last), and preview it."""
        field = self.query_one("#filter", Input)
        self.show_query_line(True)
        field.focus()
        self.state = self.state.line_typed(field.value)
        self.apply_view(keep=self.query_one(TraceTable).selected)
        if self.offered_filters() is None:  # to say what Enter will do
            self.call_api(
                lambda client: client.discover_offers(),
                self._offers_known,
                group="offers",
                failed=lambda _error: True,  # Enter finds out again; nothing to say now
            )

    def _offers_known(self, _offers: Offers) -> None:
        if self.state.typing is not None:
            self.apply_view(keep=self.query_one(TraceTable).selected)

    def show_query_line(self, shown: bool) -> None:
        self.query_one("#query").set_class(shown, "-open")
        self.query_one("#filter", Input).set_class(shown, "-open")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_query":
            return bool(self.state.query_text)
        if action == "live":
            return not self.state.paging.gone
        return super().check_action(action, parameters)

    def action_clear_query(self) -> None:
        """Close the query line and drop the query: every trace of the range again."""
        field = self.query_one("#filter", Input)
        self.show_query_line(False)
        self.query_one(TraceTable).focus()
        was_typing = self.state.typing is not None
        self.state = self.state.line_closed()
        if field.value:
            with field.prevent(Input.Changed):
                field.value = ""
        if self.state.query_text:
            self.state = self.state.query_cleared()
            self.refresh_bindings()
            self.requery()
        elif was_typing:
            self.apply_view(keep=None)  # the list as it was, without the preview

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        """While typing, the loaded rows show what the query would keep, and the line above
        says over which rows and what Enter does (or what is wrong with what is typed: the
        list then stays as it was)."""
        self.state = self.state.line_typed(event.value)
        self.apply_view(keep=self.query_one(TraceTable).selected)

    @on(Input.Submitted, "#filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        try:
            self.state = self.state.submitted(event.value)
        except QueryError as error:
            self.notify(str(error), title="Query", severity="error", timeout=6)
            return
        self.query_one(TraceTable).focus()
        # The header shows the query from now on; `/` opens the line on it again.
        self.show_query_line(False)
        self.refresh_bindings()
        self.apply_view(keep=None)  # on the loaded rows until the server answers
        self.requery()

    def action_sort(self) -> None:
        if self.state.query_sorts:
            self.notify("The query sorts (sort:…): change it with /.", timeout=4)
            return
        self.state = self.state.sort_stepped()
        # A new order starts at its top, not on the row that happened to be selected.
        self.requery()
