"""Layout and liveness on a wide screen and over time: the detail pane takes the width a wide
terminal gives (the span tree needs no more than 84 columns), and the trace list's ages keep
counting while it is on screen."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.support.app import loaded_traces, open_first_trace, running_app, wait_for
from tests.support.service import RunningService
from tui.ui.app import StartAt
from tui.ui.widgets.span_detail import SpanDetail
from tui.ui.widgets.trace_table import TraceTable


async def test_the_detail_pane_grows_with_a_wide_terminal(service: RunningService) -> None:
    async with running_app(service, StartAt("proj_support"), size=(160, 48)) as (app, pilot):
        await loaded_traces(app, pilot)
        screen = await open_first_trace(app, pilot)
        await wait_for(pilot, lambda: screen.query_one(SpanDetail).size.width > 0)
        await pilot.pause()
        assert screen.query_one(SpanDetail).size.width >= 70
        assert screen.query_one("#tree-pane").size.width <= 84


async def test_the_ages_in_the_trace_list_keep_counting(
    service: RunningService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(TraceTable, "AGE_TICK_S", 0.05)
    async with running_app(service, StartAt("proj_support")) as (app, pilot):
        screen = await loaded_traces(app, pilot)
        table = screen.query_one(TraceTable)
        first = table.rows[0].started_at
        assert first is not None
        app.now = lambda: first + timedelta(minutes=1)
        await wait_for(pilot, lambda: "1m ago" in table.render_line(0).text, what="1m ago")
        app.now = lambda: first + timedelta(hours=3)
        await wait_for(pilot, lambda: "3h ago" in table.render_line(0).text, what="3h ago")
