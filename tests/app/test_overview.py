"""The project overview: figures per hour and in total, paged in by a worker that can be
stopped, equal to what the local service computes for the same windows; cost by model from the
local service's extension, and without it from a server with only the spec's shapes."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest

from tests.support.app import running_app, settled, showing, wait_for
from tests.support.service import RunningService
from tui.server.alerts.evaluator import raw_value
from tui.server.store.rows import TraceRow
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.overview import OverviewScreen


def whole_ms(moment: datetime) -> datetime:
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def ms(moment: datetime) -> int:
    return round(moment.timestamp() * 1000)


def project_over_hours(service: RunningService, now: datetime) -> str:
    """Traces in several hours of the last day: durations, errors and costs varying by hour."""
    project_id = f"proj_{uuid.uuid4().hex[:8]}"
    rows = []
    for hour in (1, 2, 5, 13, 23):
        for i in range(7 + hour):
            at = now - timedelta(hours=hour, minutes=(i * 7) % 60, seconds=i)
            errored = (i + hour) % 4 == 0
            rows.append(
                TraceRow(
                    uuid.uuid4().hex,
                    project_id,
                    "t",
                    ms(at),
                    100 * (i + 1) * hour,
                    3,
                    10 * i,
                    5 * i,
                    0.001 * i * hour,
                    "error" if errored else "ok",
                    int(errored),
                    "{}",
                )
            )
    with service.store.transaction() as db:
        service.store.insert_project(db, project_id, None, 30, project_id=project_id)
        service.store.insert_traces(db, rows)
    return project_id


async def open_overview(app: TraceTuiApp, pilot: Any) -> OverviewScreen:
    await wait_for(pilot, lambda: app.screen.__class__.__name__ == "TracesScreen")
    await pilot.press("o")
    await wait_for(pilot, lambda: showing(app, OverviewScreen))
    screen = app.screen
    assert isinstance(screen, OverviewScreen)
    return screen


async def test_the_overview_figures_are_the_services_own(service: RunningService) -> None:
    now = whole_ms(datetime.now(timezone.utc))
    project_id = project_over_hours(service, now)
    async with running_app(service, StartAt(project_id=project_id), size=(100, 30)) as (
        app,
        pilot,
    ):
        app.now = lambda: now
        screen = await open_overview(app, pilot)
        await wait_for(pilot, lambda: not screen.paging)
        overview = screen.overview
        assert overview is not None and overview.size == timedelta(hours=1)
        totals = overview.totals()
        assert totals.traces == sum(7 + h for h in (1, 2, 5, 13, 23))
        rates, p95s, costs = overview.error_rates(), overview.latency(0.95), overview.costs()
        checked = 0
        for index, bucket in enumerate(overview.buckets):
            start = ms(overview.moment(index))
            end = ms(min(overview.moment(index + 1), overview.end))
            stats = service.store.window_stats(project_id, start, end, p95=True)
            assert bucket.traces == stats.traces
            if not stats.traces:
                assert rates[index] is None and p95s[index] is None
                continue
            checked += 1
            assert rates[index] == pytest.approx(100 * raw_value("error_rate", stats, None))
            assert p95s[index] == pytest.approx(raw_value("latency", stats, None), rel=1e-12)
            assert costs[index] == pytest.approx(raw_value("cost", stats, None), rel=1e-9)
        assert checked >= 5  # each hour of traces reaches into the hour before it
        header = str(screen.query_one("#header").content)
        assert f"{totals.traces} traces" in header and "paging" not in header
        # No model spans in this project: the local service says so with empty `models`.
        assert "no model calls" in str(screen.query_one("#models").content)


async def test_cost_by_model_from_the_local_services_extension(service: RunningService) -> None:
    now = whole_ms(datetime.now(timezone.utc))
    async with running_app(service, StartAt(project_id="proj_support"), size=(160, 48)) as (
        app,
        pilot,
    ):
        app.now = lambda: now
        screen = await open_overview(app, pilot)
        await wait_for(pilot, lambda: not screen.paging)
        assert screen.overview is not None
        got = {name: share.cost for name, share in screen.overview.by_model()}
    db = service.store._connection()
    expected = dict(
        db.execute(
            "SELECT s.model, SUM(s.cost_usd) FROM spans s JOIN traces t ON t.id = s.trace_id"
            " WHERE t.project_id = ? AND t.started_at >= ? AND t.started_at < ?"
            " AND s.model IS NOT NULL AND s.model != '' GROUP BY s.model",
            ("proj_support", ms(now - timedelta(hours=24)), ms(now)),
        ).fetchall()
    )
    assert expected and got.keys() == expected.keys()
    for model, cost in expected.items():
        assert got[model] == pytest.approx(cost, rel=1e-9)


@asynccontextmanager
async def spec_overview(
    service: RunningService, transport: httpx.MockTransport
) -> AsyncIterator[tuple[TraceTuiApp, Any, OverviewScreen]]:
    """The app on a spec-only server's project proj_x, its overview open (and paging)."""
    async with running_app(service, StartAt(project_id="proj_x"), transport=transport) as (
        app,
        pilot,
    ):
        yield app, pilot, await open_overview(app, pilot)


def paged_spec_server(
    pages: int,
    per_page: int,
    refuse_include: bool = False,
    delay: float = 0.0,
    fail_page: int | None = None,
    gate: tuple[int, asyncio.Event] | None = None,
) -> tuple[httpx.MockTransport, list[httpx.QueryParams]]:
    """A spec-only server listing `pages` pages of traces in the last day, by cursor; `gate`
    (page, event): that page and those after it are answered once the event is set."""
    now = datetime.now(timezone.utc)
    asked: list[httpx.QueryParams] = []

    async def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/projects"):
            return httpx.Response(200, json={"data": [{"id": "proj_x", "name": "x"}]})
        params = request.url.params
        asked.append(params)
        if refuse_include and "include" in params:
            return httpx.Response(400, json={"error": "unknown parameter: include"})
        page = int(params.get("cursor") or 0)
        if fail_page is not None and page == fail_page:
            return httpx.Response(422, json={"error": "cursor expired"})
        await asyncio.sleep(delay)
        if gate is not None and page >= gate[0]:
            await gate[1].wait()
        items = [
            {
                "id": f"t{page}-{i}",
                "duration_ms": 100 + i,
                "total_cost_usd": 0.01,
                "started_at": (now - timedelta(minutes=page * 10 + i / 100 + 1)).isoformat(),
            }
            for i in range(per_page)
        ]
        following = str(page + 1) if page + 1 < pages else None
        return httpx.Response(200, json={"data": items, "next_cursor": following})

    return httpx.MockTransport(answer), asked


async def test_a_spec_only_server_that_refuses_the_extension_still_gets_it_all(
    service: RunningService,
) -> None:
    transport, asked = paged_spec_server(pages=3, per_page=50, refuse_include=True)
    async with spec_overview(service, transport) as (_app, pilot, screen):
        await wait_for(pilot, lambda: not screen.paging)
        assert screen.overview is not None and screen.overview.totals().traces == 150
        assert "does not name models" in str(screen.query_one("#models").content)
        assert sum("include" in params for params in asked) == 1  # asked once, then not again


async def test_stopping_keeps_what_was_paged_in(service: RunningService) -> None:
    transport, _ = paged_spec_server(pages=200, per_page=20, delay=0.05)
    async with spec_overview(service, transport) as (_app, pilot, screen):
        await wait_for(pilot, lambda: screen.pages >= 3)
        await pilot.press("s")
        await wait_for(
            pilot,
            lambda: (
                not screen.paging and "stopped: partial" in str(screen.query_one("#header").content)
            ),
            what="the header says the paging stopped",
        )
        assert screen.overview is not None
        kept = screen.overview.totals().traces
        assert 60 <= kept < 200 * 20
        await settled(pilot)  # a page still on its way would have been added by now
        assert screen.overview.totals().traces == kept  # no page after the stop


async def test_a_failed_page_keeps_what_came_before_it(service: RunningService) -> None:
    transport, _ = paged_spec_server(pages=5, per_page=30, fail_page=2)
    async with spec_overview(service, transport) as (_app, pilot, screen):
        await wait_for(pilot, lambda: screen.failed is not None)
        assert screen.overview is not None and screen.overview.totals().traces == 60
        assert "partial" in str(screen.query_one("#header").content)


async def test_leaving_stops_paging_at_once(service: RunningService) -> None:
    # Pages from the third on are held until the overview is left: however slow the machine,
    # leaving comes while the third is being asked for, and the pages after it would be asked
    # for only if the paging went on.
    left = asyncio.Event()
    transport, asked = paged_spec_server(pages=200, per_page=20, gate=(2, left))
    async with spec_overview(service, transport) as (app, pilot, screen):
        await wait_for(pilot, lambda: screen.pages >= 2 and len(asked) >= 3)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "TracesScreen")
        left.set()
        await settled(pilot)  # had the paging gone on, it would have asked for all 200 pages
        overview = [params for params in asked if params.get("include") == "models"]
        # The two pages shown and the one held; none after leaving (the trace list beneath
        # asks for its own pages, without `include`).
        assert [params.get("cursor") for params in overview] == [None, "1", "2"]
