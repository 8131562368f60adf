"""The trace list's state (tui/model/trace_list.py) and its rows (trace_list_rows.py), without
Textual: what each key changes, what is asked of the server, what is left to the loaded rows."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta, timezone
from typing import TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui.api.models import Session, Trace, TraceFilter
from tui.model.query import QueryError
from tui.model.query_rows import loaded_row_text, matches
from tui.model.timerange import TimeRange
from tui.model.trace_list import NEWEST, SORT_STEPS, Sort, TraceListState, sessions_of
from tui.model.trace_list_rows import keeps_within, left_to_do, row_texts, show

T = TypeVar("T")
NOW = datetime(2026, 11, 21, 12, tzinfo=timezone.utc)
EVERY_FILTER = frozenset(
    [
        *("q", "status", "model", "name", "min_latency_ms", "max_latency_ms", "min_cost_usd"),
        *("user_id", "session_id", "tag", "sort", "order"),
    ]
)


def row(n: int, **fields: object) -> Trace:
    values: dict[str, object] = {
        "id": f"t{n}",
        "name": "refund agent" if n % 3 == 0 else "chat",
        "started_at": (NOW - timedelta(minutes=n)).isoformat(),
        "duration_ms": [300, 100, 900, 200][n % 4],
        "total_cost_usd": [0.02, 0.01, 0.001, 0.03][n % 4],
        "status": "error" if n % 4 == 1 else "ok",
    }
    return Trace.model_validate({**values, **fields})


ROWS = [row(n) for n in range(8)]


def shown(state: TraceListState, rows: list[Trace] = ROWS) -> list[str]:
    return [trace.id or "" for trace in show(state, rows, row_texts(rows)).rows]


def test_s_steps_through_one_sort_vocabulary_and_a_query_sort_wins() -> None:
    state = TraceListState()
    seen = []
    for _ in range(4):
        seen.append((state.sort, state.sort_label))
        state = state.sort_stepped()
    assert seen == [
        (NEWEST, "newest first"),
        (Sort("duration_ms"), "slowest first"),
        (Sort("total_cost_usd"), "costliest first"),
        (NEWEST, "newest first"),
    ]
    assert SORT_STEPS[0] == NEWEST == Sort("started_at", "desc")
    ranked = TraceListState().sort_stepped().submitted("sort:tokens")
    assert ranked.query_sorts and ranked.sort == Sort("total_tokens", "asc")
    assert ranked.sort_stepped() == ranked  # `s` changes nothing while the query sorts
    assert ranked.query_cleared().sort == Sort("duration_ms")  # what `s` picked comes back


def test_transitions_leave_the_state_they_come_from_as_it_was() -> None:
    state = TraceListState()
    state.submitted("error").errors_toggled().sort_stepped().who_toggled()
    assert state == TraceListState()
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.errors_only = True  # type: ignore[misc]


def test_a_query_that_does_not_read_changes_nothing() -> None:
    state = TraceListState().submitted("user:alice")
    with pytest.raises(QueryError):
        state.submitted("latency>abc")
    assert state.query_text == "user:alice"


def test_what_is_asked_of_a_server_that_offers_every_filter() -> None:
    state = TraceListState().submitted("user:alice refund").sort_stepped().errors_toggled()
    assert state.wanted(EVERY_FILTER) == TraceFilter(
        q="refund", user_id="alice", status="error", sort="duration_ms", order="desc"
    )
    # Nothing to ask: the server's default list.
    assert TraceListState().wanted(EVERY_FILTER) is None
    # A parameter the server lacks, or a word too short for its index: the loaded rows do it.
    assert state.wanted(EVERY_FILTER - {"user_id"}) is None
    assert TraceListState().submitted("ab").wanted(EVERY_FILTER) is None


def test_what_the_loaded_rows_are_left_to_do() -> None:
    state = TraceListState().submitted("error")
    # Not asked yet (or the server cannot): the query applies to the loaded rows.
    assert state.query_here == TraceFilter(status="error") and not state.may_prefetch
    assert shown(state) == ["t1", "t5"]
    # Once the first page asked with it arrives, the server did it: nothing left here.
    asked = state.wanted(EVERY_FILTER)
    loaded = state.page_loaded(first=True, asked=asked, ended=False, dropped=0)
    assert loaded.query_here is None and loaded.found_by_server and loaded.may_prefetch
    # A new query submitted meanwhile applies to the rows loaded for the old one.
    again = loaded.submitted("refund")
    assert again.query_here == TraceFilter(q="refund")


def test_a_ranking_or_errors_only_the_server_does_not_do_pages_the_range_in() -> None:
    ranked = TraceListState().sort_stepped()
    assert ranked.ranks_here and ranked.ranking_here and ranked.sort_here == Sort("duration_ms")
    assert shown(ranked) == ["t2", "t6", "t0", "t4", "t3", "t7", "t1", "t5"]
    by_server = ranked.page_loaded(
        first=True, asked=TraceFilter(sort="duration_ms", order="desc"), ended=False, dropped=0
    )
    assert not by_server.ranks_here and by_server.sort_here is None
    errors = TraceListState().errors_toggled()
    assert errors.ranks_here and not errors.ranking_here and errors.errors_here
    assert shown(errors) == ["t1", "t5"]
    # A query's own sort is done on the loaded rows only, and said so.
    query_sorted = TraceListState().submitted("sort:-cost")
    assert not query_sorted.ranks_here
    assert query_sorted.sort_label == "costliest first (loaded rows)"
    assert shown(query_sorted)[:2] == ["t3", "t7"]


def test_paging_counts_and_ends() -> None:
    state = TraceListState().loading_all_set(True)
    state = state.page_loaded(first=True, asked=None, ended=False, dropped=2)
    state = state.page_failed("Server error: boom")
    assert state.paging.error == "Server error: boom" and state.paging.loading_all
    state = state.page_loaded(first=False, asked=None, ended=True, dropped=1)
    assert state.paging.dropped == 3 and state.paging.ended and state.paging.error is None
    assert not state.paging.loading_all  # nothing more to page in
    assert state.page_loaded(first=True, asked=None, ended=True, dropped=0).paging.dropped == 0


def test_live_mode_needs_a_range_that_moves_with_now() -> None:
    assert TraceListState().live_set(True).live
    custom = TimeRange(None, NOW - timedelta(hours=1), NOW)
    assert not TraceListState().ranged(custom).live_set(True).live


def test_what_is_typed_is_previewed_on_the_loaded_rows_with_what_enter_does() -> None:
    state = TraceListState().line_typed("error")
    seen = show(state, ROWS, row_texts(ROWS), EVERY_FILTER)
    assert seen.preview is not None and seen.preview.enter == "server"
    assert [t.id for t in seen.rows] == ["t1", "t5"] and seen.kept == len(ROWS)
    assert state.enter_does(None) == "unknown"
    assert state.enter_does(frozenset()) == "here"
    assert TraceListState().line_typed("").enter_does(frozenset()) == "all"
    assert TraceListState().line_typed("latency>").enter_does(EVERY_FILTER) == "nothing"


def test_what_does_not_read_is_said_and_the_list_stays_as_it_was() -> None:
    state = TraceListState().submitted("error").line_typed("latency>abc")
    seen = show(state, ROWS, row_texts(ROWS))
    assert seen.preview is not None and seen.preview.rows is None
    assert "a latency is a number with a unit" in (seen.preview.error or "")
    assert [t.id for t in seen.rows] == ["t1", "t5"]  # the query's rows


def test_rows_loaded_for_another_query_do_not_preview_what_they_may_not_hold() -> None:
    errors = [row for row in ROWS if row.is_error]
    asked = TraceFilter(status="error", q="refund")
    state = TraceListState().submitted("error refund")
    state = state.page_loaded(first=True, asked=asked, ended=True, dropped=0)
    # Wider than what was asked: the loaded rows cannot hold all it keeps.
    wider = show(state.line_typed("refund"), errors, row_texts(errors)).preview
    assert wider is not None and wider.rows is None and wider.loaded_for == "error refund"
    # Narrower: previewed, the server's own conditions not judged again (its text search
    # reads the whole trace; a row's text is a little of it: t1 and t5 are not "refund" here).
    narrower = show(state.line_typed("error refund latency<150ms"), errors, row_texts(errors))
    assert narrower.preview is not None and narrower.preview.rows is not None
    assert [t.id for t in narrower.preview.rows] == ["t1", "t5"]  # both took 100 ms
    same = show(state.line_typed("refund error"), errors, row_texts(errors)).preview
    assert same is not None and [t.id for t in same.rows or []] == ["t1", "t5"]


def test_conditions_no_loaded_row_can_judge_are_named_not_applied() -> None:
    bare = [row(n) for n in range(4)]
    seen = show(TraceListState().line_typed("model:gpt-4o user:alice"), bare, row_texts(bare))
    assert seen.preview is not None and seen.preview.unjudged == ("model", "user_id")
    assert len(seen.rows) == 4
    carried = [row(0, models={"gpt-4o": {}}, user_id="alice"), row(1, models={}, user_id="bob")]
    judged = show(
        TraceListState().submitted("model:GPT-4o user:alice"), carried, row_texts(carried)
    )
    assert judged.unjudged == () and [t.id for t in judged.rows] == ["t0"]
    # The submitted query on loaded rows says the same.
    assert show(TraceListState().submitted("model:gpt-4o"), bare, row_texts(bare)).unjudged == (
        "model",
    )


def maybe(*values: T) -> st.SearchStrategy[T | None]:
    """None half the time (a condition left out), else one of `values`."""
    return st.one_of(st.none(), st.sampled_from(values))


FILTERS = st.builds(
    TraceFilter,
    q=maybe("refund", "refunds", "fund", "chat", "refund chat", '"no refund"'),
    status=maybe("error", "ok"),
    name=maybe("chat", "Chat", "refund agent"),
    user_id=maybe("alice", "bob"),
    min_latency_ms=maybe(100.0, 300.0),
    max_latency_ms=maybe(200.0, 900.0),
    tags=st.sampled_from([(), (), ("prod",), ("prod", "eu")]),
)
ANY_ROWS = [
    row(n, user_id=user, tags=tags, output_preview=words)
    for n in range(8)
    for user, tags, words in (
        (None, [], None),
        ("alice", ["prod"], "refunds granted"),
        ("bob", ["prod", "eu"], "no refund"),
        ("alice", [], "chat"),
    )
]


FIELDS = ("q", "status", "name", "user_id", "min_latency_ms", "max_latency_ms", "tags")


@st.composite
def filter_pairs(draw: st.DrawFn) -> tuple[TraceFilter, TraceFilter]:
    """A filter that one of ANY_ROWS passes (its conditions taken from the row), and a second
    one: the first with some conditions dropped or changed."""
    trace = draw(st.sampled_from(ANY_ROWS))
    duration = trace.duration_ms or 0.0
    narrow = TraceFilter(
        q=draw(st.none() | st.sampled_from(loaded_row_text(trace).split())),
        status=draw(maybe(trace.status)),
        name=draw(maybe(trace.name)),
        user_id=draw(maybe(trace.user_id)),
        min_latency_ms=draw(maybe(duration - 50)),
        max_latency_ms=draw(maybe(duration + 50)),
        tags=draw(st.sampled_from([(), tuple(trace.tags)])),
    )
    other = draw(FILTERS)
    wide = narrow
    for name in draw(st.sets(st.sampled_from(FIELDS))):
        wide = dataclasses.replace(wide, **{name: getattr(other, name)})
    return narrow, wide


@settings(max_examples=500)  # the pairs that tell a wrong answer are a few in a hundred
@given(filter_pairs())
def test_within_means_every_row_the_narrow_filter_keeps_the_wide_one_keeps(
    pair: tuple[TraceFilter, TraceFilter],
) -> None:
    narrow, wide = pair
    if not keeps_within(narrow, wide):
        return
    for trace in ANY_ROWS:
        text = loaded_row_text(trace)
        if matches(trace, narrow, text):
            assert matches(trace, wide, text)
        # What is left to do after `wide`, on a row `wide` kept, keeps it as `narrow` would.
        if matches(trace, wide, text):
            kept = matches(trace, left_to_do(narrow, wide), text)
            assert kept == matches(trace, narrow, text)


def test_a_project_gone_stops_live_mode_until_a_page_comes_again() -> None:
    state = TraceListState().live_set(True).loading_all_set(True).page_failed("boom")
    gone = state.project_gone()
    assert gone.paging.gone and not gone.live and not gone.paging.loading_all
    assert gone.paging.error is None  # said as gone, not as a failure
    assert not gone.live_set(True).live
    back = gone.page_loaded(first=True, asked=None, ended=True, dropped=0)
    assert not back.paging.gone and back.live_set(True).live


def test_s_opens_the_sessions_of_what_the_list_is_filtered_by() -> None:
    rows = [row(n, session_id=f"s{n % 3}", user_id="alice") for n in range(6)] + [row(9)]
    assert sessions_of(TraceListState(), rows, NOW) is None  # everyone's
    assert sessions_of(TraceListState().submitted("sort:-cost"), rows, NOW) is None
    user = sessions_of(TraceListState().submitted("user:alice"), rows, NOW)
    assert user is not None and user.user_id == "alice" and user.session_ids is None
    assert (user.start, user.end) == (NOW - timedelta(hours=24), NOW)
    query = TraceListState().submitted("user:alice refund").errors_toggled()
    found = sessions_of(query, rows[:2], NOW)
    assert found is not None and found.user_id == "alice"
    assert found.session_ids == {"s0", "s1"} and found.traces == 2 and found.partial
    assert found.words == "user:alice refund · errors only"
    sessions = [Session.model_validate({"id": name}) for name in ("s2", "s1", "s0")]
    assert [s.id for s in found.keep(sessions)] == ["s1", "s0"]
    ended = query.page_loaded(first=True, asked=None, ended=True, dropped=0)
    errors_only = sessions_of(ended, [row(9)], NOW)
    assert errors_only is not None and errors_only.session_ids == frozenset()
    assert not errors_only.partial
