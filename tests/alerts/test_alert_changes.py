"""Alerts changed through the API, against a real receiver on loopback: a paused alert sends
nothing while its condition holds (and pages once resumed), a muted one records its changes
but sends nothing before the mute ends, a rotated secret signs alongside the previous one for
the grace period (each verified with the standardwebhooks package) and alone after it, a
deleted alert takes its history and pending webhooks, and a PATCH is validated as a create."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from standardwebhooks import Webhook, WebhookVerificationError

from tests.support.webhooks import (
    HOUR,
    MINUTE,
    Clock,
    add_traces,
    api,
    create_alert,
    deliver_due,
    events,
    new_store,
    receiving,
    service,
)
from tui.server.http.schemas import iso_ms

P = "proj_alerts"
SECOND = 1000


def slow_traffic(store: Any, clock: Clock, prefix: str) -> None:
    """A slow errored trace just now: a latency alert over 1000 ms breaches."""
    add_traces(store, P, [(clock.now - SECOND, 9000, True, 0.0)], prefix=prefix)


def state_changes(client: Any, alert_id: str) -> list[tuple[str, str]]:
    return [(e["from"], e["to"]) for e in events(client, P, alert_id)[::-1] if e["kind"] == "state"]


def test_a_paused_alert_sends_nothing_while_its_condition_holds(tmp_path: Path) -> None:
    clock = Clock()
    store = new_store(tmp_path / "paused.sqlite3")
    with receiving() as receiver, service(store, clock) as running, api(running) as client:
        alert = create_alert(client, P, receiver, threshold=1000)
        path = f"projects/{P}/alerts/{alert['id']}"
        paused = client.patch(path, json={"paused": True})
        assert paused.status_code == 200 and paused.json()["paused"] is True
        for round_ in range(4):
            slow_traffic(store, clock, f"p{round_}")
            running.alerts.evaluate()
            clock.advance(MINUTE)
        deliver_due(running)
        assert receiver.received == []
        shown = client.get(path).json()
        assert shown["state"] == "no_data" and shown["paused"] is True  # never evaluated
        assert state_changes(client, alert["id"]) == []

        resumed = client.patch(path, json={"paused": False})
        assert resumed.json()["paused"] is False
        slow_traffic(store, clock, "resumed")
        running.alerts.evaluate()
        receiver.wait_for(1)
    assert receiver.types() == ["alert.firing"]


def test_a_muted_alert_records_its_changes_but_sends_nothing_until_the_mute_ends(
    tmp_path: Path,
) -> None:
    clock = Clock()
    store = new_store(tmp_path / "muted.sqlite3")
    with receiving() as receiver, service(store, clock) as running, api(running) as client:
        alert = create_alert(client, P, receiver, threshold=1000)
        path = f"projects/{P}/alerts/{alert['id']}"
        until = clock.now + HOUR
        muted = client.patch(path, json={"muted_until": iso_ms(until)})
        assert muted.status_code == 200 and muted.json()["muted_until"] == iso_ms(until)
        slow_traffic(store, clock, "m")
        running.alerts.evaluate()
        deliver_due(running)
        assert client.get(path).json()["state"] == "firing"
        assert state_changes(client, alert["id"]) == [("no_data", "firing")]
        assert receiver.received == []

        clock.advance(HOUR)  # the mute is over; the traffic stops: resolved, and sent
        running.alerts.evaluate()
        receiver.wait_for(1)
        assert state_changes(client, alert["id"])[-1] == ("firing", "no_data")

        unmuted = client.patch(path, json={"muted_until": None})
        assert unmuted.json()["muted_until"] is None
    assert receiver.types() == ["alert.resolved"]


def test_during_the_grace_period_each_webhook_verifies_with_either_secret(
    tmp_path: Path,
) -> None:
    clock = Clock()
    store = new_store(tmp_path / "rotated.sqlite3")
    with receiving() as receiver, service(store, clock) as running, api(running) as client:
        alert = create_alert(client, P, receiver)
        old = alert["webhook_secret"]
        path = f"projects/{P}/alerts/{alert['id']}"
        rotated = client.post(f"{path}/rotate-secret")
        assert rotated.status_code == 200, rotated.text
        new = rotated.json()["secret"]
        assert new.startswith("whsec_") and new != old
        assert rotated.json()["previous_valid_until"] == iso_ms(clock.now + 24 * HOUR)
        assert new not in client.get(path).text  # shown in that answer only

        assert client.post(f"{path}/test").status_code == 202
        deliver_due(running)
        [during] = receiver.wait_for(1)
        for secret in (new, old):
            assert Webhook(secret).verify(during.body, during.headers)["type"] == "alert.test"

        clock.advance(24 * HOUR)
        assert client.post(f"{path}/test").status_code == 202
        deliver_due(running)
        after = receiver.wait_for(2)[1]
        assert Webhook(new).verify(after.body, after.headers)["type"] == "alert.test"
        with pytest.raises(WebhookVerificationError):
            Webhook(old).verify(after.body, after.headers)
        assert len(after.headers["webhook-signature"].split()) == 1


def test_a_deleted_alert_takes_its_history_and_pending_webhooks(tmp_path: Path) -> None:
    clock = Clock()
    store = new_store(tmp_path / "deleted.sqlite3")
    with (
        receiving(statuses=[500]) as receiver,
        service(store, clock) as running,
        api(running) as client,
    ):
        alert = create_alert(client, P, receiver)
        path = f"projects/{P}/alerts/{alert['id']}"
        webhook_id = client.post(f"{path}/test").json()["webhook_id"]
        deliver_due(running)
        receiver.wait_for(1)  # refused with a 500: pending, with a retry due later
        pending = store.get_delivery(webhook_id)
        assert pending is not None and pending.status == "pending"
        assert events(client, P, alert["id"])

        gone = client.delete(path)
        assert gone.status_code == 204

        assert store.get_delivery(webhook_id) is None
        assert store.list_alert_events(alert["id"], 10)[0] == []
        assert store.alert_secret(alert["id"]) is None
        assert client.get(path).status_code == 404
        assert client.delete(path).status_code == 404
        assert alert["id"] not in [
            a["id"] for a in client.get(f"projects/{P}/alerts").json()["data"]
        ]
        clock.advance(HOUR)
        deliver_due(running)
    assert len(receiver.received) == 1  # the retry was never made


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"metric": "latency_ms_7x"}, "metric"),
        ({"condition": "above"}, "condition"),
        ({"threshold": "high"}, "threshold"),
        ({"name": ""}, "name"),
        ({"name": None}, "body"),
        ({"paused": "yes"}, "paused"),
        ({"muted_until": "tomorrow"}, "muted_until"),
        ({"webhook_url": "ftp://example.com/x"}, "webhook_url"),
        ({"webhook_url": "http://10.0.0.1/hook"}, "webhook_url"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_a_patch_is_validated_as_a_create(tmp_path: Path, body: dict[str, Any], field: str) -> None:
    store = new_store(tmp_path / "validated.sqlite3")
    clock = Clock()
    with service(store, clock, allow_private_webhooks=False) as running, api(running) as client:
        alert = create_alert(client, P, webhook_url="https://93.184.215.14/x")  # no look-up
        path = f"projects/{P}/alerts/{alert['id']}"
        refused = client.patch(path, json=body)
        assert refused.status_code == 422, (body, refused.text)
        fields = [d["field"] for d in refused.json()["error"]["details"]]
        assert any(f.endswith(field) or f == field for f in fields), fields
        assert client.get(path).json() | {"webhook_secret": None} == alert | {
            "webhook_secret": None
        }
