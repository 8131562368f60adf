"""Driving the app in tests: the app with Pilot over the local service, waiting on what the
screen shows, typing only into the focused field, clicking only what is in sight, and reading
back what widgets render as plain text.

Every wait is on a condition against the wall clock with a generous deadline: a wait ends as
soon as its condition holds, so the deadline costs nothing when the test passes, and a loaded
machine (tests in parallel, 2 cores) slows a test down without failing it."""

from __future__ import annotations

import io
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
from pydantic import SecretStr
from rich.console import Console
from textual.css.query import NoMatches
from textual.errors import NoWidget
from textual.widget import Widget
from textual.worker import WorkerState

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


DEADLINE_SECONDS = 30.0


async def wait_for(
    pilot: Any, condition: Callable[[], bool], seconds: float = DEADLINE_SECONDS, what: str = ""
) -> None:
    """Let the app run until `condition` holds; fail once `seconds` of wall-clock time have
    passed without it (the app runs meanwhile: each look comes after a short pause)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not met within {seconds:g} s: {what or condition}")
        await pilot.pause(0.02)


def showing(app: Any, screen_type: type[Any]) -> bool:
    """Whether the screen in view is a `screen_type` and mounted: composed, its widgets
    mounted and its own on_mount run (a screen just pushed is in view before any of that)."""
    screen = app.screen
    return isinstance(screen, screen_type) and bool(screen.is_mounted)


def busy_workers(app: Any) -> list[str]:
    """The names of the app's workers that have not finished (pending or running)."""
    waiting = (WorkerState.PENDING, WorkerState.RUNNING)
    return [worker.name for worker in app.workers if worker.state in waiting]


async def settled(pilot: Any, seconds: float = DEADLINE_SECONDS) -> None:
    """Wait until every worker has finished and the screen has handled what they posted: the
    proof that nothing more is on its way (a toast, a rebuild, a request), where a test checks
    that something did not happen."""
    app = pilot.app
    await wait_for(pilot, lambda: not busy_workers(app), seconds, "every worker finished")
    await pilot.wait_for_scheduled_animations()
    await wait_for(pilot, lambda: not busy_workers(app), seconds, "every worker finished")


def found(app: Any, selector: str) -> Widget | None:
    """The widget of the screen in view that `selector` matches, or None."""
    try:
        widget: Widget = app.screen.query_one(selector)
    except NoMatches:
        return None
    return widget


def has_focus(app: Any, selector: str) -> bool:
    """Whether the widget `selector` matches on the screen in view has the focus."""
    widget = found(app, selector)
    return widget is not None and app.focused is widget


async def type_into(pilot: Any, selector: str, *keys: str) -> None:
    """Press `keys` once the widget `selector` matches has the focus (a screen gives focus
    after it is composed and mounted: keys pressed before that go elsewhere)."""
    app = pilot.app
    await wait_for(pilot, lambda: has_focus(app, selector), what=f"{selector} has the focus")
    await pilot.press(*keys)


def laid_out(screen: Any, *selectors: str) -> bool:
    """Whether a widget each of `selectors` matches is on `screen` and laid out (has a size)."""
    return all(any(w.size.area for w in screen.query(selector)) for selector in selectors)


def in_sight(app: Any, selector: str) -> bool:
    """Whether the widget `selector` matches is displayed, laid out, and the one on top at its
    own corner (so a click there lands on it)."""
    widget = found(app, selector)
    if widget is None or not widget.display or not widget.visible or not widget.region.area:
        return False
    try:
        on_top, _ = app.get_widget_at(*widget.region.offset)
    except NoWidget:
        return False
    return bool(on_top is widget)


async def click_in_sight(pilot: Any, selector: str) -> None:
    """Click the widget `selector` matches, by selector, once it is in sight; fail if the click
    lands on anything else."""
    app = pilot.app
    await wait_for(pilot, lambda: in_sight(app, selector), what=f"{selector} in sight")
    assert await pilot.click(selector), f"the click meant for {selector} landed elsewhere"


async def loaded_traces(app: TraceTuiApp, pilot: Any) -> TracesScreen:
    """Wait until a project's trace list shows rows; that screen."""
    await wait_for(pilot, lambda: showing(app, TracesScreen) and bool(app.screen.traces))
    assert isinstance(app.screen, TracesScreen)
    return app.screen


async def open_first_trace(app: TraceTuiApp, pilot: Any) -> TraceDetailScreen:
    """From a project's traces, open the newest and wait for its tree."""
    await loaded_traces(app, pilot)
    await pilot.press("enter")
    await wait_for(
        pilot,
        lambda: showing(app, TraceDetailScreen) and tree_shown(app),
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
