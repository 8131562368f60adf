"""A project run from the app against the real local service, with Pilot at 80x24: a key made
in the settings, shown once, that OTLP ingest takes at once and refuses once revoked; an alert
paused, muted and deleted from the alerts screen; the project deleted after its name is typed."""

from __future__ import annotations

from typing import Any

from textual.widgets import Static

from tests.support.app import rendered_text, running_app, showing, type_into, wait_for
from tests.support.otlp import (
    new_project,
    new_span_id,
    new_trace_id,
    post,
    request,
    root_client,
    span,
)
from tests.support.service import RunningService
from tui.ui.app import StartAt
from tui.ui.screens.alerts import AlertsScreen
from tui.ui.screens.dialogs import ConfirmDialog, MuteDialog, SecretDialog, TypeNameDialog
from tui.ui.screens.edit_forms import KeyLabelForm
from tui.ui.screens.project_settings import ProjectSettingsScreen
from tui.ui.widgets.table import Table


def one_span(name: str) -> Any:
    return request(span(new_trace_id(), new_span_id(), name=name))


def labels(app: Any) -> list[str]:
    tables = app.screen.query(Table)
    return [str(cells[0]) for cells, _ in tables.first()._rows] if tables else []


async def test_a_key_made_in_the_app_works_at_once_and_fails_once_revoked(
    service: RunningService,
) -> None:
    project_id, _ = new_project(service, "keys-from-the-app")
    async with running_app(service, StartAt()) as (app, pilot):
        await wait_for(pilot, lambda: app.screen.is_mounted)
        app.open_project_settings(project_id, "keys-from-the-app")  # as the palette does
        await wait_for(pilot, lambda: showing(app, ProjectSettingsScreen))
        await wait_for(pilot, lambda: app.screen.check_action("new_key", ()) is True)
        await wait_for(pilot, lambda: labels(app) == ["test"], what="the project's one key")
        await pilot.press("n")
        await wait_for(pilot, lambda: showing(app, KeyLabelForm))
        await type_into(pilot, "#field-label", *"laptop", "enter")
        await wait_for(pilot, lambda: showing(app, SecretDialog))
        key = app.screen.secret.get_secret_value()
        shown = app.screen.query_one("#lines", Static)
        lines = rendered_text(shown)
        assert f"OTEL_EXPORTER_OTLP_ENDPOINT={service.base_url.removesuffix('/v1')}" in lines
        assert key in lines
        # At 80 columns each export line is one row, never wrapped (copied with the mouse, a
        # wrapped line breaks): the lines scroll sideways instead.
        pasted = app.screen.lines
        await wait_for(pilot, lambda: shown.size.height > 0)
        assert shown.size.height == len(pasted) == 2
        assert shown.size.width >= max(len(line) for line in pasted) > 76
        box = app.screen.query_one("#lines-box")
        assert box.virtual_size.width > box.scrollable_content_region.width
        with root_client(service.base_url, key) as otlp:
            assert post(otlp, one_span("from-the-app")).status_code == 200
        await pilot.press("enter")
        await wait_for(pilot, lambda: labels(app) == ["test", "laptop"])
        assert all(key not in entry.url + (entry.error or "") for entry in app.client.log)

        app.screen.query_one(Table).move_cursor(row=1)
        await pilot.press("d")
        await wait_for(pilot, lambda: showing(app, ConfirmDialog))
        await pilot.press("y")
        await wait_for(
            pilot, lambda: showing(app, ProjectSettingsScreen) and labels(app) == ["test"]
        )
        with root_client(service.base_url, key) as otlp:
            assert post(otlp, one_span("after-revoke")).status_code == 401


async def test_pause_mute_delete_an_alert_and_then_the_project(service: RunningService) -> None:
    project_id, _ = new_project(service, "on-call")
    with service.client() as api:
        created = api.post(
            f"projects/{project_id}/alerts",
            json={
                "name": "Slow replies",
                "metric": "latency_ms_5m",
                "condition": "gt",
                "threshold": 1000,
                "webhook_url": "https://hooks.example.com/x",
            },
        )
        assert created.status_code == 201, created.text
    alert_id = created.json()["id"]
    async with running_app(service, StartAt(project_id=project_id)) as (app, pilot):
        await wait_for(pilot, lambda: app.screen.is_mounted)
        app.open_alerts(project_id, "on-call")
        await wait_for(pilot, lambda: showing(app, AlertsScreen) and bool(app.screen.alerts))
        await wait_for(pilot, lambda: app.screen.check_action("pause", ()) is True)
        await pilot.press("p")
        await wait_for(pilot, lambda: bool(app.screen.alerts[0].paused), what="paused")
        with service.client() as api:
            assert api.get(f"projects/{project_id}/alerts/{alert_id}").json()["paused"] is True
        await pilot.press("m")
        await wait_for(pilot, lambda: showing(app, MuteDialog))
        await pilot.press("1")
        await wait_for(
            pilot, lambda: showing(app, AlertsScreen) and app.screen.alerts[0].muted_until
        )
        with service.client() as api:
            assert api.get(f"projects/{project_id}/alerts/{alert_id}").json()["muted_until"]
        await pilot.press("d")
        await wait_for(pilot, lambda: showing(app, ConfirmDialog))
        await pilot.press("y")
        await wait_for(pilot, lambda: showing(app, AlertsScreen) and not app.screen.alerts)
        with service.client() as api:
            assert api.get(f"projects/{project_id}/alerts/{alert_id}").status_code == 404

        await pilot.press("escape")
        app.open_project_settings(project_id, "on-call")
        await wait_for(pilot, lambda: showing(app, ProjectSettingsScreen) and app.screen.project)
        await wait_for(pilot, lambda: app.screen.check_action("delete_project", ()) is True)
        await pilot.press("x")
        await wait_for(pilot, lambda: showing(app, TypeNameDialog))
        await type_into(pilot, "#typed", *"on-call", "enter")
        await wait_for(
            pilot, lambda: not isinstance(app.screen, (TypeNameDialog, ProjectSettingsScreen))
        )
        with service.client() as api:
            ids = [p["id"] for p in api.get("projects", params={"limit": 100}).json()["data"]]
        assert project_id not in ids
