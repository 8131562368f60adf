"""`/` on the sessions screen filters them by user, time and text: against the real local
service (traces sent over OTLP), the user and the time go to its sessions listing and the text
to its trace search; a screen opened with a query starts filtered; a server that cannot search
traces gets the text over the loaded rows, said so; a query that does not read keeps the line
as typed."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
from pydantic import SecretStr

from tests.support.app import rendered_text, running_app, settled, showing, wait_for
from tests.support.otlp import new_project, new_span_id, new_trace_id, post, request, root_client
from tests.support.otlp import span as otlp_span
from tests.support.service import RunningService
from tui.api import ApiClient
from tui.model.session_query import SessionQuery
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.sessions import SessionsScreen

HOUR_MS = 3_600_000
# (user, session, hours ago, what the user asked)
TURNS = [
    ("alice", "sess-alice", 1.0, "Where is my order?"),
    ("alice", "sess-alice", 0.9, "I want a refund for the shoes"),
    ("bob", "sess-bob", 0.5, "Do you ship to Norway?"),
    ("carol", "sess-carol", 72.0, "Can I get a refund on my jacket?"),
]


def send_sessions(service: RunningService) -> str:
    """The turns above as traces of a new project (sent over OTLP); its id."""
    project_id, key = new_project(service)
    now = int(time.time() * 1000)
    spans = []
    for user, session, hours_ago, question in TURNS:
        attributes = {
            "user.id": user,
            "session.id": session,
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": question}]}]
            ),
        }
        start = now - int(hours_ago * HOUR_MS)
        spans.append(otlp_span(new_trace_id(), new_span_id(), b"", "chat", start, 200, attributes))
    with root_client(service.base_url, key) as client:
        assert post(client, request(*spans)).status_code == 200
        # Stored once listed (ingest may hand the batch to a worker).
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            listed = client.get(
                "/v1/traces", params={"project_id": project_id, "from": "1970-01-01T00:00:00Z"}
            )
            if listed.status_code == 200 and len(listed.json()["data"]) == len(TURNS):
                break
            time.sleep(0.05)  # polling the service for a condition, not timing the app
    return project_id


def rows(app: TraceTuiApp) -> list[str | None]:
    screen = app.screen
    assert isinstance(screen, SessionsScreen)
    return [session.id for session in screen.sessions]


def header(app: TraceTuiApp) -> str:
    return " ".join(rendered_text(app.screen.query_one("#header")).split())


def done(app: TraceTuiApp) -> bool:
    screen = app.screen
    return (
        isinstance(screen, SessionsScreen)
        and screen.is_mounted
        and not any(w.group == "sessions" and w.is_running for w in screen.workers)
        and screen.state != "loading…"
    )


async def query(pilot: Any, app: TraceTuiApp, text: str) -> None:
    line = app.screen.query_one("#query")
    await pilot.press("slash")
    await wait_for(pilot, lambda: app.focused is line)
    line.value = ""  # type: ignore[attr-defined]
    await pilot.press(*text, "enter")
    await wait_for(pilot, lambda: app.focused is not line and done(app))


async def test_user_time_and_text_go_to_the_server(service: RunningService) -> None:
    project = send_sessions(service)
    async with running_app(service, StartAt(project_id=project)) as (app, pilot):
        await wait_for(pilot, lambda: bool(app.screen_stack) and app.screen.is_mounted)
        app.open_sessions(project, "shop")
        await wait_for(pilot, lambda: done(app) and bool(rows(app)))
        assert rows(app) == ["sess-bob", "sess-alice"]  # the last 24 hours, newest first

        await query(pilot, app, "user:alice")
        assert rows(app) == ["sess-alice"]
        assert "sessions of alice" in header(app)

        await query(pilot, app, "refund")
        assert rows(app) == ["sess-alice"]  # carol's refund is three days old
        assert 'whose traces say "refund"' in header(app), header(app)
        assert "filtering loaded rows" not in header(app)

        await query(pilot, app, "refund last:7d")
        assert rows(app) == ["sess-alice", "sess-carol"]
        assert "last 7d" in header(app)

        await query(pilot, app, "refund user:carol last:7d")
        assert rows(app) == ["sess-carol"]

        await query(pilot, app, "Norway user:alice")
        assert rows(app) == []
        assert "No session matches the query" in "\n".join(
            app.screen.query_one("Table").render_line(y).text for y in range(3)
        )

        await pilot.press("x")  # every session of the last 24 hours again
        await wait_for(pilot, lambda: done(app) and rows(app) == ["sess-bob", "sess-alice"])
        assert app.screen.query_one("#query").value == ""  # type: ignore[attr-defined]


async def test_a_screen_opened_with_a_query_starts_filtered(service: RunningService) -> None:
    project = send_sessions(service)
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        app.open_sessions(project, "shop", SessionQuery(user_id="bob"))
        await wait_for(pilot, lambda: done(app) and bool(rows(app)))
        assert rows(app) == ["sess-bob"]
        assert app.screen.query_one("#query").value == "user:bob"  # type: ignore[attr-defined]
        assert "x clears" in header(app)


async def test_a_query_that_does_not_read_keeps_what_was_typed(service: RunningService) -> None:
    project = send_sessions(service)
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        app.open_sessions(project, "shop")
        await wait_for(pilot, lambda: done(app) and bool(rows(app)))
        line = app.screen.query_one("#query")
        await pilot.press("slash")
        await wait_for(pilot, lambda: app.focused is line)
        await pilot.press(*"model:gpt-4o last:2x", "enter")
        await pilot.pause()
        assert app.focused is line and line.value == "model:gpt-4o last:2x"  # type: ignore[attr-defined]
        assert rows(app) == ["sess-bob", "sess-alice"]
        await pilot.press("escape")  # closes the line; the screen stays
        await wait_for(pilot, lambda: app.focused is not line)
        assert isinstance(app.screen, SessionsScreen)


class NoTraceSearch:
    """A server with sessions but no trace search (its document lists no `q`)."""

    def __init__(self) -> None:
        self.trace_searches = 0

    async def handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path.removeprefix("/v1")
        if path == "/openapi.json":
            document = {
                "paths": {
                    "/v1/traces": {"get": {"parameters": [{"name": "session_id", "in": "query"}]}},
                    "/v1/projects/{project_id}/sessions": {"get": {}},
                }
            }
            return httpx.Response(200, json=document)
        if path == "/projects":
            return httpx.Response(200, json={"data": [{"id": "p", "name": "shop"}]})
        if path == "/traces":
            self.trace_searches += "q" in request.url.params
            return httpx.Response(200, json={"data": [], "next_cursor": None})
        if path == "/projects/p/sessions":
            users = ["alice", "bob", "alina"]
            sessions = [{"id": f"s-{user}", "user_id": user} for user in users]
            return httpx.Response(200, json={"data": sessions, "next_cursor": None})
        return httpx.Response(404, json={"error": {"message": "no such thing"}})


async def test_without_trace_search_the_text_filters_the_loaded_rows_and_says_so() -> None:
    server = NoTraceSearch()
    transport = httpx.MockTransport(server.handle)
    client = ApiClient("http://sessions.example/v1", SecretStr("k" * 20), transport=transport)
    app = TraceTuiApp(client)
    async with client, app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        app.open_sessions("p", "shop")
        await wait_for(pilot, lambda: done(app) and len(rows(app)) == 3)
        await query(pilot, app, "ali")
        assert rows(app) == ["s-alice", "s-alina"]
        said = header(app)
        assert "filtering loaded rows: 2 of 3" in said, said
        await query(pilot, app, "alice")
        assert rows(app) == ["s-alice"]
        assert "cannot search the traces' text" in header(app), header(app)
        await settled(pilot)
        assert server.trace_searches == 0
