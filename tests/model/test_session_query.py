"""The sessions screen's query language: read, written back, made from a trace query, and
applied to loaded sessions."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tui.api.models import TraceFilter
from tui.model.query import QueryError
from tui.model.session_query import (
    SessionQuery,
    format_session_query,
    from_trace_filter,
    parse_session_query,
    session_matches,
)

NOW = datetime(2026, 11, 21, 12, tzinfo=timezone.utc)


def test_user_last_and_words() -> None:
    query = parse_session_query('user:alice last:7d refund "order number"')
    assert query == SessionQuery("alice", "7d", ("refund", "order number"))
    assert query.window == timedelta(days=7)
    assert query.bounds(NOW) == (NOW - timedelta(days=7), NOW)
    assert query.trace_q == 'refund "order number"'
    assert SessionQuery().bounds(NOW) == (None, None)  # the server's default window


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("model:gpt-4o", "is not a field here"),
        ("user:", "needs a value"),
        ("last:2x", "m, h, d or w"),
        ("last:400d", "at most a year"),
        ("user:a user:b", "given twice"),
        ('"refund', "not closed"),
        ('""', "empty phrase"),
    ],
)
def test_what_does_not_read_says_why(text: str, says: str) -> None:
    with pytest.raises(QueryError, match=says):
        parse_session_query(text)


def test_short_words_are_not_for_the_trace_search() -> None:
    assert parse_session_query("refund").text_searchable
    assert not parse_session_query("refund ok").text_searchable
    assert not parse_session_query("user:bob").text_searchable


words = st.text(
    alphabet=st.characters(categories=("L", "N"), include_characters="-_. "), min_size=1
).filter(lambda w: w.strip() == w and w != "")


@given(
    st.one_of(st.none(), words.filter(lambda w: " " not in w)),
    st.one_of(st.none(), st.sampled_from(["15m", "2h", "7d", "4w"])),
    st.lists(words, max_size=3, unique=True),
)
def test_written_back_reads_the_same(user: str | None, last: str | None, text: list[str]) -> None:
    query = SessionQuery(user, last, tuple(text))
    assert parse_session_query(format_session_query(query)) == query


def test_from_a_trace_query_the_user_and_the_text() -> None:
    trace_filter = TraceFilter(q='refund "order number"', user_id="alice", status="error")
    assert from_trace_filter(trace_filter) == SessionQuery(
        "alice", None, ("refund", "order number")
    )
    assert from_trace_filter(TraceFilter()).is_empty


def test_loaded_sessions_match_on_user_time_and_their_id_or_user() -> None:
    old = SimpleNamespace(id="sess-9", user_id="alina", last_seen=NOW - timedelta(days=3))
    new = SimpleNamespace(id="sess-1", user_id="alice", last_seen=NOW - timedelta(hours=1))
    assert session_matches(new, parse_session_query("ALI"), NOW)  # case-insensitive
    assert session_matches(old, parse_session_query("ali"), NOW)
    assert not session_matches(old, parse_session_query("ali last:1d"), NOW)
    assert not session_matches(new, parse_session_query("user:alina"), NOW)
    assert session_matches(old, parse_session_query("sess-9 user:alina last:7d"), NOW)
