"""A recognisable key never reaches a message, a repr, a log line or the API log."""

from __future__ import annotations

import logging
import traceback
from typing import Any

import httpx
import pytest

from tests.support.helpers import BASE, KEY, json_response, mock_client
from tui.api import ApiClient, ApiError, InvalidBaseUrl

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


PLAIN = "tt_PLAIN_string_key_8c3e5a"
PLAIN_B = "tt_PLAIN_project_key_b_71d0"


async def test_a_plain_string_key_is_sent_and_never_shown(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("Authorization"))
        if request.url.path.endswith("/alerts"):
            return json_response({"message": f"no: {PLAIN_B}"}, 403)
        return json_response({"data": [], "next_cursor": None})

    caplog.set_level(logging.DEBUG)
    client = ApiClient(
        BASE, PLAIN, {"proj_b": PLAIN_B}, transport=httpx.MockTransport(handler), max_retries=0
    )
    async with client:
        assert await client.list_projects() == []
        with pytest.raises(ApiError) as caught:
            await client.list_alerts("proj_b")
        client.set_project_key("proj_c", "tt_PLAIN_set_later_key_c")
        await client.list_traces("proj_c")
    assert seen == [
        f"Bearer {PLAIN}",
        f"Bearer {PLAIN_B}",
        "Bearer tt_PLAIN_set_later_key_c",
    ]
    error = caught.value
    texts = [repr(client), str(client), str(error), repr(error), error.message, str(vars(client))]
    texts += [repr(value) for value in vars(client).values()]
    texts += [repr(entry) for entry in client.log]
    texts.append(caplog.text)
    for text in texts:
        assert "tt_PLAIN" not in text, text
    assert "[redacted]" in error.message  # the server's echo of the project key


def test_a_plain_key_is_wrapped_before_a_bad_base_url_can_raise() -> None:
    with pytest.raises(InvalidBaseUrl) as caught:
        ApiClient("ftp://[oops", PLAIN, {"proj_b": PLAIN_B})
    # A traceback that shows locals (rich's, pytest's -l) sees no plain key in any frame.
    frames = traceback.walk_tb(caught.value.__traceback__)
    shown = [repr(frame.f_locals) for frame, _ in frames]
    shown += [str(caught.value), repr(caught.value)]
    assert shown and all("tt_PLAIN" not in text for text in shown)


def test_a_key_of_another_type_is_refused_without_its_value() -> None:
    with pytest.raises(TypeError, match="not bytes") as caught:
        ApiClient(BASE, b"tt_PLAIN_bytes_key")  # type: ignore[arg-type]
    assert "tt_PLAIN" not in str(caught.value)
