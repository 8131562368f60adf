"""Faults between the app and the real local service: a transport that passes requests through
unless a fault is switched on, the faults themselves (429 storms, 5xx, timeouts, refused and
dropped connections, truncated and odd bodies, a redirect elsewhere), and the app run over it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
from pydantic import SecretStr

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
    """A fault that answers every request with `status`, `body` and `headers`."""

    async def fault(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=body, headers=headers)

    return fault


def error_body(status: int) -> bytes:
    """The spec's error envelope for `status`, its message hostile."""
    return httpx.Response(
        status, json={"error": {"status": status, "code": "boom", "message": HOSTILE}}
    ).content


def raising(error: type[httpx.TransportError]) -> Fault:
    """A fault that fails every request with the transport error `error`."""

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
    """The app over a FaultyTransport in front of `service`; (app, pilot, transport)."""
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
