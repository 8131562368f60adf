"""The app's flows with Pilot, against the local service over loopback."""

from __future__ import annotations

import gc
import io
import json
import random
import threading
import uuid
import weakref
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from rich.console import Console

from tests.support.service import RunningService
from tui.api import ApiClient
from tui.api.span_table import SpanTable
from tui.demo.data import BIG_TRACE_ID, DEEP_TRACE_ID, add_bulk_traces, insert_big_traces
from tui.server.rows import SpanRow, TraceRow
from tui.server.store import now_ms
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.alerts import AlertsScreen
from tui.ui.screens.forms import AlertForm, ProjectForm
from tui.ui.screens.help import HelpScreen
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.starting import StartingScreen
from tui.ui.screens.trace_detail import TraceDetailScreen
from tui.ui.screens.traces import TracesScreen
from tui.ui.widgets.document import DocumentView
from tui.ui.widgets.span_tree import SpanTreeView
from tui.ui.widgets.trace_table import TraceTable


@pytest.fixture(scope="module")
def big_traces(service: RunningService) -> None:
    if service.store.get_trace(BIG_TRACE_ID) is None:
        with service.store.transaction() as db:
            service.store.insert_project(db, "big", None, 30, project_id="proj_big")
            insert_big_traces(service.store, db, random.Random(1), now_ms(), "proj_big")


@asynccontextmanager
async def running_app(
    service: RunningService,
    start: StartAt | None = None,
    size: tuple[int, int] = (80, 24),
    transport: httpx.AsyncBaseTransport | None = None,
) -> AsyncIterator[tuple[TraceTuiApp, Any]]:
    client = ApiClient(service.base_url, SecretStr(service.keys.workspace), transport=transport)
    async with client:
        app = TraceTuiApp(client, start)
        async with app.run_test(size=size) as pilot:
            yield app, pilot


async def wait_for(pilot: Any, condition: Callable[[], bool], seconds: float = 10) -> None:
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
    view = app.screen.query_one(SpanTreeView)
    return [view.render_line(y).text for y in range(view.size.height)]


async def test_project_to_traces_to_a_trace_with_the_keyboard(service: RunningService) -> None:
    async with running_app(service) as (app, pilot):
        await wait_for(
            pilot, lambda: isinstance(app.screen, ProjectsScreen) and bool(app.screen.projects)
        )
        await pilot.press("enter")
        traces_screen = await loaded_traces(app, pilot)
        first = traces_screen.query_one(TraceTable).selected
        assert first is not None
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, TraceDetailScreen) and app.screen.trace_tree is not None,
        )
        detail = app.screen
        assert isinstance(detail, TraceDetailScreen) and detail.trace_id == first.id
        await wait_for(pilot, lambda: tree_shown(app))
        lines = tree_lines(app)
        assert "$" in lines[0] and "▾" in lines[0]  # the root, expanded, with its cost
        await pilot.press("down", "space")  # fold a span; collapsed rows show Σ rollups
        await pilot.press("escape")
        assert app.screen is traces_screen


async def test_made_with_a_client_factory_the_first_frame_waits_for_the_client(
    service: RunningService,
) -> None:
    """As `tracetui` runs: the starting screen (the default one) shows while the client is
    made in a thread, then the projects open over it, and going into a project and back lands
    on the projects, never on the starting screen."""
    release = threading.Event()
    made: list[ApiClient] = []

    def make_client() -> ApiClient:
        release.wait(10)
        made.append(ApiClient(service.base_url, SecretStr(service.keys.workspace)))
        return made[0]

    app = TraceTuiApp(make_client, StartAt(), server_label="traces.example.com")
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause(0.2)
            assert isinstance(app.screen, StartingScreen)  # the client is not made yet
            header = rendered_text(app.screen.query_one("#header"))
            loading = rendered_text(app.screen.query_one("#loading"))
            assert "Projects · loading" in header
            assert "Connecting to traces.example.com" in loading
            release.set()
            await wait_for(
                pilot, lambda: isinstance(app.screen, ProjectsScreen) and bool(app.screen.projects)
            )
            projects = app.screen
            assert [type(s) for s in app.screen_stack] == [StartingScreen, ProjectsScreen]
            await pilot.press("enter")
            await loaded_traces(app, pilot)
            await pilot.press("escape")
            assert app.screen is projects
    finally:
        await app.close_client()
    assert made and made[0]._http.is_closed  # the app closed the client it made


async def test_paging_past_500_traces(service: RunningService) -> None:
    project = f"proj_many_{uuid.uuid4().hex[:6]}"
    with service.store.transaction() as db:
        service.store.insert_project(db, "many", None, 30, project_id=project)
    add_bulk_traces(service.store, project, 1_234, now_ms(), span=3_600_000)
    async with running_app(service, StartAt(project_id=project)) as (app, pilot):
        await wait_for(
            pilot, lambda: isinstance(app.screen, TracesScreen) and len(app.screen.traces) == 500
        )
        screen = app.screen
        assert isinstance(screen, TracesScreen)
        for _ in range(40):
            await pilot.press("end")
            await pilot.pause(0.05)
            if screen.ended and not screen.fetching:
                break
        await wait_for(pilot, lambda: screen.ended)
        ids = [t.id for t in screen.traces]
        assert len(ids) == len(set(ids)) == 1_234
        header = str(screen.query_one("#header").render())
        position = str(screen.query_one("#position").render())
        assert "all loaded" in header and "of 1,234" in position


async def test_thousands_of_listed_traces_are_held_out_of_collections_until_closed(
    service: RunningService,
) -> None:
    """A full collection would walk every loaded trace (100 ms at 50,000): from 5,000 on, the
    list holds them out (tui/core/gcpause.py), and hands them back when it closes."""
    project = f"proj_held_{uuid.uuid4().hex[:6]}"
    with service.store.transaction() as db:
        service.store.insert_project(db, "held", None, 30, project_id=project)
    add_bulk_traces(service.store, project, 5_100, now_ms(), span=3_600_000)
    async with running_app(service, StartAt(project_id=project)) as (app, pilot):
        await wait_for(pilot, lambda: isinstance(app.screen, TracesScreen) and app.screen.traces)
        screen = app.screen
        assert isinstance(screen, TracesScreen)
        await wait_for(pilot, lambda: gc.get_freeze_count() > 0)  # what start-up built
        held_at_start = gc.get_freeze_count()
        while not screen.ended:
            await wait_for(pilot, lambda: not screen.fetching)
            loaded = len(screen.traces)
            screen.load_page()
            await wait_for(pilot, lambda: screen.ended or len(screen.traces) > loaded)  # noqa: B023
        await wait_for(pilot, lambda: len(screen.traces) == 5_100)
        assert gc.get_freeze_count() > held_at_start + 5_100  # 500 were not worth it
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, TracesScreen))
        assert gc.get_freeze_count() == 0


async def test_what_start_up_built_is_held_out_of_collections_while_the_app_runs(
    service: RunningService,
) -> None:
    """Else the first full collection walks it all: some 50 ms, on the first trace list's
    first frame (tui/core/gcpause.py)."""
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: isinstance(app.screen, ProjectsScreen))
        assert gc.get_freeze_count() > 10_000  # modules, classes
    assert gc.get_freeze_count() == 0  # handed back as the app ended


async def test_filter_and_sort_keep_loaded_rows(service: RunningService) -> None:
    async with running_app(service, StartAt(project_id="proj_agent")) as (app, pilot):
        screen = await loaded_traces(app, pilot)
        loaded = len(screen.traces)
        await pilot.press("slash", *"zzz-no-such")
        table = screen.query_one(TraceTable)
        assert table.rows == [] and len(screen.traces) == loaded
        await pilot.press("escape")
        await pilot.press("slash", "ctrl+u")
        await pilot.press("escape", "s")
        durations = [t.duration_ms or 0 for t in table.rows]
        assert durations == sorted(durations, reverse=True)


async def test_the_10000_span_trace_opens_and_scrolls(
    service: RunningService, big_traces: None
) -> None:
    async with running_app(service, StartAt(trace_id=BIG_TRACE_ID), size=(160, 48)) as (app, pilot):
        await wait_for(pilot, lambda: tree_shown(app), seconds=20)
        view = app.screen.query_one(SpanTreeView)
        assert view.trace_tree.size == 12_001
        assert len(view.view.rows) == 601  # the root and its 600 steps, collapsed with rollups
        assert "Σ" in tree_lines(app)[1]
        # Span objects are made for the rows drawn (and the detail pane's span), not for all.
        spans = view.trace_tree.spans
        assert isinstance(spans, SpanTable) and 0 < spans.made <= view.size.height + 1
        await pilot.press("pagedown")
        await pilot.pause()
        assert spans.made <= 2 * view.size.height + 1
        await pilot.press("pagedown", "end", "plus")
        assert len(view.view.rows) == 12_001
        await pilot.press("end", "pageup", "minus")
        assert view.view.rows == [0]
        read = weakref.ref(spans)
        del spans
        # A trace this big is held out of garbage collections while open (tui/api/gcpause.py),
        # and handed back, spans let go of, when it closes.
        assert gc.get_freeze_count() > 12_001
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.screen.query(SpanTreeView))
        assert gc.get_freeze_count() == 0
        assert view.trace_tree.size == 0
        await pilot.pause()  # the collection that follows a big trace's closing
        assert read() is None  # nothing still holds the trace's spans


async def test_the_2500_deep_trace_opens_and_scrolls(
    service: RunningService, big_traces: None
) -> None:
    async with running_app(service, StartAt(trace_id=DEEP_TRACE_ID)) as (app, pilot):
        await wait_for(pilot, lambda: tree_shown(app), seconds=20)
        view = app.screen.query_one(SpanTreeView)
        assert view.trace_tree.max_depth == 2_499
        await pilot.press("plus", "end")
        await pilot.pause()
        assert view.position == 2_499
        assert any("2499‥" in line and "decompose" in line for line in tree_lines(app))


HOSTILE = "[@click=app.quit]x[/]"


async def test_hostile_span_names_are_shown_literally_and_trigger_nothing(
    service: RunningService,
) -> None:
    trace_id = f"hostile-{uuid.uuid4().hex[:6]}"
    t = now_ms() - 1000
    project = f"proj_{trace_id}"
    attrs = json.dumps(
        {"[b]key[/b]": "\x1b]52;c;cHduZWQ=\x07", "nested": {"x": "[@click=app.quit]y"}}
    )
    with service.store.transaction() as db:
        service.store.insert_project(db, HOSTILE, HOSTILE, 30, project_id=project)
        service.store.insert_traces(
            db,
            [TraceRow(trace_id, project, HOSTILE, t, 10, 2, 0, 0, 0.0, "error", 1, "{}")],
            [
                SpanRow(
                    trace_id, "a", None, HOSTILE, "agent", None, t, 10, 0, 0, 0.0, "ok", None, attrs
                ),
                SpanRow(
                    trace_id,
                    "b",
                    "a",
                    "clear\x1b[2Jscreen",
                    "llm",
                    "[red]m[/red]",
                    t + 1,
                    5,
                    1,
                    1,
                    0.0,
                    "error",
                    "boom \x1b[2J [@click=app.quit]q[/]",
                    "{}",
                ),
            ],
        )
    async with running_app(service, StartAt(trace_id=trace_id), size=(160, 48)) as (app, pilot):
        await wait_for(pilot, lambda: tree_shown(app))
        lines = tree_lines(app)
        assert HOSTILE in lines[0]
        assert "clear␛[2Jscreen" in lines[1] and "\x1b" not in "".join(lines)
        await pilot.press("down")
        for y in range(3, 20):
            await pilot.click(offset=(10, y))  # clicking anything triggers nothing
        detail = "\n".join(detail_lines(app))
        assert "␛[2J [@click=app.quit]q[/]" in detail
        assert app.is_running and isinstance(app.screen, TraceDetailScreen)


async def test_create_an_alert_and_see_it_listed(service: RunningService) -> None:
    name = f"Spend {uuid.uuid4().hex[:6]}"
    async with running_app(service, StartAt(project_id="proj_rag")) as (app, pilot):
        await wait_for(pilot, lambda: isinstance(app.screen, TracesScreen))
        await pilot.press("a")
        await wait_for(
            pilot, lambda: isinstance(app.screen, AlertsScreen) and bool(app.screen.alerts)
        )
        alerts = app.screen
        assert isinstance(alerts, AlertsScreen)
        before = len(alerts.alerts)
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, AlertForm))
        await pilot.press(
            *name,
            "tab",
            *"cost_usd_1h",
            "tab",
            "ctrl+u",
            *"gte",
            "tab",
            *"2.5",
            "tab",
            *"https://hooks.example.com/x",
        )
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.screen is alerts and len(alerts.alerts) == before + 1)
        assert alerts.alerts[-1].name == name and alerts.alerts[-1].threshold == 2.5
    assert sum(1 for a in service.store.list_alerts("proj_rag") if a.name == name) == 1


async def test_a_rejected_form_keeps_what_was_typed(service: RunningService) -> None:
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: isinstance(app.screen, ProjectsScreen))
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, ProjectForm))
        form = app.screen
        assert isinstance(form, ProjectForm)
        await pilot.press(*"kept-name", "tab")
        form.query_one("#field-description").value = "d" * 2001  # only the server checks this
        await pilot.press("ctrl+s")
        error = form.query_one("#error-description")
        await wait_for(pilot, lambda: "2000" in rendered_text(error))
        assert form.values()["name"] == "kept-name" and len(form.values()["description"]) == 2001
        assert app.screen is form


async def test_missing_trace_says_so(service: RunningService) -> None:
    async with running_app(service, StartAt(trace_id="no-such-trace")) as (app, pilot):
        await wait_for(
            pilot, lambda: "not found" in rendered_text(app.screen.query_one("#message"))
        )


async def test_help_lists_the_screens_keys(service: RunningService) -> None:
    async with running_app(service, StartAt(project_id="proj_rag")) as (app, pilot):
        await wait_for(pilot, lambda: isinstance(app.screen, TracesScreen))
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = rendered_text(app.screen.query_one("#keys"))
        for description in (
            "Filter",
            "Range",
            "Sort",
            "Refresh",
            "Live",
            "Alerts",
            "Errors",
            "Open",
            "Back",
        ):
            assert description in text


async def test_network_down_keeps_data_and_recovers(service: RunningService) -> None:
    down = {"now": False}
    real = httpx.AsyncHTTPTransport()

    async def handler(request: httpx.Request) -> httpx.Response:
        if down["now"]:
            raise httpx.ConnectError("network unreachable")
        response = await real.handle_async_request(request)
        await response.aread()
        return response

    transport = httpx.MockTransport(handler)
    async with running_app(service, StartAt(project_id="proj_support"), transport=transport) as (
        app,
        pilot,
    ):
        screen = await loaded_traces(app, pilot)
        loaded = len(screen.traces)
        down["now"] = True
        await pilot.press("r")
        await wait_for(pilot, lambda: app.problem is not None, seconds=30)
        assert len(screen.traces) == loaded  # what was on screen stays
        assert "ctrl+r" in str(app.problem)
        down["now"] = False
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: app.problem is None and not screen.fetching)
        assert len(screen.traces) == loaded
