"""The trace list's cost cell for a trace whose spans include a model without a price (issue
31): "unknown" where nothing was priced, the priced part as a lower bound ("$0.0087+") where
some was, and as before for a server that does not count them (the spec's fields only); at the
narrow and the wide column, with and without the who columns; sorting by cost unchanged."""

from __future__ import annotations

import time
from datetime import datetime, timezone

import httpx
from pydantic import SecretStr

from tests.support.app import Transport, loaded_traces, rendered_text, wait_for
from tui.api import ApiClient
from tui.api.readers import fast_trace
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.traces import TracesScreen
from tui.ui.widgets.trace_columns import TraceListTable
from tui.ui.widgets.trace_table import TraceTable, columns_for

NOW = time.time()
TRACES = [
    {"id": "t1", "name": "all unpriced", "total_cost_usd": 0.0, "unpriced_spans": 2},
    {"id": "t2", "name": "some unpriced", "total_cost_usd": 0.0087, "unpriced_spans": 1},
    {"id": "t3", "name": "all priced", "total_cost_usd": 0.0042, "unpriced_spans": 0},
    {"id": "t4", "name": "spec only", "total_cost_usd": 0.0},  # no count: a spec-only server
    {"id": "t5", "name": "odd count", "total_cost_usd": 0.0, "unpriced_spans": "many"},
]
EXPECTED = {"t1": "unknown", "t2": "$0.0087+", "t3": "$0.0042", "t4": "$0", "t5": "$0"}


def iso(seconds: float) -> str:
    """A time as the spec writes it, so the list's rows take the client's fast reader."""
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds")


def test_the_fast_reader_reads_the_count_and_does_without_it() -> None:
    row = {"id": "t", "started_at": iso(NOW), "total_cost_usd": 0.0}
    counted, spec_only = fast_trace({**row, "unpriced_spans": 2}), fast_trace(row)
    assert counted is not None and counted.unpriced_spans == 2
    assert spec_only is not None and spec_only.unpriced_spans is None


async def handler(request: httpx.Request) -> httpx.Response:
    if request.url.path.endswith("/projects"):
        return httpx.Response(200, json={"data": [{"id": "p1", "name": "p"}]})
    items = [
        {**t, "started_at": iso(NOW - n * 10), "duration_ms": 100 + n, "span_count": 3}
        for n, t in enumerate(TRACES)
    ]
    return httpx.Response(200, json={"data": items, "next_cursor": None})


def cost_cells(table: TraceTable, width: int) -> dict[str, str]:
    """Each row's cost cell as drawn at `width`: the line's last `cost` cells."""
    size = columns_for(width)["cost"]
    cells = {}
    for row, trace in enumerate(table.rows):
        line = table.render_row(row, width, False).text
        assert len(line) == width, (line, width)  # the column keeps its width
        cells[str(trace.id)] = line[-size:].strip()
    return cells


async def test_the_cost_cell_says_unknown_or_at_least() -> None:
    transport = Transport(handler)
    async with ApiClient("http://x.example/v1", SecretStr("k" * 20), transport=transport) as client:
        app = TraceTuiApp(client, StartAt(project_id="p1"))
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await loaded_traces(app, pilot)
            table = screen.query_one(TraceListTable)
            assert [t.unpriced_spans for t in table.rows] == [2, 1, 0, None, None]
            # On screen, at 80 columns (the cost column's narrowest: 8 cells).
            await wait_for(pilot, lambda: "unknown" in screen_text(table))
            shown = screen_text(table)
            assert "$0.0087+" in shown and "$0.0087+?" not in shown
            for width in (80, 120):
                assert cost_cells(table, width) == EXPECTED, width
                table.who = True  # with the user, session and tags columns
                assert cost_cells(table, width) == EXPECTED, width
                table.who = False
            await pilot.press("s", "s")  # duration, then cost: by the priced total, as before
            await wait_for(pilot, lambda: "costliest first" in header_of(screen))
            await wait_for(pilot, lambda: screen.ended and not screen.fetching)
            assert [t.id for t in table.rows][:2] == ["t2", "t3"]


def screen_text(table: TraceTable) -> str:
    return "\n".join(table.render_line(y).text for y in range(table.size.height))


def header_of(screen: TracesScreen) -> str:
    return rendered_text(screen.query_one("#header")) + rendered_text(screen.query_one("#position"))
