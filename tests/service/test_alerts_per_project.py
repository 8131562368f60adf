"""The bound on a project's alerts (--alerts-per-project), on SQLite, then PostgreSQL: a create
past it is refused with 409 `too_many_alerts` naming the bound, nothing is stored, and creates
racing at two services on one database never take a project past it (issue 39, point 9: one
project's 500 alerts slowed every project's evaluation round)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.support.service import local_service
from tests.support.webhooks import create_alert
from tui.server.api_keys import new_api_key
from tui.server.run import LocalService
from tui.server.store.opening import open_store

MOST = 3  # the bound these tests run with (the default is 100)
RACERS = 8
TRIALS = 4


@pytest.fixture
def two_services(fresh_database: str) -> Iterator[tuple[list[LocalService], Any, str]]:
    """Two services on one new database with a bound of MOST, its store (a third handle),
    and a workspace key."""
    stores = [open_store(fresh_database) for _ in range(3)]
    key = new_api_key("ws")
    stores[0].add_key(key, None, "bound")
    services = [
        local_service(
            store, rate_limit=100_000, alerts_per_project=MOST, allow_private_webhooks=True
        ).start()
        for store in stores[:2]
    ]
    try:
        yield services, stores[2], key
    finally:
        for service in services:
            service.stop()
        for store in stores:
            store.close()


def client_of(service: LocalService, key: str) -> httpx.Client:
    return httpx.Client(
        base_url=service.base_url + "/", headers={"Authorization": f"Bearer {key}"}, timeout=60
    )


def new_project(client: httpx.Client, name: str) -> str:
    response = client.post("projects", json={"name": name})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


ALERT = {
    "name": "slow",
    "metric": "latency_ms_5m",
    "condition": "gt",
    "threshold": 1000,
    "webhook_url": "http://127.0.0.1:9/unused",
}


def test_a_project_at_its_bound_is_refused_with_the_bound_named(
    two_services: tuple[list[LocalService], Any, str],
) -> None:
    services, store, key = two_services
    with client_of(services[0], key) as client:
        full, other = new_project(client, "full"), new_project(client, "other")
        made = [create_alert(client, full, name=f"a{n}")["id"] for n in range(MOST)]

        refused = client.post(f"projects/{full}/alerts", json=ALERT)
        assert refused.status_code == 409, refused.text
        error = refused.json()["error"]
        assert error["code"] == "too_many_alerts"
        assert f"{MOST} alerts" in error["message"]
        assert error["details"] == [
            {"field": "project_id", "message": f"has {MOST} alerts, as many as a project may have"}
        ]
        assert len(store.list_alerts(full)) == MOST  # nothing stored

        # The bound is per project, and a deletion makes room again.
        create_alert(client, other)
        assert client.delete(f"projects/{full}/alerts/{made[0]}").status_code == 204
        again = client.post(f"projects/{full}/alerts", json=ALERT, headers={"Idempotency-Key": "k"})
        assert again.status_code == 201, again.text
        # A repeat of that create is its answer again, not a refusal: nothing is created.
        replayed = client.post(
            f"projects/{full}/alerts", json=ALERT, headers={"Idempotency-Key": "k"}
        )
        assert replayed.status_code == 201 and replayed.json()["id"] == again.json()["id"]
        assert len(store.list_alerts(full)) == MOST


def test_creates_racing_at_two_services_never_pass_the_bound(
    two_services: tuple[list[LocalService], Any, str],
) -> None:
    services, store, key = two_services
    clients = [client_of(service, key) for service in services]
    try:
        for trial in range(TRIALS):
            project = new_project(clients[0], f"race-{trial}")
            start = threading.Barrier(RACERS)

            def one(n: int, project: str = project, start: threading.Barrier = start) -> int:
                start.wait()
                body = {**ALERT, "name": f"a{n}"}
                return clients[n % 2].post(f"projects/{project}/alerts", json=body).status_code

            with ThreadPoolExecutor(RACERS) as pool:
                statuses = sorted(pool.map(one, range(RACERS)))
            assert statuses == [201] * MOST + [409] * (RACERS - MOST), statuses
            assert len(store.list_alerts(project)) == MOST
    finally:
        for client in clients:
            client.close()
