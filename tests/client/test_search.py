"""The client's side of search (the contract of GET /v1/traces's filters and sorts, and of a
project's sessions): what is sent, what is read, and what the OpenAPI document says is offered,
against httpx.MockTransport answers shaped as the contract says."""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import SecretStr

from tui.api.client import ApiClient
from tui.api.models import Session, Trace, TraceFilter
from tui.api.offers import offers_from_document
from tui.api.source import TraceSource

ROW = {
    "id": "t1",
    "project_id": "p",
    "name": "agent",
    "started_at": "2026-11-21T08:00:00.000Z",
    "duration_ms": 2500,
    "status": "error",
    "total_cost_usd": 0.02,
    "user_id": "alice",
    "session_id": "s1",
    "tags": ["prod", "eu"],
    "input_preview": "Can I get a refund?",
    "output_preview": "Yes: the refund is on its way.",
}


def client_of(handler: Any) -> ApiClient:
    return ApiClient(
        "http://search.example/v1", SecretStr("k" * 20), transport=httpx.MockTransport(handler)
    )


async def test_a_filter_is_sent_as_the_contract_names_it_and_rows_carry_the_new_fields() -> None:
    seen: list[httpx.URL] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url)
        cursor = request.url.params.get("cursor")
        more = cursor is None
        return httpx.Response(
            200,
            json={
                "data": [{**ROW, "id": "t2" if cursor else "t1"}],
                "next_cursor": "c2" if more else None,
                "has_more": more,
            },
        )

    query = TraceFilter(
        q='refund "money back"',
        status="error",
        model="gpt-4o",
        name="agent",
        min_latency_ms=2000.0,
        max_latency_ms=9000.0,
        min_cost_usd=0.01,
        user_id="alice",
        session_id="s1",
        tags=("prod", "eu"),
        sort="duration_ms",
        order="desc",
    )
    async with client_of(handler) as client:
        first = await client.list_traces("p", limit=10, filters=query)
        second = await client.list_traces("p", limit=10, filters=query, after=first.next_page)
    params = seen[0].params
    assert params["q"] == 'refund "money back"' and params["status"] == "error"
    assert params["model"] == "gpt-4o" and params["name"] == "agent"
    assert float(params["min_latency_ms"]) == 2000 and float(params["max_latency_ms"]) == 9000
    assert float(params["min_cost_usd"]) == 0.01
    assert params["user_id"] == "alice" and params["session_id"] == "s1"
    assert params.get_list("tag") == ["prod", "eu"]
    assert params["sort"] == "duration_ms" and params["order"] == "desc"
    # The next page: the cursor, and the filters along (a server whose cursor carries them
    # ignores them, as the contract says).
    assert seen[1].params["cursor"] == "c2" and seen[1].params["model"] == "gpt-4o"
    trace = first.items[0]
    assert isinstance(trace, Trace) and second.next_page is None
    assert (trace.user_id, trace.session_id, trace.tags) == ("alice", "s1", ["prod", "eu"])
    assert trace.output_preview == "Yes: the refund is on its way."


async def test_no_filter_is_todays_request() -> None:
    seen: list[httpx.URL] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url)
        return httpx.Response(200, json={"data": [], "next_cursor": None, "has_more": False})

    async with client_of(handler) as client:
        await client.list_traces("p", limit=5)
        await client.list_traces("p", limit=5, filters=TraceFilter())
    assert dict(seen[0].params) == dict(seen[1].params) == {"project_id": "p", "limit": "5"}


async def test_a_projects_sessions_page_by_cursor() -> None:
    seen: list[httpx.URL] = []
    rows = [
        {
            "id": f"s{n}",
            "user_id": "alice" if n % 2 else None,
            "first_seen": "2026-11-21T08:00:00.000Z",
            "last_seen": "2026-11-21T09:00:00.000Z",
            "trace_count": n + 1,
            "total_tokens": 100 * n,
            "total_cost_usd": None,
            "error_count": 0,
        }
        for n in range(3)
    ]

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url)
        start = int(request.url.params.get("cursor") or 0)
        page = rows[start : start + 2]
        more = start + 2 < len(rows)
        return httpx.Response(
            200,
            json={"data": page, "next_cursor": str(start + 2) if more else None, "has_more": more},
        )

    async with client_of(handler) as client:
        assert isinstance(client, TraceSource)
        first = await client.list_sessions("p/1", limit=2, user_id="alice")
        second = await client.list_sessions("p/1", limit=2, user_id="alice", after=first.next_page)
    assert seen[0].raw_path.split(b"?")[0] == b"/v1/projects/p%2F1/sessions"
    assert dict(seen[0].params) == {"limit": "2", "user_id": "alice"}
    sessions = first.items + second.items
    assert [s.id for s in sessions] == ["s0", "s1", "s2"] and second.next_page is None
    assert all(isinstance(s, Session) for s in sessions)
    assert sessions[1].user_id == "alice" and sessions[2].trace_count == 3
    assert sessions[0].last_seen is not None and sessions[0].total_cost_usd is None


def test_a_session_row_is_read_tolerantly() -> None:
    session = Session.model_validate(
        {"sessionId": "s", "traceCount": "4", "lastSeen": 1_700_000_000, "extra": [1]}
    )
    assert session.id == "s" and session.trace_count == 4 and session.last_seen is not None
    assert session.extras == {"extra": [1]}
    assert Session.model_validate({"id": "s", "trace_count": "many"}).trace_count is None


def test_a_trace_row_without_the_new_fields_reads_as_before() -> None:
    trace = Trace.model_validate({"id": "t", "tags": "not a list", "user_id": 7})
    assert trace.tags == [] and trace.user_id == "7" and trace.output_preview is None


def test_the_openapi_document_says_which_filters_and_lists_are_offered() -> None:
    def parameter(name: str, where: str = "query") -> dict[str, Any]:
        return {"name": name, "in": where, "schema": {"type": "string"}}

    document = {
        "paths": {
            "/v1/traces": {
                "get": {
                    "parameters": [
                        parameter("project_id"),
                        parameter("from"),
                        parameter("q"),
                        parameter("status"),
                        parameter("sort"),
                        parameter("authorization", "header"),
                    ]
                }
            },
            "/v1/projects/{project_id}/sessions": {"get": {}},
        }
    }
    offers = offers_from_document(document)
    assert offers.trace_filters == {"project_id", "from", "q", "status", "sort"}
    assert offers.sessions and not offers.users
    assert TraceFilter(q="refund", status="error").parameter_names <= offers.trace_filters
    assert not TraceFilter(model="gpt-4o").parameter_names <= offers.trace_filters
    bare = offers_from_document({"paths": {"/v1/traces": {"get": {"parameters": "junk"}}}})
    assert bare.trace_filters == frozenset() and not bare.sessions


async def test_a_listed_row_in_the_specs_spelling_has_the_new_fields_too() -> None:
    # Such rows are read by the fast reader (tui/api/readers.py), not the tolerant model.
    plain = {key: ROW[key] for key in ("id", "project_id", "name", "started_at", "duration_ms")}

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"data": [plain, ROW], "next_cursor": None})

    async with client_of(handler) as client:
        page = await client.list_traces("p")
    bare, full = page.items
    assert (bare.user_id, bare.session_id, bare.tags, bare.output_preview) == (None, None, [], None)
    assert (full.user_id, full.tags) == ("alice", ["prod", "eu"])
