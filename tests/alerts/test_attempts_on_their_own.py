"""Each webhook attempt goes out on its own, as soon as it is due: a receiver that hangs holds
back neither the same alert's next webhook nor another alert's, and takes at most its own share
of the worker's slots however many webhooks wait for it. Real receivers on loopback; every wait
is on a condition (what a receiver got, what the history records), never on a duration."""

from __future__ import annotations

from pathlib import Path

from tests.support.webhooks import (
    Clock,
    add_traces,
    api,
    attempts_of,
    create_alert,
    new_store,
    receiving,
    service,
    wait_until,
)
from tui.server.alerts.delivery import PER_HOST

P = "proj_alerts"
SECOND = 1000
# Longer than any wait here: an attempt that ends before the test releases its receiver can
# only have ended because the scheduler let it, not because it timed out.
TIMEOUT_S = 120.0
GENEROUS_S = 60.0


def test_an_alerts_next_webhook_does_not_wait_behind_its_hanging_one(tmp_path: Path) -> None:
    clock = Clock()
    store = new_store(tmp_path / "same-alert.sqlite3")
    add_traces(store, P, [(clock.now - SECOND, 5000, False, 0.0)])
    with (
        receiving(mode="hang") as stuck,
        service(store, clock, webhook_timeout_s=TIMEOUT_S) as running,
        api(running) as client,
    ):
        alert = create_alert(client, P, stuck)
        assert running.alerts.evaluate().webhooks == 1
        stuck.wait_for(1, seconds=GENEROUS_S)  # alert.firing, held by the receiver
        assert client.post(f"projects/{P}/alerts/{alert['id']}/test").status_code == 202
        # The test webhook reaches the receiver while the firing one is still held there.
        stuck.wait_for(2, seconds=GENEROUS_S)
        recorded_while_held = attempts_of(client, alert["id"])
    assert recorded_while_held == []  # neither attempt has ended: both are held at once
    assert sorted(r.event["type"] for r in stuck.received) == ["alert.firing", "alert.test"]


def test_a_hanging_receiver_takes_only_its_share_of_the_slots(tmp_path: Path) -> None:
    clock = Clock()
    store = new_store(tmp_path / "other-alert.sqlite3")
    add_traces(store, P, [(clock.now - SECOND, 5000, False, 0.0)])
    with (
        receiving(mode="hang") as stuck,
        receiving() as healthy,
        service(store, clock, webhook_timeout_s=TIMEOUT_S) as running,
        api(running) as client,
    ):
        hanging = [create_alert(client, P, stuck, name=f"hung {n}")["id"] for n in range(20)]
        assert running.alerts.evaluate().webhooks == 20
        stuck.wait_for(2, seconds=GENEROUS_S)
        # Twenty webhooks wait on a receiver that answers nothing; another alert's goes now.
        fine = create_alert(client, P, healthy, name="to the healthy one")
        assert client.post(f"projects/{P}/alerts/{fine['id']}/test").status_code == 202
        healthy.wait_for(1, seconds=GENEROUS_S)
        wait_until(lambda: len(attempts_of(client, fine["id"])) == 1, seconds=GENEROUS_S)
        held = len(stuck.received)
        recorded_while_held = [a for h in hanging for a in attempts_of(client, h)]
        delivered = attempts_of(client, fine["id"])[0]
    assert healthy.types() == ["alert.test"] and delivered["ok"]
    assert recorded_while_held == []  # every hung attempt was still being held
    assert 1 <= held <= PER_HOST  # the hanging receiver never had more than its share
