"""`tracetui demo`'s alerts: pointed at the demo's own receiver, which verifies and accepts
their webhooks, and the live feed's incident makes the live alert fire and resolve within
minutes. Run on the service's clock, moved 8 s per trace the feed sends (its pace)."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.support.service import local_service
from tests.support.webhooks import Clock, wait_until
from tui.demo.data import LIVE_ALERT, point_alerts_at, populate
from tui.demo.feed import Feed, Incidents
from tui.demo.receiver import DemoReceiver
from tui.demo.run import DEMO_ALERT_INTERVAL_S
from tui.server.store.sqlite.store import Store

SECOND = 1000


def test_the_live_alert_fires_and_resolves_within_minutes_and_every_webhook_lands(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "demo.sqlite3")
    clock = Clock()
    keys = populate(store, seed=7, now=clock.now, scale=0.05, big_traces=False)

    def secret_of(alert_id: str) -> str | None:
        row = store.alert_secret(alert_id)
        return None if row is None else row.secret

    receiver = DemoReceiver(secret_of).start()
    try:
        point_alerts_at(store, receiver.url)
        point_alerts_at(store, receiver.url)  # a second start adds no second live alert
        assert sum(a.id == LIVE_ALERT["id"] for a in store.all_alerts()) == 1
        assert all(a.webhook_url.startswith(receiver.url) for a in store.all_alerts())
        with local_service(store, clock=clock, allow_private_webhooks=True) as service:
            feed = Feed(
                service.base_url.removesuffix("/v1"),
                keys.projects,
                seed=3,
                incidents=Incidents(),
                clock=clock,
            )
            states: list[tuple[int, str]] = []
            path = f"projects/proj_support/alerts/{LIVE_ALERT['id']}"
            with (
                httpx.Client(timeout=10) as sender,
                httpx.Client(
                    base_url=service.base_url + "/",
                    headers={"Authorization": f"Bearer {keys.workspace}"},
                ) as api,
            ):
                next_round = clock.now
                while clock.now - feed.started < 6 * 60 * SECOND:
                    # Both apps at the feed's pace: 4 s between traces, taking turns.
                    feed.send_one(sender)
                    clock.advance(4 * SECOND)
                    if clock.now >= next_round:
                        service.alerts.evaluate()
                        state = api.get(path).json()["state"]
                        if not states or states[-1][1] != state:
                            states.append(((clock.now - feed.started) // SECOND, state))
                        next_round += int(DEMO_ALERT_INTERVAL_S * SECOND)
                service.alerts.wake()
                history = api.get(f"{path}/events").json()["data"]
                wait_until(lambda: receiver.received["alert.resolved"] >= 1)
    finally:
        receiver.stop()

    visited = [state for _, state in states]
    assert "firing" in visited and visited.index("firing") < len(visited) - 1
    fired = next(t for t, s in states if s == "firing")
    resolved = next(t for t, s in states if t > fired and s != "firing")
    assert fired < 4 * 60 and resolved < 6 * 60, states  # seconds into the demo
    assert receiver.received["alert.firing"] >= 1 and receiver.received["alert.resolved"] >= 1
    assert receiver.rejected == 0
    assert any(e["kind"] == "state" and e["to"] == "firing" for e in history)
