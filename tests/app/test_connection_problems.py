"""A server that cannot be reached: a refused connection on loopback is reported after one
quick retry (elsewhere it is retried in full), the rows on screen stay, and the app loads again
once the server is back."""

from __future__ import annotations

import time

import httpx
import pytest

from tests.support.app import loaded_traces, rendered_text, running_app, wait_for
from tests.support.faults import app_with_faults, raising
from tests.support.helpers import Sleeps, mock_client
from tests.support.service import RunningService
from tui.api import ApiClient, ConnectionFailed, Waiting
from tui.api.ratelimit import Pacer
from tui.ui.app import StartAt


async def test_a_refused_connection_on_loopback_is_reported_after_one_quick_retry() -> None:
    sleeps = Sleeps()
    waits: list[Waiting] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    client = ApiClient(
        "http://127.0.0.1:9/v1",
        transport=httpx.MockTransport(refuse),
        sleep=sleeps,
        pacer=Pacer(per_minute=10**9, burst=10**6, sleep=sleeps),
        on_wait=waits.append,
    )
    async with client:
        with pytest.raises(ConnectionFailed):
            await client.list_projects()
    assert len(client.log) == 2 and len(sleeps.delays) == 1
    assert [w.reason for w in waits] == ["retry"] and waits[0].next_try == 2


async def test_a_refused_connection_elsewhere_is_still_retried() -> None:
    sleeps = Sleeps()

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    async with mock_client(refuse, sleeps) as client:
        with pytest.raises(ConnectionFailed):
            await client.list_projects()
    assert len(client.log) == 5


async def test_network_down_keeps_data_and_recovers(service: RunningService) -> None:
    down = {"now": False}
    real = httpx.AsyncHTTPTransport()

    async def handler(request: httpx.Request) -> httpx.Response:
        if down["now"]:
            raise httpx.ConnectError("network unreachable")
        response = await real.handle_async_request(request)
        await response.aread()
        return response

    transport = httpx.MockTransport(handler)
    async with running_app(service, StartAt(project_id="proj_support"), transport=transport) as (
        app,
        pilot,
    ):
        screen = await loaded_traces(app, pilot)
        loaded = len(screen.traces)
        down["now"] = True
        await pilot.press("r")
        await wait_for(pilot, lambda: app.problem is not None)
        assert len(screen.traces) == loaded  # what was on screen stays
        assert "ctrl+r" in str(app.problem)
        down["now"] = False
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: app.problem is None and not screen.fetching)
        assert len(screen.traces) == loaded


async def test_an_answer_to_a_request_older_than_the_failure_leaves_the_problem_said(
    service: RunningService,
) -> None:
    """A slow answer to a request made before the network went down says nothing of the
    network now: the problem stays until a request made after it succeeds."""
    async with running_app(service, StartAt(project_id="proj_support")) as (app, pilot):
        await loaded_traces(app, pilot)
        before = time.monotonic()
        await wait_for(pilot, lambda: time.monotonic() > before)
        app.report_error(ConnectionFailed("network unreachable"))
        assert app.problem is not None
        app.mark_refreshed(before)  # the older request's success
        app.server_answered(before)  # or its error answer
        assert app.problem is not None and "ctrl+r" in app.problem
        app.mark_refreshed(time.monotonic())  # a request made since
        assert app.problem is None


async def test_back_on_the_list_after_a_failure_it_loads_again_by_itself(
    service: RunningService,
) -> None:
    async with app_with_faults(service, StartAt(project_id="proj_rag")) as (app, pilot, net):
        screen = await loaded_traces(app, pilot)
        net.fault = raising(httpx.ConnectError)
        await pilot.press("r")
        await wait_for(pilot, lambda: screen.load_error is not None and not screen.fetching)
        await pilot.press("a")
        await wait_for(pilot, lambda: app.screen is not screen)
        net.fault = None  # the server is back
        await pilot.press("escape")
        await wait_for(pilot, lambda: screen.load_error is None and not screen.fetching)
        header = rendered_text(screen.query_one("#header"))
        assert "loading" not in header and "Cannot reach" not in header
        assert app.problem is None
