"""Typed errors, retries, rate limits and POST safety, with faults from httpx.MockTransport."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from typing import Any

import httpx
import pytest

from tests.support.helpers import BASE, KEY, Sleeps, json_response, mock_client
from tui.api import (
    ApiClient,
    ApiError,
    BadResponse,
    Conflict,
    ConnectionFailed,
    Forbidden,
    InvalidBaseUrl,
    NotFound,
    RateLimited,
    ServerError,
    TimedOut,
    Unauthorized,
    ValidationFailed,
)
from tui.api.deep_json import cut_note, loads_with_depth_cut
from tui.api.ratelimit import Pacer, RateBudget, parse_retry_after


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, ValidationFailed),
        (401, Unauthorized),
        (403, Forbidden),
        (404, NotFound),
        (409, Conflict),
        (422, ValidationFailed),
        (500, ServerError),
        (418, ApiError),
    ],
)
async def test_status_to_error_class(status: int, cls: type[ApiError]) -> None:
    async with mock_client(lambda r: json_response({"message": "nope"}, status)) as client:
        with pytest.raises(cls) as caught:
            await client.list_projects()
    assert type(caught.value) is cls
    assert caught.value.status == status
    assert f"HTTP {status}" in caught.value.message and "nope" in caught.value.message


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"error": {"code": "x", "message": "our service"}}, "our service"),
        ({"error": "plain error string"}, "plain error string"),
        ({"message": "top message"}, "top message"),
        ({"detail": "fastapi detail"}, "fastapi detail"),
        ({"detail": [{"loc": ["body", "name"], "msg": "field required"}]}, "field required"),
        ({"errors": ["first", "second"]}, "first; second"),
        ({"errors": [{"message": "gql style"}]}, "gql style"),
        ({"title": "Bad Request", "detail": "rfc 7807"}, "rfc 7807"),
        ({"error": "invalid_grant", "error_description": "oauth style"}, "invalid_grant"),
        ({"error": {"type": "overloaded_error"}}, "overloaded_error"),
        ("a json string", "a json string"),
    ],
)
async def test_error_bodies(body: Any, message: str) -> None:
    async with mock_client(lambda r: json_response(body, 422)) as client:
        with pytest.raises(ValidationFailed) as caught:
            await client.list_projects()
    assert message in caught.value.message and "HTTP 422" in caught.value.message


@pytest.mark.parametrize(
    ("content", "content_type", "expected"),
    [
        (b"upstream connect error", "text/plain", "upstream connect error"),
        (b"<html><body>Bad gateway</body></html>", "text/html", "an HTML page"),
        (b"", "text/plain", "Not Found"),
    ],
)
async def test_non_json_error_bodies(content: bytes, content_type: str, expected: str) -> None:
    response = httpx.Response(404, content=content, headers={"content-type": content_type})
    async with mock_client(lambda r: response) as client:
        with pytest.raises(NotFound) as caught:
            await client.list_projects()
    assert expected in caught.value.message and "HTTP 404" in caught.value.message


@pytest.mark.parametrize(
    "body",
    [
        {"error": {"details": [{"field": "name", "message": "is required"}]}},
        {"detail": [{"loc": ["body", "name"], "msg": "is required"}]},
        {"errors": [{"path": ["name"], "message": "is required"}]},
        {"errors": {"name": ["is required"]}},
        {"invalid_params": [{"name": "name", "reason": "is required"}]},
        {"errors": [{"source": {"pointer": "/name"}, "detail": "is required"}]},
    ],
)
async def test_field_details(body: Any) -> None:
    async with mock_client(lambda r: json_response(body, 422)) as client:
        with pytest.raises(ValidationFailed) as caught:
            await client.create_project("x")
    assert caught.value.field_messages() == {"name": "is required"}


@pytest.mark.parametrize(
    "content", [b"<html>oops</html>", b'{"data": [', b"\xff\xfe\x00", b"null", b""]
)
async def test_unreadable_success_bodies(content: bytes) -> None:
    response = httpx.Response(200, content=content, headers={"content-type": "text/html"})
    async with mock_client(lambda r: response) as client:
        with pytest.raises(BadResponse) as caught:
            await client.list_projects()
    assert "HTTP 200" in caught.value.message


def sequence(*responses: httpx.Response | Exception) -> Any:
    """A handler answering with each response (or raising each exception) in turn."""
    queue = list(responses)
    calls: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        item = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(item, Exception):
            raise item
        return item

    handler.calls = calls  # type: ignore[attr-defined]
    return handler


OK = json_response({"data": []})


@pytest.mark.parametrize(
    "fault",
    [
        httpx.ConnectError("refused"),
        httpx.ConnectTimeout("slow connect"),
        httpx.ReadTimeout("slow read"),
        httpx.RemoteProtocolError("peer closed connection mid-body"),
        httpx.ReadError("reset"),
        json_response({}, 502),
        json_response({}, 503),
        json_response({}, 504),
    ],
)
async def test_gets_are_retried_with_backoff(fault: Any) -> None:
    handler = sequence(fault, fault, OK)
    sleeps = Sleeps()
    async with mock_client(handler, sleeps) as client:
        assert await client.list_projects() == []
    assert len(handler.calls) == 3
    assert len(sleeps.delays) == 2 and 0 < sleeps.delays[0] < 0.5 and sleeps.delays[1] < 1.0


async def test_retries_are_bounded() -> None:
    handler = sequence(json_response({"message": "down"}, 503))
    sleeps = Sleeps()
    async with mock_client(handler, sleeps, max_retries=3) as client:
        with pytest.raises(ServerError, match="down"):
            await client.list_projects()
    assert len(handler.calls) == 4 and len(sleeps.delays) == 3


async def test_500_is_not_retried() -> None:
    handler = sequence(json_response({}, 500), OK)
    async with mock_client(handler) as client:
        with pytest.raises(ServerError):
            await client.list_projects()
    assert len(handler.calls) == 1


@pytest.mark.parametrize(
    ("fault", "cls", "outcome_unknown"),
    [
        (httpx.ReadTimeout("slow"), TimedOut, True),
        (httpx.RemoteProtocolError("dropped"), ConnectionFailed, True),
        (json_response({}, 502), ServerError, True),
        (json_response({}, 503), ServerError, True),
        (httpx.Response(201, content=b"<html>made</html>"), BadResponse, True),
        (json_response([1, 2], 201), BadResponse, True),
        (json_response({}, 429, **{"Retry-After": "1"}), RateLimited, False),
        (json_response({"message": "no"}, 422), ValidationFailed, False),
        (httpx.Response(302, headers={"location": "https://x.example/"}), BadResponse, False),
    ],
)
async def test_a_post_that_may_have_arrived_is_never_retried(
    fault: Any, cls: type[ApiError], outcome_unknown: bool
) -> None:
    handler = sequence(fault, json_response({"id": "p1"}, 201))
    async with mock_client(handler) as client:
        with pytest.raises(cls) as caught:
            await client.create_project("x")
    assert len(handler.calls) == 1
    # Whether the create may have been carried out: a retry must look first (forms.py).
    assert caught.value.outcome_unknown is outcome_unknown


async def test_a_post_that_never_connected_is_not_of_unknown_outcome() -> None:
    handler = sequence(httpx.ConnectError("refused"))
    async with mock_client(handler, max_retries=0) as client:
        with pytest.raises(ConnectionFailed) as caught:
            await client.create_project("x")
    assert caught.value.outcome_unknown is False


async def test_find_project_matches_every_sent_field() -> None:
    projects = [
        {"id": "p1", "name": "x", "retention_days": 30},
        {"id": "p2", "name": "x", "description": "d", "retention_days": 45},
    ]
    async with mock_client(lambda r: json_response({"data": projects})) as client:
        assert (await client.find_project("x", "d", 45)).id == "p2"  # type: ignore[union-attr]
        assert (await client.find_project("x")).id == "p1"  # type: ignore[union-attr]
        assert await client.find_project("x", "other") is None


async def test_a_post_that_never_connected_is_retried_with_the_same_key() -> None:
    handler = sequence(httpx.ConnectError("refused"), json_response({"id": "p1"}, 201))
    async with mock_client(handler) as client:
        project = await client.create_project("x")
    assert project.id == "p1" and len(handler.calls) == 2
    keys = {r.headers["Idempotency-Key"] for r in handler.calls}
    assert len(keys) == 1


async def test_429_then_200_waits_retry_after_for_real() -> None:
    handler = sequence(json_response({}, 429, **{"Retry-After": "1"}), OK)
    client = ApiClient(BASE, None, transport=httpx.MockTransport(handler))
    async with client:
        started = time.monotonic()
        assert await client.list_projects() == []
        elapsed = time.monotonic() - started
    assert 0.9 <= elapsed < 3, elapsed
    assert len(handler.calls) == 2


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "7"}, 7.0),
        ({"Retry-After": "2.5"}, 2.5),
        ({"Retry-After": "9999"}, 60.0),  # capped
        ({}, 1.0),  # nothing said: a second
    ],
)
async def test_429_waits_what_the_server_says(headers: dict[str, str], expected: float) -> None:
    handler = sequence(json_response({}, 429, **headers), OK)
    sleeps = Sleeps()
    async with mock_client(handler, sleeps) as client:
        await client.list_projects()
    assert sleeps.delays == [pytest.approx(expected, abs=0.01)]


async def test_429_with_an_http_date_and_with_only_a_reset_header() -> None:
    later = datetime.now(timezone.utc) + timedelta(seconds=5)
    handler = sequence(
        json_response({}, 429, **{"Retry-After": format_datetime(later, usegmt=True)}), OK
    )
    sleeps = Sleeps()
    async with mock_client(handler, sleeps) as client:
        await client.list_projects()
    assert 3.5 <= sleeps.delays[0] <= 5.5
    reset = str(int(time.time()) + 4)
    handler = sequence(json_response({}, 429, **{"X-RateLimit-Reset": reset}), OK)
    sleeps = Sleeps()
    async with mock_client(handler, sleeps) as client:
        await client.list_projects()
    assert 2.5 <= sleeps.delays[0] <= 4.5


async def test_a_429_storm_gives_up_with_retry_after() -> None:
    handler = sequence(json_response({"message": "slow down"}, 429, **{"Retry-After": "2"}))
    sleeps = Sleeps()
    async with mock_client(handler, sleeps, max_rate_limit_retries=3) as client:
        with pytest.raises(RateLimited) as caught:
            await client.list_projects()
    assert caught.value.retry_after == 2 and "slow down" in caught.value.message
    assert len(handler.calls) == 4 and sleeps.delays == [2, 2, 2]


def test_parse_retry_after() -> None:
    assert parse_retry_after("3") == 3
    assert parse_retry_after("-4") == 0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412480 - 10) == 10
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


async def test_the_budget_is_exposed() -> None:
    response = json_response(
        {"data": []},
        **{
            "X-RateLimit-Limit": "1000",
            "X-RateLimit-Remaining": "998",
            "X-RateLimit-Reset": "1795251660",
        },
    )
    async with mock_client(lambda r: response) as client:
        await client.list_alerts("proj_b")
        budget = client.latest_budget
        assert budget is not None
        assert (budget.limit, budget.remaining, budget.reset_at) == (1000, 998, 1795251660)
        assert client.transport.budgets["proj_b"] == budget
        assert client.log[-1].rate_limit["x-ratelimit-remaining"] == "998"


async def test_the_pacer_holds_to_the_per_minute_rate() -> None:
    now = [0.0]
    sleeps: list[float] = []

    async def sleep(delay: float) -> None:
        sleeps.append(delay)
        now[0] += delay

    pacer = Pacer(per_minute=60, burst=3, clock=lambda: now[0], wall=lambda: now[0], sleep=sleep)
    for _ in range(6):
        await pacer.acquire("k")
    assert sleeps == [pytest.approx(1.0)] * 3  # a burst of 3, then one a second
    assert await _acquire_time(pacer, "other", now) == 0  # keys are paced apart


async def _acquire_time(pacer: Pacer, key: str, now: list[float]) -> float:
    before = now[0]
    await pacer.acquire(key)
    return now[0] - before


async def test_the_pacer_waits_for_the_reset_when_the_budget_is_nearly_spent() -> None:
    now = [1000.0]
    sleeps: list[float] = []

    async def sleep(delay: float) -> None:
        sleeps.append(delay)
        now[0] += delay

    pacer = Pacer(clock=lambda: now[0], wall=lambda: now[0], sleep=sleep, reserve=5)
    pacer.observe("k", RateBudget(limit=1000, remaining=3, reset_at=1012.0))
    await pacer.acquire("k")
    assert sleeps == [pytest.approx(12.0)]
    await pacer.acquire("k")
    assert len(sleeps) == 1


async def test_each_request_carries_its_projects_key() -> None:
    seen: dict[str, str] = {}

    def handler(request: httpx.Request) -> httpx.Response:
        seen[request.url.path] = request.headers.get("authorization", "")
        return json_response({"data": []})

    async with mock_client(handler) as client:
        await client.list_alerts("proj_a")
        await client.list_alerts("proj_b")
        await client.list_projects()
    assert seen["/v1/projects/proj_a/alerts"].endswith("canary_4f9d2b7e1c")
    assert seen["/v1/projects/proj_b/alerts"].endswith("canary_4f9d2b7e1c_b")
    assert seen["/v1/projects"].endswith("canary_4f9d2b7e1c")


async def test_redirects_are_not_followed() -> None:
    hosts: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        hosts.append(request.url.host)
        return httpx.Response(302, headers={"Location": "https://evil.example.net/v1/projects"})

    async with mock_client(handler) as client:
        with pytest.raises(BadResponse, match=r"evil\.example\.net"):
            await client.list_projects()
    assert hosts == ["traces.example.com"]


@pytest.mark.parametrize(
    "url",
    [
        "https://x.example.com",
        "https://x.example.com/v2",
        "ftp://x.example.com/v1",
        "x.example.com/v1",
        "",
        "https://x.example.com/v1?key=1",
        "https:///v1",
    ],
)
def test_bad_base_urls_are_refused_before_any_request(url: str) -> None:
    with pytest.raises(InvalidBaseUrl, match="base URL"):
        ApiClient(url)


@pytest.mark.parametrize(
    "url",
    [
        f"https://user:{KEY}@x.example.com/v1",
        f"https://{KEY}@x.example.com/v1",
        f"https://x.example.com/v1?api_key={KEY}",
        f"https://x.example.com/v1#{KEY}",
        f"x.example.com/v1?api_key={KEY}",
    ],
)
def test_a_key_pasted_into_the_base_url_is_refused_and_never_echoed(url: str) -> None:
    with pytest.raises(InvalidBaseUrl, match="base URL") as caught:
        ApiClient(url)
    assert KEY not in str(caught.value) and "x.example.com" in str(caught.value)


@pytest.mark.parametrize(
    "url", ["https://x.example.com/v1", "https://x.example.com/v1/", "http://127.0.0.1:8/api/v1"]
)
def test_good_base_urls(url: str) -> None:
    assert ApiClient(url).base_url == url.rstrip("/")


async def test_cancelling_a_call_leaves_nothing_behind() -> None:
    """A real socket that never answers: cancel mid-request; no task or connection remains."""
    accepted: list[asyncio.StreamWriter] = []

    async def never_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(writer)
        await reader.read(65536)
        await asyncio.sleep(3600)

    server = await asyncio.start_server(never_answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    before = asyncio.all_tasks()
    client = ApiClient(f"http://127.0.0.1:{port}/v1")
    call = asyncio.create_task(client.list_projects())
    while not accepted:  # noqa: ASYNC110 - polling a list filled by the server callback
        await asyncio.sleep(0.01)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    pool = client.transport._http._transport._pool  # type: ignore[attr-defined]
    assert pool.connections == []
    await client.aclose()
    server.close()
    for writer in accepted:
        writer.close()
    await asyncio.sleep(0)
    leftover = {t for t in asyncio.all_tasks() - before if not t.done()}
    leftover = {t for t in leftover if "never_answer" not in repr(t.get_coro())}
    assert leftover == set()


async def test_an_out_of_order_response_never_raises_the_budget() -> None:
    remaining = iter(["5", "7", "3"])

    def handler(request: httpx.Request) -> httpx.Response:
        return json_response(
            {"data": []},
            **{"X-RateLimit-Remaining": next(remaining), "X-RateLimit-Reset": "1795251660"},
        )

    async with mock_client(handler) as client:
        seen = []
        for _ in range(3):
            await client.list_projects()
            assert client.latest_budget is not None
            seen.append(client.latest_budget.remaining)
    assert seen == [5, 5, 3]


async def test_json_nested_too_deep_loses_only_the_depths() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    async with mock_client(lambda r: httpx.Response(200, content=deep)) as client:
        assert await client.list_projects() == []  # read, and nothing in it is a project
    async with mock_client(lambda r: httpx.Response(422, content=deep)) as client:
        with pytest.raises(ValidationFailed, match="HTTP 422"):
            await client.list_projects()
    # Attributes 10,000 levels deep (json.loads gives up near 1,000): the trace is kept, its
    # spans and their other attributes too; only the values below 200 levels are replaced.
    attributes = '{"tool": "grep", "deep": ' + "[" * 10_000 + '"bottom"' + "]" * 10_000 + "}"
    body = (
        '{"id": "t1", "spans": [{"id": "s1", "name": "step", "attributes": '
        + attributes
        + '}, {"id": "s2", "parent_id": "s1", "name": "leaf"}]}'
    )
    async with mock_client(lambda r: httpx.Response(200, content=body.encode())) as client:
        trace = await client.get_trace("t1")
    assert [s.name for s in trace.spans] == ["step", "leaf"]
    kept = trace.spans[0].attributes
    assert kept["tool"] == "grep"
    level, depth = kept["deep"], 1
    while isinstance(level, list):
        level, depth = level[0], depth + 1
    assert level == cut_note() and 150 < depth < 200  # cut 200 levels below the top of the body


def test_the_depth_cut_skips_brackets_inside_strings() -> None:
    text = r'{"a": "[[[{{{", "b": [[["x"]]], "c": "\"]"}'
    assert loads_with_depth_cut(text, max_depth=2) == {"a": "[[[{{{", "b": [cut_note(2)], "c": '"]'}


async def test_the_api_log_counts_a_request_after_a_429_as_the_second_try() -> None:
    answers = iter([httpx.Response(429, headers={"retry-after": "1"}), json_response({"data": []})])
    sleeps = Sleeps()
    async with mock_client(lambda request: next(answers), sleeps) as client:
        assert await client.list_projects() == []
    assert [(entry.status, entry.attempt) for entry in client.log] == [(429, 1), (200, 2)]
    assert sleeps.delays == [1.0]
