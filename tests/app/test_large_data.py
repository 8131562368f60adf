"""Large data in the app: the 10,000-span and the 2,500-deep trace open and scroll, and what
is big (start-up's objects, thousands of listed traces, a big trace) is held out of garbage
collections while in use and handed back after."""

from __future__ import annotations

import gc
import random
import uuid
import weakref

import pytest

from tests.support.app import running_app, showing, tree_lines, tree_shown, wait_for
from tests.support.builders import add_bulk_traces
from tests.support.service import RunningService
from tui.api.span_table import SpanTable
from tui.demo.data import BIG_TRACE_ID, DEEP_TRACE_ID, insert_big_traces
from tui.server.store.rows import now_ms
from tui.ui.app import StartAt
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.traces import TracesScreen
from tui.ui.widgets.span_tree import SpanTreeView


@pytest.fixture(scope="module")
def big_traces(service: RunningService) -> None:
    if service.store.get_trace(BIG_TRACE_ID) is None:
        with service.store.transaction() as db:
            service.store.insert_project(db, "big", None, 30, project_id="proj_big")
            insert_big_traces(service.store, db, random.Random(1), now_ms(), "proj_big")


async def test_the_10000_span_trace_opens_and_scrolls(
    service: RunningService, big_traces: None
) -> None:
    async with running_app(service, StartAt(trace_id=BIG_TRACE_ID), size=(160, 48)) as (app, pilot):
        await wait_for(pilot, lambda: tree_shown(app), seconds=60)
        view = app.screen.query_one(SpanTreeView)
        assert view.trace_tree.size == 12_001
        assert len(view.view.rows) == 601  # the root and its 600 steps, collapsed with rollups
        assert "Σ" in tree_lines(app)[1]
        # Span objects are made for the rows drawn (and the detail pane's span), not for all.
        spans = view.trace_tree.spans
        assert isinstance(spans, SpanTable) and 0 < spans.made <= view.size.height + 1
        await pilot.press("pagedown")
        await pilot.pause()
        assert spans.made <= 2 * view.size.height + 1
        await pilot.press("pagedown", "end", "plus")
        assert len(view.view.rows) == 12_001
        await pilot.press("end", "pageup", "minus")
        assert view.view.rows == [0]
        read = weakref.ref(spans)
        del spans
        # A trace this big is held out of garbage collections while open (tui/core/gcpause.py),
        # and handed back, spans let go of, when it closes.
        assert gc.get_freeze_count() > 12_001
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.screen.query(SpanTreeView))
        assert gc.get_freeze_count() == 0
        assert view.trace_tree.size == 0
        await pilot.pause()  # the collection that follows a big trace's closing
        assert read() is None  # nothing still holds the trace's spans


async def test_the_2500_deep_trace_opens_and_scrolls(
    service: RunningService, big_traces: None
) -> None:
    async with running_app(service, StartAt(trace_id=DEEP_TRACE_ID)) as (app, pilot):
        await wait_for(pilot, lambda: tree_shown(app), seconds=60)
        view = app.screen.query_one(SpanTreeView)
        assert view.trace_tree.max_depth == 2_499
        await pilot.press("plus", "end")
        await pilot.pause()
        assert view.position == 2_499
        assert any("2499‥" in line and "decompose" in line for line in tree_lines(app))


async def test_thousands_of_listed_traces_are_held_out_of_collections_until_closed(
    service: RunningService,
) -> None:
    """A full collection would walk every loaded trace (100 ms at 50,000): from 5,000 on, the
    list holds them out (tui/core/gcpause.py), and hands them back when it closes."""
    project = f"proj_held_{uuid.uuid4().hex[:6]}"
    with service.store.transaction() as db:
        service.store.insert_project(db, "held", None, 30, project_id=project)
    add_bulk_traces(service.store, project, 5_100, now_ms(), span=3_600_000)
    async with running_app(service, StartAt(project_id=project)) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, TracesScreen) and app.screen.traces)
        screen = app.screen
        assert isinstance(screen, TracesScreen)
        await wait_for(pilot, lambda: gc.get_freeze_count() > 0)  # what start-up built
        held_at_start = gc.get_freeze_count()
        while not screen.ended:
            await wait_for(pilot, lambda: not screen.fetching)
            loaded = len(screen.traces)
            screen.load_page()
            await wait_for(pilot, lambda: screen.ended or len(screen.traces) > loaded)  # noqa: B023
        await wait_for(pilot, lambda: len(screen.traces) == 5_100)
        assert gc.get_freeze_count() > held_at_start + 5_100  # 500 were not worth it
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, TracesScreen))
        assert gc.get_freeze_count() == 0


async def test_what_start_up_built_is_held_out_of_collections_while_the_app_runs(
    service: RunningService,
) -> None:
    """Else the first full collection walks it all: some 50 ms, on the first trace list's
    first frame (tui/core/gcpause.py)."""
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        assert gc.get_freeze_count() > 10_000  # modules, classes
    assert gc.get_freeze_count() == 0  # handed back as the app ended
