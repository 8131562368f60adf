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
from tui.api.readers import (
    fast_span,
    fast_trace,
    read_records,
    read_span,
    read_trace,
    read_trace_fast,
)
from tui.api.span_table import SPANS_KEPT, SpanTable
from tui.model.spans import TraceTree, build_tree

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


# -- spans read lazily (tui/api/span_table.py) ---------------------------


def tree_facts(tree: TraceTree) -> dict[str, Any]:
    """Everything a tree says about its spans' places and totals."""
    return {
        "keys": tree.keys,
        "depth": tree.depth,
        "parent": tree.parent,
        "end": tree.end,
        "flags": tree.flags,
        "errors": tree.errors,
        "sub_input": list(tree.sub_input),
        "sub_output": list(tree.sub_output),
        "sub_cost": [round(c, 9) for c in tree.sub_cost],
        "sub_errors": list(tree.sub_errors),
        "start": tree.start,
        "finish": round(tree.finish, 6),
    }


ids = st.sampled_from(["a", "b", "c", "d", "e"])
tree_spans = st.fixed_dictionaries(
    {"id": st.none() | ids},
    optional={
        **{key: value for key, value in values.items() if key != "id"},
        "parent_id": st.none() | ids | st.just("missing"),
        "ended_at": st.none() | iso_times(),
    },
)


@settings(max_examples=300, deadline=None)
@given(st.lists(tree_spans, max_size=8))
def test_a_lazily_read_trace_makes_the_tree_and_spans_the_tolerant_path_makes(
    items: list[dict[str, Any]],
) -> None:
    """The columns read without making Spans give the same tree (order, orphans, cycles,
    duplicates, totals, time span) as the Spans themselves, and each position's Span, made
    when asked for, is the one the tolerant path makes."""
    body = json.dumps({"id": "t1", "spans": items}).encode()
    fast = read_trace_fast(body)
    slow = tolerant_trace({"id": "t1", "spans": items})
    if fast is None:  # a start (or an end a duration comes from) that is not ISO 8601
        return
    assert isinstance(fast.spans, SpanTable)
    fast_tree, slow_tree = build_tree(fast.spans), build_tree(slow.spans)
    assert tree_facts(fast_tree) == tree_facts(slow_tree)
    for position in range(fast_tree.size):
        same(fast_tree.spans[position], slow_tree.spans[position])


def test_spans_are_made_only_when_asked_for_and_a_few_hundred_are_kept() -> None:
    items = [
        {
            "id": f"s{i}",
            "parent_id": "s0" if i else None,
            "name": f"span {i}",
            "started_at": "2026-11-21T09:00:00Z",
            "duration_ms": i,
            "attributes": {"i": i},
        }
        for i in range(SPANS_KEPT + 100)
    ]
    trace = read_trace_fast(json.dumps({"id": "t", "spans": items}).encode())
    assert trace is not None and isinstance(trace.spans, SpanTable)
    tree = build_tree(trace.spans)
    assert isinstance(tree.spans, SpanTable)
    assert trace.spans.made == 0 and tree.spans.made == 0  # the tree needs none
    assert tree.spans[3].attributes == {"i": 3} and tree.spans[3] is tree.spans[3]
    assert tree.spans.made == 1
    for position in range(len(items)):
        assert tree.spans[position].name == f"span {position}"
    assert tree.spans.made == len(items) and tree.spans.kept == SPANS_KEPT
    assert tree.spans[0].name == "span 0"  # made again: among the oldest, it was let go
    assert tree.spans.made == len(items) + 1


def test_a_span_the_strict_reading_declines_is_read_tolerantly_when_asked_for() -> None:
    """An end that is not ISO 8601 on a span sent with its duration: the tree does not need
    the end, so the trace is read lazily; the span itself is read as the tolerant path would."""
    items = [
        {
            "id": "a",
            "started_at": "2026-11-21T09:00:00Z",
            "duration_ms": 5.0,
            "ended_at": "1795251605000",
        },
        {"id": "b", "parent_id": "a", "started_at": "2026-11-21T09:00:01Z", "duration_ms": 1},
    ]
    trace = read_trace_fast(json.dumps({"id": "t", "spans": items}).encode())
    assert trace is not None
    same(trace.spans[0], read_span(items[0]))
    assert fast_span(items[0]) is None  # it did take the tolerant path


@pytest.mark.parametrize(
    "body",
    [
        b'{"id": "t", "spans": [{"id": "s", "cost_usd": 1e400}]}',  # not a finite number
        b'{"id": "t", "spans": [{"id": "s", "ended_at": "soon"}]}',  # an end, no duration
        b'{"id": "t", "spans": [{"id": "s", "started_at": "9999-12-31T23:00:00-05:00"}]}',
        b'{"id": "t", "spans": [{"id": "s", "started_at": "2026-11-21T09:00"}]}',  # no seconds
        b'{"id": "t", "spans": null}',
        b"[]",
    ],
)
def test_what_the_columns_cannot_be_sure_of_is_left_to_the_tolerant_path(body: bytes) -> None:
    assert read_trace_fast(body) is None


def test_a_trace_with_fields_beyond_the_spec_keeps_them_and_its_spans_stay_lazy() -> None:
    body = {"id": "t", "environment": "u1", "spans": [{"id": "s", "name": "only"}]}
    fast = read_trace_fast(json.dumps(body).encode())
    assert fast is not None and isinstance(fast.spans, SpanTable)
    assert fast.extras == {"environment": "u1"} and fast.spans[0].name == "only"
    assert fast.model_dump(exclude={"spans"}) == tolerant_trace(body).model_dump(exclude={"spans"})


# -- listed traces -------------------------------------------------------

trace_values = {
    "id": texts,
    "project_id": texts,
    "name": texts,
    "started_at": st.none() | iso_times(),
    "ended_at": st.none() | iso_times(),
    "duration_ms": st.none() | st.floats(0, 1e9) | st.integers(0, 10**7),
    "status": values["status"],
    "error_message": texts,
    "span_count": st.none() | st.integers(0, 10**6),
    "error_count": st.none() | st.integers(0, 10**3),
    "input_tokens": values["input_tokens"],
    "output_tokens": values["output_tokens"],
    "total_tokens": st.none() | st.integers(0, 10**9),
    "total_cost_usd": values["cost_usd"],
    "attributes": values["attributes"],
    "input_preview": texts,
}
odd_traces = st.fixed_dictionaries(
    {},
    optional={
        **trace_values,
        "traceId": texts,
        "status_code": st.integers(0, 2),
        "latency": st.floats(0, 100),
        "spans": st.just([]),
        "total_tokens": st.text(max_size=3),
    },
)


def same_trace(a: Trace, b: Trace) -> None:
    assert a.model_dump() == b.model_dump()
    assert a.extras == b.extras and a.is_error == b.is_error


@settings(max_examples=400, deadline=None)
@given(st.fixed_dictionaries({}, optional=trace_values))
def test_a_listed_trace_reads_the_same_both_ways(item: dict[str, Any]) -> None:
    fast = fast_trace(item)
    assert fast is not None  # the spec's spelling: the fast path takes it
    same_trace(fast, Trace.model_validate(item))


@settings(max_examples=200, deadline=None)
@given(odd_traces)
def test_a_listed_trace_in_another_spelling_is_read_tolerantly(item: dict[str, Any]) -> None:
    (read,), dropped = read_records(Trace, [item])
    same_trace(read, Trace.model_validate(item))
    assert dropped == 0
