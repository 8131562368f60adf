"""`tracetui serve`'s alert flags as a user gives them: --alert-interval evaluates on its own,
--allow-private-webhooks lets a loopback receiver have its webhooks, and without it nothing
reaches the receiver; a bad interval is refused with a message."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.support.serve import run_tracetui, serving
from tests.support.webhooks import WORKSPACE_KEY, add_traces, new_store, receiving, wait_until
from tui.server.store.rows import now_ms
from tui.server.store.sqlite.store import Store

P = "proj_alerts"


def store_with_a_firing_alert(path: Path, webhook_url: str) -> tuple[Store, str, str]:
    store = new_store(path)
    add_traces(store, P, [(now_ms() - 1000, 9000, False, 0.0)])
    with store.transaction() as db:
        alert = store.insert_alert(
            db,
            project_id=P,
            name="slow",
            metric="latency_ms_1h",
            condition="gt",
            threshold=1000,
            webhook_url=webhook_url,
        )
    secret = store.alert_secret(alert.id)
    assert secret is not None
    return store, alert.id, secret.secret


def events_of(url: str, alert_id: str) -> list[dict[str, object]]:
    response = httpx.get(
        f"{url}/projects/{P}/alerts/{alert_id}/events",
        headers={"Authorization": f"Bearer {WORKSPACE_KEY}"},
    )
    assert response.status_code == 200, response.text
    data: list[dict[str, object]] = response.json()["data"]
    return data


def test_serve_evaluates_on_its_interval_and_delivers_with_the_flag(tmp_path: Path) -> None:
    with receiving() as receiver:
        _, alert_id, secret = store_with_a_firing_alert(tmp_path / "a.sqlite3", receiver.url)
        receiver.secrets[alert_id] = secret
        flags = ("--alert-interval", "0.2", "--allow-private-webhooks")
        with serving(tmp_path / "a.sqlite3", *flags) as served:
            url = served.base_url
            receiver.wait_for(1, seconds=20)
            wait_until(lambda: any(e["kind"] == "delivery" for e in events_of(url, alert_id)))
            assert served.interrupt() == 0 and "Traceback" not in served.errors()
    assert receiver.types() == ["alert.firing"]


def test_serve_without_the_flag_sends_nothing_to_loopback(tmp_path: Path) -> None:
    with receiving() as receiver:
        _, alert_id, _ = store_with_a_firing_alert(tmp_path / "b.sqlite3", receiver.url)
        with serving(tmp_path / "b.sqlite3", "--alert-interval", "0.2") as served:
            url = served.base_url
            wait_until(
                lambda: any(e["kind"] == "delivery" for e in events_of(url, alert_id)),
                seconds=20,
            )
            attempt = next(e for e in events_of(url, alert_id) if e["kind"] == "delivery")
            assert served.interrupt() == 0 and "Traceback" not in served.errors()
    assert receiver.received == []
    assert str(attempt["error"]).startswith("refused: 127.0.0.1, a loopback address")


@pytest.mark.parametrize("value", ["-1", "soon", "nan", "inf"])
def test_a_bad_alert_interval_is_refused_with_a_message(tmp_path: Path, value: str) -> None:
    result = run_tracetui("serve", "--db", str(tmp_path / "c.sqlite3"), "--alert-interval", value)
    assert result.returncode == 2
    assert "--alert-interval" in result.stderr and "Traceback" not in result.stderr
