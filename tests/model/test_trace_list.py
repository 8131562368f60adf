"""The trace list's state (tui/model/trace_list.py) and its rows (trace_list_rows.py), without
Textual: what each key changes, what is asked of the server, what is left to the loaded rows."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta, timezone

import pytest

from tui.api.models import Trace, TraceFilter
from tui.model.query import QueryError
from tui.model.timerange import TimeRange
from tui.model.trace_list import NEWEST, SORT_STEPS, Sort, TraceListState
from tui.model.trace_list_rows import row_texts, shown_rows

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
    return [trace.id or "" for trace in shown_rows(state, rows, row_texts(rows))]


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
