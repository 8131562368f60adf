"""The app under every fault the network and the server can throw: it stays up, says what
happened, keeps the rows it had, sends the key nowhere else, and recovers when the server does.

Faults are injected by a transport in front of the real local service, switched on and off
while the app runs."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from tests.app.test_flows import loaded_traces, wait_for
from tests.support.helpers import Sleeps
from tests.support.hostile import HOSTILE
from tests.support.service import RunningService
from tui.api import ApiClient
from tui.api.ratelimit import Pacer
from tui.ui.app import StartAt, TraceTuiApp

Fault = Callable[[httpx.Request], Awaitable[httpx.Response]]


class FaultyTransport(httpx.AsyncBaseTransport):
    """The real service, unless a fault is switched on."""

    def __init__(self) -> None:
        self.real = httpx.AsyncHTTPTransport()
        self.fault: Fault | None = None
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.fault is not None:
            return await self.fault(request)
        return await self.real.handle_async_request(request)

    async def aclose(self) -> None:
        await self.real.aclose()


class BrokenBody(httpx.AsyncByteStream):
    """A body that stops half-way, as when the connection drops."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield b'{"data": [{"id": "t1", "name": "half'
        raise httpx.RemoteProtocolError("peer closed connection without sending complete body")


def answer(status: int, body: bytes, **headers: str) -> Fault:
    async def fault(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=body, headers=headers)

    return fault


def error_body(status: int) -> bytes:
    return httpx.Response(
        status, json={"error": {"status": status, "code": "boom", "message": HOSTILE}}
    ).content


def raising(error: type[httpx.TransportError]) -> Fault:
    async def fault(request: httpx.Request) -> httpx.Response:
        raise error("injected", request=request)

    return fault


async def dropped_mid_body(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "application/json"}, stream=BrokenBody())


JSON = {"content-type": "application/json"}
FAULTS: dict[str, Fault] = {
    "429 storm, no Retry-After": answer(429, b""),
    "429 storm, Retry-After 1": answer(429, b"", **{"retry-after": "1"}),
    "500 with a hostile message": answer(500, error_body(500), **JSON),
    "502": answer(502, b"<html>Bad Gateway</html>", **{"content-type": "text/html"}),
    "503 with a hostile message": answer(503, error_body(503), **JSON),
    "504": answer(504, b""),
    "timeout": raising(httpx.ReadTimeout),
    "connection refused": raising(httpx.ConnectError),
    "connection dropped mid-body": dropped_mid_body,
    "truncated JSON": answer(200, b'{"data": [{"id": "t1", "na', **JSON),
    "invalid JSON": answer(200, b"{'data': nope}", **JSON),
    "200 with an HTML body": answer(200, b"<html><body>Login</body></html>"),
    "redirect to another host": answer(302, b"", location="https://evil.example/steal"),
}


@asynccontextmanager
async def app_with_faults(
    service: RunningService, start: StartAt, key: str | None = None
) -> AsyncIterator[tuple[TraceTuiApp, Any, FaultyTransport]]:
    transport = FaultyTransport()
    sleeps = Sleeps()  # the client's own retries wait for nothing
    client = ApiClient(
        service.base_url,
        SecretStr(key or service.keys.workspace),
        transport=transport,
        max_retries=2,
        max_rate_limit_retries=1,
        sleep=sleeps,
        pacer=Pacer(per_minute=10**9, burst=10**6, sleep=sleeps),
    )
    async with client:
        app = TraceTuiApp(client, start)
        async with app.run_test(size=(100, 30)) as pilot:
            yield app, pilot, transport


def told(app: TraceTuiApp) -> bool:
    """The user has been told something went wrong: a notification or the status line."""
    return bool(app._notifications) or app.problem_text() is not None


@pytest.mark.parametrize("name", list(FAULTS))
async def test_the_app_survives_keeps_its_rows_and_recovers(
    service: RunningService, name: str
) -> None:
    async with app_with_faults(service, StartAt(project_id="proj_support")) as (app, pilot, net):
        screen = await loaded_traces(app, pilot)
        rows = list(screen.traces)
        net.fault = FAULTS[name]
        await pilot.press("r")
        await wait_for(pilot, lambda: told(app) and not screen.fetching)
        assert app.is_running and app.screen is screen
        assert screen.traces == rows  # what was loaded stays
        for note in app._notifications:
            assert "\x1b" not in note.message and "\x00" not in note.message
        if "hostile" in name:  # the server's message is shown, made visible
            assert any("␛[31;1;4;7mRED" in n.message for n in app._notifications)
        assert {r.url.host for r in net.requests} == {"127.0.0.1"}  # nothing went elsewhere
        # The server is back: the app recovers (by itself after a 429, or on request).
        net.fault = None
        app.clear_notifications()
        await pilot.press("ctrl+r")
        await pilot.press("r")
        await wait_for(
            pilot, lambda: not screen.fetching and app.problem_text() is None, seconds=15
        )
        assert len(screen.traces) == len(rows)
        assert not app._notifications


async def test_the_api_log_shows_hostile_headers_and_errors_literally(
    service: RunningService,
) -> None:
    """The API log draws what servers send in headers and error bodies; none of it is markup."""
    from tui.ui.screens.api_log import ApiLogScreen

    headers = {"x-ratelimit-remaining": "[@click=app.quit]Q[/]", **JSON}
    async with app_with_faults(service, StartAt(project_id="proj_support")) as (app, pilot, net):
        await loaded_traces(app, pilot)
        net.fault = answer(500, error_body(500), **headers)
        await pilot.press("r")
        await wait_for(pilot, lambda: told(app))
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, ApiLogScreen))
        picture = app.export_screenshot()
        assert "[@click=app" in picture  # the header, as text
        assert "[@click=app.bell]B[/]" in picture  # the error: first, so it is in sight
        assert "\x1b" not in picture
        for x in range(1, 99, 3):  # clicking across the row triggers nothing
            await pilot.click(offset=(x, 1))
        assert app.is_running and isinstance(app.screen, ApiLogScreen)
