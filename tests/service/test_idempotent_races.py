"""Repeats of one change under one Idempotency-Key that race each other, from many threads at
two services on one database (both stores): the change is applied once and every repeat
answers what the first did (issue 39, point 5: on PostgreSQL, rotate-secret rotated twice in 8
of 20 trials, and the replay answered a secret that was no longer the alert's).

Each trial starts its requests together (a barrier) and repeats over fresh alerts: a race lost
is what the test looks for, and it is not lost every time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.support.service import local_service
from tests.support.webhooks import create_alert
from tui.server.api_keys import new_api_key
from tui.server.run import LocalService
from tui.server.store.opening import open_store

REPEATS = 8  # requests per trial, alternating between the two services
TRIALS = 6


@pytest.fixture
def two_services(fresh_database: str) -> Iterator[tuple[list[LocalService], Any, str]]:
    """Two services on one new database, its store (a third handle), and a workspace key."""
    stores = [open_store(fresh_database) for _ in range(3)]
    key = new_api_key("ws")
    stores[0].add_key(key, None, "races")
    services = [local_service(store, rate_limit=100_000).start() for store in stores[:2]]
    try:
        yield services, stores[2], key
    finally:
        for service in services:
            service.stop()
        for store in stores:
            store.close()


def together(
    services: list[LocalService], key: str, send: Callable[[httpx.Client], httpx.Response]
) -> list[httpx.Response]:
    """`send` REPEATS times at once, through the two services in turn."""
    clients = [
        httpx.Client(base_url=s.base_url + "/", headers={"Authorization": f"Bearer {key}"})
        for s in services
    ]
    start = threading.Barrier(REPEATS)

    def one(n: int) -> httpx.Response:
        start.wait()
        return send(clients[n % 2])

    try:
        with ThreadPoolExecutor(REPEATS) as pool:
            return list(pool.map(one, range(REPEATS)))
    finally:
        for client in clients:
            client.close()


def new_project(client: httpx.Client, name: str) -> str:
    response = client.post("projects", json={"name": name})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def test_rotate_secret_repeated_at_once_rotates_once_and_answers_the_stored_secret(
    two_services: tuple[list[LocalService], Any, str],
) -> None:
    services, store, key = two_services
    with httpx.Client(
        base_url=services[0].base_url + "/", headers={"Authorization": f"Bearer {key}"}
    ) as api:
        project = new_project(api, "rotations")
        for trial in range(TRIALS):
            alert = create_alert(api, project, webhook_url="https://hooks.example.com/rotate")
            first_secret = alert["webhook_secret"]
            path = f"projects/{project}/alerts/{alert['id']}/rotate-secret"
            answers = together(
                services,
                key,
                lambda client, path=path, trial=trial: client.post(
                    path, headers={"Idempotency-Key": f"rotate-{trial}"}
                ),
            )
            assert [a.status_code for a in answers] == [200] * REPEATS, [a.text for a in answers]
            secrets = {a.json()["secret"] for a in answers}
            stored = store.alert_secret(alert["id"])
            assert secrets == {stored.secret}, f"trial {trial}: {len(secrets)} secrets answered"
            assert stored.previous_secret == first_secret, f"trial {trial}: rotated more than once"
            assert sum(a.headers.get("Idempotent-Replayed") == "true" for a in answers) == (
                REPEATS - 1
            )


def test_a_deletion_repeated_at_once_answers_204_every_time(
    two_services: tuple[list[LocalService], Any, str],
) -> None:
    """A repeat that came in while the first deleted the alert answers as the first did, not
    404 (the alert it looked for is gone, but its answer is remembered)."""
    services, _, key = two_services
    with httpx.Client(
        base_url=services[0].base_url + "/", headers={"Authorization": f"Bearer {key}"}
    ) as api:
        project = new_project(api, "deletions")
        for trial in range(TRIALS):
            alert = create_alert(api, project, webhook_url="https://hooks.example.com/delete")
            path = f"projects/{project}/alerts/{alert['id']}"
            answers = together(
                services,
                key,
                lambda client, path=path, trial=trial: client.delete(
                    path, headers={"Idempotency-Key": f"delete-{trial}"}
                ),
            )
            assert [a.status_code for a in answers] == [204] * REPEATS, [a.text for a in answers]


def test_a_patch_repeated_at_once_is_applied_once(
    two_services: tuple[list[LocalService], Any, str],
) -> None:
    """Every repeat answers the first's body; and a repeat that arrives after another change
    does not apply its change again over that one."""
    services, store, key = two_services
    with httpx.Client(
        base_url=services[0].base_url + "/", headers={"Authorization": f"Bearer {key}"}
    ) as api:
        project = new_project(api, "patches")
        for trial in range(TRIALS):
            alert = create_alert(api, project, webhook_url="https://hooks.example.com/patch")
            path = f"projects/{project}/alerts/{alert['id']}"
            answers = together(
                services,
                key,
                lambda client, path=path, trial=trial: client.patch(
                    path, json={"threshold": 5}, headers={"Idempotency-Key": f"patch-{trial}"}
                ),
            )
            assert [a.status_code for a in answers] == [200] * REPEATS, [a.text for a in answers]
            assert len({a.text for a in answers}) == 1
            changed = api.patch(path, json={"threshold": 7})
            assert changed.status_code == 200
            again = api.patch(
                path, json={"threshold": 5}, headers={"Idempotency-Key": f"patch-{trial}"}
            )
            assert again.headers.get("Idempotent-Replayed") == "true"
            assert store.get_alert(alert["id"]).threshold == 7
