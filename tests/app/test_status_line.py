"""The status line: a problem keeps the server in sight at 80 columns, the client's waits
(pacing, Retry-After) are counted down, a rate-limit budget reads sensibly, and it is fed again
when a screen comes back."""

from __future__ import annotations

import asyncio
import re
import time

import httpx
from pydantic import SecretStr
from rich.text import Text

from tests.support.app import loaded_traces, rendered_text, running_app, wait_for
from tests.support.helpers import Sleeps
from tests.support.service import RunningService
from tui.api import ApiClient, Waiting
from tui.api.ratelimit import Pacer, budget_from_headers
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.traces import TracesScreen
from tui.ui.widgets.status_bar import Status, StatusBar, status_line


def test_at_80_columns_a_problem_keeps_the_server_in_sight() -> None:
    status = Status(
        server="traces.example.com",
        profile="prod",
        rate_remaining=10,
        rate_limit=1000,
        refreshed_at=time.time(),
        problem=Text("⚠ Cannot reach the server · ctrl+r retries · rows kept"),
    )
    line = status_line(status, 78).plain
    assert "Cannot reach the server · ctrl+r retries · rows kept" in line
    assert "traces.example.com" in line and "…" not in line and len(line) <= 78
    assert "prod" in status_line(status, 200).plain


async def test_client_waits_are_counted_down_in_the_status_line(service: RunningService) -> None:
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: bool(app.projects))
        app.client_waiting(Waiting("pacing", 42))

        def said() -> re.Match[str] | None:
            return re.search(
                r"next request in (\d+)s", rendered_text(app.screen.query_one("StatusBar"))
            )

        await wait_for(pilot, lambda: said() is not None, what="the wait in the status line")
        shown = said()
    # Counted down from 42 (a loaded machine may take a second or more to draw it).
    assert shown is not None and 0 < int(shown.group(1)) <= 42


def test_the_pacer_says_how_long_it_waits() -> None:
    told: list[float] = []
    sleeps = Sleeps()
    pacer = Pacer(per_minute=1000, burst=1, sleep=sleeps, clock=lambda: 0.0)
    budget = budget_from_headers(
        {"x-ratelimit-remaining": "2", "x-ratelimit-reset": str(int(time.time()) + 30)}
    )
    assert budget is not None
    pacer.observe("k", budget)
    asyncio.run(pacer.acquire("k", told.append))
    assert told and 25 < told[0] <= 30


def test_a_negative_remaining_budget_reads_as_none_left() -> None:
    budget = budget_from_headers({"x-ratelimit-remaining": "-1", "x-ratelimit-limit": "1000"})
    assert budget is not None and budget.remaining == 0


async def test_429_counts_down_in_the_status_line_and_retries_by_itself(
    service: RunningService,
) -> None:
    refusals = {"left": 1}
    real = httpx.AsyncHTTPTransport()

    async def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/traces") and refusals["left"] > 0:
            refusals["left"] -= 1
            return httpx.Response(429, json={"message": "slow down"}, headers={"Retry-After": "2"})
        response = await real.handle_async_request(request)
        await response.aread()
        return response

    client = ApiClient(
        service.base_url,
        SecretStr(service.keys.workspace),
        transport=httpx.MockTransport(handler),
        max_rate_limit_retries=0,
    )
    async with client:
        app = TraceTuiApp(client, StartAt(project_id="proj_support"))
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: app.rate_limited_until is not None)
            problem = app.problem_text()
            assert problem is not None and "rate limited: retrying in" in problem.plain
            screen = app.screen
            assert isinstance(screen, TracesScreen)
            await wait_for(pilot, lambda: bool(screen.traces))  # no key pressed: by itself
            assert app.rate_limited_until is None and app.problem_text() is None, app.problem_text()


async def test_the_status_line_is_fed_again_when_a_screen_comes_back(
    service: RunningService,
) -> None:
    async with running_app(service, StartAt(project_id="proj_rag")) as (app, pilot):
        traces = await loaded_traces(app, pilot)
        await pilot.press("a")  # the alerts screen, on top
        await wait_for(pilot, lambda: app.screen is not traces)
        app.problem = "⚠ a problem that arose elsewhere"
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is traces)
        await wait_for(
            pilot,
            lambda: "a problem that arose elsewhere" in rendered_text(traces.query_one(StatusBar)),
            what="the status line fed again",
        )
