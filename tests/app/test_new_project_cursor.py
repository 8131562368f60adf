"""After `n` creates a project, the cursor is on it (it stayed on the first row), so `enter`,
`a` or `s` go to the project just made. Against the local service."""

from __future__ import annotations

import uuid

from textual.widgets import Input

from tests.support.app import running_app, showing, wait_for
from tests.support.service import RunningService
from tui.ui.screens.forms import ProjectForm
from tui.ui.screens.projects import ProjectsScreen


async def test_the_cursor_goes_to_the_new_project(service: RunningService) -> None:
    name = f"zz-new-{uuid.uuid4().hex[:6]}"  # listed after the demo's projects
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, ProjectsScreen) and bool(app.projects))
        screen = app.screen
        assert isinstance(screen, ProjectsScreen)
        await pilot.press("n")
        await wait_for(pilot, lambda: showing(app, ProjectForm))
        app.screen.query_one("#field-name", Input).value = name
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.screen is screen)
        await wait_for(pilot, lambda: any(p.name == name for p in screen.projects))
        await wait_for(pilot, lambda: (screen.selected() or screen.projects[0]).name == name)
        assert screen.projects.index(screen.selected()) > 0  # type: ignore[arg-type]
