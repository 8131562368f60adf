"""An emptied retention field is refused with a field error, before anything is sent, in the
edit form (where it once said "Saved" and kept the old retention) and in the new project form;
its placeholder never shows a number that an empty field does not mean. Against the local
service."""

from __future__ import annotations

import uuid

import httpx
from textual.widgets import Input, Static

from tests.support.app import rendered_text, running_app, showing, wait_for
from tests.support.service import RunningService
from tui.ui.screens.edit_forms import ProjectEditForm
from tui.ui.screens.forms import ProjectForm
from tui.ui.screens.project_settings import ProjectSettingsScreen
from tui.ui.screens.projects import ProjectsScreen


def api(service: RunningService) -> httpx.Client:
    return httpx.Client(
        base_url=service.base_url,
        headers={"Authorization": f"Bearer {service.keys.workspace}"},
        timeout=30,
    )


def error_of(form: ProjectForm, field: str) -> str:
    shown = form.query_one(f"#error-{field}", Static)
    return rendered_text(shown).strip() if shown.display else ""


async def test_emptying_the_retention_of_a_project_is_refused_and_nothing_changes(
    service: RunningService,
) -> None:
    name = f"retention-{uuid.uuid4().hex[:6]}"
    with api(service) as client:
        created = client.post("/projects", json={"name": name, "retention_days": 7})
        project_id = created.raise_for_status().json()["id"]
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        app.open_project_settings(project_id, name)
        await wait_for(pilot, lambda: showing(app, ProjectSettingsScreen) and app.screen.project)
        await wait_for(pilot, lambda: app.screen.check_action("edit", ()) is True)
        await pilot.press("e")
        await wait_for(pilot, lambda: showing(app, ProjectEditForm))
        form = app.screen
        assert isinstance(form, ProjectEditForm)
        field = form.query_one("#field-retention_days", Input)
        assert field.value == "7" and "30" not in field.placeholder
        field.value = ""
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: bool(error_of(form, "retention_days")))
        assert "1 to 365 is required" in error_of(form, "retention_days")
        assert showing(app, ProjectEditForm) and not form.submitting  # nothing was sent
        assert not any("Saved" in str(n.message) for n in app._notifications)
        field.value = "9"  # what is shown is what is saved
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: showing(app, ProjectSettingsScreen))
    with api(service) as client:
        assert client.get(f"/projects/{project_id}").json()["retention_days"] == 9


async def test_a_new_project_with_no_retention_is_refused_before_it_is_sent(
    service: RunningService,
) -> None:
    name = f"no-retention-{uuid.uuid4().hex[:6]}"
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, ProjectsScreen) and bool(app.projects))
        await pilot.press("n")
        await wait_for(pilot, lambda: showing(app, ProjectForm))
        form = app.screen
        assert isinstance(form, ProjectForm)
        form.query_one("#field-name", Input).value = name
        form.query_one("#field-retention_days", Input).value = ""
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: bool(error_of(form, "retention_days")))
        assert showing(app, ProjectForm) and form.query_one("#field-name", Input).value == name
    with api(service) as client:
        names = [p["name"] for p in client.get("/projects").json()["data"]]
    assert name not in names
