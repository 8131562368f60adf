"""Test helpers: ApiClients over httpx.MockTransport that never really sleep."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
from pydantic import SecretStr

from tui.api import ApiClient
from tui.api.ratelimit import Pacer

BASE = "https://traces.example.com/v1"
KEY = "tt_SECRET_canary_4f9d2b7e1c"  # recognisable, so a leak is easy to find


class Sleeps:
    """A stand-in for asyncio.sleep that records the delays instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def mock_client(
    handler: Callable[[httpx.Request], httpx.Response],
    sleeps: Sleeps | None = None,
    **kwargs: Any,
) -> ApiClient:
    sleeps = sleeps or Sleeps()
    return ApiClient(
        BASE,
        SecretStr(KEY),
        {"proj_b": SecretStr(KEY + "_b")},
        transport=httpx.MockTransport(handler),
        sleep=sleeps,
        pacer=Pacer(per_minute=10**9, burst=10**6, sleep=sleeps),
        **kwargs,
    )


def json_response(body: Any, status: int = 200, **headers: str) -> httpx.Response:
    return httpx.Response(
        status,
        content=json.dumps(body).encode(),
        headers={
            "content-type": "application/json",
            **headers,
        },
    )
