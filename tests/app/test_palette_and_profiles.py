"""The command palette and profiles: switching project from the palette, a hostile project
name shown literally there, and switching profile restarts the app on it."""

from __future__ import annotations

import uuid
from typing import Any

from textual.command import CommandList

from tests.support.app import running_app, showing, type_into, wait_for
from tests.support.service import RunningService
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.traces import TracesScreen


def offered(app: Any) -> list[str]:
    """The prompts the command palette lists now (none while it is not open)."""
    lists = app.screen.query(CommandList)
    if not lists:
        return []
    options = lists.first()
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


async def test_palette_switches_project(service: RunningService) -> None:
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: bool(app.projects))
        await pilot.press("ctrl+p")
        await type_into(pilot, "CommandInput", *"Switch project: docs-rag")
        await wait_for(pilot, lambda: any("docs-rag" in p for p in offered(app)))
        await pilot.press("enter")
        await wait_for(pilot, lambda: showing(app, TracesScreen))
        assert isinstance(app.screen, TracesScreen) and app.screen.project_id == "proj_rag"


async def test_a_hostile_project_name_in_the_palette_is_inert(service: RunningService) -> None:
    token = uuid.uuid4().hex[:6]
    hostile = f"[@click=app.quit]evil{token}[/]"
    project = f"proj_evil_{token}"
    with service.store.transaction() as db:
        service.store.insert_project(db, hostile, "[b]x[/b]\x1b[2J", 30, project_id=project)
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: any(p.id == project for p in app.projects))
        await pilot.press("ctrl+p")
        await type_into(pilot, "CommandInput", *f"Switch project: [@click=app.quit]evil{token}")
        await wait_for(pilot, lambda: any(f"evil{token}" in p for p in offered(app)))
        prompts = offered(app)
        assert any(hostile in p for p in prompts), prompts  # shown literally, not as a link
        await pilot.press("enter")
        await wait_for(pilot, lambda: showing(app, TracesScreen))
        assert app.is_running
        assert isinstance(app.screen, TracesScreen) and app.screen.project_id == project


async def test_switching_profile_restarts_on_it(service: RunningService) -> None:
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        app.switch_profile("staging")  # exits the app with the profile as its return value
    assert app.return_value == "profile:staging"
