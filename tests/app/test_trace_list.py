"""A project's trace list: paging, filter and sort over the loaded rows, ranking the whole
range (and stopping it), live mode, the time range, and list items that are not records."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from textual.widgets import OptionList

from tests.support.app import (
    DEADLINE_SECONDS,
    Transport,
    loaded_traces,
    rendered_text,
    running_app,
    showing,
    wait_for,
)
from tests.support.builders import add_bulk_traces
from tests.support.service import RunningService
from tui.api import ApiClient
from tui.model.timerange import parse_custom
from tui.server.store.rows import TraceRow, now_ms
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens import trace_loading
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.time_range import TimeRangeScreen
from tui.ui.screens.traces import TracesScreen
from tui.ui.widgets.trace_table import TraceTable


async def test_paging_past_500_traces(service: RunningService) -> None:
    project = f"proj_many_{uuid.uuid4().hex[:6]}"
    with service.store.transaction() as db:
        service.store.insert_project(db, "many", None, 30, project_id=project)
    add_bulk_traces(service.store, project, 1_234, now_ms(), span=3_600_000)
    async with running_app(service, StartAt(project_id=project)) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, TracesScreen) and len(app.screen.traces) == 500)
        screen = app.screen
        assert isinstance(screen, TracesScreen)
        # Each `end` asks for the next page once the cursor is on the last loaded row.
        deadline = time.monotonic() + DEADLINE_SECONDS
        while not (screen.ended and not screen.fetching):
            assert time.monotonic() < deadline, f"{len(screen.traces)} traces paged in"
            await pilot.press("end")
            await pilot.pause(0.05)
        ids = [t.id for t in screen.traces]
        assert len(ids) == len(set(ids)) == 1_234
        header = str(screen.query_one("#header").render())
        position = str(screen.query_one("#position").render())
        assert "all loaded" in header and "of 1,234" in position


async def test_filter_and_sort_keep_loaded_rows(service: RunningService) -> None:
    async with running_app(service, StartAt(project_id="proj_agent")) as (app, pilot):
        screen = await loaded_traces(app, pilot)
        loaded = len(screen.traces)
        await pilot.press("slash", *"zzz-no-such")
        table = screen.query_one(TraceTable)
        assert table.rows == [] and len(screen.traces) == loaded
        await pilot.press("escape")
        await pilot.press("slash", "ctrl+u")
        await pilot.press("escape", "s")
        durations = [t.duration_ms or 0 for t in table.rows]
        assert durations == sorted(durations, reverse=True)


async def test_esc_clears_the_filter_before_it_leaves(service: RunningService) -> None:
    async with running_app(service, StartAt(project_id="proj_support")) as (app, pilot):
        screen = await loaded_traces(app, pilot)
        await pilot.press("slash", *"handle", "enter")
        assert screen.state.query_text == "handle"
        await pilot.press("escape")
        assert app.screen is screen and screen.state.query_text == ""
        await pilot.press("escape")
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))


def paged_traces(pages: int = 3, per_page: int = 200, gate: asyncio.Event | None = None) -> Any:
    """A server of `pages` pages of traces; the costliest and slowest one is on the last page.
    With a `gate`, every page after the first waits for it (so a test can stop the paging)."""
    now = time.time()

    async def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/projects"):
            return httpx.Response(200, json={"data": [{"id": "p1", "name": "p"}]})
        page = int(request.url.params.get("cursor") or 0)
        if page and gate is not None:
            await gate.wait()
        items = []
        for i in range(per_page):
            n = page * per_page + i
            last = page == pages - 1 and i == per_page - 1
            items.append(
                {
                    "id": f"t{n:05d}",
                    "name": "the costly one" if last else f"trace {n}",
                    "started_at": now - n * 10,
                    "duration_ms": 99_000 if last else 100 + n,
                    "total_cost_usd": 9.5 if last else 0.001,
                }
            )
        more = page + 1 < pages
        return httpx.Response(
            200, json={"data": items, "next_cursor": str(page + 1) if more else None}
        )

    return handler


async def test_sorting_by_cost_ranks_the_whole_range_from_the_top(service: RunningService) -> None:
    transport = Transport(paged_traces())
    async with ApiClient("http://x.example/v1", SecretStr("k" * 20), transport=transport) as client:
        app = TraceTuiApp(client, StartAt(project_id="p1"))
        async with app.run_test(size=(100, 24)) as pilot:
            screen = await loaded_traces(app, pilot)
            table = screen.query_one(TraceTable)
            await pilot.press("j", "j", "j")
            await pilot.press("s", "s")  # duration, then cost
            await wait_for(pilot, lambda: screen.ended and not screen.fetching)

            def header_text() -> str:
                return rendered_text(screen.query_one("#header")) + rendered_text(
                    screen.query_one("#position")
                )

            await wait_for(pilot, lambda: "all loaded" in header_text(), what="the header")
            header = header_text()
            assert table.cursor == 0 and table.selected is not None
            assert table.selected.name == "the costly one"
    assert len(screen.traces) == 600 and "costliest first" in header and "row 1 of 600" in header
    assert "all loaded" in header


async def test_esc_stops_a_ranking_and_the_header_says_it_is_partial(
    service: RunningService,
) -> None:
    gate = asyncio.Event()  # never set: the second page never comes
    transport = Transport(paged_traces(gate=gate))
    async with ApiClient("http://x.example/v1", SecretStr("k" * 20), transport=transport) as client:
        app = TraceTuiApp(client, StartAt(project_id="p1"))
        async with app.run_test(size=(100, 24)) as pilot:
            screen = await loaded_traces(app, pilot)
            await pilot.press("s")
            await wait_for(pilot, lambda: screen.fetching)
            loading = rendered_text(screen.query_one("#header"))
            await pilot.press("escape")
            await wait_for(
                pilot,
                lambda: "ranked among" in rendered_text(screen.query_one("#header")),
                what="the header says the ranking stopped",
            )
            stopped = rendered_text(screen.query_one("#header"))
            assert isinstance(app.screen, TracesScreen) and not screen.fetching
    assert "more coming (esc stops)" in " ".join(loading.split())
    assert "ranked among the 200 loaded only" in " ".join(stopped.split())


async def test_live_mode_moves_the_ages_on(service: RunningService) -> None:
    async with running_app(service, StartAt(project_id="proj_support")) as (app, pilot):
        screen = await loaded_traces(app, pilot)
        table = screen.query_one(TraceTable)
        before = table.now
        app.now = lambda: before + timedelta(minutes=5)
        screen.poll_new()
        await wait_for(pilot, lambda: table.now > before)
        assert table.now - before == timedelta(minutes=5)


async def test_live_mode_adds_new_traces_on_top_without_moving_the_cursor(
    service: RunningService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trace_loading, "LIVE_SECONDS", 0.2)
    project = f"proj_live_{uuid.uuid4().hex[:6]}"
    with service.store.transaction() as db:
        service.store.insert_project(db, "live", None, 30, project_id=project)
    add_bulk_traces(service.store, project, 20, now_ms() - 1000, span=600_000)
    async with running_app(service, StartAt(project_id=project)) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, TracesScreen) and len(app.screen.traces) > 3)
        screen = app.screen
        assert isinstance(screen, TracesScreen)
        table = screen.query_one(TraceTable)
        await pilot.press("down", "down")
        selected = table.selected
        new_id = f"live-{uuid.uuid4().hex[:6]}"
        await pilot.press("L")
        with service.store.transaction() as db:
            service.store.insert_traces(
                db,
                [TraceRow(new_id, project, "just now", now_ms(), 5, 0, 0, 0, 0.0, "ok", 0, "{}")],
            )
        await wait_for(pilot, lambda: screen.traces[0].id == new_id)
        assert table.selected is selected and table.cursor == 3
        await pilot.press("L")
        assert screen.live_timer is None


def test_custom_ranges() -> None:
    value, errors = parse_custom("2026-11-21 09:00", "2026-11-21T10:00Z")
    assert errors == {} and value is not None
    start, end = value.bounds()
    assert end - start <= timedelta(hours=24) and end == datetime(
        2026, 11, 21, 10, tzinfo=timezone.utc
    )
    assert parse_custom("yesterday", "")[1] == {
        "from": "use a time like 2026-11-21 09:30 (local) or 2026-11-21T09:30Z"
    }
    assert "from" in parse_custom("2026-11-21T10:00Z", "2026-11-21T09:00Z")[1]


def highlighted_preset(app: TraceTuiApp) -> str | None:
    """The time range picker's highlighted choice, once it is open and has one."""
    if not showing(app, TimeRangeScreen):
        return None
    options = app.screen.query_one(OptionList)
    if options.highlighted is None:
        return None
    return options.get_option_at_index(options.highlighted).id


async def test_time_range_picker(service: RunningService) -> None:
    async with running_app(service, StartAt(project_id="proj_support")) as (app, pilot):
        screen = await loaded_traces(app, pilot)
        day = len(screen.traces)
        await pilot.press("t")
        await wait_for(pilot, lambda: highlighted_preset(app) == "24h", what="the picker open")
        await pilot.press("down", "enter")  # from the current "last 24h" to "last 7d"
        await wait_for(
            pilot, lambda: screen.state.time_range.preset == "7d" and len(screen.traces) > day
        )
        await pilot.press("t", "2")  # digits pick directly: 2 is the last hour
        await wait_for(
            pilot, lambda: screen.state.time_range.preset == "1h" and len(screen.traces) < day
        )


async def test_list_items_that_are_not_records_are_counted_on_screen() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/traces"):
            items = [{"id": "t1", "name": "fine"}, "junk", 7, {"id": "t2"}]
            return httpx.Response(200, json={"data": items, "next_cursor": None})
        return httpx.Response(200, json={"data": [{"id": "p1", "name": "p"}]})

    transport = httpx.MockTransport(handler)
    async with ApiClient("http://x.example/v1", SecretStr("k" * 20), transport=transport) as client:
        app = TraceTuiApp(client, StartAt(project_id="p1"))
        async with app.run_test(size=(100, 24)) as pilot:
            screen = await loaded_traces(app, pilot)
            header = rendered_text(screen.query_one("#header"))
    assert len(screen.traces) == 2 and "2 unreadable skipped" in header
