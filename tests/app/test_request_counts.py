"""No request made twice when one would do: the app's requests counted through an
httpx.MockTransport that answers like a server 300 ms away, while keys are pressed faster than
pages come back (counts, not timing: nothing here is timed)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from pydantic import SecretStr

from tests.support.app import settled, showing, wait_for
from tui.api import ApiClient
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.trace_detail import TraceDetailScreen
from tui.ui.screens.trace_loading import PAGE_SIZE
from tui.ui.screens.traces import TracesScreen
from tui.ui.widgets.span_tree import SpanTreeView

PAGES = 4
LATENCY = 0.3


class FarServer:
    """A project of PAGES pages of traces, one trace of 3 spans; every request counted."""

    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()

    async def handle(self, request: httpx.Request) -> httpx.Response:
        path, params = request.url.path.removeprefix("/v1"), dict(request.url.params)
        # Counted as sent: a request the app gives up on has still reached the server.
        self.requests[f"{path}?cursor={params.get('cursor', '')}"] += 1
        await asyncio.sleep(LATENCY)
        if path == "/projects":
            return httpx.Response(200, json={"data": [{"id": "p", "name": "far"}]})
        if path == "/traces":
            page = int(params.get("cursor") or 0)
            items = [
                {
                    "id": f"t{page}-{i}",
                    "name": f"trace {page}-{i}",
                    "started_at": f"2026-11-21T08:{59 - page:02d}:{59 - i % 60:02d}.000Z",
                    "duration_ms": 10,
                }
                for i in range(PAGE_SIZE)
            ]
            cursor = str(page + 1) if page + 1 < PAGES else None
            return httpx.Response(200, json={"data": items, "next_cursor": cursor})
        if path.startswith("/traces/"):
            spans = [
                {"id": f"s{i}", "parent_id": "s0" if i else None, "name": f"step {i}"}
                for i in range(3)
            ]
            return httpx.Response(200, json={"id": path.rsplit("/", 1)[1], "spans": spans})
        return httpx.Response(404, json={"message": "no such thing"})

    def count(self, prefix: str) -> int:
        return sum(n for key, n in self.requests.items() if key.startswith(prefix))


@asynccontextmanager
async def far_app(start: StartAt) -> AsyncIterator[tuple[TraceTuiApp, Any, FarServer]]:
    server = FarServer()
    transport = httpx.MockTransport(server.handle)
    async with ApiClient("http://far.example/v1", SecretStr("k"), transport=transport) as client:
        app = TraceTuiApp(client, start)
        async with app.run_test(size=(80, 24)) as pilot:
            yield app, pilot, server


async def test_a_trace_list_asks_for_its_first_page_once_and_no_more_until_moved() -> None:
    async with far_app(StartAt(project_id="p")) as (app, pilot, server):
        await wait_for(pilot, lambda: showing(app, TracesScreen) and app.screen.traces)
        await settled(pilot)
        assert server.requests["/traces?cursor="] == 1
        assert server.count("/traces") == 1  # the second page waits for the cursor to move


async def test_holding_page_down_asks_for_each_page_once_ahead_of_the_cursor() -> None:
    async with far_app(StartAt(project_id="p")) as (app, pilot, server):
        await wait_for(pilot, lambda: showing(app, TracesScreen) and app.screen.traces)
        screen = app.screen
        assert isinstance(screen, TracesScreen)
        # Faster than pages come: every press is a chance to ask for the same page again.
        for _ in range(PAGES * PAGE_SIZE // 20 + 20):
            await pilot.press("pagedown")
        await wait_for(pilot, lambda: screen.ended and not screen.fetching)
        await settled(pilot)
        assert {key: n for key, n in server.requests.items() if n > 1} == {}
        assert server.count("/traces") == PAGES
        assert len(screen.traces) == PAGES * PAGE_SIZE


async def test_the_next_page_is_asked_for_before_the_cursor_reaches_the_end() -> None:
    async with far_app(StartAt(project_id="p")) as (app, pilot, server):
        await wait_for(pilot, lambda: showing(app, TracesScreen) and app.screen.traces)
        screen = app.screen
        assert isinstance(screen, TracesScreen)
        await pilot.press("down")  # the first move down, far from the end of 500 rows
        await wait_for(pilot, lambda: len(screen.traces) == 2 * PAGE_SIZE)
        assert screen.query_one("TraceTable").cursor == 1  # type: ignore[attr-defined]
        await settled(pilot)
        assert server.count("/traces") == 2


async def test_opening_a_trace_is_one_request() -> None:
    async with far_app(StartAt(project_id="p")) as (app, pilot, server):
        await wait_for(pilot, lambda: showing(app, TracesScreen) and app.screen.traces)
        await settled(pilot)
        before = server.count("/traces")
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, TraceDetailScreen) and bool(app.screen.query(SpanTreeView))
            ),
        )
        await settled(pilot)
        assert server.requests["/traces/t0-0?cursor="] == 1
        assert server.count("/traces") == before + 1
        assert server.count("/projects") == 1
