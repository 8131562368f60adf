"""The trace list's pages: the first asked for as the screen opens, the next ones as the
cursor nears the end of what is loaded (or all of them, behind a ranking or errors-only done on
the loaded rows), live mode's new traces on top, and a project gone from the server.
`PagedList` comes between QueriedList (tui/ui/screens/trace_query.py: the query's keys) and
TracesScreen (tui/ui/screens/traces.py: the keys and the drawing); what it learns goes into the
screen's TraceListState (tui/model/trace_list.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from textual.timer import Timer
from textual.worker import Worker

from tui.api import ApiError, NextPage, NotFound, Page, Trace
from tui.api.models import TraceFilter
from tui.core.gcpause import hold_out_of_collections, return_to_collections
from tui.model.chat import trace_preview
from tui.model.trace_list_rows import row_texts
from tui.ui.screens.base import error_line
from tui.ui.screens.trace_query import QueriedList
from tui.ui.widgets.trace_table import TraceTable

if TYPE_CHECKING:
    from tui.api import TraceSource

PAGE_SIZE = 500
# The next page is asked for once the cursor moves within a page's worth of rows of the end (so
# the first move asks for the second page, and nothing is fetched for a list only glanced at):
# far from the server (a 200 ms round trip), a held page-down key (some 600 rows a second)
# reaches the end of what is loaded only after the next page has arrived.
PREFETCH_ROWS = PAGE_SIZE
LIVE_SECONDS = 5.0
HOLD_OUT_TRACES = 5_000  # loaded traces held out of garbage collections from this many on


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


class PagedList(QueriedList):
    """The loaded rows of the trace list and the requests that bring them."""

    def __init__(self, project_id: str) -> None:
        super().__init__()
        self.project_id = project_id
        self.traces: list[Trace] = []
        self._texts: list[str] = []  # each loaded row's searchable text (row_texts)
        self._ids: set[str] = set()
        self.next_page: NextPage | None = None
        self.page_worker: Worker[None] | None = None
        self.live_timer: Timer | None = None
        # The first page is asked for now, before the screen is built and drawn.
        self._early_page: asyncio.Task[Page] | None = self.ask_now(self._first_page)

    # Done by the screen that draws the rows.
    def took_in(self, fresh: list[Trace], previews: bool) -> None:
        """New rows are loaded (`previews`: some have an input preview): what is drawn of
        them besides the rows (completion, the answer line, the columns)."""
        raise NotImplementedError

    @property
    def ended(self) -> bool:
        """Whether the last page of the range is loaded."""
        return self.state.paging.ended

    @property
    def load_error(self) -> str | None:
        """The last failed request, in one line (None: the last one worked)."""
        return self.state.paging.error

    def _first_page(self, client: TraceSource) -> Coroutine[Any, Any, Page]:
        start, end = self.state.time_range.bounds(self.tui.now())
        return client.list_traces(self.project_id, start=start, end=end, limit=PAGE_SIZE)

    def on_unmount(self) -> None:
        if self._early_page is not None:
            self._early_page.cancel()
        return_to_collections(self)

    @property
    def fetching(self) -> bool:
        """Whether a page is on its way (derived from the worker: it cannot go stale)."""
        return self.page_worker is not None and self.page_worker.is_running

    def action_refresh(self) -> None:
        """Reload from the first page; what is shown stays until the new page arrives, and the
        cursor then stays on its trace (else its row), on the same line. While ranked by
        duration or cost, the whole range is loaded again."""
        self.reload(keep=True)

    def reload(self, keep: bool) -> None:
        """The first page again; with `keep`, the cursor stays where it was (else: the top)."""
        self.state = self.state.loading_all_set(self.state.ranks_here)
        self.load_page(first=True, filters=self.state.asked, keep=keep)

    def load_page(
        self, first: bool = False, filters: TraceFilter | None = None, keep: bool = False
    ) -> None:
        """The first page (replacing what is loaded once it arrives) or the next one. The
        first page is asked for with `filters` (None: none); the next ones carry what the
        first was asked with (in the cursor, and sent along for servers whose cursor does
        not)."""
        start, end = self.state.time_range.bounds(self.tui.now())
        after = None if first else self.next_page
        asked = filters if first else self.state.asked
        table = self.query_one(TraceTable)
        spot = table.spot() if first and keep and table.rows else None
        early, self._early_page = self._early_page, None
        if not first and early is not None:
            early.cancel()
            early = None

        def loaded(page: Page) -> None:
            if first:
                self.traces, self._texts, self._ids = [], [], set()
            self.next_page = page.next_page
            ended = page.next_page is None or not page.items
            self.state = self.state.page_loaded(first, asked, ended, page.dropped)
            self._add(page.items, at_top=False, to_top=first and spot is None)
            if spot is not None:
                table.follow(spot)
            if self.state.paging.loading_all:
                self.call_after_refresh(self.load_page)
            elif ended:
                self.update_header()
            elif not first:  # the cursor may be within a page of the new end already
                self.call_after_refresh(self._prefetch)

        def failed(error: ApiError) -> bool:
            if isinstance(error, NotFound):
                return self.project_gone()
            # What was loaded stays; the header says what failed and ctrl+r retries.
            self.state = self.state.page_failed(error_line(error))
            self.update_header()
            return False

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
        """Rows into what is loaded (on top: live mode's), each once, then shown."""
        fresh = [t for t in traces if (t.id or "") not in self._ids or not t.id]
        previews = False
        for trace in fresh:
            if trace.id:
                self._ids.add(trace.id)
            previews = add_preview(trace) or previews
        self.took_in(fresh, previews)
        table = self.query_one(TraceTable)
        keep = None if to_top else table.selected
        if at_top:
            self.traces[:0] = fresh
            self._texts[:0] = row_texts(fresh)
        else:
            self.traces += fresh
            self._texts += row_texts(fresh)
        if not at_top and len(self.traces) >= HOLD_OUT_TRACES:
            # Every full collection would walk all the loaded traces (100 ms at 50,000, landing
            # on whatever the user does next): they are held out of collections, as a big
            # trace is (tui/core/gcpause.py), until the screen closes. On each page (a bounded
            # number of times: what is held includes any garbage not yet collected).
            hold_out_of_collections(self)
        self.apply_view(keep=keep)
        if to_top:
            table.move_to(0)

    def _prefetch(self) -> None:
        """Ask for the next page when the cursor is within PREFETCH_ROWS of the end of what is
        loaded, unless a page is on its way already (one request at a time, each page once)."""
        table = self.query_one(TraceTable)
        if (
            not self.fetching
            and not self.state.paging.ended
            and self.next_page is not None
            and self.state.may_prefetch
            and table.cursor >= table.row_count() - PREFETCH_ROWS
        ):
            self.load_page()

    def set_live(self, on: bool) -> None:
        """Live mode on (a poll every LIVE_SECONDS) or off."""
        self.state = self.state.live_set(on)
        if self.live_timer is not None and not self.state.live:
            self.live_timer.stop()
            self.live_timer = None
        elif self.live_timer is None and self.state.live:
            self.live_timer = self.set_interval(LIVE_SECONDS, self.poll_new)

    def poll_new(self) -> None:
        """Live mode: the traces that started since the newest one loaded (those the server's
        filter keeps, when it filters)."""
        newest = max((t.started_at for t in self.traces if t.started_at), default=None)
        start, end = self.state.time_range.bounds(self.tui.now())
        asked = self.state.asked
        kept = replace(asked, sort=None, order=None) if asked is not None else None

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
            failed=lambda error: isinstance(error, NotFound) and self.project_gone(),
            project_id=self.project_id,
        )

    def project_gone(self) -> bool:
        """The server answered 404 for the project: it has none of that id (deleted, or the
        service started on another database). Said in the header, live mode stopped; esc goes
        back to the projects. True: said in place (for call_api's `failed`)."""
        if not self.state.paging.gone:
            self.notify(
                "The server has no project with this id now: it was deleted, or the service "
                "started on another database. esc goes back to the projects.",
                title="Project gone",
                severity="warning",
                timeout=10,
            )
        self.state = self.state.project_gone()
        self.set_live(False)
        self.refresh_bindings()
        self.update_header()
        return True
