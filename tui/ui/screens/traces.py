"""The trace list of one project: paged by cursor, queried, sorted, refreshed, optionally live.

The query line (`/`, tui/model/query.py's language) is sent to the server when it offers every
filter the query uses (offers.trace_filters, learnt from its OpenAPI document), and cursor
paging then pages the filtered list; otherwise it filters the loaded rows and the header says
so. Sorting (`s`, or `sort:` in the query) is the server's where it offers `sort`; otherwise
sorting by duration or cost ranks the whole range, not just what is loaded: the rest is paged
in behind the ranking (with progress; esc stops it, and the header then says the ranking is of
the loaded rows only). `e` (errors only) is the server's `status` filter where offered, else
the same paging in. What was loaded stays when a filtered request fails.

What decides whether the server or the loaded rows do the query is in trace_query.py; what
stays here (~520 lines) is one piece: loading the pages, live mode, and drawing the list.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.timer import Timer
from textual.widgets import Input, Static
from textual.worker import Worker

from tui.api import ApiError, NextPage, Page, Trace
from tui.api.models import TraceFilter
from tui.core.gcpause import hold_out_of_collections, return_to_collections
from tui.model import formatting as fmt
from tui.model.chat import trace_preview
from tui.model.query import (
    matches,
    sort_rows,
    trace_text,
)
from tui.model.text import safe_text
from tui.model.timerange import TimeRange
from tui.ui.messages import DiffMark, DiffRequested
from tui.ui.screens.base import error_line
from tui.ui.screens.trace_query import (
    QueriedList,
    answer_line,
    has_answer,
)
from tui.ui.widgets.key_footer import KeyFooter
from tui.ui.widgets.query_line import QueryLine
from tui.ui.widgets.status_bar import StatusBar
from tui.ui.widgets.trace_columns import TraceListTable
from tui.ui.widgets.trace_table import TraceTable
from tui.ui.widgets.virtual_rows import VirtualRows

if TYPE_CHECKING:
    from tui.api import ApiClient

PAGE_SIZE = 500
# The next page is asked for once the cursor moves within a page's worth of rows of the end (so
# the first move asks for the second page, and nothing is fetched for a list only glanced at):
# far from the server (a 200 ms round trip), a held page-down key (some 600 rows a second)
# reaches the end of what is loaded only after the next page has arrived.
PREFETCH_ROWS = PAGE_SIZE
LIVE_SECONDS = 5.0
HOLD_OUT_TRACES = 5_000  # loaded traces held out of garbage collections from this many on


def haystack(trace: Trace) -> str:
    return trace_text(trace)


def add_preview(trace: Trace) -> bool:
    """Give the trace its one-line input preview: the server's, or one made from an `input`
    it sent (Langfuse does); True if it has one."""
    if trace.input_preview is None and not trace.model_extra and not trace.attributes:
        return False
    attributes = trace.attributes if isinstance(trace.attributes, dict) else None
    trace.input_preview = trace_preview(
        {"input_preview": trace.input_preview}, trace.model_extra, attributes
    )
    return trace.input_preview is not None


class TracesScreen(QueriedList):
    # The footer at 80 columns: Back, Open, Filter, Range, Refresh, Live, Alerts, then `?` and
    # Quit; Errors, Overview and Sort follow as room allows (FOOTER_WHEN_ROOM). All are in `?`.
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
    ]
    FOOTER_WHEN_ROOM = ("traces.errors", "traces.overview", "traces.sort")
    DEFAULT_CSS = """
    TracesScreen #top { height: auto; background: $boost; }
    TracesScreen #header { height: auto; width: 1fr; padding: 0 0 0 1; }
    TracesScreen #position { width: 24; padding: 0 1; color: $text-muted; text-align: right; }
    TracesScreen #columns { height: 1; color: $text-muted; text-style: bold; }
    TracesScreen #filter { dock: bottom; display: none; }
    TracesScreen #answer { height: 1; display: none; background: $boost; padding: 0 1; }
    TracesScreen #answer.-shown { display: block; }
    TracesScreen #filter.-open { display: block; }
    """

    def __init__(self, project_id: str, project_name: str | None = None) -> None:
        super().__init__()
        self.project_id = project_id
        self.project_name = project_name or project_id
        self.range = TimeRange()
        self.traces: list[Trace] = []
        self._haystacks: list[str] = []
        self._ids: set[str] = set()
        self.next_page: NextPage | None = None
        self.page_worker: Worker[None] | None = None
        self.live_timer: Timer | None = None
        self.load_error: str | None = None
        self.dropped = 0  # list items that were not records at all (see Page.dropped)
        self._left = False  # another screen has been on top since this one opened
        self._last_row = 0  # where the cursor was: the next page is fetched moving down
        self.answers_shown = False  # some row has an answer, user, session or tags
        # The first page is asked for now, before the screen is built and drawn.
        self._early_page: asyncio.Task[Page] | None = self.ask_now(self._first_page)

    def _first_page(self, client: ApiClient) -> Coroutine[Any, Any, Page]:
        start, end = self.range.bounds(self.tui.now())
        return client.list_traces(self.project_id, start=start, end=end, limit=PAGE_SIZE)

    def on_unmount(self) -> None:
        if self._early_page is not None:
            self._early_page.cancel()
        return_to_collections(self)

    def compose(self) -> ComposeResult:
        with Horizontal(id="top"):
            yield Static(id="header")
            # Apart from the header, so a cursor move repaints only these few cells (SSH).
            yield Static(id="position")
        yield Static(id="columns")
        yield TraceListTable()
        # The selected trace's answer, user, session and tags, when the server sends them.
        yield Static(id="answer")
        yield QueryLine(id="filter")
        yield StatusBar()
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(TraceTable).focus()
        self.action_refresh()

    def on_screen_suspend(self) -> None:
        self._left = True

    def on_screen_resume(self) -> None:
        # Back from another screen after a failed load: the server may be back (a rate limit
        # is the app's to wait out: it retries by itself when the time comes).
        if self._left and self.load_error and not self.fetching and not self.tui.rate_limited_until:
            self.load_page(first=not self.traces)

    @property
    def fetching(self) -> bool:
        """Whether a page is on its way (derived from the worker: it cannot go stale)."""
        return self.page_worker is not None and self.page_worker.is_running

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is self.page_worker and not self.fetching:
            self.update_header()  # cancelled or failed as a bug: "loading…" must not stay

    def on_resize(self) -> None:
        self.call_after_refresh(self._update_columns)

    def _update_columns(self) -> None:
        table = self.query_one(TraceListTable)
        self.query_one("#columns", Static).update(Text(table.header(table.content_width)))

    # -- loading ---------------------------------------------------------------------------------

    def action_refresh(self) -> None:
        """Reload from the first page; what is shown stays until the new page arrives, and the
        cursor then stays on its trace (else its row), on the same line. While ranked by
        duration or cost, the whole range is loaded again."""
        self.reload(keep=True)

    def reload(self, keep: bool) -> None:
        """The first page again; with `keep`, the cursor stays where it was (else: the top)."""
        self.loading_all = self.ranks_loaded_rows
        self.load_page(first=True, filters=self.sent, keep=keep)

    def load_page(
        self, first: bool = False, filters: TraceFilter | None = None, keep: bool = False
    ) -> None:
        """The first page (replacing what is loaded once it arrives) or the next one. The
        first page is asked for with `filters` (None: none); the next ones carry what the
        first was asked with (in the cursor, and sent along for servers whose cursor does
        not)."""
        start, end = self.range.bounds(self.tui.now())
        after = None if first else self.next_page
        asked = filters if first else self.sent
        table = self.query_one(TraceTable)
        spot = table.spot() if first and keep and table.rows else None
        early, self._early_page = self._early_page, None
        if not first and early is not None:
            early.cancel()
            early = None

        def loaded(page: Page) -> None:
            self.load_error = None
            if first:
                self.traces, self._haystacks, self._ids, self.dropped = [], [], set(), 0
                self.sent, self.sent_for = asked, self.trace_query
            self.next_page = page.next_page
            self.ended = page.next_page is None or not page.items
            self.dropped += page.dropped
            self._add(page.items, at_top=False, to_top=first and spot is None)
            if spot is not None:
                table.follow(spot)
            if self.loading_all and not self.ended:
                self.call_after_refresh(self.load_page)
            elif self.ended:
                self.loading_all = False
                self.update_header()
            elif not first:  # the cursor may be within a page of the new end already
                self.call_after_refresh(self._prefetch)

        def failed(error: ApiError) -> None:
            # What was loaded stays; the header says what failed and ctrl+r retries.
            self.load_error = error_line(error)
            self.update_header()

        self.page_worker = self.call_api(
            lambda client: (
                (early if asked is None else None)
                or client.list_traces(
                    self.project_id,
                    start=start,
                    end=end,
                    limit=PAGE_SIZE,
                    after=after,
                    filters=asked,
                )
            ),
            loaded,
            group="traces",
            failed=failed,
            retry=lambda: self.load_page(first=first),
            project_id=self.project_id,
        )
        self.update_header()

    def _add(self, traces: list[Trace], at_top: bool, to_top: bool = False) -> None:
        fresh = [t for t in traces if (t.id or "") not in self._ids or not t.id]
        self.query_one(QueryLine).remember(fresh)
        if not self.answers_shown and any(map(has_answer, fresh)):
            self.answers_shown = True
            self.query_one("#answer").add_class("-shown")
        previews = False
        for trace in fresh:
            if trace.id:
                self._ids.add(trace.id)
            previews = add_preview(trace) or previews
        table = self.query_one(TraceTable)
        if previews and not table.previews:
            table.previews = True
            self._update_columns()
        keep = None if to_top else table.selected
        if at_top:
            self.traces[:0] = fresh
            self._haystacks[:0] = [haystack(t) for t in fresh]
        else:
            self.traces += fresh
            self._haystacks += [haystack(t) for t in fresh]
        if not at_top and len(self.traces) >= HOLD_OUT_TRACES:
            # Every full collection would walk all the loaded traces (100 ms at 50,000, landing
            # on whatever the user does next): they are held out of collections, as a big
            # trace is (tui/core/gcpause.py), until the screen closes. On each page (a bounded
            # number of times: what is held includes any garbage not yet collected).
            hold_out_of_collections(self)
        self.apply_view(keep=keep)
        if to_top:
            table.move_to(0)

    def apply_view(self, keep: Trace | None) -> None:
        """Filter and sort what is loaded, where the server did not; the cursor stays on the
        trace it was on (or, given none, where it is)."""
        query = self.filters_loaded_rows
        sent = self.sent or TraceFilter()
        rows = (
            [
                t
                for t, h in zip(self.traces, self._haystacks, strict=True)
                if matches(t, query, h, strict=self.typed is None)
            ]
            if query is not None and not query.is_empty
            else list(self.traces)
        )
        if self.errors_only and sent.status != "error":
            rows = [t for t in rows if t.status == "error" or (t.error_count or 0) > 0]
        if self.trace_query.sort is not None:
            if sent.sort != self.trace_query.sort or sent.order != self.trace_query.order:
                rows = sort_rows(rows, self.trace_query.sort, self.trace_query.order)
        elif sent.sort is not None:
            pass  # in the server's order
        elif self.sort == "duration":
            rows.sort(key=lambda t: -(t.duration_ms or 0))
        elif self.sort == "cost":
            rows.sort(key=lambda t: -(t.total_cost_usd or 0))
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
        self.update_header()

    @on(VirtualRows.CursorMoved)
    def _cursor_moved(self, event: VirtualRows.CursorMoved) -> None:
        if event.row > self._last_row:  # towards the end (not the first page's move to the top)
            self._prefetch()
        self._last_row = event.row
        self.update_position()

    def _prefetch(self) -> None:
        """Ask for the next page when the cursor is within PREFETCH_ROWS of the end of what is
        loaded, unless a page is on its way already (one request at a time, each page once)."""
        table = self.query_one(TraceTable)
        if (
            not self.fetching
            and not self.ended
            and self.next_page is not None
            and self.filters_loaded_rows is None
            and not self.ranks_loaded_rows
            and table.cursor >= table.row_count() - PREFETCH_ROWS
        ):
            self.load_page()

    def update_header(self) -> None:
        table = self.query_one(TraceTable)
        shown = len(table.rows)
        text = Text()
        text.append_text(safe_text(self.project_name, 40, style="bold"))
        text.append(f" · {self.range.label} · {self.sort_label}")
        if self.filter_text:
            text.append(" · ")
            text.append_text(safe_text(self.filter_text, 40, style="bold italic"))
            text.append(" (x clears)", style="dim")
        if self.errors_only:
            text.append(" · ✗ errors only", style="bold red")
        if self.filters_loaded_rows is not None and self.typed is None:
            text.append(
                f" · filtering loaded rows: {shown:,} of {len(self.traces):,}", style="bold"
            )
        elif self.sent is not None and not self.sent.is_empty:
            text.append(f" · {shown:,} found", style="bold")
        elif self.filter_text or self.errors_only:
            text.append(f" · {shown:,} of {len(self.traces):,} loaded")
        if self.dropped:
            text.append(f" · {self.dropped:,} unreadable skipped", style="dim")
        if self.live_timer is not None:
            text.append(" · ● live", style="bold green")
        if self.load_error:
            text.append(" · ")
            text.append_text(safe_text(self.load_error, 60, style="bold red"))
            text.append(" (ctrl+r retries)")
        elif self.ranks_loaded_rows and not self.ended:
            doing = "ranking" if self.sort != "start" else "finding errors in"
            if self.loading_all:
                text.append(
                    f" · {doing} all: {len(self.traces):,} loaded, more coming (esc stops)",
                    style="italic",
                )
            else:
                what = "ranked" if self.sort != "start" else "errors"
                text.append(
                    f" · {what} among the {len(self.traces):,} loaded only (r loads all)",
                    style="bold",
                )
        elif self.fetching:
            text.append(" · loading…", style="italic")
        elif self.ended:
            nothing = "nothing matches" if self.sent else "no traces in this range"
            text.append(" · all loaded" if self.traces else f" · {nothing}", style="dim")
        self.query_one("#header", Static).update(text)
        self.update_position()
        self.show_empty_hint()

    def show_empty_hint(self) -> None:
        """With no rows to show once all is loaded: why, and the key that does something
        about it (in place of the rows, dim)."""
        table = self.query_one(TraceTable)
        hint: Text | None = None
        if not table.rows and self.ended and not self.fetching and not self.load_error:
            hint = self.empty_hint()
        if (hint and hint.plain) != (table.empty_text and table.empty_text.plain):
            table.empty_text = hint

    def empty_hint(self) -> Text:
        if self.typed is not None:
            return Text("Nothing matches what is typed: esc clears it.")
        if self.filter_text:
            return Text("Nothing matches the query: x clears it, / changes it.")
        if self.errors_only:
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
        ranking still loading, then the screen itself."""
        field = self.query_one("#filter", Input)
        if field.has_class("-open") or self.filter_text:
            self.action_clear_query()
            return
        if self.loading_all:
            self.loading_all = False
            if self.page_worker is not None:
                self.page_worker.cancel()
            self.update_header()
            return
        if self.errors_only:
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

    def action_diff(self) -> None:
        trace = self.query_one(TraceTable).selected
        if trace is not None and trace.id:
            self.post_message(DiffRequested(trace.id, self.project_id))

    def action_time_range(self) -> None:
        def chosen(value: TimeRange | None) -> None:
            if value is not None:
                self.set_range(value)

        self.tui.pick_time_range(self.range, chosen)

    def set_range(self, value: TimeRange) -> None:
        self.range = value
        self.reload(keep=False)  # another range is another list: from its top

    def action_sessions(self) -> None:

        self.tui.open_sessions(self.project_id, self.project_name)

    def action_who_columns(self) -> None:
        table = self.query_one(TraceListTable)
        table.who = not table.who
        self._update_columns()
        table.refresh()

    def action_alerts(self) -> None:
        self.tui.open_alerts(self.project_id, self.project_name)

    def action_overview(self) -> None:
        self.tui.open_overview(self.project_id, self.project_name, self.range)

    def action_live(self) -> None:
        if self.live_timer is not None:
            self.live_timer.stop()
            self.live_timer = None
        elif self.range.preset is None:
            self.notify("Live mode needs a range relative to now (15m ... 30d).", timeout=4)
        else:
            self.live_timer = self.set_interval(LIVE_SECONDS, self.poll_new)
            self.poll_new()
        self.update_header()

    def poll_new(self) -> None:
        """Live mode: the traces that started since the newest one loaded (those the server's
        filter keeps, when it filters)."""
        newest = max((t.started_at for t in self.traces if t.started_at), default=None)
        start, end = self.range.bounds(self.tui.now())
        kept = replace(self.sent, sort=None, order=None) if self.sent is not None else None

        def arrived(page: Page) -> None:
            new = [t for t in page.items if t.id not in self._ids]
            if new:
                self._add(new, at_top=True)
            else:  # nothing new: the ages ("3m ago") still move on
                table = self.query_one(TraceTable)
                table.now = self.tui.now()
                table.refresh()

        self.call_api(
            lambda client: client.list_traces(
                self.project_id,
                start=newest or start,
                end=end,
                limit=PAGE_SIZE,
                filters=kept if kept is not None and not kept.is_empty else None,
            ),
            arrived,
            group="live",
            project_id=self.project_id,
        )
