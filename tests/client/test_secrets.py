"""A recognisable key never reaches a message, a repr, a log line or the API log."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest

from tests.support.helpers import KEY, json_response, mock_client
from tui.api import ApiError

ECHO = f"invalid key {KEY} (Bearer {KEY}_b)"
FAULTS: list[Any] = [
    json_response({"message": ECHO}, 401),
    json_response(
        {
            "error": {
                "message": ECHO,
                "details": [{"field": "name", "message": ECHO}, {"field": ECHO}],
            }
        },
        422,
    ),
    json_response({"detail": ECHO}, 403),
    json_response({"message": ECHO}, 404),
    json_response({"message": ECHO}, 429, **{"Retry-After": "0"}),
    json_response({"message": ECHO}, 500),
    json_response({"message": ECHO}, 503),
    httpx.Response(200, content=ECHO.encode(), headers={"content-type": "text/html"}),
    httpx.Response(302, headers={"Location": f"https://evil.example.net/?k={KEY}"}),
    httpx.ConnectError(ECHO),
    httpx.ReadTimeout(ECHO),
    httpx.RemoteProtocolError(ECHO),
]


@pytest.mark.parametrize("fault", FAULTS)
async def test_no_error_path_shows_the_key(fault: Any, caplog: pytest.LogCaptureFixture) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if isinstance(fault, Exception):
            raise fault
        return fault

    caplog.set_level(logging.DEBUG)
    client = mock_client(handler, max_rate_limit_retries=1, max_retries=1)
    async with client:
        for call in (
            client.list_projects(),
            client.list_alerts("proj_b"),
            client.create_project("x"),
        ):
            with pytest.raises(ApiError) as caught:
                await call
            error = caught.value
            texts = [str(error), repr(error), error.message, repr(client), str(vars(error))]
            texts += [repr(entry) for entry in client.log]
            texts.append(caplog.text)
            for text in texts:
                assert KEY not in text, text
            assert error.__cause__ is None or KEY not in repr(error.__cause__)
