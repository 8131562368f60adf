"""Property tests: whatever a client puts in a cursor, a limit, a from/to timestamp, a project,
trace or alert id (any text: unicode, NULs, huge and negative numbers, bytes that are not UTF-8,
base64 of crafted JSON where a cursor goes), the service answers with a success or a clear JSON
error (400, 404, 409 or 422 with a code and a message), never a server error.

Against the session's in-process service over loopback, with a bounded number of examples per
property so the file runs in seconds."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, quote_from_bytes

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.service import RunningService

PROJECT = "proj_support"
EXAMPLES = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
ERROR_STATUSES = {400, 404, 409, 422}

huge_ints = st.one_of(
    st.integers(),
    st.integers(min_value=2**63 - 2, max_value=2**64),
    st.integers(min_value=-(2**64), max_value=-(2**63) + 2),
    st.integers(min_value=10**300, max_value=10**400),
    st.integers(min_value=-(10**400), max_value=-(10**300)),
)
numbers_as_text = st.one_of(
    huge_ints.map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["-0", "+5", "1e3", "0x10", "1_000", " 5", "5 ", "٣", "５", "NaN", "-inf"]),
)
any_text = st.one_of(
    st.text(max_size=300),
    st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=40),
)
timestamps = st.one_of(
    st.datetimes().map(lambda d: d.isoformat()),
    st.datetimes().map(lambda d: d.isoformat() + "Z"),
    st.tuples(st.datetimes(), st.integers(-23, 23), st.integers(0, 59)).map(
        lambda t: f"{t[0].isoformat()}{t[1]:+03d}:{t[2]:02d}"
    ),
    st.sampled_from(
        [
            "0001-01-01T00:00:00+23:59",
            "9999-12-31T23:59:59-23:59",
            "9999-12-31T23:59:59.999999Z",
            "2026-02-30T00:00:00Z",
            "2026-11-21T09:30:00.000Z\x00",
            "2026-11-21",
            "20261121T093000Z",
        ]
    ),
)
json_scalars = st.one_of(
    st.none(), st.booleans(), huge_ints, st.floats(), st.text(max_size=400), st.just([])
)
crafted_objects = st.dictionaries(
    st.sampled_from(["t", "i", "f", "u", "s", "x"]) | st.text(max_size=5),
    json_scalars
    | st.lists(json_scalars, max_size=3)
    | st.dictionaries(st.text(max_size=3), json_scalars, max_size=2),
    max_size=6,
)


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


cursors = st.one_of(
    any_text,
    crafted_objects.map(lambda d: b64(json.dumps(d).encode())),
    st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3), max_leaves=8).map(
        lambda v: b64(json.dumps(v).encode())
    ),
    st.binary(max_size=200).map(b64),
    st.integers(1, 3000).map(lambda n: b64(b"[" * n)),
)
ids = st.one_of(
    any_text.filter(bool),
    huge_ints.map(str),
    st.sampled_from(["..", ".", "%", "proj_support\x00", " proj_support", "PROJ_SUPPORT"]),
)
raw_bytes = st.binary(min_size=1, max_size=60)  # sent percent-encoded as they are


@pytest.fixture(scope="module")
def targets(service: RunningService) -> Iterator[tuple[httpx.Client, str, str]]:
    """A client with the workspace key, and a trace and an alert of the demo project."""
    with service.client() as client:
        traces = client.get("traces", params={"project_id": PROJECT, "from": "2000-01-01"})
        assert traces.status_code == 200, traces.text
        trace_id = traces.json()["data"][0]["id"]
        alerts = client.get(f"projects/{PROJECT}/alerts").json()["data"]
        yield client, trace_id, alerts[0]["id"]


def assert_answered(response: httpx.Response) -> None:
    """A success, or an error the client can read: never a server error."""
    assert response.status_code < 500, (response.status_code, response.text[:300])
    if response.status_code >= 400:
        assert response.status_code in ERROR_STATUSES, response.text[:300]
        error = response.json()["error"]
        assert error["status"] == response.status_code
        assert error["code"] and error["message"], error


def get(client: httpx.Client, path: str, query: str = "") -> httpx.Response:
    """GET `path` (already percent-encoded) with `query` as it is."""
    return client.get(path + (f"?{query}" if query else ""))


def q(value: str) -> str:
    return quote(value, safe="")


@given(cursor=cursors)
@EXAMPLES
def test_crafted_cursors(targets: Any, cursor: str) -> None:
    client, _, alert_id = targets
    assert_answered(get(client, "traces", f"project_id={PROJECT}&cursor={q(cursor)}"))
    assert_answered(
        get(client, f"projects/{PROJECT}/alerts/{alert_id}/events", f"cursor={q(cursor)}")
    )


@given(limit=st.one_of(numbers_as_text, any_text))
@EXAMPLES
def test_crafted_limits(targets: Any, limit: str) -> None:
    client, _, alert_id = targets
    assert_answered(get(client, "traces", f"project_id={PROJECT}&limit={q(limit)}"))
    assert_answered(
        get(client, f"projects/{PROJECT}/alerts/{alert_id}/events", f"limit={q(limit)}")
    )


@given(start=st.one_of(timestamps, numbers_as_text, any_text), end=st.one_of(timestamps, any_text))
@EXAMPLES
def test_crafted_time_windows(targets: Any, start: str, end: str) -> None:
    client, _, _ = targets
    for query in (f"from={q(start)}", f"to={q(end)}", f"from={q(start)}&to={q(end)}"):
        assert_answered(get(client, "traces", f"project_id={PROJECT}&{query}"))


@given(project_id=ids)
@EXAMPLES
def test_crafted_project_ids(targets: Any, project_id: str) -> None:
    client, trace_id, _ = targets
    assert_answered(get(client, "traces", f"project_id={q(project_id)}"))
    assert_answered(get(client, f"projects/{q(project_id)}/alerts"))
    assert_answered(get(client, f"traces/{trace_id}", f"project_id={q(project_id)}"))


@given(trace_id=ids)
@EXAMPLES
def test_crafted_trace_ids(targets: Any, trace_id: str) -> None:
    client, _, _ = targets
    assert_answered(get(client, f"traces/{q(trace_id)}"))
    assert_answered(get(client, f"traces/{q(trace_id)}/spans"))


@given(alert_id=ids)
@EXAMPLES
def test_crafted_alert_ids(targets: Any, alert_id: str) -> None:
    client, _, _ = targets
    assert_answered(get(client, f"projects/{PROJECT}/alerts/{q(alert_id)}"))
    assert_answered(get(client, f"projects/{PROJECT}/alerts/{q(alert_id)}/events"))


@given(value=raw_bytes)
@EXAMPLES
def test_bytes_that_are_not_text(targets: Any, value: bytes) -> None:
    client, trace_id, alert_id = targets
    raw = quote_from_bytes(value, safe="")
    for name in ("cursor", "limit", "from", "to", "include"):
        assert_answered(get(client, "traces", f"project_id={PROJECT}&{name}={raw}"))
    assert_answered(get(client, "traces", f"project_id={raw}"))
    assert_answered(get(client, f"traces/{raw}"))
    assert_answered(get(client, f"projects/{raw}/alerts"))
    assert_answered(get(client, f"projects/{PROJECT}/alerts/{alert_id}/events", f"cursor={raw}"))
    assert_answered(get(client, f"traces/{trace_id}/spans", f"project_id={raw}"))
