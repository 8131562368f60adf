"""`S` from a filtered trace list opens that user's sessions (asked of the server), or the
sessions of the traces a query shows, not everyone's: with Pilot against the real service."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
from pydantic import SecretStr

from tests.support.app import (
    loaded_traces,
    rendered_text,
    running_app,
    settled,
    showing,
    wait_for,
)
from tests.support.service import RunningService
from tui.api import ApiClient
from tui.server.store.rows import SpanRow, TraceRow, now_ms
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.sessions import SessionsScreen
from tui.ui.screens.traces import TracesScreen
from tui.ui.widgets.trace_table import TraceTable

# (user, session, status, what the user asked)
TURNS = [
    ("alice", "a1", "ok", "Where is my order?"),
    ("alice", "a1", "ok", "When does it arrive?"),
    ("alice", "a2", "ok", "Do you ship to Norway?"),
    ("bob", "b1", "error", "I want a refund"),
    ("bob", "b1", "ok", "Thanks"),
    ("carol", "c1", "error", "Reset my password"),
]


def add_turns(service: RunningService, project: str) -> dict[str, str]:
    """The turns as one-span traces, a minute apart; session names -> their ids."""
    tag = uuid.uuid4().hex[:6]
    sessions = {name: f"sess-{name}-{tag}" for _, name, _, _ in TURNS}
    now = now_ms()
    rows, spans = [], []
    for n, (user, session, status, question) in enumerate(TURNS):
        trace_id, start = f"{project}-{n}", now - 60_000 * (len(TURNS) - n)
        attributes = {
            "user.id": user,
            "session.id": sessions[session],
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": question}]}]
            ),
        }
        error = 1 if status == "error" else 0
        rows.append(
            TraceRow(trace_id, project, "chat", start, 300, 1, 10, 5, 0.01, status, error, "{}")
        )
        spans.append(
            SpanRow(
                trace_id, "root", None, "chat gpt-4o", "llm", "gpt-4o", start, 300, 10, 5, 0.01,
                status, "failed" if error else None, json.dumps(attributes),
            )
        )  # fmt: skip
    with service.store.transaction() as db:
        service.store.insert_project(db, project, None, 30, project_id=project)
        service.store.insert_traces(db, rows, spans)
    return sessions


async def sessions_shown(app: TraceTuiApp, pilot: Any, query: str) -> tuple[list[str], str]:
    """The query submitted on the trace list, then `S`: the session ids listed, and the
    sessions screen's header."""
    screen = app.screen
    assert isinstance(screen, TracesScreen)
    await pilot.press("slash", "ctrl+u", *query, "enter")
    await wait_for(pilot, lambda: screen.state.asked_for == screen.state.query)
    await wait_for(pilot, lambda: not screen.fetching and screen.state.paging.ended)
    await pilot.press("S")
    await wait_for(pilot, lambda: showing(app, SessionsScreen))
    sessions = app.screen
    assert isinstance(sessions, SessionsScreen)
    await wait_for(pilot, lambda: sessions.state != "loading…", what="the sessions listed")
    listed = [session.id or "" for session in sessions.sessions]
    header = " ".join(rendered_text(sessions.query_one("#header")).split())
    await pilot.press("escape")
    await wait_for(pilot, lambda: app.screen is screen)
    return listed, header


async def test_s_from_a_filtered_list_opens_its_sessions_only(service: RunningService) -> None:
    project = f"proj_sessions_{uuid.uuid4().hex[:6]}"
    ids = add_turns(service, project)
    async with running_app(service, StartAt(project_id=project), size=(100, 24)) as (
        app,
        pilot,
    ):
        await loaded_traces(app, pilot)
        # The user's sessions, newest first: asked of the server by user.
        listed, header = await sessions_shown(app, pilot, "user:alice")
        assert listed == [ids["a2"], ids["a1"]]
        assert "of user:alice" in header and "traces)" not in header
        # A query's: the sessions of the traces it shows.
        listed, header = await sessions_shown(app, pilot, "refund")
        assert listed == [ids["b1"]] and "of refund (1 trace)" in header
        listed, _ = await sessions_shown(app, pilot, "error")
        assert listed == [ids["c1"], ids["b1"]]
        listed, header = await sessions_shown(app, pilot, "user:alice Norway")
        assert listed == [ids["a2"]] and "user:alice Norway" in header
        # No query: everyone's, as before.
        await pilot.press("x")
        await pilot.press("S")
        await wait_for(pilot, lambda: showing(app, SessionsScreen) and app.screen.sessions)
        await wait_for(pilot, lambda: len(app.screen.sessions) == 4)


async def test_the_sessions_of_a_query_are_paged_to_until_found_and_no_further() -> None:
    """Ten sessions, two a page, newest first; the query's trace is in the fourth page's:
    the sessions screen pages on by itself until it has it, then stops."""
    now = datetime.now(timezone.utc)
    asked: list[httpx.QueryParams] = []

    def handler(request: httpx.Request) -> httpx.Response:
        path = request.url.path.removeprefix("/v1")
        if path == "/openapi.json":
            sessions = {"/v1/projects/{project_id}/sessions": {"get": {}}}
            return httpx.Response(200, json={"paths": {"/v1/traces": {"get": {}}, **sessions}})
        if path == "/traces":
            rows = [
                {
                    "id": f"t{n}",
                    "name": "refund agent" if n == 7 else "chat",
                    "started_at": (now - timedelta(minutes=n)).isoformat(),
                    "session_id": f"s{n}",
                }
                for n in range(10)
            ]
            return httpx.Response(200, json={"data": rows, "next_cursor": None})
        if path == "/projects/p/sessions":
            asked.append(request.url.params)
            at = int(request.url.params.get("cursor") or 0)
            page = [{"id": f"s{n}", "trace_count": 1} for n in range(at, min(at + 2, 10))]
            more = at + 2 < 10
            return httpx.Response(
                200, json={"data": page, "next_cursor": str(at + 2) if more else None}
            )
        return httpx.Response(200, json={"data": [{"id": "p", "name": "shop"}]})

    transport = httpx.MockTransport(handler)
    client = ApiClient("http://s.example/v1", SecretStr("k" * 20), transport=transport)
    async with client, TraceTuiApp(client, StartAt(project_id="p")).run_test() as pilot:
        app = pilot.app
        screen = await loaded_traces(app, pilot)
        await pilot.press("slash", *"refund", "enter")
        await wait_for(pilot, lambda: [t.id for t in screen.query_one(TraceTable).rows] == ["t7"])
        await pilot.press("S")
        await wait_for(pilot, lambda: showing(app, SessionsScreen))
        sessions = app.screen
        assert isinstance(sessions, SessionsScreen)
        await wait_for(pilot, lambda: [s.id for s in sessions.sessions] == ["s7"])
        await settled(pilot)
    assert [params.get("cursor") for params in asked] == [None, "2", "4", "6"]
    assert all(params.get("from") and params.get("to") for params in asked)  # the list's range
