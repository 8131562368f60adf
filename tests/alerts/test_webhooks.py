"""Signed webhooks to a real receiver on loopback, verified with the standardwebhooks package:
one event per transition, retries under the same webhook-id and their schedule, test events,
the secret shown once, deliveries that survive a restart."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from standardwebhooks import Webhook, WebhookVerificationError

from tests.support.webhooks import (
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
    wait_until,
)
from tui.server.background import forget_alert_history
from tui.server.store.sqlite.store import Store

P = "proj_alerts"
SECOND = 1000


def deliveries(client: Any, alert_id: str) -> list[dict[str, Any]]:
    """The alert's delivery attempts, oldest first."""
    return [e for e in events(client, P, alert_id) if e["kind"] == "delivery"][::-1]


def received_and_recorded(receiver: Any, client: Any, alert_id: str, count: int) -> None:
    """Wait until the receiver has `count` webhooks and the alert's history their attempts.

    The receiver has a webhook before its sender records the attempt, and attempts run side
    by side: without this wait the next episode's attempt could be recorded first."""
    receiver.wait_for(count)
    wait_until(lambda: len(deliveries(client, alert_id)) == count)


def test_each_episode_pages_once_firing_and_once_resolved_all_signed(tmp_path: Path) -> None:
    clock = Clock()
    store = new_store(tmp_path / "episodes.sqlite3")
    with receiving() as receiver, service(store, clock) as running, api(running) as client:
        alert = create_alert(client, P, receiver, name="Slow replies", threshold=1000)
        assert alert["webhook_secret"].startswith("whsec_")
        slow_ids = []
        expected = 0
        for episode in range(2):
            add_traces(store, P, [(clock.now - SECOND, 300, False, 0.0)], prefix=f"f{episode}")
            running.alerts.evaluate()  # ok (no webhook)
            clock.advance(MINUTE)
            slow_ids += add_traces(
                store, P, [(clock.now - SECOND, 9000, True, 0.0)], prefix=f"s{episode}"
            )
            for _ in range(4):  # firing, and staying firing, round after round
                running.alerts.evaluate()
                clock.advance(MINUTE)
            expected += 1
            received_and_recorded(receiver, client, alert["id"], expected)
            if episode == 0:
                # The slow trace leaves the window; a fast one is there: ok again.
                clock.advance(5 * MINUTE)
                add_traces(store, P, [(clock.now - SECOND, 200, False, 0.0)], prefix="back")
            else:
                clock.advance(10 * MINUTE)  # nothing at all: no_data ends the episode too
            running.alerts.evaluate()
            expected += 1
            received_and_recorded(receiver, client, alert["id"], expected)
            for _ in range(3):
                running.alerts.evaluate()
                clock.advance(MINUTE)
        running.alerts.wake()
        wait_until(lambda: len(deliveries(client, alert["id"])) == 4)
        attempts = deliveries(client, alert["id"])

    received = receiver.verified()  # raises unless every one verifies
    assert [e["type"] for e in received] == ["alert.firing", "alert.resolved"] * 2
    assert len({item.webhook_id for item in receiver.received}) == 4
    firing = received[0]["data"]
    assert firing["alert"] == {
        "id": alert["id"],
        "name": "Slow replies",
        "metric": "latency_ms_5m",
        "condition": "gt",
        "threshold": 1000.0,
    }
    assert firing["project"] == {"id": P, "name": "alert tests"}
    assert firing["state"] == "firing" and firing["value"] > 1000
    assert firing["window_start"] < firing["window_end"] == firing["evaluated_at"]
    worst = firing["worst_traces"][0]
    assert worst == {
        "id": slow_ids[0],
        "value": 9000.0,
        "open": f"tracetui --project {P} trace {slow_ids[0]}",
    }
    assert received[1]["data"]["state"] == "ok" and received[1]["data"]["value"] < 1000
    assert received[3]["data"]["state"] == "no_data" and received[3]["data"]["value"] is None
    assert [a["event_type"] for a in attempts] == ["alert.firing", "alert.resolved"] * 2
    assert all(a["ok"] and a["status_code"] == 204 and a["attempt"] == 1 for a in attempts)
    assert [a["webhook_id"] for a in attempts] == [r.webhook_id for r in receiver.received]


def test_a_signature_made_with_another_secret_does_not_verify(tmp_path: Path) -> None:
    """The receiver's check is real: the same event under another alert's secret fails."""
    clock = Clock()
    store = new_store(tmp_path / "forged.sqlite3")
    add_traces(store, P, [(clock.now - SECOND, 5000, False, 0.0)])
    with receiving() as receiver, service(store, clock) as running, api(running) as client:
        first = create_alert(client, P, receiver)
        second = create_alert(client, P, receiver)
        assert first["webhook_secret"] != second["webhook_secret"]
        running.alerts.evaluate()
        receiver.wait_for(2)
    item = receiver.received[0]
    mine = receiver.secrets[item.event["data"]["alert"]["id"]]
    other = next(s for s in receiver.secrets.values() if s != mine)
    Webhook(mine).verify(item.body, item.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(other).verify(item.body, item.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(mine).verify(item.body.replace(b"firing", b"resolved"), item.headers)


def test_a_503_is_retried_soon_with_the_same_webhook_id(tmp_path: Path) -> None:
    clock = Clock()
    store = new_store(tmp_path / "retry.sqlite3")
    add_traces(store, P, [(clock.now - SECOND, 5000, False, 0.0)])
    with (
        receiving(statuses=[503]) as receiver,
        service(store, clock) as running,
        api(running) as client,
    ):
        alert = create_alert(client, P, receiver)
        running.alerts.evaluate()
        receiver.wait_for(1)
        wait_until(lambda: len(deliveries(client, alert["id"])) == 1)
        first = deliveries(client, alert["id"])[0]
        pending = store.get_delivery(first["webhook_id"])
        assert pending is not None and pending.status == "pending"
        assert pending.next_attempt_at is not None
        # The first retry is due within about 10 s of the failure.
        assert 0 < pending.next_attempt_at - clock.now <= 10 * SECOND
        deliver_due(running)  # not due yet on the service's clock: nothing is sent
        assert len(receiver.received) == 1
        clock.advance(10 * SECOND)
        running.alerts.wake()
        receiver.wait_for(2)
        wait_until(lambda: len(deliveries(client, alert["id"])) == 2)
        attempts = deliveries(client, alert["id"])
    assert [r.webhook_id for r in receiver.received] == [first["webhook_id"]] * 2
    assert receiver.types() == ["alert.firing", "alert.firing"]  # both verify
    assert receiver.received[0].body == receiver.received[1].body
    assert [(a["attempt"], a["status_code"], a["ok"]) for a in attempts] == [
        (1, 503, False),
        (2, 204, True),
    ]
    assert attempts[0]["error"] is None and isinstance(attempts[0]["duration_ms"], int)
    assert store.get_delivery(first["webhook_id"]).status == "delivered"  # type: ignore[union-attr]


def test_retries_back_off_and_stop_after_five_attempts_in_about_ten_minutes(
    tmp_path: Path,
) -> None:
    clock = Clock()
    store = new_store(tmp_path / "backoff.sqlite3")
    add_traces(store, P, [(clock.now - SECOND, 5000, False, 0.0)])
    with (
        receiving(statuses=[500] * 20) as receiver,
        service(store, clock) as running,
        api(running) as client,
    ):
        alert = create_alert(client, P, receiver)
        running.alerts.evaluate()
        start = clock.now
        delays = []
        for attempt in range(1, 6):
            receiver.wait_for(attempt)
            wait_until(lambda n=attempt: len(deliveries(client, alert["id"])) == n)
            row = store.get_delivery(receiver.received[0].webhook_id)
            assert row is not None
            if row.next_attempt_at is None:
                break
            delays.append(row.next_attempt_at - clock.now)
            clock.now = row.next_attempt_at
            running.alerts.wake()
        clock.advance(3_600_000)  # an hour on: nothing more
        deliver_due(running)
        attempts = deliveries(client, alert["id"])
    assert len(attempts) == 5 and [a["attempt"] for a in attempts] == [1, 2, 3, 4, 5]
    assert len(receiver.received) == 5
    assert {r.webhook_id for r in receiver.received} == {attempts[0]["webhook_id"]}
    assert row.status == "failed"
    assert delays[0] <= 10 * SECOND and delays == sorted(delays) and len(delays) == 4
    total = clock.now - 3_600_000 - start
    assert 9 * MINUTE <= total <= 13 * MINUTE


def test_a_test_event_is_sent_once_per_idempotency_key(tmp_path: Path) -> None:
    clock = Clock()
    store = new_store(tmp_path / "test-event.sqlite3")
    with receiving() as receiver, service(store, clock) as running, api(running) as client:
        alert = create_alert(client, P, receiver, metric="cost_usd_1h")
        other = create_alert(client, P, receiver)
        path = f"projects/{P}/alerts/{alert['id']}/test"
        sent = client.post(path, headers={"Idempotency-Key": "k1"})
        assert sent.status_code == 202 and sent.json()["webhook_id"].startswith("msg_")
        again = client.post(path, headers={"Idempotency-Key": "k1"})
        assert again.status_code == 202 and again.json() == sent.json()
        assert again.headers["Idempotent-Replayed"] == "true"
        clash = client.post(
            f"projects/{P}/alerts/{other['id']}/test", headers={"Idempotency-Key": "k1"}
        )
        assert clash.status_code == 409
        receiver.wait_for(1)
        wait_until(lambda: len(deliveries(client, alert["id"])) == 1)
        plain = client.post(path)  # no key: a new test event
        assert plain.status_code == 202 and plain.json() != sent.json()
        receiver.wait_for(2)
    events_sent = receiver.verified()
    assert [e["type"] for e in events_sent] == ["alert.test"] * 2
    assert receiver.received[0].webhook_id == sent.json()["webhook_id"]
    data = events_sent[0]["data"]
    assert data["alert"]["id"] == alert["id"] and data["worst_traces"] == []
    assert data["state"] == "no_data" and data["value"] is None


def test_the_secret_is_in_the_create_answer_only(tmp_path: Path) -> None:
    clock = Clock()
    store = new_store(tmp_path / "secret.sqlite3")
    with service(store, clock) as running, api(running) as client:
        body = {
            "name": "n",
            "metric": "cost_usd_1h",
            "condition": "gt",
            "threshold": 1,
            "webhook_url": "https://hooks.example.com/x",
        }
        created = client.post(f"projects/{P}/alerts", json=body, headers={"Idempotency-Key": "a"})
        secret = created.json()["webhook_secret"]
        # A replay of that same create (an answer lost on the way) gives it again...
        replay = client.post(f"projects/{P}/alerts", json=body, headers={"Idempotency-Key": "a"})
        assert replay.json()["webhook_secret"] == secret
        # ...and nothing else ever does.
        alert_id = created.json()["id"]
        for path in (f"projects/{P}/alerts", f"projects/{P}/alerts/{alert_id}"):
            assert (
                secret not in client.get(path).text
                and "webhook_secret" not in client.get(path).text
            )
    stored = store.alert_secret(alert_id)
    assert stored is not None and stored.secret == secret
    assert secret not in repr(stored)  # a row in a log line or traceback hides it


def closed_port() -> int:
    """A loopback port nothing listens on (connections to it are refused)."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port: int = probe.getsockname()[1]
    probe.close()
    return port


def test_deliveries_survive_a_restart_under_the_same_webhook_id(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "restart.sqlite3"
    store = new_store(path)
    add_traces(store, P, [(clock.now - SECOND, 5000, False, 0.0)])
    dead = f"http://127.0.0.1:{closed_port()}/hooks"
    with service(store, clock) as running, api(running) as client:
        alert = create_alert(client, P, webhook_url=dead)
        running.alerts.evaluate()
        wait_until(lambda: len(deliveries(client, alert["id"])) == 1)
        refused = deliveries(client, alert["id"])[0]
    assert refused["error"].startswith("could not connect") and refused["status_code"] is None

    # A new process over the same file, the receiver up now, the retry due.
    reopened = Store(path)
    clock.advance(10 * SECOND)
    with receiving() as receiver:
        receiver.secrets[alert["id"]] = alert["webhook_secret"]
        reopened.set_webhook_url(alert["id"], receiver.url)
        with service(reopened, clock) as running, api(running) as client:
            receiver.wait_for(1)
            wait_until(lambda: len(deliveries(client, alert["id"])) == 2)
            attempts = deliveries(client, alert["id"])
    assert receiver.received[0].webhook_id == refused["webhook_id"]
    assert receiver.types() == ["alert.firing"]
    assert [(a["attempt"], a["ok"]) for a in attempts] == [(1, False), (2, True)]


def test_a_round_makes_webhooks_even_with_no_worker_running(tmp_path: Path) -> None:
    """Evaluation only writes the outbox: webhooks made while nothing sends go out at the
    next start."""
    clock = Clock()
    path = tmp_path / "outbox.sqlite3"
    store = new_store(path)
    add_traces(store, P, [(clock.now - SECOND, 5000, False, 0.0)])
    with receiving() as receiver:
        with service(store, clock) as running, api(running) as client:
            create_alert(client, P, receiver)
        # The service is down; evaluate with its evaluator all the same (as a round that
        # committed just before a crash).
        running.alerts.evaluate()
        assert len(store.due_deliveries(clock.now, 10)) == 1
        assert receiver.received == []
        with service(Store(path), clock):
            receiver.wait_for(1)
    assert receiver.types() == ["alert.firing"]


def test_history_and_finished_webhooks_are_forgotten_in_time(tmp_path: Path) -> None:
    clock = Clock()
    store = new_store(tmp_path / "forget.sqlite3")
    add_traces(store, P, [(clock.now - SECOND, 5000, False, 0.0)])
    day = 86_400_000
    forget = forget_alert_history(store, clock)
    with receiving() as receiver, service(store, clock) as running, api(running) as client:
        alert = create_alert(client, P, receiver)
        running.alerts.evaluate()
        receiver.wait_for(1)
        wait_until(lambda: len(deliveries(client, alert["id"])) == 1)
        kept = events(client, P, alert["id"])
        assert len(kept) == 2 and store.count("webhook_deliveries") == 1
        clock.advance(6 * day)
        forget.round()
        assert store.count("webhook_deliveries") == 1
        clock.advance(2 * day)  # a week after it was made, the delivered webhook goes...
        forget.round()
        assert store.count("webhook_deliveries") == 0
        assert events(client, P, alert["id"]) == kept  # ...its history stays 90 days
        clock.advance(83 * day)
        forget.round()
        assert events(client, P, alert["id"]) == []
