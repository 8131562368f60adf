"""The query's span(…) group and input:/output: text, pure: read, written back, refused with a
reason; what loaded rows (no spans, a preview of one input and one output) can judge of them
and what the list says of it; what is asked of a server that offers them and one that does not."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui.api.models import Trace, TraceFilter
from tui.model.query import QueryError, format_query, parse_query
from tui.model.query_rows import matches, unjudged
from tui.model.span_query import split_span
from tui.model.trace_list import TraceListState
from tui.model.trace_list_rows import keeps_within, left_to_do
from tui.model.trace_list_text import judged_note

SPAN_PARAMS = frozenset(
    {
        "status",
        "model",
        "span_model",
        "span_name",
        "span_kind",
        "span_status",
        "span_min_latency_ms",
        "span_max_latency_ms",
        "input",
        "output",
    }
)


def test_the_issue_question_is_one_span_not_the_whole_trace() -> None:
    query = parse_query("span(model:gpt-4o error latency>2s)")
    assert query == TraceFilter(span_model="gpt-4o", span_status="error", span_min_latency_ms=2000)
    assert (query.model, query.status, query.min_latency_ms) == (None, None, None)
    assert query.params() == {
        "span_model": "gpt-4o",
        "span_status": "error",
        "span_min_latency_ms": 2000.0,
    }
    both = parse_query('user:alice SPAN( kind:Tool  status:failed latency<50ms ) "refund" ')
    assert (both.user_id, both.q, both.span_kind, both.span_status) == (
        "alice",
        "refund",
        "tool",
        "error",
    )
    assert both.span_max_latency_ms == 50
    text = parse_query('input:"where is" output:sorry input:order')
    assert (text.inputs, text.outputs) == (("where is", "order"), ("sorry",))
    assert text.params() == {"input": ["where is", "order"], "output": ["sorry"]}


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("span(model:gpt-4o error", "span( is not closed"),
        ("span()", "span() is empty"),
        ("span(error) span(ok)", "one span(…) per query"),
        ("span(refund)", "refund: span(…) takes model:, name:, kind:, error or ok"),
        ("span(cost>1)", "cost>1: span(…) takes"),
        ("span(kind:robot)", "a span's kind is llm, retrieval, tool, agent, chain"),
        ("span(error ok)", "span(…)'s status is given twice"),
        ("span(latency>3s latency<1s)", "no span can match"),
        ("span(latency>fast)", "a latency is a number with a unit"),
        ("span(model:(x))", "span(…) holds no parentheses"),
        ("input:", "input: needs a value"),
    ],
)
def test_a_group_that_does_not_read_says_why(text: str, said: str) -> None:
    with pytest.raises(QueryError) as raised:
        parse_query(text)
    assert said in str(raised.value)


def test_span_inside_quotes_or_a_word_is_text() -> None:
    assert split_span('"span(x" refund') == ('"span(x" refund', None)
    assert parse_query("myspan(x)").q == "myspan(x)"
    assert parse_query('"span(error)"').q == "span(error)"
    assert parse_query(format_query(parse_query('"span(error)"'))).q == "span(error)"


PIECES = st.sampled_from(
    [
        "span(",
        ")",
        "error",
        "ok",
        "model:",
        "kind:",
        "tool",
        "name:",
        "latency>",
        "latency<",
        "2s",
        "cost>",
        "input:",
        "output:",
        '"',
        " ",
        "refund",
        "(",
        "é",
        "status:",
        "x",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PIECES, max_size=14).map("".join))
def test_any_text_with_groups_either_reads_or_says_why(text: str) -> None:
    try:
        query = parse_query(text)
    except QueryError as error:
        assert str(error)
        return
    assert parse_query(format_query(query)) == query


WORD = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp"), blacklist_characters='"()'),
    min_size=1,
    max_size=10,
)
VALUE = st.one_of(WORD, st.lists(WORD, min_size=2, max_size=3).map(" ".join))
MS = st.floats(min_value=0, max_value=1e9, allow_nan=False, allow_infinity=False)


@st.composite
def span_filters(draw: st.DrawFn) -> TraceFilter:
    low, high = draw(st.none() | MS), draw(st.none() | MS)
    if low is not None and high is not None and low > high:
        low, high = high, low
    return TraceFilter(
        status=draw(st.none() | st.sampled_from(["ok", "error"])),
        span_model=draw(st.none() | VALUE),
        span_name=draw(st.none() | VALUE),
        span_kind=draw(st.none() | st.sampled_from(["llm", "tool", "retrieval", "agent"])),
        span_status=draw(st.none() | st.sampled_from(["ok", "error"])),
        span_min_latency_ms=low,
        span_max_latency_ms=high,
        inputs=tuple(draw(st.lists(VALUE, max_size=2, unique=True))),
        outputs=tuple(draw(st.lists(VALUE, max_size=2, unique=True))),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(span_filters())
def test_a_group_written_out_reads_back_as_itself(query: TraceFilter) -> None:
    assert parse_query(format_query(query)) == query, format_query(query)


NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def row(**fields: object) -> Trace:
    return Trace.model_validate({"id": "t", "started_at": NOW.isoformat(), **fields})


def test_loaded_rows_judge_a_group_by_what_it_implies_of_the_trace() -> None:
    query = parse_query("span(model:gpt-4o error latency>2s)")
    failed_slow = row(status="error", duration_ms=3000, models={"GPT-4o": {}})
    assert matches(failed_slow, query)  # may hold such a span: kept, and said to be unsure
    assert not matches(row(status="ok", duration_ms=3000, models={"gpt-4o": {}}), query)
    assert not matches(row(status="error", duration_ms=1000, models={"gpt-4o": {}}), query)
    assert not matches(row(status="error", duration_ms=3000, models={"claude": {}}), query)
    assert matches(row(status="error", duration_ms=3000), query)  # models not carried
    assert unjudged(query, [failed_slow]) == ("span",)
    assert judged_note(("span",)) == "span(…) judged per trace"
    assert judged_note(("model", "span")) == "model: not judged, span(…) judged per trace"
    assert matches(row(), parse_query("span(kind:tool)"))  # nothing of it shows in a row


def test_loaded_rows_judge_input_and_output_by_their_previews() -> None:
    asked = row(input_preview="Where is my REFUND?", output_preview="On its way")
    assert matches(asked, parse_query("input:refund"))
    assert not matches(asked, parse_query("output:refund"))
    assert matches(asked, parse_query('output:"its way" input:where'))
    bare = row(name="no previews")
    query = parse_query("output:refund")
    assert unjudged(query, [bare]) == ("outputs",)
    assert matches(bare, query, skip=("outputs",))


def test_keeps_within_and_left_to_do_know_one_group_from_another() -> None:
    wide = parse_query("span(model:gpt-4o error) input:ref")
    narrow = parse_query("span(model:GPT-4o error latency>2s) input:refund")
    assert keeps_within(narrow, wide)
    assert not keeps_within(wide, narrow)
    assert not keeps_within(parse_query("span(model:gpt-4o) input:refund"), wide)
    assert not keeps_within(parse_query("span(model:gpt-4o error)"), wide)  # no input
    assert not keeps_within(parse_query("model:gpt-4o error input:refund"), wide)
    left = left_to_do(narrow, wide)
    assert (left.span_model, left.span_status, left.span_min_latency_ms) == (
        "GPT-4o",
        None,
        2000,
    )
    assert left.inputs == ("refund",)


def test_what_is_asked_of_a_server_that_offers_the_filters_and_of_one_that_does_not() -> None:
    state = TraceListState().submitted("error span(model:gpt-4o error latency>2s) output:sorry")
    asked = state.wanted(SPAN_PARAMS)
    assert asked is not None and asked.params()["output"] == ["sorry"]
    assert state.wanted(frozenset({"status", "model"})) is None  # applied to the loaded rows
    assert TraceListState().submitted("input:ab").wanted(SPAN_PARAMS) is None  # too short
