"""`e` on the trace list: only the errored traces, of the whole range (the rest is paged in),
`e` or esc again: every trace."""

from __future__ import annotations

import time
from typing import Any

import httpx
from pydantic import SecretStr

from tests.support.app import Transport, loaded_traces, rendered_text, wait_for
from tests.support.service import RunningService
from tui.api.client import ApiClient
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.widgets.trace_table import TraceTable

PAGES, PER_PAGE = 3, 200


def errored(n: int) -> bool:
    return n % 97 == 0 or n == PAGES * PER_PAGE - 1  # one on the last page, too


def handler() -> Any:
    now = time.time()

    async def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/projects"):
            return httpx.Response(200, json={"data": [{"id": "p1", "name": "p"}]})
        page = int(request.url.params.get("cursor") or 0)
        items = [
            {
                "id": f"t{n:05d}",
                "name": f"trace {n}",
                "started_at": now - n * 10,
                "duration_ms": 100,
                # Servers spell an error either way: a status, or only a count.
                **({"status": "error"} if errored(n) and n % 2 else {}),
                **({"error_count": 2} if errored(n) and not n % 2 else {}),
            }
            for n in range(page * PER_PAGE, (page + 1) * PER_PAGE)
        ]
        more = page + 1 < PAGES
        return httpx.Response(
            200, json={"data": items, "next_cursor": str(page + 1) if more else None}
        )

    return answer


async def test_e_shows_the_errors_of_the_whole_range(service: RunningService) -> None:
    expected = [f"t{n:05d}" for n in range(PAGES * PER_PAGE) if errored(n)]
    transport = Transport(handler())
    async with ApiClient("http://x.example/v1", SecretStr("k" * 20), transport=transport) as client:
        app = TraceTuiApp(client, StartAt(project_id="p1"))
        async with app.run_test(size=(100, 24)) as pilot:
            screen = await loaded_traces(app, pilot)
            table = screen.query_one(TraceTable)
            assert len(screen.traces) == PER_PAGE  # one page, as usual
            await pilot.press("e")
            await wait_for(pilot, lambda: screen.ended and not screen.fetching)
            await wait_for(pilot, lambda: len(table.rows) == len(expected), what="errors shown")
            assert [t.id for t in table.rows] == expected  # the last page's error included
            header = " ".join(rendered_text(screen.query_one("#header")).split())
            assert "errors only" in header and f"{len(expected)} of 600 loaded" in header
            await pilot.press("e")
            await wait_for(pilot, lambda: len(table.rows) == 600, what="every row shown again")
            await pilot.press("e")
            await wait_for(pilot, lambda: screen.state.errors_only and len(table.rows) < 600)
            await pilot.press("escape")  # esc undoes the errors view before leaving
            await wait_for(pilot, lambda: not screen.state.errors_only and len(table.rows) == 600)
            assert app.screen is screen
