"""On-call's alert actions and a project's settings, driven with Pilot at 80x24 against a
MockTransport server that answers the management contract, and against one that speaks only
the spec (whose screens have no such keys, and say so)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from textual.widgets import Footer, Static

from tests.client.fake_management import NEW_KEY, NEW_SECRET, FakeServer
from tests.support.app import found, rendered_text, settled, showing, type_into, wait_for
from tests.support.helpers import mock_client
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.alerts import AlertsScreen
from tui.ui.screens.dialogs import ConfirmDialog, MuteDialog, SecretDialog, TypeNameDialog
from tui.ui.screens.edit_forms import AlertEditForm, KeyLabelForm, ProjectEditForm
from tui.ui.screens.project_settings import ProjectSettingsScreen
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.widgets.table import Table


@asynccontextmanager
async def app_on(server: FakeServer) -> AsyncIterator[tuple[TraceTuiApp, Any]]:
    async with mock_client(server) as client:
        app = TraceTuiApp(client, StartAt())
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(
                pilot, lambda: showing(app, ProjectsScreen) and bool(app.screen.projects)
            )
            yield app, pilot


def footer_text(app: TraceTuiApp) -> str:
    return " ".join(str(key.render()) for key in app.screen.query_one(Footer).query("FooterKey"))


def rows(app: TraceTuiApp) -> list[tuple[Any, ...]]:
    """The rows of the table of the screen in view (none while a dialog is on top)."""
    tables = app.screen.query(Table)
    if not tables:
        return [("",) * 6]
    return [tuple(str(c) for c in cells) for cells, _ in tables.first()._rows]


async def open_alerts(app: TraceTuiApp, pilot: Any) -> AlertsScreen:
    await pilot.press("a")
    await wait_for(pilot, lambda: showing(app, AlertsScreen) and bool(app.screen.alerts))
    assert isinstance(app.screen, AlertsScreen)
    return app.screen


async def test_pause_mute_and_delete_show_at_once_in_the_list() -> None:
    server = FakeServer()
    async with app_on(server) as (app, pilot):
        await open_alerts(app, pilot)
        await wait_for(pilot, lambda: "Pause" in footer_text(app) and "Mute" in footer_text(app))
        footer = app.screen.query_one(Footer)
        assert all(key.region.right <= 80 for key in footer.query("FooterKey"))

        await pilot.press("p")
        await wait_for(pilot, lambda: "paused" in rows(app)[0][0], what="paused in the row")
        assert server.alerts["al_1"]["paused"] is True
        # The key says what it does now: a paused alert is resumed.
        await wait_for(pilot, lambda: "p Resume" in footer_text(app), what="p Resume")
        assert "Pause" not in footer_text(app)
        await pilot.press("p")
        await wait_for(pilot, lambda: "paused" not in rows(app)[0][0], what="resumed")
        assert server.alerts["al_1"]["paused"] is False
        await wait_for(pilot, lambda: "p Pause" in footer_text(app), what="p Pause again")

        await pilot.press("m")
        await wait_for(pilot, lambda: showing(app, MuteDialog))
        await pilot.press("8")
        await wait_for(pilot, lambda: showing(app, AlertsScreen))
        await wait_for(pilot, lambda: "muted to" in rows(app)[0][1], what="muted in the row")
        assert server.alerts["al_1"]["muted_until"]

        await pilot.press("d")
        await wait_for(pilot, lambda: showing(app, ConfirmDialog))
        await pilot.press("n")  # not now: nothing is sent
        await wait_for(pilot, lambda: showing(app, AlertsScreen))
        assert "al_1" in server.alerts
        await pilot.press("d")
        await wait_for(pilot, lambda: showing(app, ConfirmDialog))
        await pilot.press("y")
        await wait_for(pilot, lambda: showing(app, AlertsScreen) and not app.screen.alerts)
        assert "al_1" not in server.alerts and rows(app) == []


async def test_edit_keeps_what_was_typed_when_the_server_refuses_it() -> None:
    server = FakeServer()
    async with app_on(server) as (app, pilot):
        await open_alerts(app, pilot)
        await wait_for(pilot, lambda: app.screen.check_action("edit_alert", ()) is True)
        await pilot.press("e")
        await wait_for(pilot, lambda: showing(app, AlertEditForm))
        form = app.screen
        assert form.values()["threshold"] == "2500"  # filled in
        form.query_one("#field-name").value = "Slow replies!"
        form.query_one("#field-threshold").value = "3000"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: showing(app, AlertsScreen))
        await wait_for(pilot, lambda: "Slow replies!" in rows(app)[0][1], what="the new name")
        assert server.alerts["al_1"]["threshold"] == 3000
        patch = [r for r in server.requests if r.method == "PATCH"][-1]
        assert b"metric" not in patch.content  # only what changed is sent

        await pilot.press("e")
        await wait_for(pilot, lambda: showing(app, AlertEditForm))
        form = app.screen
        form.query_one("#field-threshold").value = "4000"
        server.fail_next = FakeServer.refusal("threshold", "too high for this metric")
        await pilot.press("ctrl+s")
        await wait_for(
            pilot,
            lambda: "too high" in rendered_text(form.query_one("#error-threshold", Static)),
        )
        assert showing(app, AlertEditForm) and form.values()["threshold"] == "4000"


async def test_a_new_secret_is_shown_once_with_a_copy_key() -> None:
    server = FakeServer()
    async with app_on(server) as (app, pilot):
        await open_alerts(app, pilot)
        await wait_for(pilot, lambda: app.screen.check_action("rotate_secret", ()) is True)
        copied: list[str] = []
        app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
        await pilot.press("s")
        await wait_for(pilot, lambda: showing(app, ConfirmDialog))
        await pilot.press("y")
        await wait_for(pilot, lambda: showing(app, SecretDialog))
        dialog = app.screen
        assert NEW_SECRET in rendered_text(dialog.query_one("#secret", Static))
        assert "verify" in " ".join(rendered_text(s) for s in dialog.query(Static))
        await pilot.press("c")
        assert copied == [NEW_SECRET]
        await pilot.press("escape")
        await wait_for(pilot, lambda: showing(app, AlertsScreen))
        assert all(NEW_SECRET not in entry.url + (entry.error or "") for entry in app.client.log)


async def test_a_spec_only_server_has_no_dead_keys() -> None:
    server = FakeServer(offered=False)
    async with app_on(server) as (app, pilot):
        await open_alerts(app, pilot)
        await settled(pilot)
        assert "Pause" not in footer_text(app) and "Mute" not in footer_text(app)
        await pilot.press("p", "m", "d", "e", "s")
        await settled(pilot)
        assert showing(app, AlertsScreen)
        assert [r.method for r in server.requests if r.method != "GET"] == []

        await pilot.press("escape")
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        await pilot.press("s")
        await wait_for(pilot, lambda: showing(app, ProjectSettingsScreen))
        await wait_for(
            pilot,
            lambda: "does not offer" in rendered_text(app.screen.query_one("#keys-title", Static)),
        )
        assert "New key" not in footer_text(app) and "Delete" not in footer_text(app)


async def test_settings_make_a_key_shown_once_and_revoke_one() -> None:
    server = FakeServer()
    async with app_on(server) as (app, pilot):
        await pilot.press("s")
        await wait_for(pilot, lambda: showing(app, ProjectSettingsScreen))
        await wait_for(pilot, lambda: [r[0] for r in rows(app)] == ["ci"], what="the key list")
        assert "New key" in footer_text(app)
        copied: list[str] = []
        app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
        await pilot.press("n")
        await wait_for(pilot, lambda: showing(app, KeyLabelForm))
        await type_into(pilot, "#field-label", *"laptop", "enter")
        await wait_for(pilot, lambda: showing(app, SecretDialog))
        dialog = app.screen
        assert NEW_KEY in rendered_text(dialog.query_one("#secret", Static))
        lines = rendered_text(dialog.query_one("#lines", Static))
        assert "export OTEL_EXPORTER_OTLP_ENDPOINT=https://traces.example.com" in lines
        assert f"Authorization=Bearer {NEW_KEY}" in lines
        await pilot.press("c", "l")
        assert copied[0] == NEW_KEY and copied[1].count("export ") == 2
        await pilot.press("enter")
        await wait_for(pilot, lambda: showing(app, ProjectSettingsScreen))
        assert [r[0] for r in rows(app)] == ["ci", "laptop"]  # at once
        assert NEW_KEY not in " ".join(" ".join(r) for r in rows(app))

        await pilot.press("d")  # the cursor is on "ci"
        await wait_for(pilot, lambda: showing(app, ConfirmDialog))
        await pilot.press("y")
        await wait_for(pilot, lambda: [r[0] for r in rows(app)] == ["laptop"])
        assert "key_1" not in server.keys


async def test_a_shorter_retention_says_what_it_deletes_before_it_is_saved() -> None:
    server = FakeServer()
    async with app_on(server) as (app, pilot):
        await pilot.press("s")
        await wait_for(pilot, lambda: showing(app, ProjectSettingsScreen) and app.screen.project)
        await wait_for(pilot, lambda: app.screen.check_action("edit", ()) is True)
        await pilot.press("e")
        await wait_for(pilot, lambda: showing(app, ProjectEditForm))
        app.screen.query_one("#field-retention_days").value = "7"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: showing(app, ConfirmDialog))
        question = " ".join(rendered_text(s) for s in app.screen.query(Static))
        assert "deletes 7 stored traces" in question
        assert server.projects["proj_a"]["retention_days"] == 30  # a dry run only so far
        await pilot.press("y")
        await wait_for(pilot, lambda: showing(app, ProjectSettingsScreen))
        await wait_for(
            pilot, lambda: "7 days" in rendered_text(app.screen.query_one("#facts", Static))
        )
        assert server.projects["proj_a"]["retention_days"] == 7


async def test_a_project_is_deleted_only_after_its_name_is_typed() -> None:
    server = FakeServer()
    async with app_on(server) as (app, pilot):
        await pilot.press("s")
        await wait_for(pilot, lambda: showing(app, ProjectSettingsScreen) and app.screen.project)
        await wait_for(pilot, lambda: app.screen.check_action("delete_project", ()) is True)
        await pilot.press("x")
        await wait_for(pilot, lambda: showing(app, TypeNameDialog))
        await type_into(pilot, "#typed", *"support", "enter")
        await wait_for(
            pilot, lambda: "not its name" in rendered_text(app.screen.query_one("#typed-error"))
        )
        assert "proj_a" in server.projects
        await pilot.press(*"-bot", "enter")
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        await wait_for(pilot, lambda: not app.screen.projects, what="the list without it")
        assert "proj_a" not in server.projects
        assert found(app, "#header") is not None
