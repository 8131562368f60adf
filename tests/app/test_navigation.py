"""Moving between screens: every screen stands on the one base, projects to traces to a trace
and back with the keyboard, the first frame while the client is made, esc from a trace opened
by id, and a trace that does not exist."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import threading

from pydantic import SecretStr
from textual.screen import Screen

import tui.ui.screens
from tests.support.app import (
    loaded_traces,
    rendered_text,
    running_app,
    showing,
    tree_lines,
    tree_shown,
    wait_for,
)
from tests.support.service import RunningService
from tui.api import ApiClient
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.base import AppModal, AppScreenOf
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.starting import StartingScreen
from tui.ui.screens.trace_detail import TraceDetailScreen
from tui.ui.screens.traces import TracesScreen
from tui.ui.widgets.trace_table import TraceTable


def test_every_screen_stands_on_the_one_base() -> None:
    screens = []
    for info in pkgutil.iter_modules(tui.ui.screens.__path__):
        module = importlib.import_module(f"tui.ui.screens.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and issubclass(cls, Screen):
                screens.append(cls)
    assert len(screens) >= 10
    off_base = [c.__name__ for c in screens if not issubclass(c, (AppScreenOf, AppModal))]
    assert not off_base


async def test_project_to_traces_to_a_trace_with_the_keyboard(service: RunningService) -> None:
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, ProjectsScreen) and bool(app.screen.projects))
        await pilot.press("enter")
        traces_screen = await loaded_traces(app, pilot)
        first = traces_screen.query_one(TraceTable).selected
        assert first is not None
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: showing(app, TraceDetailScreen) and app.screen.trace_tree is not None,
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
            # The client is not made yet: the starting screen is drawn and stays.
            await wait_for(
                pilot,
                lambda: (
                    showing(app, StartingScreen)
                    and "Connecting" in rendered_text(app.screen.query_one("#loading"))
                ),
            )
            header = rendered_text(app.screen.query_one("#header"))
            loading = rendered_text(app.screen.query_one("#loading"))
            assert "Projects · loading" in header
            assert "Connecting to traces.example.com" in loading
            release.set()
            await wait_for(
                pilot, lambda: showing(app, ProjectsScreen) and bool(app.screen.projects)
            )
            projects = app.screen
            assert [type(s) for s in app.screen_stack] == [StartingScreen, ProjectsScreen]
            await pilot.press("enter")
            await loaded_traces(app, pilot)
            await pilot.press("escape")
            assert app.screen is projects
    finally:
        await app.close_client()
    assert made and made[0].transport.is_closed  # the app closed the client it made


async def test_esc_from_a_trace_opened_by_id_goes_to_its_projects_traces(
    service: RunningService,
) -> None:
    trace_id = service.store.list_traces("proj_rag", 0, 2**62, 1)[0][0].id
    async with running_app(service, StartAt(trace_id=trace_id)) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, TraceDetailScreen) and app.screen.trace)
        await pilot.press("escape")
        await wait_for(pilot, lambda: showing(app, TracesScreen))
        assert isinstance(app.screen, TracesScreen) and app.screen.project_id == "proj_rag"


async def test_missing_trace_says_so(service: RunningService) -> None:
    async with running_app(service, StartAt(trace_id="no-such-trace")) as (app, pilot):
        await wait_for(
            pilot, lambda: "not found" in rendered_text(app.screen.query_one("#message"))
        )
