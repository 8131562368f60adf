"""The rough edges of alerts and projects a newcomer met, against the real local service with
Pilot at 80x24: the alerts list writes the sign that is true of the value and the threshold;
the detail says when it fires rather than a false comparison, gives the history's values their
units and reads a history line whole on Enter; a form's error goes once its field is fixed; a
project name another project has is refused and the form says so and keeps what was typed; the
webhook field says which hosts are sent to."""

from __future__ import annotations

import uuid

from textual.widgets import Input, Static

from tests.support.app import rendered_text, running_app, showing, type_into, wait_for
from tests.support.service import RunningService
from tui.model.metrics import compared_text
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.alert_detail import AlertDetailScreen
from tui.ui.screens.alerts import AlertsScreen
from tui.ui.screens.dialogs import ReadDialog
from tui.ui.screens.forms import AlertForm, ProjectForm
from tui.ui.screens.projects import ProjectsScreen


def test_the_sign_between_value_and_threshold_is_true_of_them() -> None:
    assert compared_text("latency_ms_5m", "gt", 1956, 8000) == "1.96 s ≤ 8 s"
    assert compared_text("latency_ms_5m", "gt", 9120, 8000) == "9.12 s > 8 s"
    # Two values that would read the same rounded read exact: never "8 s > 8 s".
    assert compared_text("latency_ms_5m", "gt", 8001, 8000) == "8,001 ms > 8,000 ms"
    assert compared_text("error_rate_pct_15m", "gte", 0, 5) == "0% < 5%"
    assert compared_text("error_rate_ratio_1h", "lt", 0.5, 0.1) == "0.5 ≥ 0.1"
    assert compared_text("cost_usd_1h", "gt", None, 2.5) == "> $2.50"


def error_shown(app: TraceTuiApp, field: str) -> str:
    error = app.screen.query_one(f"#error-{field}", Static)
    return rendered_text(error) if error.display else ""


async def test_an_alerts_history_has_units_and_reads_a_line_whole(
    service: RunningService,
) -> None:
    project_id = f"proj_{uuid.uuid4().hex[:8]}"
    with service.store.transaction() as db:
        service.store.insert_project(db, project_id, None, 30, project_id=project_id)
    with service.client() as api:
        created = api.post(
            f"projects/{project_id}/alerts",
            json={
                "name": "Errors",
                "metric": "error_rate_pct_15m",
                "condition": "gt",
                "threshold": 10,
                # A name that does not resolve: the test's attempt fails with a long reason.
                "webhook_url": "https://no-such-host.invalid/hooks/alerts",
            },
        )
        assert created.status_code == 201, created.text
        alert_id = created.json()["id"]
        assert api.post(f"projects/{project_id}/alerts/{alert_id}/test").status_code == 202
    async with running_app(service, StartAt(project_id=project_id)) as (app, pilot):
        await wait_for(pilot, lambda: app.screen.is_mounted)
        app.open_alerts(project_id, project_id)
        await wait_for(pilot, lambda: showing(app, AlertsScreen) and bool(app.screen.alerts))
        await pilot.press("enter")
        await wait_for(pilot, lambda: showing(app, AlertDetailScreen))
        detail = app.screen
        assert isinstance(detail, AlertDetailScreen)
        await wait_for(pilot, lambda: bool(detail.events), what="the test's attempt")
        facts = rendered_text(detail.query_one("#facts", Static))
        assert "fires when > 10%" in facts and "computed here" not in facts
        await pilot.press("tab")
        await pilot.press("enter")
        await wait_for(pilot, lambda: showing(app, ReadDialog))
        whole = app.screen.text()
        assert "alert.test, attempt 1" in whole and "Error: " in whole
        [event] = [e for e in detail.events if e.kind == "delivery"]
        assert event.error and event.error in whole  # whole, however long
        await pilot.press("escape")
        await wait_for(pilot, lambda: showing(app, AlertDetailScreen))


async def test_a_fixed_field_loses_its_error_and_the_webhook_field_says_what_is_sent_to(
    service: RunningService,
) -> None:
    async with running_app(service, StartAt(project_id="proj_support")) as (app, pilot):
        await wait_for(pilot, lambda: app.screen.is_mounted)
        app.open_alerts("proj_support", "support-chatbot")
        await wait_for(pilot, lambda: showing(app, AlertsScreen) and bool(app.screen.alerts))
        await pilot.press("n")
        await wait_for(pilot, lambda: showing(app, AlertForm))
        form = app.screen
        hint = " ".join(rendered_text(s) for s in form.query(".field-hint"))
        assert "example.com never receives" in hint
        placeholder = form.query_one("#field-webhook_url", Input).placeholder
        assert "example.com" not in placeholder and placeholder.startswith("e.g. https://")
        form.query_one("#field-threshold", Input).value = "abc"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "A number" in error_shown(app, "threshold"))
        assert "required" in error_shown(app, "name")
        await type_into(pilot, "#field-name", *"Slow")
        await wait_for(pilot, lambda: error_shown(app, "name") == "", what="the name's error")
        assert "A number" in error_shown(app, "threshold")  # the other field's stays
        form.query_one("#field-threshold", Input).value = "2500"
        await wait_for(pilot, lambda: error_shown(app, "threshold") == "")


async def test_a_project_name_another_project_has_is_refused_and_kept(
    service: RunningService,
) -> None:
    taken = f"taken-{uuid.uuid4().hex[:6]}"
    with service.client() as api:
        assert api.post("projects", json={"name": taken}).status_code == 201
    async with running_app(service, StartAt()) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, ProjectsScreen) and bool(app.screen.projects))
        before = len(app.screen.projects)
        await pilot.press("n")
        await wait_for(pilot, lambda: showing(app, ProjectForm))
        await type_into(pilot, "#field-name", *taken)
        await pilot.press("ctrl+s")

        def said() -> str:
            return rendered_text(app.screen.query_one("#form-error", Static))

        await wait_for(pilot, lambda: "Another project has this name" in said())
        assert "retry" not in said()
        assert showing(app, ProjectForm)
        assert app.screen.query_one("#field-name", Input).value == taken
        await type_into(pilot, "#field-name", "2")  # changed: the conflict is of the old name
        await wait_for(pilot, lambda: not said().strip(), what="the conflict's line to go")
        await pilot.press("escape")
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        assert len(app.screen.projects) == before
