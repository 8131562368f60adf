"""The client reads every common list envelope, cursor placement and field spelling."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import httpx
import pytest

from tests.support.helpers import BASE, json_response, mock_client
from tui.api import BadResponse, Span, Trace
from tui.core.alert_rules import split_metric
from tui.core.lenient import to_datetime

ONE = {"id": "t1", "started_at": "2026-11-21T09:00:00.000Z", "duration_ms": 5}
TWO = {"id": "t2", "started_at": "2026-11-21T08:00:00.000Z", "duration_ms": 7}


@pytest.mark.parametrize(
    "body",
    [
        [ONE, TWO],
        {"data": [ONE, TWO]},
        {"items": [ONE, TWO]},
        {"results": [ONE, TWO]},
        {"traces": [ONE, TWO]},
        {"data": {"items": [ONE, TWO]}},
        {"result": {"traces": [ONE, TWO]}},
    ],
)
async def test_list_envelopes(body: Any) -> None:
    async with mock_client(lambda r: json_response(body)) as client:
        page = await client.list_traces("p")
    assert [t.id for t in page.items] == ["t1", "t2"]
    assert page.next_page is None


@pytest.mark.parametrize(
    ("body", "headers", "expected"),
    [
        ({"data": [ONE], "next_cursor": "c2"}, {}, "c2"),
        ({"data": [ONE], "nextCursor": "c2"}, {}, "c2"),
        ({"data": [ONE], "cursor": "c2"}, {}, "c2"),
        ({"data": [ONE], "next_page_token": "c2"}, {}, "c2"),
        ({"data": [ONE], "meta": {"cursor": "c2"}}, {}, "c2"),
        ({"data": [ONE], "meta": {"next_cursor": "c2"}}, {}, "c2"),
        ({"data": [ONE], "pagination": {"next_cursor": "c2"}}, {}, "c2"),
        ({"data": [ONE], "page": {"next": "c2"}}, {}, "c2"),
        ({"data": [ONE], "paging": {"after": "c2"}}, {}, "c2"),
        ({"data": [ONE], "cursors": {"next": "c2"}}, {}, "c2"),
        ({"data": [ONE], "links": {"next": f"{BASE}/traces?project_id=p&cursor=c2"}}, {}, "c2"),
        ({"data": [ONE], "links": {"next": "/v1/traces?project_id=p&cursor=c2"}}, {}, "c2"),
        ([ONE], {"Link": f'<{BASE}/traces?project_id=p&cursor=c2>; rel="next"'}, "c2"),
        ({"data": [ONE], "links": {"next": {"href": f"{BASE}/traces?cursor=c2"}}}, {}, "c2"),
    ],
)
async def test_cursor_placements_reach_page_two(
    body: Any, headers: dict[str, str], expected: str
) -> None:
    seen: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        cursor = request.url.params.get("cursor")
        seen.append(cursor)
        if cursor is None:
            return json_response(body, **headers)
        return json_response({"data": [TWO]})

    async with mock_client(handler) as client:
        ids = [t.id async for t in client.iter_traces("p")]
    assert ids == ["t1", "t2"]
    assert seen == [None, expected]


async def test_has_more_false_ends_even_with_a_cursor() -> None:
    async with mock_client(
        lambda r: json_response({"data": [ONE], "next_cursor": "c", "has_more": False})
    ) as client:
        page = await client.list_traces("p")
    assert page.next_page is None


@pytest.mark.parametrize(
    "second",
    [
        {"data": [], "next_cursor": "c3"},  # an empty page ends paging
        {"data": [TWO], "next_cursor": "c2"},  # a cursor seen before ends paging
        {"data": [TWO]},  # no cursor ends paging
    ],
)
async def test_paging_always_ends(second: dict[str, Any]) -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        if request.url.params.get("cursor") is None:
            return json_response({"data": [ONE], "next_cursor": "c2"})
        return json_response(second)

    async with mock_client(handler) as client:
        ids = [t.id async for t in client.iter_traces("p")]
    assert calls == 2
    assert ids[0] == "t1"


async def test_next_link_to_another_host_never_gets_the_key() -> None:
    hosts: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        hosts.append(request.url.host)
        if request.url.params.get("cursor") is None:
            return json_response(
                {"data": [ONE], "links": {"next": "https://evil.example.net/steal"}}
            )
        return json_response({"data": [TWO]})

    async with mock_client(handler) as client:
        ids = [t.id async for t in client.iter_traces("p")]
    assert hosts == ["traces.example.com"] and ids == ["t1"]


async def test_unreadable_envelope_is_a_bad_response() -> None:
    async with mock_client(lambda r: json_response({"hello": "world"})) as client:
        with pytest.raises(BadResponse, match="HTTP 200"):
            await client.list_traces("p")


async def test_one_bad_record_never_loses_the_page() -> None:
    body = {
        "data": [ONE, "junk", 42, None, {"id": 7, "duration_ms": "abc", "started_at": "never"}, TWO]
    }
    async with mock_client(lambda r: json_response(body)) as client:
        page = await client.list_traces("p")
    assert [t.id for t in page.items] == ["t1", "7", "t2"]
    assert page.dropped == 3
    odd = page.items[1]
    assert odd.duration_ms is None and odd.started_at is None


SPAN_SPELLINGS: list[dict[str, Any]] = [
    {"id": "s", "parent_id": "p", "started_at": "2026-11-21T09:00:00.000Z", "duration_ms": 1500},
    {
        "span_id": "s",
        "parent_span_id": "p",
        "start_time": "2026-11-21T10:00:00+01:00",
        "end_time": "2026-11-21T10:00:01.5+01:00",
    },
    {"spanId": "s", "parentSpanId": "p", "startTime": 1795251600000, "endTime": 1795251601500},
    {"id": "s", "parentObservationId": "p", "startTime": "2026-11-21T09:00:00Z", "latency": 1.5},
    {"id": "s", "parent": "p", "start_time_unix_nano": "1795251600000000000", "duration_ns": 1.5e9},
    {"id": "s", "parentId": "p", "timestamp": 1795251600, "duration_s": "1.5"},
    {"id": "s", "parent_id": "p", "start": 1795251600000000, "duration_us": 1_500_000},
]


@pytest.mark.parametrize("raw", SPAN_SPELLINGS)
def test_span_field_spellings(raw: dict[str, Any]) -> None:
    span = Span.model_validate(raw)
    assert span.id == "s" and span.parent_id == "p"
    assert span.started_at == datetime(2026, 11, 21, 9, 0, tzinfo=timezone.utc)
    assert span.duration_ms == pytest.approx(1500)


@pytest.mark.parametrize(
    ("raw", "status", "error"),
    [
        ({"status": "ERROR", "error": "boom"}, "error", "boom"),
        ({"status": {"code": "STATUS_CODE_ERROR", "message": "bad"}}, "error", "bad"),
        ({"status_code": 2, "status_message": "x"}, "error", "x"),
        ({"level": "ERROR", "statusMessage": "oops"}, "error", "oops"),
        ({"error": {"message": "deep", "type": "E"}}, "error", "deep"),
        ({"status": "ok"}, "ok", None),
        ({"statusCode": "OK"}, "ok", None),
    ],
)
def test_status_and_error_forms(raw: dict[str, Any], status: str, error: str | None) -> None:
    span = Span.model_validate({"id": "s", **raw})
    assert span.status == status and span.error_message == error


@pytest.mark.parametrize(
    "raw",
    [
        {"input_tokens": 10, "output_tokens": 5, "cost_usd": 0.25},
        {"prompt_tokens": "10", "completion_tokens": "5", "cost": "0.25"},
        {"usage": {"prompt_tokens": 10, "completion_tokens": 5}, "total_cost": 0.25},
        {"usage": {"input": "10", "output": 5.0}, "calculatedTotalCost": "0.25"},
        {"inputTokens": 10, "outputTokens": 5, "costUsd": 0.25},
    ],
)
def test_tokens_and_cost_as_numbers_or_strings(raw: dict[str, Any]) -> None:
    span = Span.model_validate(raw)
    assert (span.input_tokens, span.output_tokens, span.cost_usd) == (10, 5, 0.25)


@pytest.mark.parametrize("bad", [True, "NaN", "Infinity", float("nan"), [], {}, "ten"])
def test_bad_numbers_become_blanks(bad: Any) -> None:
    span = Span.model_validate(
        {"id": "s", "input_tokens": bad, "cost_usd": bad, "duration_ms": bad}
    )
    assert span.input_tokens is None and span.cost_usd is None and span.duration_ms is None


def test_unknown_fields_are_kept() -> None:
    trace = Trace.model_validate({"id": "t", "environment": "prod", "tags": ["a"], "x": {"y": 1}})
    assert trace.extras == {"environment": "prod", "x": {"y": 1}}
    assert trace.attributes == ["a"]


@pytest.mark.parametrize(
    "value",
    [
        "2026-11-21T09:00:00Z",
        "2026-11-21T09:00:00.000Z",
        "2026-11-21T10:00:00+01:00",
        "2026-11-21T04:00:00-0500",
        "2026-11-21 09:00:00",
        "2026-11-21T09:00:00.000000000Z",
        1795251600,
        1795251600000,
        "1795251600000",
        1795251600000000,
        1795251600000000000,
    ],
)
def test_time_forms(value: Any) -> None:
    assert to_datetime(value) == datetime(2026, 11, 21, 9, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize("value", ["never", "2026-13-45T99:00:00Z", None, True, [], 1e300, "NaN"])
def test_unreadable_times_are_blank(value: Any) -> None:
    assert to_datetime(value) is None


async def test_trace_without_spans_fetches_them() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/spans"):
            return json_response({"spans": [{"id": "a"}, {"id": "b", "parent_id": "a"}]})
        return json_response({"data": {"id": "t", "totalCost": "0.5"}})

    async with mock_client(handler) as client:
        trace = await client.get_trace("t")
    assert trace.total_cost_usd == 0.5 and [s.id for s in trace.spans] == ["a", "b"]


async def test_ids_cannot_escape_their_path_segment() -> None:
    paths: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        paths.append(request.url.raw_path.decode())
        return json_response({"id": "x", "spans": []})

    async with mock_client(handler) as client:
        await client.get_trace("../projects?x=1#")
        await client.get_trace("..")
    assert paths == ["/v1/traces/%2E%2E%2Fprojects%3Fx%3D1%23", "/v1/traces/%2E%2E"]


def test_split_metric() -> None:
    assert split_metric("error_rate_pct_15m") == ("error_rate", "pct", "15m")
    assert split_metric("prompt_drift_score_24h") == ("prompt_drift", "score", "24h")
    assert split_metric("tokens_count_1h") == ("tokens", "count", "1h")
    assert split_metric("weird") is None and split_metric(None) is None
