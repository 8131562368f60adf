"""Counts read as English: `1 day`, `1 stored trace`, `2 days`; never `1 days`."""

from __future__ import annotations

from textual.widgets import Input, Static

from tests.support.alert_screens import project_with_traces
from tests.support.app import rendered_text, running_app, showing, wait_for
from tests.support.service import RunningService
from tui.ui.screens.dialogs import ConfirmDialog
from tui.ui.screens.edit_forms import ProjectEditForm
from tui.ui.screens.project_settings import ProjectSettingsScreen
from tui.ui.screens.projects import ProjectsScreen


async def test_a_retention_of_one_day_reads_one_day(service: RunningService) -> None:
    project_id = project_with_traces(service, [(30 * 60, 100.0)])  # one trace, 30 h old
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        app.open_project_settings(project_id, project_id)
        await wait_for(pilot, lambda: showing(app, ProjectSettingsScreen) and app.screen.project)
        await wait_for(pilot, lambda: app.screen.check_action("edit", ()) is True)
        await pilot.press("e")
        await wait_for(pilot, lambda: showing(app, ProjectEditForm))
        app.screen.query_one("#field-retention_days", Input).value = "1"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: showing(app, ConfirmDialog))
        question = " ".join(rendered_text(s) for s in app.screen.query(Static))
        assert "A retention of 1 day deletes 1 stored trace now" in question, question
        await pilot.press("y")
        await wait_for(pilot, lambda: showing(app, ProjectSettingsScreen))
        facts = app.screen.query_one("#facts", Static)
        await wait_for(pilot, lambda: "Retention: 1 day" in rendered_text(facts))
        assert "1 days" not in rendered_text(facts)
