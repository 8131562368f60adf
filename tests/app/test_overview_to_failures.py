"""From the overview to what failed: the error chart marks the bucket with the most failures,
←/→ move the mark, and enter opens the trace list on that bucket's stretch of time with the
query `error`; the firing alerts are listed above the charts and enter opens one."""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
from pydantic import SecretStr

from tests.support.app import rendered_text, running_app, showing, wait_for
from tests.support.otlp import new_project, new_span_id, new_trace_id, post, request, root_client
from tests.support.otlp import span as otlp_span
from tests.support.service import RunningService
from tui.api import ApiClient
from tui.ui.app import TraceTuiApp
from tui.ui.screens.alert_detail import AlertDetailScreen
from tui.ui.screens.overview import OverviewScreen
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.traces import TracesScreen
from tui.ui.widgets.firing_alerts import FiringAlerts
from tui.ui.widgets.metric_chart import MetricChart


async def open_overview(app: Any, pilot: Any, project: str) -> OverviewScreen:
    await wait_for(pilot, lambda: app.screen.is_mounted)
    app.open_overview(project, project)
    await wait_for(pilot, lambda: showing(app, OverviewScreen))
    screen = app.screen
    assert isinstance(screen, OverviewScreen)
    await wait_for(pilot, lambda: not screen.paging and screen.pages > 0, what="loaded")
    return screen


def project_with_failures(service: RunningService) -> str:
    """A project whose traces failed three of four times three and a half hours ago, and once
    of twice an hour and a half ago (sent over OTLP)."""
    project_id, key = new_project(service)
    now = int(time.time() * 1000)
    spans = []
    # Well inside the overview's hour buckets (which end at now): 3.5 h and 1.5 h ago.
    failures = [(3.6, True), (3.5, True), (3.45, True), (3.4, False), (1.6, True), (1.5, False)]
    for hours_ago, failed in failures:
        start = now - int(hours_ago * 3_600_000)
        error = "upstream timed out" if failed else None
        spans.append(otlp_span(new_trace_id(), new_span_id(), b"", "chat", start, 300, error=error))
    with root_client(service.base_url, key) as client:
        assert post(client, request(*spans)).status_code == 200
    return project_id


async def test_enter_on_the_marked_bucket_opens_its_failing_traces(
    service: RunningService,
) -> None:
    project_id = project_with_failures(service)
    async with running_app(service, size=(100, 30)) as (app, pilot):
        screen = await open_overview(app, pilot, project_id)
        await wait_for(pilot, lambda: screen.overview is not None and screen.overview.added == 6)
        overview = screen.overview
        assert overview is not None
        chart = screen.query_one("#errors-chart", MetricChart)
        await wait_for(pilot, lambda: chart.marked is not None, what="a bucket marked")
        spike = overview.spike()
        assert spike is not None and chart.marked == spike
        assert overview.buckets[spike].errors == 3  # the three failures of three hours ago
        while not chart.has_focus:  # the firing alerts, if any, have it first
            await pilot.press("tab")
        later = next(
            i for i in range(spike + 1, len(overview.buckets)) if overview.buckets[i].errors
        )
        await pilot.press(*["right"] * (later - spike))
        await wait_for(pilot, lambda: chart.marked == later)
        assert "1/2 failed" in rendered_text(chart)
        await pilot.press(*["left"] * (later - spike))
        await wait_for(pilot, lambda: chart.marked == spike)
        assert "3/4 failed" in rendered_text(chart)
        start, end = overview.window(spike)
        await pilot.press("enter")
        await wait_for(pilot, lambda: showing(app, TracesScreen))
        traces = app.screen
        assert isinstance(traces, TracesScreen)
        await wait_for(
            pilot,
            lambda: (traces.state.time_range.start, traces.state.time_range.end) == (start, end),
        )
        await wait_for(pilot, lambda: not traces.fetching and len(traces.traces) == 3)
        assert traces.state.query_text == "error" and traces.state.query.status == "error"
        assert all(t.status == "error" for t in traces.traces)
        assert all(t.started_at is not None and start <= t.started_at < end for t in traces.traces)


NOW = datetime.now(timezone.utc).replace(microsecond=0)
FIRING = {
    "id": "al_1",
    "name": "Error spike",
    "metric": "error_rate_pct_15m",
    "condition": "gte",
    "threshold": 5,
    "webhook_url": "https://hooks.example.com/x",
    "state": "firing",
    "last_value": 83.3,
    "firing_since": (NOW - timedelta(minutes=12)).isoformat(),
    "last_evaluated_at": NOW.isoformat(),
}
QUIET = {**FIRING, "id": "al_2", "name": "Spend guard", "state": "ok", "firing_since": None}


def server(request: httpx.Request) -> httpx.Response:
    path = request.url.path.removeprefix("/v1")
    if path == "/projects":
        return httpx.Response(200, json={"data": [{"id": "p", "name": "shop"}]})
    if path == "/projects/p/alerts":
        return httpx.Response(200, json={"data": [QUIET, FIRING]})
    if path.startswith("/projects/p/alerts/al_1"):
        events = {"data": [], "next_cursor": None}
        return httpx.Response(200, json=events if path.endswith("/events") else FIRING)
    return httpx.Response(200, json={"data": [], "next_cursor": None})


async def test_a_firing_alerts_row_opens_the_alert() -> None:
    transport = httpx.MockTransport(server)
    client = ApiClient("http://shop.example/v1", SecretStr("k" * 20), transport=transport)
    app = TraceTuiApp(client)
    async with client, app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        screen = await open_overview(app, pilot, "p")
        firing = screen.query_one(FiringAlerts)
        await wait_for(pilot, lambda: firing.has_focus and len(firing.alerts) == 1)
        row = [str(cell) for cell in firing.get_row_at(0)]
        # For how long (firing_since is 12 minutes before this module was imported).
        assert re.fullmatch(r"▲ firing \d+m", row[0]) and row[1] == "Error spike", row
        await pilot.press("enter")
        await wait_for(pilot, lambda: showing(app, AlertDetailScreen))
        assert app.screen.alert.id == "al_1"  # type: ignore[attr-defined]
