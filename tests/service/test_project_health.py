"""GET /v1/projects/health over real HTTP on both stores (`store` is parametrised: conftest.py):
every project's traces and errored traces per bucket against the same counted in Python, its
firing alerts (paused ones left out, longest firing first), retention, a project key's scope,
and the window's bounds."""

from __future__ import annotations

import random
from typing import Any

from tests.support.otlp import root_client
from tui.server.http.schemas import iso_ms
from tui.server.run import LocalService
from tui.server.store.alert_rows import AlertState, new_alert
from tui.server.store.rows import TraceRow

NOW = 1_795_000_000_000
MINUTE = 60_000
DAY = 1440 * MINUTE


def trace(project: str, n: int, start: int, errored: bool, duration: int = 50) -> TraceRow:
    return TraceRow(
        f"{n:032x}",
        project,
        "run",
        start,
        duration,
        1,
        1,
        1,
        0.0,
        "error" if errored else "ok",
        int(errored),
        "{}",
    )


def filled(store: Any) -> dict[str, list[TraceRow]]:
    """Three projects (one with a 1-day retention, one empty) and traces over the last 3 days,
    some just outside the hour, some at its edges."""
    with store.transaction() as db:
        store.insert_project(db, "busy", None, 30, project_id="p_busy")
        store.insert_project(db, "short", None, 1, project_id="p_short")
        store.insert_project(db, "idle", None, 30, project_id="p_idle")
    store.add_key("ws", None, "ws")
    store.add_key("pk_short", "p_short", "short's key")
    rng = random.Random(43)
    rows: dict[str, list[TraceRow]] = {"p_busy": [], "p_short": [], "p_idle": []}
    n = 0
    for project in ("p_busy", "p_short"):
        starts = [rng.randrange(NOW - 3 * DAY, NOW) for _ in range(300)]
        starts += [NOW - 60 * MINUTE, NOW - 60 * MINUTE - 1, NOW - 1, NOW, NOW - 5 * MINUTE]
        for start in starts:
            n += 1
            rows[project].append(trace(project, n, start, rng.random() < 0.2))
    with store.transaction() as db:
        store.insert_traces(db, [row for found in rows.values() for row in found], [], texts=[])
    return rows


def expected(
    rows: list[TraceRow], window: int, buckets: int, retention_days: int
) -> tuple[list[int], list[int]]:
    size = -(-window // buckets)
    start = NOW - size * buckets
    counts, errors = [0] * buckets, [0] * buckets
    for row in rows:
        kept = row.started_at + row.duration_ms >= NOW - retention_days * DAY
        if start <= row.started_at < NOW and kept:
            bucket = (row.started_at - start) // size
            counts[bucket] += 1
            errors[bucket] += row.error_count > 0
    return counts, errors


def test_each_projects_buckets_are_its_traces_and_errors_counted_by_start(store: Any) -> None:
    rows = filled(store)
    retention = {"p_busy": 30, "p_short": 1, "p_idle": 30}
    with (
        LocalService(store, tasks=[], clock=lambda: NOW) as service,
        root_client(service.base_url, "ws") as client,
    ):
        for window, window_ms, buckets in (
            ("1h", 60 * MINUTE, 12),
            ("90m", 90 * MINUTE, 7),  # not a whole number of ms per bucket: rounded up
            ("24h", DAY, 24),
            ("7d", 7 * DAY, 60),
            ("5m", 5 * MINUTE, 1),
        ):
            answer = client.get(
                "/v1/projects/health", params={"window": window, "buckets": buckets}
            )
            assert answer.status_code == 200, answer.text
            body = answer.json()
            size = -(-window_ms // buckets)
            assert body["bucket_ms"] == size and body["window"] == window
            assert sorted(p["project_id"] for p in body["data"]) == sorted(rows)
            for project in body["data"]:
                counts, errors = expected(
                    rows[project["project_id"]],
                    window_ms,
                    buckets,
                    retention[project["project_id"]],
                )
                assert (project["trace_counts"], project["error_counts"]) == (counts, errors)
                assert (project["traces"], project["errors"]) == (sum(counts), sum(errors))
        # The 7-day window of the 1-day project holds only what its retention keeps.
        week = client.get("/v1/projects/health", params={"window": "7d", "buckets": 7}).json()
        short = next(p for p in week["data"] if p["project_id"] == "p_short")
        assert short["traces"] == sum(
            1
            for row in rows["p_short"]
            if row.started_at + 50 >= NOW - DAY and row.started_at < NOW
        )
        assert short["traces"] < len(rows["p_short"]) - 5


def test_firing_alerts_are_named_longest_firing_first_without_the_paused(store: Any) -> None:
    filled(store)
    hook = "http://127.0.0.1:9/"
    made = [
        new_alert("p_busy", "errors", "error_rate_pct_1h", "gt", 5, hook, "al_a", 1),
        new_alert("p_busy", "slow", "latency_ms_5m", "gt", 900, hook, "al_b", 2),
        new_alert("p_busy", "calm", "cost_usd_1h", "gt", 9, hook, "al_c", 3),
        new_alert("p_busy", "paused", "cost_usd_1h", "gt", 1, hook, "al_d", 4, paused=True),
        new_alert("p_short", "never", "cost_usd_1h", "gt", 1, hook, "al_e", 5),
    ]
    with store.transaction() as db:
        for alert in made:
            store.insert_alert(db, secret="whsec_x", **alert._asdict())
    states = [
        AlertState("al_a", "firing", 12.5, NOW, NOW - 10 * MINUTE),
        AlertState("al_b", "firing", 1500.0, NOW, NOW - 30 * MINUTE),
        AlertState("al_c", "ok", 0.5, NOW, None),
        AlertState("al_d", "firing", 3.0, NOW, NOW - 90 * MINUTE),
    ]
    store.record_round(states, {s.alert_id: "no_data" for s in states}, [], [])
    with (
        LocalService(store, tasks=[], clock=lambda: NOW) as service,
        root_client(service.base_url, "ws") as client,
    ):
        body = client.get("/v1/projects/health").json()
        by_id = {p["project_id"]: p for p in body["data"]}
        firing = by_id["p_busy"]["firing"]
        assert [a["id"] for a in firing] == ["al_b", "al_a"]
        assert firing[0]["name"] == "slow" and firing[0]["state"] == "firing"
        assert firing[0]["firing_since"] == iso_ms(NOW - 30 * MINUTE)
        assert firing[1]["last_value"] == 12.5 and "webhook_secret" not in firing[1]
        assert by_id["p_busy"]["alerts"] == 4
        assert (by_id["p_short"]["alerts"], by_id["p_short"]["firing"]) == (1, [])
        assert body["bucket_ms"] == 5 * MINUTE and len(by_id["p_idle"]["trace_counts"]) == 12


def test_a_project_key_sees_its_own_project_only_and_bad_windows_are_refused(
    store: Any,
) -> None:
    rows = filled(store)
    with (
        LocalService(store, tasks=[], clock=lambda: NOW) as service,
        root_client(service.base_url, "pk_short") as client,
    ):
        body = client.get("/v1/projects/health", params={"window": "24h"}).json()
        assert [p["project_id"] for p in body["data"]] == ["p_short"]
        assert body["data"][0]["traces"] == sum(expected(rows["p_short"], DAY, 12, 1)[0])
        for params, field in (
            ({"window": "4m"}, "window"),
            ({"window": "8d"}, "window"),
            ({"window": "1w"}, "window"),
            ({"window": ""}, "window"),
            ({"buckets": 0}, "buckets"),
            ({"buckets": 61}, "buckets"),
        ):
            refused = client.get("/v1/projects/health", params=params)
            assert refused.status_code == 422, params
            fields = [d["field"] for d in refused.json()["error"]["details"]]
            assert any(field in f for f in fields), (params, fields)
        # The route is not taken for a project called "health".
        assert client.get("/v1/projects/p_short").json()["id"] == "p_short"


def test_the_openapi_document_lists_the_route_with_its_parameters(store: Any) -> None:
    with (
        LocalService(store, tasks=[]) as service,
        root_client(service.base_url, "ws") as client,
    ):
        document = client.get("/v1/openapi.json").json()
    operation = document["paths"]["/v1/projects/health"]["get"]
    query = {p["name"] for p in operation["parameters"] if p["in"] == "query"}
    assert query == {"window", "buckets"}
