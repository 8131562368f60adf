"""The trace list of one project: paged by cursor, queried, sorted, refreshed, optionally live.

The query line (`/`, tui/model/query.py's language) is sent to the server when it offers every
filter the query uses (offers.trace_filters, learnt from its OpenAPI document), and cursor
paging then pages the filtered list; otherwise it filters the loaded rows and the header says
so. Sorting (`s`, or `sort:` in the query) is the server's where it offers `sort`; otherwise
sorting by duration or cost ranks the whole range, not just what is loaded: the rest is paged
in behind the ranking (with progress; esc stops it, and the header then says the ranking is of
the loaded rows only). `e` (errors only) is the server's `status` filter where offered, else
the same paging in. What was loaded stays when a filtered request fails.

The list's state (query, sort, errors-only, range, live, columns, what the server was asked)
is a TraceListState (tui/model/trace_list.py), applied to the loaded rows by
tui/model/trace_list_rows.py and said by trace_list_text.py; the keys that change the query are
in trace_query.py, the requests for pages and live mode in trace_loading.py; here are the keys
and the drawing.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Static
from textual.worker import Worker

from tui.api import Trace
from tui.model import formatting as fmt
from tui.model.text import safe_text
from tui.model.timerange import TimeRange
from tui.model.trace_list import sessions_of
from tui.model.trace_list_rows import Shown, show
from tui.model.trace_list_text import header, preview_line
from tui.ui.messages import DiffMark, DiffRequested
from tui.ui.screens.annotation_actions import annotation_bindings
from tui.ui.screens.trace_annotating import BULK_BINDING, TraceListAnnotating
from tui.ui.screens.trace_loading import PagedList
from tui.ui.screens.trace_query import answer_line, has_answer
from tui.ui.widgets.key_footer import KeyFooter
from tui.ui.widgets.query_line import QueryLine
from tui.ui.widgets.status_bar import StatusBar
from tui.ui.widgets.trace_columns import TraceListTable
from tui.ui.widgets.trace_table import TraceTable
from tui.ui.widgets.virtual_rows import VirtualRows


class TracesScreen(TraceListAnnotating, PagedList):
    # The footer at 80 columns: Back, Open, Filter, Range, Refresh, Live, Alerts, then `?` and
    # Quit; Annotate, Errors, Overview and Sort follow as room allows (FOOTER_WHEN_ROOM). All
    # are in `?`.
    BINDINGS = [
        Binding("escape", "back", "Back", id="traces.back"),
        Binding("enter", "open", "Open", id="traces.open", priority=False),
        Binding(
            "slash",
            "filter",
            "Filter",
            id="traces.filter",
            tooltip="Query: error model:gpt-4o latency>2s cost>0.01 user:alice tag:prod refund",
        ),
        # Live only while a query is on (esc clears it too, one thing at a time). Out of the
        # footer, which has no room for it at 80 columns: the header says "x clears".
        Binding("x", "clear_query", "Clear query", id="traces.clear_query", show=False),
        Binding("t", "time_range", "Range", id="traces.range", tooltip="Pick the time range"),
        Binding(
            "s",
            "sort",
            "Sort",
            id="traces.sort",
            tooltip="Sort by start, duration or cost",
            show=False,
        ),
        Binding("r", "refresh", "Refresh", id="traces.refresh"),
        Binding("L", "live", "Live", id="traces.live", tooltip="Add new traces as they arrive"),
        Binding("a", "alerts", "Alerts", id="traces.alerts"),
        Binding(
            "S",
            "sessions",
            "Sessions",
            id="traces.sessions",
            tooltip="The project's sessions: each one's traces read as one conversation",
            show=False,
        ),
        Binding(
            "c",
            "who_columns",
            "Columns",
            id="traces.columns",
            tooltip="Show or hide the user, session and tags columns",
            show=False,
        ),
        Binding(
            "o",
            "overview",
            "Overview",
            id="traces.overview",
            tooltip="Error rate, latency, tokens and cost over the range, in charts",
            show=False,
        ),
        Binding(
            "e",
            "errors",
            "Errors",
            id="traces.errors",
            tooltip="Only the traces with errors, over the whole range (e again: all)",
            show=False,
        ),
        Binding(
            "m",
            "mark_for_diff",
            "Mark",
            id="traces.mark",
            tooltip="Mark this trace as A of a diff (D on another shows what differs from it)",
            show=False,
        ),
        Binding(
            "D",
            "diff",
            "Diff",
            id="traces.diff",
            tooltip="What differs: this trace against the marked one, else its last good one",
            show=False,
        ),
        *annotation_bindings("traces", "the selected trace", show=False),
        BULK_BINDING,
    ]
    FOOTER_WHEN_ROOM = ("traces.annotate", "traces.errors", "traces.overview", "traces.sort")
    DEFAULT_CSS = """
    TracesScreen #top { height: auto; background: $boost; }
    TracesScreen #header { height: 1; width: 1fr; padding: 0 0 0 1; }
    TracesScreen #position { width: 24; padding: 0 1; color: $text-muted; text-align: right; }
    TracesScreen #columns { height: 1; color: $text-muted; text-style: bold; }
    TracesScreen #answer { height: 1; display: none; background: $boost; padding: 0 1; }
    TracesScreen #answer.-shown { display: block; }
    TracesScreen #query { height: auto; display: none; }
    TracesScreen #query.-open { display: block; }
    TracesScreen #preview { height: 1; padding: 0 1; background: $boost; }
    """

    def __init__(self, project_id: str, project_name: str | None = None) -> None:
        super().__init__(project_id)
        self.project_name = project_name or project_id
        self._left = False  # another screen has been on top since this one opened
        self._last_row = 0  # where the cursor was: the next page is fetched moving down
        self.answers_shown = False  # some row has an answer, user, session or tags
        self.shown = Shown([], 0, (), None)  # the loaded rows as the list shows them

    def compose(self) -> ComposeResult:
        with Horizontal(id="top"):
            yield Static(id="header")
            # Apart from the header, so a cursor move repaints only these few cells (SSH).
            yield Static(id="position")
        yield Static(id="columns")
        yield TraceListTable()
        # The selected trace's answer, user, session and tags, when the server sends them.
        yield Static(id="answer")
        # The query line, and over it what its preview of what is typed is.
        with Vertical(id="query"):
            yield Static(id="preview")
            yield QueryLine(id="filter")
        yield StatusBar()
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(TraceTable).focus()
        self.action_refresh()

    def on_screen_suspend(self) -> None:
        self._left = True

    def on_screen_resume(self) -> None:
        mark = self.tui.diff_mark  # marked here, or on another list of this project
        self.show_diff_mark(mark[0] if mark is not None and mark[1] == self.project_id else None)
        # Back from another screen after a failed load: the server may be back (a rate limit
        # is the app's to wait out: it retries by itself when the time comes).
        if (
            self._left
            and self.load_error
            and not self.fetching
            and not self.tui.rate_limited_until
            and not self.state.paging.gone
        ):
            self.load_page(first=not self.traces)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is self.page_worker and not self.fetching:
            self.update_header()  # cancelled or failed as a bug: "loading…" must not stay

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit_to_width)

    def _fit_to_width(self) -> None:
        """What is drawn to the width: the columns' names, the header, the preview line."""
        self._update_columns()
        self.update_header()
        if self.shown.preview is not None:
            self.show_preview()

    def _update_columns(self) -> None:
        table = self.query_one(TraceListTable)
        self.query_one("#columns", Static).update(Text(table.header(table.content_width)))

    def took_in(self, fresh: list[Trace], previews: bool) -> None:
        self.query_one(QueryLine).remember(fresh)
        if not self.answers_shown and any(map(has_answer, fresh)):
            self.answers_shown = True
            self.query_one("#answer").add_class("-shown")
        table = self.query_one(TraceTable)
        if previews and not table.previews:
            table.previews = True
            self._update_columns()
        if not table.marks and any(trace.annotations for trace in fresh):
            table.marks = True
            self._update_columns()

    def took_in_annotations(self) -> None:
        self.query_one(QueryLine).remember(self.traces)
        if not self.answers_shown:
            self.answers_shown = True
            self.query_one("#answer").add_class("-shown")
        self._update_columns()

    def apply_view(self, keep: Trace | None) -> None:
        """Filter and sort what is loaded, where the server did not, or preview what is typed;
        the cursor stays on the trace it was on (or, given none, where it is)."""
        self.shown = show(self.state, self.traces, self._texts, self.offered_filters())
        rows = self.shown.rows
        table = self.query_one(TraceTable)
        table.now = self.tui.now()  # "3m ago" is counted from the moment of drawing
        table.rows = rows
        table.rows_changed()
        if keep is not None:
            for index, trace in enumerate(rows):
                if trace is keep:
                    if index != table.cursor:
                        table.cursor = index
                    break
        if self.shown.preview is not None:
            self.show_preview()
        self.update_header()

    def show_preview(self) -> None:
        """The line over the query line: what its preview of what is typed is."""
        line = self.query_one("#preview", Static)
        if self.shown.preview is not None:
            line.update(preview_line(self.shown.preview, line.content_region.width or None))

    @on(VirtualRows.CursorMoved)
    def _cursor_moved(self, event: VirtualRows.CursorMoved) -> None:
        if event.row > self._last_row:  # towards the end (not the first page's move to the top)
            self._prefetch()
        self._last_row = event.row
        self.update_position()

    def update_header(self) -> None:
        """The header on one line, fitted to its width (the whole query: `/` shows it)."""
        field = self.query_one("#header", Static)
        width = field.content_region.width or None
        fetching = self.fetching
        text = header(self.state, self.project_name, self.shown, len(self.traces), fetching, width)
        field.update(text)
        self.update_position()
        self.show_empty_hint()

    def show_empty_hint(self) -> None:
        """With no rows to show once all is loaded: why, and the key that does something
        about it (in place of the rows, dim)."""
        table = self.query_one(TraceTable)
        hint: Text | None = None
        if self.state.paging.gone and not table.rows:
            hint = Text("The server has no such project now: esc goes back to the projects.")
        elif not table.rows and self.ended and not self.fetching and not self.load_error:
            hint = self.empty_hint()
        if (hint and hint.plain) != (table.empty_text and table.empty_text.plain):
            table.empty_text = hint

    def empty_hint(self) -> Text:
        if self.shown.preview is not None:
            return Text("No loaded row matches what is typed: enter applies it, esc clears it.")
        if self.state.query_text:
            return Text("Nothing matches the query: x clears it, / changes it.")
        if self.state.errors_only:
            return Text("No errors in this range: e shows every trace.")
        # The OTLP/HTTP endpoint is the API's root (without /v1) plus /v1/traces.
        root = self.tui.client.base_url.removesuffix("/v1")
        hint = Text("Press t for a wider range, or send traces (OTLP/HTTP) to ")
        hint.append_text(safe_text(f"{root}/v1/traces", 200))
        return hint

    def update_position(self) -> None:
        """Which row the cursor is on, of how many shown."""
        table = self.query_one(TraceTable)
        shown = len(table.rows)
        position = f"row {table.cursor + 1:,} of {shown:,}" if shown else ""
        # A fixed width and no layout: nothing else on screen moves, so nothing else repaints.
        self.query_one("#position", Static).update(Text(position), layout=False)
        if self.answers_shown:
            selected = table.selected
            line = answer_line(selected) if selected is not None else Text()
            self.query_one("#answer", Static).update(line, layout=False)

    # -- actions ---------------------------------------------------------------------------------

    def action_back(self) -> None:
        """Esc undoes one thing at a time: the open filter field, then the filter, then a
        ranking still loading, then the screen itself. Once the project is gone from the
        server, esc (after the open field) goes back to the projects."""
        field = self.query_one("#filter", Input)
        if field.has_class("-open") or (self.state.query_text and not self.state.paging.gone):
            self.action_clear_query()
            return
        if self.state.paging.gone:
            self.tui.back_to_projects()  # listed again: this one is gone
            return
        if self.state.paging.loading_all:
            self.state = self.state.loading_all_set(False)
            if self.page_worker is not None:
                self.page_worker.cancel()
            self.update_header()
            return
        if self.state.errors_only:
            self.action_errors()
            return
        self.dismiss()

    def action_open(self) -> None:
        trace = self.query_one(TraceTable).selected
        if trace is not None and trace.id:
            self.tui.open_trace(trace.id, self.project_id)

    def action_mark_for_diff(self) -> None:
        trace = self.query_one(TraceTable).selected
        if trace is not None and trace.id:
            label = f"{trace.name or 'trace'} {trace.id[:8]} ({fmt.local_time(trace.started_at)})"
            self.post_message(DiffMark(trace.id, self.project_id, label))
            self.show_diff_mark(trace.id)

    def show_diff_mark(self, trace_id: str | None) -> None:
        """The row of the trace marked as A reads `A` where its status is."""
        table = self.query_one(TraceTable)
        if table.diff_mark != trace_id:
            table.diff_mark = trace_id
            table.refresh()

    def action_diff(self) -> None:
        trace = self.query_one(TraceTable).selected
        if trace is not None and trace.id:
            self.post_message(DiffRequested(trace.id, self.project_id))

    def action_time_range(self) -> None:
        def chosen(value: TimeRange | None) -> None:
            if value is not None:
                self.set_range(value)

        self.tui.pick_time_range(self.state.time_range, chosen)

    def set_range(self, value: TimeRange) -> None:
        self.state = self.state.ranged(value)
        self.reload(keep=False)  # another range is another list: from its top

    def action_sessions(self) -> None:
        """The project's sessions; from a filtered list, only its user's or its traces'."""
        of = sessions_of(self.state, self.shown.rows, self.tui.now())
        self.tui.open_sessions(self.project_id, self.project_name, of=of)

    def action_who_columns(self) -> None:
        self.state = self.state.who_toggled()
        table = self.query_one(TraceListTable)
        table.who = self.state.who_columns
        self._update_columns()
        table.refresh()

    def action_alerts(self) -> None:
        self.tui.open_alerts(self.project_id, self.project_name)

    def action_overview(self) -> None:
        self.tui.open_overview(self.project_id, self.project_name, self.state.time_range)

    def action_live(self) -> None:
        if self.state.live:
            self.set_live(False)
        elif not self.state.live_possible:
            self.notify("Live mode needs a range relative to now (15m ... 30d).", timeout=4)
        else:
            self.set_live(True)
            self.poll_new()
        self.update_header()
