"""Webhook targets that misbehave or must not be reached: private and loopback addresses
without the flag, the cloud metadata address (as a literal and behind a name), a receiver that
hangs, one that redirects, one that answers 10 MB. Each is recorded as the delivery attempt it
was; none holds up evaluation, the API or another alert's webhook.

The refused targets here are stored alerts (as a database from before targets were checked at
creation holds them): delivery checks every attempt whatever creation let through. Creation's
own 422 is tested in test_targets_at_creation.py."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from tests.support.webhooks import (
    Clock,
    add_traces,
    api,
    attempts_of,
    create_alert,
    deliver_due,
    new_store,
    receiving,
    service,
    wait_until,
)
from tui.server.alerts.signing import new_secret
from tui.server.store.alert_rows import AlertSecretRow, new_alert

P = "proj_alerts"
SECOND = 1000


def stored_alert(store: Any, url: str) -> str:
    """An alert put in the store as it is, past the API's check of its target; its id."""
    row = new_alert(P, "alert", "latency_ms_5m", "gt", 1000, url)
    store.create_once(row, None, 201, {}, also=[AlertSecretRow(row.id, new_secret())])
    return row.id


def resolver(names: dict[str, list[str]]) -> Callable[[str, int], Coroutine[Any, Any, list[str]]]:
    """A DNS stand-in: the tests never ask a real resolver (no network but loopback)."""

    async def resolve(host: str, port: int) -> list[str]:
        if host not in names:
            raise OSError("no such name")
        return names[host]

    return resolve


def test_loopback_and_private_targets_get_nothing_without_the_flag(tmp_path: Path) -> None:
    clock = Clock()
    store = new_store(tmp_path / "private.sqlite3")
    add_traces(store, P, [(clock.now - SECOND, 5000, False, 0.0)])
    names = {
        "localhost": ["127.0.0.1"],
        "intranet.acme-corp.io": ["10.1.2.3"],
        "mixed.acme-corp.io": ["93.184.215.14", "192.168.1.9"],
    }
    with (
        receiving() as receiver,
        service(store, clock, allow_private_webhooks=False, resolve=resolver(names)) as running,
        api(running) as client,
    ):
        port = receiver.url.split(":")[2].split("/")[0]
        urls = {
            "literal": receiver.url,
            "name": f"http://localhost:{port}/hooks/alerts",
            "ipv6": f"http://[::1]:{port}/hooks/alerts",
            "mapped": f"http://[::ffff:127.0.0.1]:{port}/hooks/alerts",
            "private": "http://intranet.acme-corp.io/hooks",
            "mixed": "https://mixed.acme-corp.io/hooks",
        }
        alerts = {kind: stored_alert(store, url) for kind, url in urls.items()}
        running.alerts.evaluate()
        tested = client.post(f"projects/{P}/alerts/{alerts['literal']}/test")
        assert tested.status_code == 202
        wait_until(lambda: all(attempts_of(client, a) for a in alerts.values()))
        wait_until(lambda: len(attempts_of(client, alerts["literal"])) == 2)
        clock.advance(3_600_000)  # refusals are final: no retry, ever
        deliver_due(running)
        recorded = {kind: attempts_of(client, a) for kind, a in alerts.items()}
    assert receiver.received == []
    for kind, attempts in recorded.items():
        assert len(attempts) == (2 if kind == "literal" else 1), kind
        for attempt in attempts:
            assert not attempt["ok"] and attempt["status_code"] is None
            assert attempt["error"].startswith("refused"), attempt
            assert "--allow-private-webhooks" in attempt["error"]
    assert (
        "loopback" in recorded["name"][0]["error"]
        and "localhost resolves to" in recorded["name"][0]["error"]
    )
    assert "10.1.2.3, a private address" in recorded["private"][0]["error"]
    assert "192.168.1.9" in recorded["mixed"][0]["error"]
    # Nothing about the URL beyond its host: a webhook URL's path can be a secret.
    assert all("/hooks" not in a["error"] for attempts in recorded.values() for a in attempts)
    assert {a["event_type"] for a in recorded["literal"]} == {"alert.firing", "alert.test"}


def test_the_metadata_address_is_refused_even_with_the_flag(tmp_path: Path) -> None:
    clock = Clock()
    store = new_store(tmp_path / "metadata.sqlite3")
    add_traces(store, P, [(clock.now - SECOND, 5000, False, 0.0)])
    names = {"metadata.acme-corp.io": ["169.254.169.254"], "aws6.acme-corp.io": ["fd00:ec2::254"]}
    for allow in (False, True):
        with (
            service(store, clock, allow_private_webhooks=allow, resolve=resolver(names)) as running,
            api(running) as client,
        ):
            ids = [
                stored_alert(store, url)
                for url in (
                    "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
                    "http://metadata.acme-corp.io/computeMetadata/v1/",
                    "http://aws6.acme-corp.io/latest/",
                )
            ]
            for alert_id in ids:
                assert client.post(f"projects/{P}/alerts/{alert_id}/test").status_code == 202
            wait_until(lambda ids=ids: all(attempts_of(client, a) for a in ids))
            errors = [attempts_of(client, a)[0]["error"] for a in ids]
        assert (
            "169.254.169.254" in errors[0]
            and "metadata.acme-corp.io resolves to 169.254.169.254" in errors[1]
        )
        assert all(e.startswith("refused") for e in errors), errors
        if allow:
            assert all("cloud metadata" in e for e in errors), errors


def test_a_hanging_receiver_holds_up_nothing_else(tmp_path: Path) -> None:
    clock = Clock()
    store = new_store(tmp_path / "hang.sqlite3")
    add_traces(store, P, [(clock.now - SECOND, 5000, False, 0.0)])
    with (
        receiving(mode="hang") as stuck,
        receiving() as healthy,
        service(store, clock, webhook_timeout_s=3.0) as running,
        api(running) as client,
    ):
        hanging = create_alert(client, P, stuck, name="to the hanging one")
        fine = create_alert(client, P, healthy, name="to the healthy one")
        result = running.alerts.evaluate()
        assert result.webhooks == 2
        stuck.wait_for(1)
        # While the first receiver holds its request: the other alert's webhook arrives, the
        # API answers and another round runs.
        healthy.wait_for(1)
        assert client.get(f"projects/{P}/alerts").status_code == 200
        clock.advance(60 * SECOND)
        assert running.alerts.evaluate().evaluated == 2
        assert attempts_of(client, hanging["id"]) == []  # still waiting on it
        wait_until(lambda: len(attempts_of(client, hanging["id"])) == 1)
        timed_out = attempts_of(client, hanging["id"])[0]
        assert healthy.types() == ["alert.firing"]
        assert attempts_of(client, fine["id"])[0]["ok"]
    assert timed_out["error"] == "timed out after 3 s" and not timed_out["ok"]
    assert timed_out["status_code"] is None and timed_out["duration_ms"] >= 2900
    delivery = store.get_delivery(timed_out["webhook_id"])
    assert delivery is not None and delivery.status == "pending"  # to be retried


def test_a_redirect_is_recorded_and_not_followed(tmp_path: Path) -> None:
    clock = Clock()
    store = new_store(tmp_path / "redirect.sqlite3")
    add_traces(store, P, [(clock.now - SECOND, 5000, False, 0.0)])
    with (
        receiving(mode="redirect") as receiver,
        service(store, clock) as running,
        api(running) as client,
    ):
        alert = create_alert(client, P, receiver)
        running.alerts.evaluate()
        wait_until(lambda: len(attempts_of(client, alert["id"])) == 1)
        # Recorded means the attempt is over: a redirect followed would have been requested
        # within it, before its answer was recorded.
        attempt = attempts_of(client, alert["id"])[0]
    assert [r.path for r in receiver.received] == ["/hooks/alerts"]  # not /elsewhere/
    assert attempt["status_code"] == 307 and attempt["error"] == "redirect not followed"
    assert not attempt["ok"]


def test_a_10_mb_answer_is_not_read(tmp_path: Path) -> None:
    clock = Clock()
    store = new_store(tmp_path / "huge.sqlite3")
    add_traces(store, P, [(clock.now - SECOND, 5000, False, 0.0)])
    with (
        receiving(mode="huge") as receiver,
        service(store, clock) as running,
        api(running) as client,
    ):
        alert = create_alert(client, P, receiver)
        running.alerts.evaluate()
        wait_until(lambda: len(attempts_of(client, alert["id"])) == 1)
        wait_until(lambda: receiver.huge_sent_whole is not None)
        attempt = attempts_of(client, alert["id"])[0]
    assert attempt["ok"] and attempt["status_code"] == 200
    # The service hung up after the first 64 KB: the receiver could not send the rest.
    assert receiver.huge_sent_whole is False
