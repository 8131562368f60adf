"""Hostile conversations: markup with @click, OSC 52, OSC 8, CSI, C1, bidi and zero-width
characters in every place a conversation shows text (system prompt, roles, names, messages,
tool calls and results, documents, finish reasons), and a megabyte message. Nothing acts,
nothing reaches the terminal raw, nothing is wrapped whole up front, and all of it shows."""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.app import detail_lines, running_app, tree_shown, wait_for
from tests.support.chat_traces import SpanSpec, add_trace, genai, text
from tests.support.hostile import HOSTILE, MEGABYTE, RAW, forbidden_in
from tests.support.service import RunningService, start_service
from tests.support.terminal import Terminal, app_environment, wait_until_shown
from tui.server.store.rows import now_ms
from tui.ui.app import StartAt
from tui.ui.widgets.document import DocumentView

ONE_LINE_MB = "L" * 1_000_000 + HOSTILE  # a megabyte without a newline, hostile at its end
MANY_LINES_MB = ("line of a long prompt " * 4 + "\n") * 11_000 + HOSTILE


def hostile_spans() -> list[SpanSpec]:
    messages = [
        genai("user", text(HOSTILE)),
        genai(
            "assistant",
            {"type": "tool_call", "id": HOSTILE, "name": HOSTILE, "arguments": {HOSTILE: HOSTILE}},
        ),
        genai("tool", {"type": "tool_call_response", "id": HOSTILE, "response": HOSTILE}),
        {"role": HOSTILE, "name": HOSTILE, "parts": [text("```\n" + HOSTILE + "\n```")]},
        genai("user", text(MANY_LINES_MB)),
        genai("user", text(ONE_LINE_MB)),
    ]
    attributes = {
        "gen_ai.system_instructions": HOSTILE,
        "gen_ai.input.messages": json.dumps(messages),
        "gen_ai.output.messages": json.dumps(
            [genai("assistant", text("# " + HOSTILE), finish=HOSTILE)]
        ),
        "gen_ai.tool.definitions": json.dumps(
            [{"name": HOSTILE, "parameters": {HOSTILE: HOSTILE}}]
        ),
    }
    documents = {
        "retrieval.documents.0.document.id": HOSTILE,
        "retrieval.documents.0.document.score": 0.5,
        "retrieval.documents.0.document.content": HOSTILE,
        "retrieval.documents.0.document.metadata": json.dumps({HOSTILE: HOSTILE}),
        "input.value": HOSTILE,
    }
    return [
        SpanSpec("root", None, "hostile chat", "agent", 0, 900),
        SpanSpec("llm", "root", "llm call", "llm", 10, 500, "gpt-4o", (10, 5), 0.0, attributes),
        SpanSpec("docs", "root", "retrieve", "retrieval", 600, 50, attributes=documents),
    ]


def add_hostile_chat(service: RunningService) -> str:
    trace_id = f"hostile-chat-{uuid.uuid4().hex[:8]}"
    add_trace(
        service.store,
        trace_id,
        hostile_spans(),
        project_id=f"proj_hostile_chat_{uuid.uuid4().hex[:6]}",
        name="hostile chat",
        started_ms=now_ms() - 5000,
        attributes={
            "user.id": HOSTILE,
            "session.id": HOSTILE,
            "tags": [HOSTILE],
            "input": MEGABYTE,
        },
    )
    return trace_id


def drawn(view: DocumentView) -> Iterator[Any]:
    """The segments of the rows drawn now."""
    for y in range(view.size.height):
        yield from view.render_line(y)


def assert_inert(view: DocumentView) -> None:
    """No raw control character, no link and no action in what the pane draws."""
    for segment in drawn(view):
        assert not any(ch in segment.text for ch in RAW), repr(segment.text)
        style = segment.style
        assert style is None or (not style.link and not style.meta), style


async def test_a_hostile_conversation_is_shown_inert_and_whole(service: RunningService) -> None:
    trace_id = add_hostile_chat(service)
    async with running_app(service, StartAt(trace_id=trace_id), size=(120, 40)) as (app, pilot):
        await wait_for(pilot, lambda: tree_shown(app))
        await pilot.press("down")
        await pilot.pause()
        view = app.screen.query_one(DocumentView)
        # The history before the last user message starts closed: open it.
        view.move_to(
            next(i for i, line in enumerate(view.text_lines()) if "earlier messages" in line)
        )
        await pilot.press("tab", "enter")
        lines = detail_lines(app)
        # The megabytes are folded to their first rows: the whole pane is a few hundred rows.
        assert len(lines) < 300 and sum(map(len, lines)) < 60_000
        folds = [line for line in lines if "enter unfolds" in line]
        assert any(re.fullmatch(r" *… 10,9\d\d more lines · enter unfolds", line) for line in folds)
        assert "… 999,717 more characters · enter unfolds" in folds
        whole = "\n".join(lines)
        assert "[@click=app.quit]Q[/]" in whole and "␛]52;c;cHduZWQ=␇" in whole
        assert "<U+202E>evil<U+202C>" in whole and "zero<U+200B>width" in whole
        assert f"○ {HOSTILE[:20]}" in whole  # an unknown role, named as it came
        assert not any(ch in whole for ch in RAW)
        for _ in range(3):
            await pilot.press("pagedown")
            assert_inert(view)
        for y in range(0, view.size.height, 2):  # clicking what the data drew triggers nothing
            for x in (2, 12, 30):
                await pilot.click(DocumentView, offset=(x, y))
        assert app.is_running
        # Unfold the megabyte of many lines and search to its hostile end.
        view.move_to(
            next(
                i
                for i, line in enumerate(view.text_lines())
                if re.search(r"10,9\d\d more lines", line)
            )
        )
        await pilot.press("enter")
        assert len(view.text_lines()) > 11_000
        await pilot.press("slash", *"@click=app.bell", "enter")
        await pilot.pause()
        assert view.current is not None
        assert_inert(view)
        assert app.is_running and not [n for n in app._notifications if n.severity == "error"]


async def test_a_hostile_retrieval_and_its_fields(service: RunningService) -> None:
    trace_id = add_hostile_chat(service)
    async with running_app(service, StartAt(trace_id=trace_id), size=(80, 24)) as (app, pilot):
        await wait_for(pilot, lambda: tree_shown(app))
        await pilot.press("end")
        await pilot.pause()
        whole = "\n".join(detail_lines(app))
        assert "▤ document 1 · [@click=app.quit]Q[/]" in whole
        assert "? query" in whole
        await pilot.press("c", "tab", "plus")
        view = app.screen.query_one(DocumentView)
        for _ in range(6):
            assert_inert(view)
            await pilot.press("pagedown")
        summary = app.screen.query_one("#summary")
        assert app.is_running and summary.size.height <= 4  # a megabyte input: one row, cut


@pytest.fixture(scope="module")
def own_service() -> Iterator[RunningService]:
    running = start_service(Path(tempfile.mkdtemp(prefix="tracetui-hostile-chat-")) / "h.sqlite3")
    yield running
    running.service.stop()


# Each visit: the keys, and a string the screen must show afterwards.
VISITS = [
    ("j", "◆ assistant"),  # the model call: its conversation, first
    ("\t", "■ system"),  # into the pane
    ("G", "output"),  # its end: the output message
    ("g", "■ system"),
    ("/", "search this span"),
    ("click=app.bell\r", "[@click=app.quit]Q[/]"),
    ("\x1b", "Conversation"),
    ("z", "Conversation"),  # zoomed
    ("c", "attributes"),  # the fields
    ("c", "Conversation"),
    ("\x1b", "span"),  # out of the zoom: the tree again
    ("\t", "llm call"),
    ("j", "document 1"),  # the retrieval
]


def test_no_hostile_byte_reaches_the_terminal_from_a_conversation(
    own_service: RunningService,
) -> None:
    trace_id = add_hostile_chat(own_service)
    argv = [sys.executable, "-m", "tui", "trace", trace_id]
    env = app_environment(own_service)
    with Terminal(argv, env, cols=120, rows=40) as term:
        term.wait_for(b"Zoom")  # the trace screen's footer
        term.drain(quiet=1.0)
        screens = []
        for keys, shown in VISITS:
            term.send(keys)
            wait_until_shown(term, shown)
            assert term.process.poll() is None, f"the app exited after {keys!r}: data ran an action"
            screens.append(term.screen())
        output = bytes(term.output)
    assert forbidden_in(output) == []
    seen = "\n".join(screens)
    assert "<U+202E>evil" in seen and "␛]52;c;cHduZWQ=␇" in seen and "漢字テスト" in seen
    assert (
        os.environ.get("TRACETUI_API_KEY") is None or env["TRACETUI_API_KEY"].encode() not in output
    )
