"""The fast readers of spec-spelled spans and traces give exactly what the tolerant validator
gives."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui.api import Span, Trace
from tui.api.readers import fast_span, read_span, read_trace, read_trace_fast

moments = st.datetimes(
    min_value=datetime(1980, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(timezone.utc)
)
offsets = st.sampled_from(
    [timezone.utc, timezone(timedelta(hours=2)), timezone(timedelta(hours=-5, minutes=-30))]
)


@st.composite
def iso_times(draw: st.DrawFn) -> str:
    moment = draw(moments).astimezone(draw(offsets))
    text = moment.isoformat(
        timespec=draw(st.sampled_from(["seconds", "milliseconds", "microseconds"]))
    )
    return draw(
        st.sampled_from([text, text.replace("+00:00", "Z"), text[:19], text.replace("T", " ")])
    )


texts = st.none() | st.text(max_size=12)
values = {
    "id": texts,
    "trace_id": texts,
    "parent_id": texts,
    "name": texts,
    "kind": st.none() | st.sampled_from(["llm", "LLM", "SPAN_KIND_CLIENT", "tool", ""]),
    "model": texts,
    "status": st.none()
    | st.sampled_from(["ok", "OK", "error", "ERROR", "failed", "STATUS_CODE_ERROR", "unset", ""]),
    "error_message": texts,
    "input_tokens": st.none() | st.integers(-5, 10**9),
    "output_tokens": st.none() | st.integers(0, 10**6),
    "cost_usd": st.none() | st.floats(allow_nan=False, allow_infinity=False) | st.integers(0, 100),
    "duration_ms": st.none() | st.floats(0, 1e9) | st.integers(0, 10**7),
    "started_at": st.none() | iso_times(),
    "ended_at": st.none() | iso_times(),
    "attributes": st.none() | st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
}
spec_spans = st.fixed_dictionaries({}, optional=values)
odd_spans = st.fixed_dictionaries(
    {},
    optional={
        **values,
        "parent_span_id": texts,
        "input_tokens": st.text(max_size=4) | st.booleans(),
        "started_at": st.integers(0, 2 * 10**12) | st.just("not a time"),
        "extra": st.integers(),
    },
)


def same(a: Span, b: Span) -> None:
    assert a.model_dump() == b.model_dump()
    assert a.model_fields_set == b.model_fields_set or a.model_dump() == b.model_dump()
    assert a.extras == b.extras
    assert a.is_error == b.is_error


@settings(max_examples=400, deadline=None)
@given(spec_spans)
def test_fast_and_tolerant_paths_agree(item: dict[str, Any]) -> None:
    same(read_span(item), Span.model_validate(item))


@settings(max_examples=200, deadline=None)
@given(odd_spans)
def test_anything_else_is_left_to_the_tolerant_path(item: dict[str, Any]) -> None:
    same(read_span(item), Span.model_validate(item))


def test_the_spec_spelling_takes_the_fast_path() -> None:
    item = {
        "id": "s",
        "parent_id": None,
        "name": "n",
        "started_at": "2026-11-21T09:00:00.123Z",
        "duration_ms": 5,
        "input_tokens": 3,
        "cost_usd": 0.5,
        "status": "ERROR",
    }
    fast = fast_span(item)
    assert fast is not None and fast.status == "error" and fast.ended_at is not None
    assert fast_span({**item, "parentSpanId": "p"}) is None
    assert fast_span({**item, "input_tokens": "3"}) is None
    assert fast_span({**item, "started_at": 1795251600000}) is None


# -- the whole-trace fast path -------------------------------------------


def tolerant_trace(body: dict[str, Any]) -> Trace:
    return read_trace(body)


@settings(max_examples=150, deadline=None)
@given(st.lists(spec_spans, max_size=6))
def test_the_whole_trace_fast_path_agrees_with_the_tolerant_one(
    items: list[dict[str, Any]],
) -> None:
    body = {"id": "t1", "name": "a trace", "status": "ERROR", "spans": items}
    fast = read_trace_fast(json.dumps(body).encode())
    slow = tolerant_trace(body)
    assert fast is not None  # everything spec-spelled takes it
    assert fast.model_dump(exclude={"spans"}) == slow.model_dump(exclude={"spans"})
    assert len(fast.spans) == len(slow.spans)
    for a, b in zip(fast.spans, slow.spans, strict=True):
        same(a, b)


@settings(max_examples=150, deadline=None)
@given(st.lists(odd_spans, max_size=4))
def test_a_trace_the_fast_path_declines_is_read_the_same_by_the_tolerant_one(
    items: list[dict[str, Any]],
) -> None:
    body = {"id": "t1", "spans": items}
    fast = read_trace_fast(json.dumps(body).encode())
    slow = tolerant_trace(body)
    if fast is not None:
        for a, b in zip(fast.spans, slow.spans, strict=True):
            same(a, b)


@pytest.mark.parametrize(
    "body",
    [
        b'{"data": {"id": "t", "spans": []}, "spans": []}',  # an envelope
        b'{"id": "t", "spans": [{"id": "s", "started_at": 1795251600}]}',  # epoch seconds
        b'{"id": "t", "spans": [{"id": "s", "duration_ms": NaN}]}',
        b'{"id": "t", "spans": [{"id": "s", "input_tokens": true}]}',
        b'{"id": "t", "spans": [{"id": "s", "name": "\\ud800"}]}',  # a lone surrogate
        b'{"id": "t", "spans": [{"id": "s", "started_at": "yesterday"}]}',
        b'{"id": "t", "spans": [{"spanId": "s"}]}',
        b'{"id": "t", "observations": []}',
        b"not json",
    ],
)
def test_what_is_not_the_spec_spelling_is_left_to_the_tolerant_path(body: bytes) -> None:
    assert read_trace_fast(body) is None
