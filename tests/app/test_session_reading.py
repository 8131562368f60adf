"""A session reads as one conversation: each trace's model call repeats what was said before
it (as chat apps send it), and the session shows every turn once, in order. Against the local
service, the traces sent over OTLP."""

from __future__ import annotations

import json
import time

from tests.support.app import running_app, showing, wait_for
from tests.support.otlp import new_project, new_span_id, new_trace_id, post, request, root_client
from tests.support.otlp import span as otlp_span
from tests.support.service import RunningService
from tui.api.models import Session
from tui.model.chat import Conversation, Message, TextPart
from tui.model.chat.text import only_what_is_new, remember
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.session import SessionScreen
from tui.ui.widgets.document import DocumentView

SYSTEM = "You are the support assistant of the Acme web shop."
TURNS = [
    ("Hi, I ordered running shoes last week.", "Thanks! Could you give me the order number?"),
    ("Where is my order #48213?", "It shipped yesterday."),
    ("Can I return shoes after 30 days?", "Yes, within 60 days."),
]


def message(role: str, text: str) -> dict[str, object]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def send_session(service: RunningService) -> tuple[str, str]:
    """Three traces of one session, each call carrying the turns before it."""
    project_id, key = new_project(service)
    session = f"sess-{project_id}"
    now = int(time.time() * 1000)
    spans = []
    for n, (question, answer) in enumerate(TURNS):
        history = [m for q, a in TURNS[:n] for m in (message("user", q), message("assistant", a))]
        attributes = {
            "session.id": session,
            "user.id": "carol",
            "gen_ai.operation.name": "chat",
            "gen_ai.system_instructions": json.dumps([{"type": "text", "content": SYSTEM}]),
            "gen_ai.input.messages": json.dumps([*history, message("user", question)]),
            "gen_ai.output.messages": json.dumps([message("assistant", answer)]),
        }
        start = now - (len(TURNS) - n) * 60_000
        spans.append(otlp_span(new_trace_id(), new_span_id(), b"", "chat", start, 300, attributes))
    with root_client(service.base_url, key) as client:
        assert post(client, request(*spans)).status_code == 200
    return project_id, session


async def test_a_session_shows_each_turn_once_in_order(service: RunningService) -> None:
    project_id, session_id = send_session(service)
    async with running_app(service, size=(100, 40)) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        app.open_session(project_id, Session(id=session_id, user_id="carol"))
        await wait_for(pilot, lambda: showing(app, SessionScreen))
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await wait_for(pilot, lambda: len(screen.traces) == 3, what="the session's 3 traces")
        lines = "\n".join(screen.query_one(DocumentView).text_lines())
        for question, answer in TURNS:
            assert lines.count(question) == 1 and lines.count(answer) == 1, (question, lines)
        assert lines.count(SYSTEM) == 1
        said = [lines.index(text) for turn in TURNS for text in turn]
        assert said == sorted(said)
        assert "(2 earlier messages, as above)" in lines
        assert "(4 earlier messages, as above)" in lines


def test_only_the_leading_messages_already_read_are_left_out() -> None:
    def say(role: str, text: str) -> Message:
        return Message(role, (TextPart(text),))

    first = Conversation(input=(say("user", "a"),), output=(say("assistant", "b"),))
    read: set[tuple[str, str]] = set()
    remember(first, read)
    again = Conversation(
        input=(say("user", "a"), say("assistant", "b"), say("user", "c"), say("user", "a"))
    )
    new, skipped = only_what_is_new(again, read)
    assert skipped == 2 and [m.parts[0].text for m in new.input] == ["c", "a"]  # type: ignore[union-attr]
