"""Cursors (tui/server/http/paging.py): what the service issues reads back, and a crafted cursor of
any kind (garbage, huge numbers, wrong types, wrong shape) is a 400 `invalid_cursor` on every
listing, never a 500."""

from __future__ import annotations

import base64
import json

import httpx
import pytest

from tests.support.webhooks import create_alert
from tui.server.http.errors import ServiceError
from tui.server.http.paging import decode_cursor, encode_cursor

FIELDS = {"t": int, "i": str}


def crafted(value: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


CRAFTED = [
    "garbage",
    "%%%",
    "",
    "e30",  # {}
    crafted([1, 2]),
    crafted("text"),
    crafted(None),
    crafted({"t": 2**63, "i": "x", "f": 0, "u": 1, "s": 2**63}),
    crafted({"t": -(2**63) - 1, "i": "x", "f": 0, "u": 1, "s": -(2**64)}),
    crafted({"t": 10**400, "i": "x", "f": 0, "u": 1, "s": 10**400}),
    crafted({"t": "1", "i": "x", "f": "0", "u": "1", "s": "1"}),
    crafted({"t": 1.5, "i": "x", "f": 0.5, "u": 1e308, "s": 1.5}),
    crafted({"t": True, "i": "x", "f": False, "u": True, "s": True}),
    crafted({"t": 1, "i": 7, "f": 0, "u": 1, "s": None}),
    crafted({"t": 1, "i": "x" * 300, "f": 0, "u": 1, "s": [1]}),
    crafted({"t": 1, "i": {"$gt": ""}, "f": 0, "u": 1, "s": {"a": 1}}),
    base64.urlsafe_b64encode(b"\xff\xfe not utf-8").decode(),
    base64.urlsafe_b64encode(b"[" * 700).decode(),
    base64.urlsafe_b64encode(b"[" * 5000).decode(),
    "A" * 5000,
]


def test_a_cursor_reads_back_what_was_written() -> None:
    cursor = encode_cursor({"t": 2**63 - 1, "i": "trace-1"})
    assert decode_cursor(cursor, FIELDS) == {"t": 2**63 - 1, "i": "trace-1"}
    assert decode_cursor(encode_cursor({"t": -5, "i": ""}), FIELDS) == {"t": -5, "i": ""}


@pytest.mark.parametrize("cursor", CRAFTED, ids=range(len(CRAFTED)))
def test_a_crafted_cursor_is_refused_by_the_decoder(cursor: str) -> None:
    with pytest.raises(ServiceError) as error:
        decode_cursor(cursor, {"t": int, "i": str, "f": int, "u": int})
    assert error.value.status == 400 and error.value.code == "invalid_cursor"


def test_a_crafted_cursor_is_a_400_on_every_listing(api: httpx.Client) -> None:
    alert = create_alert(api, "proj_support", webhook_url="https://hooks.example.com/paging")
    listings = [
        ("traces", {"project_id": "proj_support"}),
        (f"projects/proj_support/alerts/{alert['id']}/events", {}),
    ]
    for path, params in listings:
        for cursor in CRAFTED:
            if not cursor:  # an empty cursor is no cursor: the first page
                continue
            response = api.get(path, params={**params, "cursor": cursor})
            assert response.status_code == 400, (path, cursor[:40], response.text[:200])
            error = response.json()["error"]
            assert error["code"] == "invalid_cursor" and "cursor" in error["message"]
            assert error["details"] == [{"field": "cursor", "message": "not a valid cursor"}]


def test_the_widest_filters_a_service_accepts_fit_in_the_cursor_it_issues() -> None:
    """Every filter at its longest, in characters that JSON would escape to twelve each."""
    from tui.server.routes.traces import read_trace_cursor, trace_cursor
    from tui.server.search.filters import (
        MAX_ANNOTATION_FILTERS,
        MAX_ANNOTATION_NAME,
        MAX_LABEL,
        MAX_Q,
        MAX_TAGS,
        MAX_TERM,
        MAX_TERMS,
        MAX_VALUE,
        TraceFilters,
    )
    from tui.server.store.rows import SearchPosition

    emoji = "\U0001f600"
    words = " ".join([emoji * 49] * 10)[:MAX_Q]
    names = [f"{n}" + emoji * (MAX_ANNOTATION_NAME - 1) for n in range(MAX_ANNOTATION_FILTERS)]
    filters = TraceFilters(
        q=words,
        model=emoji * MAX_VALUE,
        name=emoji * MAX_VALUE,
        user_id=emoji * MAX_VALUE,
        session_id=emoji * MAX_VALUE,
        tags=tuple(f"{n}" + emoji * (MAX_VALUE - 1) for n in range(MAX_TAGS)),
        annotations=tuple(names),
        labels=tuple((name, emoji * MAX_LABEL) for name in names),
        min_scores=tuple((name, -1.2345678901234567e-300) for name in names),
        max_scores=tuple((name, 1.2345678901234567e300) for name in names),
        span_model=emoji * MAX_VALUE,
        span_name=emoji * MAX_VALUE,
        span_kind="retrieval",
        span_status="error",
        span_min_latency_ms=1.2345678901234567e300,
        span_max_latency_ms=1.2345678901234567e300,
        inputs=tuple(f"{n}" + emoji * (MAX_TERM - 1) for n in range(MAX_TERMS)),
        outputs=tuple(f"{n}" + emoji * (MAX_TERM - 1) for n in range(MAX_TERMS)),
    )
    cursor = trace_cursor(SearchPosition(1, "a" * 32), 0, 1, filters)
    assert read_trace_cursor(cursor)[3] == filters
