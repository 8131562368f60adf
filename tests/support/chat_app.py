"""The app on a chat trace, and how its tests read the detail pane: what the conversation
tests and the key footer's tests share."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from tests.support.app import running_app, tree_shown, wait_for
from tests.support.chat_traces import CHAT_TRACE_ATTRIBUTES, add_trace, chat_spans
from tests.support.service import RunningService
from tui.server.store.rows import now_ms
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.trace_detail import TraceDetailScreen
from tui.ui.widgets.document import DocumentView
from tui.ui.widgets.span_tree import SpanTreeView


def new_chat_trace(service: RunningService, long_lines: int = 0, **kwargs: Any) -> str:
    trace_id = f"chat-{uuid.uuid4().hex[:10]}"
    add_trace(
        service.store,
        trace_id,
        kwargs.pop("spans", None) or chat_spans(long_lines),
        project_id=kwargs.pop("project_id", "proj_chat"),
        name="support_turn",
        started_ms=now_ms() - 60_000,
        attributes=kwargs.pop("attributes", CHAT_TRACE_ATTRIBUTES),
    )
    return trace_id


@asynccontextmanager
async def chat_trace(
    service: RunningService, size: tuple[int, int] = (80, 24), **kwargs: Any
) -> AsyncIterator[tuple[TraceTuiApp, Any, TraceDetailScreen]]:
    """The app on a new chat trace, its tree shown."""
    trace_id = new_chat_trace(service, **kwargs)
    async with running_app(service, StartAt(trace_id=trace_id), size=size) as (app, pilot):
        await wait_for(pilot, lambda: tree_shown(app))
        assert isinstance(app.screen, TraceDetailScreen)
        yield app, pilot, app.screen


def flat(text: str) -> str:
    """Text with its wrapping undone (rows joined by spaces)."""
    return " ".join(text.split())


def document(app: TraceTuiApp) -> DocumentView:
    return app.screen.query_one(DocumentView)


def on_screen(app: TraceTuiApp) -> list[str]:
    """The detail pane's rows as drawn now (only what is visible)."""
    view = document(app)
    return [view.render_line(y).text for y in range(view.size.height)]


async def select(pilot: Any, app: TraceTuiApp, name: str) -> None:
    view = app.screen.query_one(SpanTreeView)
    names = [view.trace_tree.spans[i].name for i in view.view.rows]
    view.move_to(names.index(name))
    await pilot.pause()
