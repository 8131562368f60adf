"""Alert evaluation over HTTP with the service's clock moved by the test: each measure's value
over its half-open window, conditions at their edges, no_data for empty windows, states and
their history, the alert record's new fields, and the schedule."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from tests.support.webhooks import (
    MINUTE,
    Clock,
    add_traces,
    api,
    create_alert,
    events,
    new_store,
    receiving,
    service,
    wait_until,
)
from tui.demo.data import DemoKeys, demo_keys, populate
from tui.server.store.sqlite.store import Store

P = "proj_alerts"


def test_each_measure_over_its_half_open_window(tmp_path: Path) -> None:
    clock = Clock()
    store = new_store(tmp_path / "measures.sqlite3")
    t = clock.now
    inside = [120, 340, 90, 1500, 760, 410, 2200, 55, 980, 610, 3300, 75, 430, 5000, 12]
    rows = [
        # The window's first millisecond is in it, with an error and a cost.
        (t - 5 * MINUTE, inside[0], True, 0.25),
        *((t - 5 * MINUTE + 1000 * n, d, n % 5 == 0, 0.5) for n, d in enumerate(inside[1:], 1)),
        (t - 1, 7, False, 0.125),  # the last millisecond too
        # Outside: its end (excluded), and just before its start. Huge, all errors, dear.
        (t, 999_999, True, 100.0),
        (t - 5 * MINUTE - 1, 888_888, True, 100.0),
    ]
    add_traces(store, P, rows)
    durations = [*inside, 7]
    errors = 1 + sum(n % 5 == 0 for n in range(1, len(inside)))
    cost = 0.25 + 0.5 * (len(inside) - 1) + 0.125
    with service(store, clock) as running, api(running) as client:
        made = {
            metric: create_alert(client, P, metric=metric, threshold=10**9)["id"]
            for metric in (
                "latency_ms_5m",
                "latency_s_5m",
                "error_rate_pct_5m",
                "error_rate_ratio_5m",
                "cost_usd_5m",
            )
        }
        result = running.alerts.evaluate()
        assert result.evaluated == 5 and result.webhooks == 0
        values = {
            a["metric"]: a["last_value"] for a in client.get(f"projects/{P}/alerts").json()["data"]
        }

    # The contract's p95 is numpy's "linear" method, which is R's type 7 and statistics'
    # "inclusive" method: computed here by the standard library, not by the service's code.
    p95 = statistics.quantiles(durations, n=20, method="inclusive")[-1]
    assert values["latency_ms_5m"] == pytest.approx(p95, rel=1e-12)
    assert values["latency_s_5m"] == pytest.approx(p95 / 1000, rel=1e-12)
    assert values["error_rate_ratio_5m"] == pytest.approx(errors / len(durations))
    assert values["error_rate_pct_5m"] == pytest.approx(100 * errors / len(durations))
    assert values["cost_usd_5m"] == pytest.approx(cost)
    assert set(values) == set(made)


@pytest.mark.parametrize("count", [1, 2, 3, 20, 21, 101, 1000])
def test_p95_agrees_with_the_standard_library_at_every_size(tmp_path: Path, count: int) -> None:
    clock = Clock()
    store = new_store(tmp_path / "p95.sqlite3")
    # Ties and a heavy tail, in no particular order.
    durations = [(n * 7919) % 997 + (5000 if n % 37 == 0 else 0) for n in range(count)]
    add_traces(store, P, [(clock.now - 1 - n, d, False, 0.0) for n, d in enumerate(durations)])
    with service(store, clock) as running, api(running) as client:
        alert = create_alert(client, P, metric="latency_ms_1h")
        running.alerts.evaluate()
        value = client.get(f"projects/{P}/alerts/{alert['id']}").json()["last_value"]
    expected = (
        float(durations[0])
        if count == 1
        else statistics.quantiles(durations, n=20, method="inclusive")[-1]
    )
    assert value == pytest.approx(expected, rel=1e-12)


def test_conditions_at_their_edges_and_thresholds_of_zero_and_below(tmp_path: Path) -> None:
    clock = Clock()
    store = new_store(tmp_path / "conditions.sqlite3")
    # Cost 0.75 exactly, no errors.
    add_traces(store, P, [(clock.now - MINUTE, 100, False, 0.25), (clock.now - 1, 100, False, 0.5)])
    cases = [
        ("cost_usd_5m", "gt", 0.75, "ok"),
        ("cost_usd_5m", "gte", 0.75, "firing"),
        ("cost_usd_5m", "lt", 0.75, "ok"),
        ("cost_usd_5m", "lte", 0.75, "firing"),
        ("cost_usd_5m", "gt", 0, "firing"),
        ("cost_usd_5m", "lt", -1, "ok"),
        ("cost_usd_5m", "gt", -1, "firing"),
        ("error_rate_pct_5m", "gt", 0, "ok"),
        ("error_rate_pct_5m", "lte", 0, "firing"),
        ("error_rate_ratio_5m", "lt", -0.5, "ok"),
        ("latency_ms_5m", "gte", 0, "firing"),
        ("latency_ms_5m", "lte", -100, "ok"),
    ]
    with service(store, clock) as running, api(running) as client:
        ids = [
            create_alert(client, P, metric=m, condition=c, threshold=th)["id"]
            for m, c, th, _ in cases
        ]
        running.alerts.evaluate()
        states = {a["id"]: a["state"] for a in client.get(f"projects/{P}/alerts").json()["data"]}
    assert [states[i] for i in ids] == [expected for *_, expected in cases]


def test_a_project_with_no_traces_is_no_data_and_pages_nobody(tmp_path: Path) -> None:
    clock = Clock()
    store = new_store(tmp_path / "empty.sqlite3")
    with receiving() as receiver, service(store, clock) as running, api(running) as client:
        # Conditions that any value would meet: there is no value.
        for metric, condition, threshold in (
            ("latency_ms_5m", "gte", 0),
            ("error_rate_pct_1h", "gte", 0),
            ("cost_usd_1d", "gte", -1),
            ("prompt_drift_score_1h", "gte", 0),
            ("latency_s_week", "lt", 10**9),
        ):
            create_alert(
                client, P, receiver, metric=metric, condition=condition, threshold=threshold
            )
        for _ in range(3):
            result = running.alerts.evaluate()
            assert result.evaluated == 5 and result.changes == 0 and result.webhooks == 0
            clock.advance(MINUTE)
        alerts = client.get(f"projects/{P}/alerts").json()["data"]
        assert {a["state"] for a in alerts} == {"no_data"}
        assert all(a["last_value"] is None and a["last_evaluated_at"] for a in alerts)
        assert all(a["firing_since"] is None for a in alerts)
        assert all(events(client, P, a["id"]) == [] for a in alerts)
        running.alerts.wake()
    assert receiver.received == []


def test_states_move_with_the_window_and_every_change_is_in_the_history(tmp_path: Path) -> None:
    clock = Clock()
    store = new_store(tmp_path / "states.sqlite3")
    start = clock.now
    with service(store, clock) as running, api(running) as client:
        alert = create_alert(client, P, metric="latency_ms_5m", threshold=1000)
        path = f"projects/{P}/alerts/{alert['id']}"
        assert alert["state"] == "no_data" and alert["last_evaluated_at"] is None
        assert "webhook_secret" not in client.get(path).json()

        def step(rows: list[tuple[int, int, bool, float]], minutes: int = 1) -> dict[str, object]:
            add_traces(store, P, rows, prefix=f"s{clock.now}")
            running.alerts.evaluate()
            record: dict[str, object] = client.get(path).json()
            clock.advance(minutes * MINUTE)
            return record

        fast = step([(clock.now - MINUTE, 200, False, 0.0)])
        assert fast["state"] == "ok" and fast["last_value"] == 200
        slow = step([(clock.now - 1000, 5000, False, 0.0)] * 1)
        assert slow["state"] == "firing" and slow["firing_since"] == slow["last_evaluated_at"]
        still = step([(clock.now - 1000, 6000, False, 0.0)])
        assert still["state"] == "firing" and still["firing_since"] == slow["firing_since"]
        # Ten minutes on, the slow traces have left the 5-minute window, and nothing came.
        clock.advance(10 * MINUTE)
        gone = step([])
        assert gone["state"] == "no_data" and gone["last_value"] is None
        back = step([(clock.now - 10, 300, False, 0.0)])
        assert back["state"] == "ok" and back["firing_since"] is None

        history = events(client, P, alert["id"])
    moves = [(e["from"], e["to"]) for e in history if e["kind"] == "state"]
    # Newest first: back, gone, slow (staying firing made no event), fast.
    assert moves == [("no_data", "ok"), ("firing", "no_data"), ("ok", "firing"), ("no_data", "ok")]
    firing = next(e for e in history if e.get("to") == "firing")
    assert firing["value"] == slow["last_value"] == 200 + (5000 - 200) * 0.95  # p95 of 2
    assert firing["window_end"] > firing["window_start"]
    assert history[-1]["at"] < history[0]["at"]  # newest first
    assert start < clock.now


def test_the_alert_routes_keep_to_their_project(tmp_path: Path) -> None:
    clock = Clock()
    store = new_store(tmp_path / "scopes.sqlite3")
    with store.transaction() as db:
        store.insert_project(db, "other", None, 30, project_id="proj_other")
    store.add_key("tt_pk_other", "proj_other", "other")
    with service(store, clock) as running, api(running) as client:
        alert = create_alert(client, P)
        other = create_alert(client, "proj_other")
        for suffix in ("", "/events"):
            assert client.get(f"projects/{P}/alerts/{alert['id']}{suffix}").status_code == 200
            # Another project's alert through this project's path, and no such alert: 404.
            assert client.get(f"projects/{P}/alerts/{other['id']}{suffix}").status_code == 404
            assert client.get(f"projects/{P}/alerts/alert_nope{suffix}").status_code == 404
        assert client.post(f"projects/{P}/alerts/{other['id']}/test").status_code == 404
        headers = {"Authorization": "Bearer tt_pk_other"}
        for method, suffix in (("GET", ""), ("GET", "/events"), ("POST", "/test")):
            response = client.request(
                method, f"projects/{P}/alerts/{alert['id']}{suffix}", headers=headers
            )
            assert response.status_code == 403, suffix
        bad = client.get(f"projects/{P}/alerts/{alert['id']}/events", params={"cursor": "nope"})
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_cursor"
        too_many = client.get(f"projects/{P}/alerts/{alert['id']}/events", params={"limit": 501})
        assert too_many.status_code == 422


def test_alerts_are_evaluated_on_a_schedule(tmp_path: Path) -> None:
    clock = Clock()
    store = new_store(tmp_path / "schedule.sqlite3")
    add_traces(store, P, [(clock.now - 1000, 100, False, 0.0)])
    with service(store, clock, alert_interval_s=0.05) as running, api(running) as client:
        alert = create_alert(client, P, threshold=50)
        path = f"projects/{P}/alerts/{alert['id']}"
        wait_until(lambda: client.get(path).json()["state"] == "firing")
        assert "evaluate-alerts" in running.app.state.background.running()


def test_demo_data_evaluates_without_a_failed_project(tmp_path: Path) -> None:
    """Every demo alert over the demo's data (spans in every convention the demo writes)."""
    store = Store(tmp_path / "demo.sqlite3")
    keys: DemoKeys = populate(store, seed=7, scale=0.05, big_traces=True)
    assert keys == demo_keys(7)
    clock = Clock()
    with service(store, clock) as running:
        result = running.alerts.evaluate()
    assert result.failed_projects == 0 and result.evaluated == len(store.all_alerts())
