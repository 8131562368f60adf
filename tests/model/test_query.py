"""The query line's language (tui/model/query.py): the issue's example queries, the messages for
bad input, a fuzz (nothing but QueryError ever escapes), the round trip filter -> text ->
filter, and the filter applied to loaded rows."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui.api.models import ScoreBound, Trace, TraceFilter
from tui.model.query import QueryError, completions, format_query, parse_query
from tui.model.query_rows import matches, sort_rows


def test_the_issue_example_reads_every_field() -> None:
    query = parse_query(
        "error model:gpt-4o latency>2s cost>0.01 user:alice session:s1 tag:prod name:agent "
        'sort:-latency "refund" refund'
    )
    assert query == TraceFilter(
        q="refund",
        status="error",
        model="gpt-4o",
        name="agent",
        min_latency_ms=2000.0,
        min_cost_usd=0.01,
        user_id="alice",
        session_id="s1",
        tags=("prod",),
        sort="duration_ms",
        order="desc",
    )
    assert query.params() == {
        "q": "refund",
        "status": "error",
        "model": "gpt-4o",
        "name": "agent",
        "min_latency_ms": 2000.0,
        "min_cost_usd": 0.01,
        "user_id": "alice",
        "session_id": "s1",
        "tag": ["prod"],
        "sort": "duration_ms",
        "order": "desc",
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", TraceFilter()),
        ("   ", TraceFilter()),
        ("ok", TraceFilter(status="ok")),
        ("status:error", TraceFilter(status="error")),
        ("latency<500ms latency>0.5s", TraceFilter(min_latency_ms=500.0, max_latency_ms=500.0)),
        ("latency>=1m", TraceFilter(min_latency_ms=60_000.0)),
        ("cost>$0.5", TraceFilter(min_cost_usd=0.5)),
        ('name:"my agent"', TraceFilter(name="my agent")),
        ("tag:a tag:b tag:a", TraceFilter(tags=("a", "b"))),
        ('"money back" refund', TraceFilter(q='"money back" refund')),
        ('"error"', TraceFilter(q="error")),
        ("sort:cost", TraceFilter(sort="total_cost_usd", order="asc")),
        ("sort:-start", TraceFilter(sort="started_at", order="desc")),
        ("model:openai:gpt-4o", TraceFilter(model="openai:gpt-4o")),
    ],
)
def test_queries_read_as_said(text: str, expected: TraceFilter) -> None:
    assert parse_query(text) == expected


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("colour:red", "colour: is not a field"),
        ("latency>2", "a latency is a number with a unit, ms, s or m"),
        ("latency>2h", "ms, s or m"),
        ("latency>fast", "ms, s or m"),
        ("cost>cheap", "a cost is a number of dollars"),
        ("cost<1", "a cost takes a lower bound only"),
        ("latency=2s", "use latency> or latency<"),
        ("cost>1e999", "too large"),
        ("model:a model:b", "model: is given twice"),
        ("error ok", "the status is given twice"),
        ("status:maybe", "a status is ok or error"),
        ("sort:size", "sort by start, latency, cost or tokens"),
        ("user:", "needs a value"),
        ('"open', "not closed"),
        ('""', "an empty phrase"),
        ("latency>3s latency<1s", "no trace can match"),
    ],
)
def test_bad_input_says_what_is_wrong(text: str, said: str) -> None:
    with pytest.raises(QueryError, match=said.replace("(", r"\(").replace(")", r"\)")):
        parse_query(text)


QUERY_PIECES = st.sampled_from(
    [
        "error",
        "ok",
        "model:",
        "latency>",
        "latency<",
        "cost>",
        "cost>$",
        "sort:-",
        "sort:",
        "tag:",
        "user:",
        ":",
        '"',
        " ",
        "2s",
        "0.5",
        "ms",
        "1e5",
        "-",
        "=",
        ">=",
        "refund",
        "é",
        "\t",
        "\x00",
        "nan",
        "inf",
        "has:",
        "label:",
        "score:",
        "<",
        "<=",
        "note",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=60), st.lists(QUERY_PIECES, max_size=12).map("".join)))
def test_any_text_either_reads_or_says_why(text: str) -> None:
    try:
        query = parse_query(text)
    except QueryError as error:
        assert str(error)
        return
    assert parse_query(format_query(query)) == query


WORD = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp"), blacklist_characters='"'),
    min_size=1,
    max_size=12,
)
VALUE = st.one_of(WORD, st.lists(WORD, min_size=2, max_size=3).map(" ".join))
TERM = st.one_of(
    WORD.filter(lambda w: len(w) >= 3),
    st.lists(WORD, min_size=2, max_size=3).map(lambda words: '"' + " ".join(words) + '"'),
)
AMOUNT = st.floats(min_value=0, max_value=1e12, allow_nan=False, allow_infinity=False)
# An annotation's name or label in a term: no = < > (they separate a term's parts).
NAMED = VALUE.filter(lambda value: not set(value) & set("=<>"))
SCORE = st.floats(allow_nan=False, allow_infinity=False, width=64)


@st.composite
def filters(draw: st.DrawFn) -> TraceFilter:
    low = draw(st.none() | AMOUNT)
    high = draw(st.none() | AMOUNT)
    if low is not None and high is not None and low > high:
        low, high = high, low
    terms = draw(st.lists(TERM, max_size=3, unique=True))
    sort = draw(st.none() | st.sampled_from(["started_at", "duration_ms", "total_cost_usd"]))
    return TraceFilter(
        q=" ".join(terms) or None,
        status=draw(st.none() | st.sampled_from(["ok", "error"])),
        model=draw(st.none() | VALUE),
        name=draw(st.none() | VALUE),
        min_latency_ms=low,
        max_latency_ms=high,
        min_cost_usd=draw(st.none() | AMOUNT),
        user_id=draw(st.none() | VALUE),
        session_id=draw(st.none() | VALUE),
        tags=tuple(draw(st.lists(VALUE, max_size=3, unique=True))),
        annotations=tuple(draw(st.lists(VALUE, max_size=2, unique=True))),
        labels=tuple(draw(st.lists(st.tuples(NAMED, VALUE), max_size=2, unique=True))),
        scores=tuple(
            draw(
                st.lists(
                    st.builds(ScoreBound, NAMED, st.sampled_from(["<", "<=", ">", ">="]), SCORE),
                    max_size=2,
                    unique=True,
                )
            )
        ),
        sort=sort,
        order=None if sort is None else draw(st.sampled_from(["asc", "desc"])),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(filters())
def test_a_filter_written_out_reads_back_as_itself(query: TraceFilter) -> None:
    text = format_query(query)
    assert parse_query(text) == query, text


NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def row(**fields: object) -> Trace:
    return Trace.model_validate({"started_at": NOW.isoformat(), **fields})


def test_a_filter_applies_to_loaded_rows() -> None:
    slow_error = row(
        id="a",
        name="Agent",
        status="error",
        duration_ms=3000,
        total_cost_usd=0.02,
        user_id="alice",
        tags=["prod", "eu"],
        models={"gpt-4o": {}},
        output_preview="We refund you",
    )
    fast_ok = row(id="b", name="agent", status="ok", duration_ms=100, total_cost_usd=0.001)
    query = parse_query("error model:GPT-4o latency>2s cost>0.01 user:alice tag:prod name:agent")
    assert matches(slow_error, query) and not matches(fast_ok, query)
    assert matches(slow_error, parse_query("refund"))
    assert not matches(fast_ok, parse_query("refund"))
    assert matches(fast_ok, parse_query("ok name:AGENT latency<1s"))
    assert not matches(fast_ok, parse_query("tag:prod"))


def test_loaded_rows_sort_as_the_server_would() -> None:
    rows = [
        row(id="a", duration_ms=5),
        row(id="b"),
        row(id="c", duration_ms=50, started_at=(NOW - timedelta(hours=1)).isoformat()),
        row(id="d", duration_ms=5),
    ]
    assert [t.id for t in sort_rows(rows, "duration_ms", "desc")] == ["c", "a", "d", "b"]
    assert [t.id for t in sort_rows(rows, "duration_ms", "asc")] == ["a", "d", "c", "b"]
    assert sort_rows(rows, "started_at", "asc")[0].id == "c"


def test_completion_offers_fields_then_values_seen() -> None:
    offered = completions({"model": ["gpt-4o", "gpt-4o"], "name": ["my agent"]})
    assert "latency>" in offered and "model:gpt-4o" in offered
    assert offered.count("model:gpt-4o") == 1 and 'name:"my agent"' in offered
