"""On-call's alert actions from the app against the real local service (one per module, with
private webhooks allowed) and a real webhook receiver on loopback, with Pilot at 80x24: an
alert edited in its create form, filled in, and the change shown at once in the list; a new
secret shown once, whose next delivery verifies (standardwebhooks) with it and with the previous
one during the grace period; a test event whose receiver's answer (status and latency, or the
error) is shown at once; an alert paused from the app that sends nothing while its condition
holds."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from standardwebhooks import Webhook

from tests.support.app import running_app, showing, wait_for
from tests.support.service import RunningService
from tests.support.webhooks import (
    WORKSPACE_KEY,
    Receiver,
    add_traces,
    api,
    create_alert,
    deliver_due,
    receiving,
    service,
)
from tui.demo.data import DemoKeys
from tui.server.store.rows import now_ms
from tui.server.store.sqlite.store import Store
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.alerts import AlertsScreen
from tui.ui.screens.dialogs import ConfirmDialog, SecretDialog
from tui.ui.screens.edit_forms import AlertEditForm
from tui.ui.widgets.table import Table


@pytest.fixture(scope="module")
def hooks() -> Iterator[Receiver]:
    with receiving() as receiver:
        yield receiver


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningService]:
    """The service on the real clock, alerts evaluated only when a test asks, webhooks to
    loopback allowed (the receiver is there)."""
    store = Store(tmp_path_factory.mktemp("alert-actions") / "service.sqlite3")
    store.add_key(WORKSPACE_KEY, None, "workspace")
    running = service(store, now_ms).start()
    yield RunningService(running, store, DemoKeys(WORKSPACE_KEY, {}))
    running.stop()


def new_project(local: RunningService) -> str:
    project_id = f"proj_{uuid.uuid4().hex[:8]}"
    with local.store.transaction() as db:
        local.store.insert_project(db, project_id, None, 30, project_id=project_id)
    return project_id


def rows(app: TraceTuiApp) -> list[list[str]]:
    tables = app.screen.query(Table)
    return [[str(c) for c in cells] for cells, _ in tables.first()._rows] if tables else []


def notes(app: TraceTuiApp) -> list[str]:
    return [str(note.message) for note in app._notifications]


async def open_alerts(app: TraceTuiApp, pilot: Any, project_id: str) -> None:
    """The project's alerts screen, its actions offered."""
    await wait_for(pilot, lambda: app.screen.is_mounted)
    app.open_alerts(project_id, project_id)
    await wait_for(pilot, lambda: showing(app, AlertsScreen) and bool(app.screen.alerts))
    await wait_for(pilot, lambda: app.screen.check_action("test_webhook", ()) is True)


async def test_an_alert_edited_in_its_form_shows_the_change_at_once(
    local: RunningService, hooks: Receiver
) -> None:
    project_id = new_project(local)
    with api(local.service) as client:
        alert = create_alert(client, project_id, hooks, name="Slow replies", threshold=2500)
    async with running_app(local, StartAt(project_id=project_id)) as (app, pilot):
        await open_alerts(app, pilot, project_id)
        await pilot.press("e")
        await wait_for(pilot, lambda: showing(app, AlertEditForm))
        form = app.screen
        assert form.values() == {  # the create form, filled in
            "name": "Slow replies",
            "metric": "latency_ms_5m",
            "condition": "gt",
            "threshold": "2500",
            "webhook_url": hooks.url,
        }
        form.query_one("#field-name").value = "Slower replies"
        form.query_one("#field-threshold").value = "4000"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: showing(app, AlertsScreen))
        await wait_for(pilot, lambda: "Slower replies" in rows(app)[0][1], what="the new name")
        assert "> 4 s" in rows(app)[0][3], rows(app)[0]
        with api(local.service) as client:
            stored = client.get(f"projects/{project_id}/alerts/{alert['id']}").json()
        assert (stored["name"], stored["threshold"]) == ("Slower replies", 4000)


async def test_a_new_secret_is_shown_once_and_signs_beside_the_previous_one(
    local: RunningService, hooks: Receiver
) -> None:
    project_id = new_project(local)
    with api(local.service) as client:
        alert = create_alert(client, project_id, hooks)
    previous = hooks.secrets[alert["id"]]
    async with running_app(local, StartAt(project_id=project_id)) as (app, pilot):
        await open_alerts(app, pilot, project_id)
        await pilot.press("s")
        await wait_for(pilot, lambda: showing(app, ConfirmDialog))
        await pilot.press("y")
        await wait_for(pilot, lambda: showing(app, SecretDialog))
        secret = app.screen.secret.get_secret_value()
        assert secret.startswith("whsec_") and secret != previous
        await pilot.press("escape")
        await wait_for(pilot, lambda: showing(app, AlertsScreen))

        before = len(hooks.received)
        await pilot.press("w")  # a delivery, signed as every one is
        await wait_for(pilot, lambda: len(hooks.received) > before, what="the test event")
        delivery = hooks.received[before]
        assert delivery.event["data"]["alert"]["id"] == alert["id"]
        assert len(delivery.headers["webhook-signature"].split()) == 2
        for key in (secret, previous):  # the grace period: either secret verifies
            verified = Webhook(key).verify(delivery.body, delivery.headers)
            assert verified["type"] == "alert.test"
        hooks.secrets[alert["id"]] = secret
        assert all(secret not in entry.url + (entry.error or "") for entry in app.client.log)


async def test_a_test_event_shows_the_receivers_answer_at_once(
    local: RunningService, hooks: Receiver
) -> None:
    project_id = new_project(local)
    with api(local.service) as client:
        create_alert(client, project_id, hooks)
    async with running_app(local, StartAt(project_id=project_id)) as (app, pilot):
        await open_alerts(app, pilot, project_id)
        await pilot.press("w")
        await wait_for(pilot, lambda: any("took the test event" in n for n in notes(app)))
        assert any("HTTP 204 in " in n and "ms" in n for n in notes(app)), notes(app)

        hooks.statuses.append(500)
        await pilot.press("w")
        await wait_for(pilot, lambda: any("refused the test event" in n for n in notes(app)))
        assert any("HTTP 500" in n for n in notes(app)), notes(app)


async def test_a_test_event_to_nobody_shows_why_it_did_not_arrive(local: RunningService) -> None:
    project_id = new_project(local)
    with api(local.service) as client:
        # Port 9 (discard) on loopback: nothing listens, the connection is refused.
        create_alert(client, project_id, None)
    async with running_app(local, StartAt(project_id=project_id)) as (app, pilot):
        await open_alerts(app, pilot, project_id)
        await pilot.press("w")
        await wait_for(pilot, lambda: any("did not arrive" in n for n in notes(app)))
        assert any("could not connect" in n for n in notes(app)), notes(app)


async def test_an_alert_paused_in_the_app_sends_nothing_while_its_condition_holds(
    local: RunningService, hooks: Receiver
) -> None:
    project_id = new_project(local)
    with api(local.service) as client:
        alert = create_alert(client, project_id, hooks, threshold=1000)
    async with running_app(local, StartAt(project_id=project_id)) as (app, pilot):
        await open_alerts(app, pilot, project_id)
        await pilot.press("p")
        await wait_for(pilot, lambda: bool(app.screen.alerts[0].paused), what="paused")
        await wait_for(pilot, lambda: "paused" in rows(app)[0][1], what="shown as paused")
        before = [r for r in hooks.received if r.event["data"]["alert"]["id"] == alert["id"]]
        for round_ in range(3):
            slow = [(now_ms() - 1000, 9000, True, 0.0)]  # far over the threshold
            add_traces(local.store, project_id, slow, prefix=f"paused{round_}")
            local.service.alerts.evaluate()
        deliver_due(local.service)
        after = [r for r in hooks.received if r.event["data"]["alert"]["id"] == alert["id"]]
        assert after == before == []
        with api(local.service) as client:
            shown = client.get(f"projects/{project_id}/alerts/{alert['id']}").json()
            history = client.get(f"projects/{project_id}/alerts/{alert['id']}/events").json()
        assert shown["paused"] is True and shown["state"] == "no_data"
        assert history["data"] == []

        await pilot.press("p")  # resumed: the condition that holds pages at once
        await wait_for(pilot, lambda: not app.screen.alerts[0].paused, what="resumed")
        local.service.alerts.evaluate()
        # The receiver is the module's: another test's retried test event may come too.
        mine = lambda: [  # noqa: E731
            r for r in hooks.received if r.event["data"]["alert"]["id"] == alert["id"]
        ]
        await wait_for(pilot, lambda: bool(mine()), what="this alert's webhook")
        assert [r.event["type"] for r in mine()] == ["alert.firing"]
