"""Driving the app in tests: the app with Pilot over the local service, waiting on what the
screen shows, and reading back what widgets render as plain text."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
from pydantic import SecretStr
from rich.console import Console

from tests.support.service import RunningService
from tui.api import ApiClient
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.trace_detail import TraceDetailScreen
from tui.ui.screens.traces import TracesScreen
from tui.ui.widgets.document import DocumentView
from tui.ui.widgets.span_tree import SpanTreeView


@asynccontextmanager
async def running_app(
    service: RunningService,
    start: StartAt | None = None,
    size: tuple[int, int] = (80, 24),
    transport: httpx.AsyncBaseTransport | None = None,
) -> AsyncIterator[tuple[TraceTuiApp, Any]]:
    """The app with the workspace key against `service`, run under Pilot; (app, pilot)."""
    client = ApiClient(service.base_url, SecretStr(service.keys.workspace), transport=transport)
    async with client:
        app = TraceTuiApp(client, start)
        async with app.run_test(size=size) as pilot:
            yield app, pilot


async def wait_for(pilot: Any, condition: Callable[[], bool], seconds: float = 10) -> None:
    """Let the app run until `condition` holds; fail after `seconds`."""
    for _ in range(int(seconds / 0.05)):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError("condition not met in time")


async def loaded_traces(app: TraceTuiApp, pilot: Any) -> TracesScreen:
    """Wait until a project's trace list shows rows; that screen."""
    await wait_for(pilot, lambda: isinstance(app.screen, TracesScreen) and bool(app.screen.traces))
    assert isinstance(app.screen, TracesScreen)
    return app.screen


async def open_first_trace(app: TraceTuiApp, pilot: Any) -> TraceDetailScreen:
    """From a project's traces, open the newest and wait for its tree."""
    await loaded_traces(app, pilot)
    await pilot.press("enter")
    await wait_for(
        pilot,
        lambda: isinstance(app.screen, TraceDetailScreen) and tree_shown(app),
    )
    assert isinstance(app.screen, TraceDetailScreen)
    return app.screen


def tree_shown(app: TraceTuiApp) -> bool:
    """The screen's span tree is mounted and laid out (mounted alone, it may have no rows yet)."""
    views = app.screen.query(SpanTreeView)
    return bool(views) and views.first().size.height > 0


def rendered_text(widget: Any) -> str:
    """What a Static shows, as plain text."""
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(widget.content)
    return console.export_text()


def detail_lines(app: TraceTuiApp) -> list[str]:
    """Every row of the detail pane's document, as plain text (on screen or not)."""
    return app.screen.query_one(DocumentView).text_lines()


def tree_lines(app: TraceTuiApp) -> list[str]:
    """The span tree's rows on screen, as plain text."""
    view = app.screen.query_one(SpanTreeView)
    return [view.render_line(y).text for y in range(view.size.height)]


class Transport(httpx.AsyncBaseTransport):
    """An async handler as a client's transport, counting the requests it answers."""

    def __init__(self, handler: Any) -> None:
        self.handler = handler
        self.requests = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        response: httpx.Response = await self.handler(request)
        return response
