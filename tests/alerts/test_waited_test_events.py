"""`POST .../alerts/{id}/test?wait=true` (an extension): the answer waits for the test event's
first attempt and says how a real receiver on loopback took it (status and latency, or the
error); without `wait` it is the 202 it always was, and past the wait's bound too."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.webhooks import (
    Clock,
    Receiver,
    api,
    attempts_of,
    create_alert,
    new_store,
    receiving,
    service,
)
from tui.server.routes import alerts as alert_routes

P = "proj_alerts"


@pytest.fixture
def running(tmp_path: Path) -> Iterator[tuple[httpx.Client, Receiver]]:
    store = new_store(tmp_path / "tests.sqlite3")
    with receiving() as receiver, service(store, Clock()) as local, api(local) as client:
        yield client, receiver


def trial_path(alert: dict[str, Any]) -> str:
    return f"projects/{P}/alerts/{alert['id']}/test"


def test_a_waited_test_says_how_the_receiver_answered(
    running: tuple[httpx.Client, Receiver],
) -> None:
    client, receiver = running
    alert = create_alert(client, P, receiver)
    took = client.post(trial_path(alert), params={"wait": "true"})
    assert took.status_code == 200, took.text
    body = took.json()
    assert body["delivered"] is True and body["status_code"] == 204 and body["error"] is None
    assert isinstance(body["latency_ms"], int) and body["latency_ms"] >= 0
    assert body["webhook_id"] == receiver.received[-1].webhook_id
    assert receiver.types() == ["alert.test"]

    receiver.statuses.append(503)
    refused = client.post(trial_path(alert), params={"wait": "true"}).json()
    assert (refused["delivered"], refused["status_code"]) == (False, 503)


def test_a_waited_test_to_nobody_says_why(running: tuple[httpx.Client, Receiver]) -> None:
    client, _ = running
    alert = create_alert(client, P, None)  # loopback port 9: refused
    answer = client.post(trial_path(alert), params={"wait": "true"})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["delivered"] is False and body["status_code"] is None
    assert body["error"] == "could not connect (refused or unreachable)"


def test_without_wait_the_answer_is_the_202_it_always_was(
    running: tuple[httpx.Client, Receiver],
) -> None:
    client, receiver = running
    alert = create_alert(client, P, receiver)
    queued = client.post(trial_path(alert))
    assert queued.status_code == 202 and set(queued.json()) == {"webhook_id"}
    receiver.wait_for(1)


def test_a_repeat_with_the_same_key_sends_nothing_and_answers_the_first_outcome(
    running: tuple[httpx.Client, Receiver],
) -> None:
    client, receiver = running
    alert = create_alert(client, P, receiver)
    headers = {"Idempotency-Key": "test-once"}
    first = client.post(trial_path(alert), params={"wait": "true"}, headers=headers)
    again = client.post(trial_path(alert), params={"wait": "true"}, headers=headers)
    assert first.status_code == 200 and again.json() == first.json()
    assert len(receiver.received) == 1
    assert len(attempts_of(client, alert["id"], P)) == 1


def test_past_the_bound_the_answer_is_the_202_and_the_history_tells_later(
    running: tuple[httpx.Client, Receiver], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, receiver = running
    monkeypatch.setattr(alert_routes, "TEST_WAIT_S", 0.2)
    receiver.mode = "hang"  # held until released: the first attempt cannot end within 0.2 s
    alert = create_alert(client, P, receiver)
    answer = client.post(trial_path(alert), params={"wait": "true"})
    assert answer.status_code == 202 and set(answer.json()) == {"webhook_id"}
    receiver.release.set()


def test_waits_are_bounded_past_them_a_waited_test_answers_the_202_at_once(
    running: tuple[httpx.Client, Receiver], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Waits hold threads of the pool every synchronous route runs in: with MAX_TEST_WAITS of
    them taken, another waited test does not wait (a hung receiver would hold it 10 s)."""
    client, receiver = running
    receiver.mode = "hang"
    alert = create_alert(client, P, receiver)
    taken = [
        alert_routes._test_waits.acquire(blocking=False) for _ in range(alert_routes.MAX_TEST_WAITS)
    ]
    try:
        assert all(taken)
        answer = client.post(trial_path(alert), params={"wait": "true"}, timeout=5)
        assert answer.status_code == 202 and set(answer.json()) == {"webhook_id"}
    finally:
        for _ in taken:
            alert_routes._test_waits.release()
        receiver.release.set()
