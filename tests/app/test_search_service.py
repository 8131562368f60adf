"""The query line and the sessions screen with Pilot against the real local service (the
session's one): the issue's example query finds the one trace it describes, on the server; a
session's traces open in order as one conversation."""

from __future__ import annotations

import json
import uuid

from tests.support.app import loaded_traces, rendered_text, running_app, showing, wait_for
from tests.support.service import RunningService
from tui.server.store.rows import SpanRow, TraceRow, now_ms
from tui.ui.app import StartAt
from tui.ui.screens.session import SessionScreen
from tui.ui.screens.sessions import SessionsScreen
from tui.ui.widgets.document import DocumentView
from tui.ui.widgets.trace_table import TraceTable


def messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def add_traces(service: RunningService, project: str) -> str:
    """Six traces: alice's session (three turns, the last a slow failed gpt-4o call that
    mentions a refund), and three of bob's; returns the session id."""
    session = f"sess-{uuid.uuid4().hex[:6]}"
    now = now_ms()
    turns = [
        # (user, session, model, duration, status, question, answer)
        ("alice", session, "gpt-4o-mini", 400, "ok", "Where is my order?", "It shipped."),
        ("alice", session, "gpt-4o-mini", 500, "ok", "When does it arrive?", "Tomorrow."),
        ("alice", session, "gpt-4o", 3200, "error", "I want a refund", "Refund escalated."),
        ("bob", None, "gpt-4o", 3100, "error", "Do you ship to Norway?", "Yes."),
        ("bob", None, "gpt-4o", 200, "ok", "A refund please", "Escalated."),
        ("bob", None, "gpt-4o-mini", 2500, "error", "Reset my password", "Use the link."),
    ]
    rows, spans = [], []
    for n, (user, sess, model, duration, status, question, answer) in enumerate(turns):
        trace_id = f"{project}-{n}"
        start = now - 60_000 * (len(turns) - n)
        attributes = {
            "user.id": user,
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": messages("user", question),
            "gen_ai.output.messages": messages("assistant", answer),
            "tag.tags": ["prod"],
        }
        if sess:
            attributes["session.id"] = sess
        error = "upstream failed" if status == "error" else None
        rows.append(
            TraceRow(
                trace_id,
                project,
                "chat",
                start,
                duration,
                1,
                10,
                5,
                0.02,
                status,
                1 if error else 0,
                "{}",
            )
        )
        spans.append(
            SpanRow(
                trace_id,
                "root",
                None,
                f"chat {model}",
                "llm",
                model,
                start,
                duration,
                10,
                5,
                0.02,
                status,
                error,
                json.dumps(attributes),
            )
        )
    with service.store.transaction() as db:
        service.store.insert_project(db, project, None, 30, project_id=project)
        service.store.insert_traces(db, rows, spans)
    return session


async def test_the_issue_query_and_a_session_against_the_service(service: RunningService) -> None:
    project = f"proj_search_{uuid.uuid4().hex[:6]}"
    session = add_traces(service, project)
    async with running_app(service, StartAt(project_id=project)) as (app, pilot):
        screen = await loaded_traces(app, pilot)
        table = screen.query_one(TraceTable)
        await pilot.press("slash", *'error model:gpt-4o latency>2s cost>0.01 user:alice "refund"')
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.state.asked is not None and not screen.fetching)
        assert [t.id for t in table.rows] == [f"{project}-2"]
        header = " ".join(rendered_text(screen.query_one("#header")).split())
        assert "1 found" in header and "filtering loaded rows" not in header
        assert table.rows[0].output_preview == "Refund escalated."
        await pilot.press("x")
        await wait_for(pilot, lambda: screen.state.asked is None and len(table.rows) == 6)

        await pilot.press("S")
        await wait_for(pilot, lambda: showing(app, SessionsScreen) and app.screen.sessions)
        sessions = app.screen
        assert isinstance(sessions, SessionsScreen)
        assert [s.id for s in sessions.sessions] == [session]
        assert sessions.sessions[0].trace_count == 3
        await pilot.press("enter")
        await wait_for(pilot, lambda: showing(app, SessionScreen))
        opened = app.screen
        assert isinstance(opened, SessionScreen)
        await wait_for(pilot, lambda: len(opened.traces) == 3, what="the session's 3 traces")
        lines = "\n".join(opened.query_one(DocumentView).text_lines())
        said = [
            lines.index(text) for text in ("Where is my order?", "Tomorrow.", "I want a refund")
        ]
        assert said == sorted(said)
