"""Sessions, trace filters and the trace list's costs from a real Phoenix: a project's sessions
newest first with their user, counts, tokens and cost (GraphQL, paged by Phoenix's cursor), a
user's sessions, a session's traces in order (the trace list's session filter), errors-only,
what Phoenix cannot filter by said plainly, and a page of more traces than one GraphQL query
may ask about still costed whole."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from tests.phoenix.conftest import PRICED_TRACES, SESSIONS, SessionsSeeded
from tui.api import ApiError
from tui.api.models import Session, TraceFilter
from tui.api.phoenix.client import PhoenixClient


@pytest.fixture
async def client(phoenix_sessions: SessionsSeeded) -> AsyncIterator[PhoenixClient]:
    async with PhoenixClient(phoenix_sessions.base_url) as client:
        yield client


async def test_phoenix_offers_sessions_and_the_filters_it_takes(client: PhoenixClient) -> None:
    offers = await client.discover_offers()
    assert offers.sessions and not offers.users
    assert offers.trace_filters == {"session_id", "status", "min_latency_ms", "max_latency_ms"}


async def test_sessions_newest_first_paged_with_their_figures(
    client: PhoenixClient, phoenix_sessions: SessionsSeeded
) -> None:
    first = await client.list_sessions(phoenix_sessions.project, limit=1)
    assert first.next_page is not None
    second = await client.list_sessions(phoenix_sessions.project, limit=1, after=first.next_page)
    assert second.next_page is None
    newest, older = first.items + second.items
    assert isinstance(newest, Session) and (newest.id, older.id) == ("sess-beta", "sess-alpha")
    assert newest.user_id == "user-b" and newest.trace_count == 2 and newest.error_count == 1
    assert older.user_id == "user-a" and older.trace_count == 3 and older.error_count == 0
    assert older.total_tokens == 3 * 110
    assert older.total_cost_usd is not None and older.total_cost_usd > 0
    assert older.first_seen is not None and older.last_seen is not None
    assert older.first_seen < older.last_seen < newest.last_seen


async def test_a_users_sessions_and_a_time_window(
    client: PhoenixClient, phoenix_sessions: SessionsSeeded
) -> None:
    mine = await client.list_sessions(phoenix_sessions.project, user_id="user-a")
    assert [s.id for s in mine.items] == ["sess-alpha"]
    every = (await client.list_sessions(phoenix_sessions.project)).items
    alpha = next(s for s in every if s.id == "sess-alpha")
    assert alpha.last_seen is not None
    later = await client.list_sessions(
        phoenix_sessions.project, start=alpha.last_seen + timedelta(seconds=30)
    )
    assert [s.id for s in later.items] == ["sess-beta"]


async def test_a_sessions_traces_in_order(
    client: PhoenixClient, phoenix_sessions: SessionsSeeded
) -> None:
    sessions = (await client.list_sessions(phoenix_sessions.project)).items
    alpha = next(s for s in sessions if s.id == "sess-alpha")
    assert alpha.first_seen is not None and alpha.last_seen is not None
    query = TraceFilter(session_id="sess-alpha", sort="started_at", order="asc")
    page = await client.list_traces(
        phoenix_sessions.project,
        start=alpha.first_seen,
        end=alpha.last_seen + timedelta(milliseconds=1),
        limit=100,
        filters=query,
    )
    assert [t.id for t in page.items] == phoenix_sessions.turns["sess-alpha"]
    assert [t.name for t in page.items] == [f"sess-alpha-turn-{n}" for n in range(3)]
    assert len(phoenix_sessions.turns["sess-alpha"]) == SESSIONS["sess-alpha"][1]


async def test_errors_only_and_what_phoenix_cannot_filter_by(
    client: PhoenixClient, phoenix_sessions: SessionsSeeded
) -> None:
    failing = await client.list_traces(
        phoenix_sessions.project, filters=TraceFilter(status="error")
    )
    assert [t.name for t in failing.items] == ["sess-beta-turn-1"]
    with pytest.raises(ApiError, match="This Phoenix server cannot filter or sort traces by q"):
        await client.list_traces(phoenix_sessions.project, filters=TraceFilter(q="refund"))
    with pytest.raises(ApiError, match="sort total_cost_usd"):
        await client.list_traces(
            phoenix_sessions.project, filters=TraceFilter(sort="total_cost_usd")
        )


async def test_a_page_of_more_traces_than_one_query_may_cost(
    client: PhoenixClient, phoenix_sessions: SessionsSeeded
) -> None:
    """Phoenix refuses a GraphQL query of more than 50 aliases: a page of 65 rows is costed
    in two queries, every row with its cost."""
    rows = (await client.list_traces(phoenix_sessions.project, limit=100)).items
    assert len(rows) == PRICED_TRACES + sum(count for _, count in SESSIONS.values())
    assert all(row.total_cost_usd is not None and row.total_cost_usd > 0 for row in rows)
