"""Any cursor a client can send, on every listing of both stores: a cursor this service did not
issue is a 400 `invalid_cursor`, never a 500. Each decoded value is checked as the query
parameter it stands for would be (times within what `from`/`to` take, filters as
search.filters takes them, texts that are text), whatever JSON the cursor holds.

test_paging.py has the fixed list of crafted cursors; this module lets hypothesis build them:
the fields each listing reads ("t", "i", "f", "u", "x", "w", "s") with values of every JSON
kind, most of them of the right type and near the edges (64-bit bounds, 10**400, lone
surrogates, NaN), so that the checks after the decoder are reached."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.service import RunningService
from tests.support.webhooks import create_alert
from tui.server.search.filters import TraceFilters

EDGES = [0, 1, -1, 2**53, 2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 10**400, -(10**400)]
FILTER_FIELDS = sorted(TraceFilters.__dataclass_fields__)

numbers = st.one_of(
    st.sampled_from(EDGES),
    st.integers(),
    st.integers(-(2**64), 2**64),
    st.floats(),  # NaN and infinities too: json.dumps writes them, json.loads reads them
)
texts = st.text(max_size=40) | st.sampled_from(["\ud83d", "a\x00b", "x" * 300, ""])
json_values = st.recursive(
    st.none() | st.booleans() | numbers | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=5,
)
times = st.integers(0, 2_000_000_000_000) | st.sampled_from(EDGES)
# Mostly of the type each field has, so that the checks after the decoder's are reached.
typed = {
    "t": st.one_of(times, numbers, json_values),
    "i": st.one_of(texts, json_values),
    "f": st.one_of(times, numbers, json_values),
    "u": st.one_of(times, numbers, json_values),
    "w": st.one_of(texts, json_values),
    "s": st.one_of(times, numbers, json_values),
}
filters = st.dictionaries(
    st.sampled_from(FILTER_FIELDS) | texts,
    st.one_of(numbers, texts, st.lists(texts, max_size=3), json_values),
    max_size=4,
)


@st.composite
def cursors(draw: st.DrawFn) -> dict[str, Any]:
    """A cursor's values: each field most often there and of its type, "x" a filters object
    (or anything), and now and then a key no listing reads."""
    values = {name: draw(kind) for name, kind in typed.items() if draw(st.integers(0, 9)) > 0}
    if draw(st.booleans()):
        values["x"] = draw(filters | json_values)
    if not draw(st.integers(0, 9)):
        values[draw(texts)] = draw(json_values)
    return values


def encoded(values: dict[str, Any]) -> str:
    """As a client could write it: any JSON (ASCII escapes carry lone surrogates)."""
    return base64.urlsafe_b64encode(json.dumps(values).encode()).decode().rstrip("=")


@pytest.fixture(scope="module")
def service(backend_service: RunningService) -> RunningService:
    return backend_service


@pytest.fixture(scope="module")
def api(service: RunningService) -> Iterator[httpx.Client]:
    with service.client() as client:
        yield client


@pytest.fixture(scope="module")
def listings(api: httpx.Client) -> list[tuple[str, dict[str, str]]]:
    alert = create_alert(api, "proj_support", webhook_url="https://hooks.example.com/cursors")
    return [
        ("traces", {"project_id": "proj_support"}),
        ("projects/proj_support/sessions", {}),
        ("projects/proj_support/users", {}),
        (f"projects/proj_support/alerts/{alert['id']}/events", {}),
    ]


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(values=cursors())
def test_any_cursor_is_read_or_refused_with_invalid_cursor_on_every_listing(
    api: httpx.Client, listings: list[tuple[str, dict[str, str]]], values: dict[str, Any]
) -> None:
    cursor = encoded(values)
    for path, params in listings:
        response = api.get(path, params={**params, "cursor": cursor})
        assert response.status_code in (200, 400), (path, values, response.text[:300])
        if response.status_code == 400:
            assert response.json()["error"]["code"] == "invalid_cursor", response.text[:300]


TRACES, SESSIONS, USERS = 0, 1, 2


@pytest.mark.parametrize(
    ("values", "refused_by"),
    [
        ({"t": 1, "i": "a", "f": 0, "u": 10, "x": {"min_latency_ms": 10**400}}, [TRACES]),
        ({"t": 1, "i": "a", "f": 0, "u": -(2**63)}, [TRACES, SESSIONS, USERS]),
        ({"t": 1, "i": "a", "f": -(2**63), "u": 2**63 - 1, "x": {"status": "ok"}}, [TRACES]),
        ({"t": 1, "i": "\ud83d", "f": 0, "u": 10}, [TRACES, SESSIONS, USERS]),
        ({"t": 1, "i": "a", "f": 0, "u": 10, "x": {"q": "\ud83d\ud83d\ud83d"}}, [TRACES]),
        ({"t": 1, "i": "a", "f": 0, "u": 10, "w": "\ud83d"}, [SESSIONS]),
    ],
    ids=[
        "filter-10e400",
        "u-min",
        "window-min-max",
        "surrogate-id",
        "surrogate-q",
        "surrogate-user",
    ],
)
def test_the_review_s_cursors_and_their_kin_are_refused(
    api: httpx.Client,
    listings: list[tuple[str, dict[str, str]]],
    values: dict[str, Any],
    refused_by: list[int],
) -> None:
    """The cursors the outside review was answered 500 for (issue 39, point 4), and kin."""
    for index in refused_by:
        path, params = listings[index]
        response = api.get(path, params={**params, "cursor": encoded(values)})
        assert response.status_code == 400, (path, response.text[:300])
        assert response.json()["error"]["code"] == "invalid_cursor"


def test_a_filter_past_the_stores_integers_is_read_as_the_query_reads_it(
    api: httpx.Client,
) -> None:
    """10**300 as a JSON integer in a cursor's filters is the float the query's
    min_cost_usd=1e300 would be (it was bound as an integer: 500 on SQLite)."""
    values = {"t": 1, "i": "a", "f": 0, "u": 10, "x": {"min_cost_usd": 10**300}}
    response = api.get("traces", params={"project_id": "proj_support", "cursor": encoded(values)})
    assert response.status_code == 200, response.text[:300]
    assert response.json()["data"] == []
