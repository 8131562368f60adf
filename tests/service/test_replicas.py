"""Replicas of the service on one database share the work safely: one holder per lease (alert
rounds, retention), one replica per webhook attempt (claims), one rate limit across replicas,
and keys, cursors and lists that mean the same whichever replica answers.

Store-level tests run on both backends (`open_store` opens a second handle on the same data: a
second replica's store); service-level ones run two services in this process on one
PostgreSQL database (tests/reliability/test_two_replicas.py runs two `tracetui serve`).
"""

from __future__ import annotations

import asyncio
import functools
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest

from tests.service.conftest import OpenStore
from tests.support.service import RunningService, start_service, wait_for
from tests.support.webhooks import receiving
from tui.server.alerts.delivery import DeliveryWorker
from tui.server.api_keys import new_api_key
from tui.server.background import LeasedRound, PeriodicTask
from tui.server.config import IN_PROCESS
from tui.server.http.ratelimit import STORE_BACKOFF_S, SharedRateLimiter
from tui.server.run import LocalService
from tui.server.store.alert_rows import AlertEventRow, DeliveryRow, new_alert
from tui.server.store.errors import StoreUnavailable
from tui.server.store.opening import open_store as open_database

NOW = 1_700_000_000_000


# -- leases ----------------------------------------------------------------------------------------


def test_a_lease_has_one_holder_until_it_expires_or_is_given_up(open_store: OpenStore) -> None:
    first, second = open_store(), open_store()
    assert first.take_lease("alerts", "a", 60_000)
    assert not second.take_lease("alerts", "b", 60_000)
    assert first.take_lease("alerts", "a", 60_000)  # renewed by its holder
    assert second.take_lease("retention", "b", 60_000)  # another task's lease is its own
    first.release_lease("alerts", "b")  # not b's to give up: nothing happens
    assert not second.take_lease("alerts", "b", 60_000)
    first.release_lease("alerts", "a")
    assert second.take_lease("alerts", "b", 60_000)
    # A holder that stops renewing (killed) loses its lease once it expires.
    assert first.take_lease("sweep", "a", 1)
    wait_for(lambda: second.take_lease("sweep", "b", 60_000), what="the lease to expire")
    assert not first.take_lease("sweep", "a", 60_000)


class Ticks:
    """A monotonic clock moved by the test (seconds)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def leased_rounds(
    open_store: OpenStore, task_name: str, period_s: float, ran: list[str]
) -> tuple[dict[str, LeasedRound], dict[str, Ticks]]:
    """The same leased task on two replicas ("a", "b"), each with its own store and clock."""
    rounds: dict[str, LeasedRound] = {}
    ticks: dict[str, Ticks] = {}
    for name in ("a", "b"):
        ticks[name] = Ticks()
        task = PeriodicTask(task_name, period_s, functools.partial(ran.append, name))
        rounds[name] = LeasedRound(open_store(), name, task, monotonic=ticks[name])
    return rounds, ticks


def test_a_leased_round_runs_on_one_replica_once_a_period(open_store: OpenStore) -> None:
    ran: list[str] = []
    period_s = 60.0  # the lease lasts 90 s of the store's clock: it outlives the test
    rounds, ticks = leased_rounds(open_store, "evaluate-alerts", period_s, ran)
    # Both replicas poll many times a period: only the holder runs rounds, once a period.
    for _ in range(5):
        rounds["a"]()
        rounds["b"]()
    assert ran == ["a"]
    for clock in ticks.values():
        clock.now += period_s
    for name in ("b", "a", "b", "a"):
        rounds[name]()
    assert ran == ["a", "a"]


def test_a_leased_round_moves_to_another_replica_when_its_holder_dies(
    open_store: OpenStore,
) -> None:
    ran: list[str] = []
    rounds, _ = leased_rounds(open_store, "expire-old-traces", 0.1, ran)  # a lease of 150 ms
    rounds["a"]()
    assert ran == ["a"]
    # a dies (it polls no more): b takes the task over once a's lease expires.
    wait_for(lambda: (rounds["b"](), ran[-1] == "b")[1], what="b to take the rounds over")
    assert ran == ["a", "b"]
    rounds["a"]()  # a comes back: b holds the lease now
    assert ran == ["a", "b"]


# -- the webhook outbox --------------------------------------------------------------------------


def with_alert(store: Any, url: str = "http://127.0.0.1:9/x") -> None:
    alert = new_alert("p", "slow", "latency_p95_ms_5m", "gt", 100.0, url, "al_1", 1)
    with store.transaction() as db:
        store.insert_project(db, "p", None, 30, project_id="p")
        store.insert_alert(db, secret="whsec_" + "A" * 32, **alert._asdict())


def deliveries(count: int, at: int = NOW) -> list[DeliveryRow]:
    return [
        DeliveryRow(f"msg_{n:03d}", "al_1", "alert.firing", f'{{"n": {n}}}', at, 0, at)
        for n in range(count)
    ]


def test_a_claimed_delivery_is_attempted_by_one_replica_until_its_claim_ends(
    open_store: OpenStore,
) -> None:
    first, second = open_store(), open_store()
    with_alert(first)
    rows = deliveries(2)
    first.record_round([], {}, [], rows)
    ids = [row.id for row in rows]
    assert first.claim_deliveries(ids[:1], "a", NOW, NOW + 10_000) == rows[:1]
    assert second.claim_deliveries(ids, "b", NOW, NOW + 10_000) == rows[1:]
    assert second.due_deliveries(NOW, 10, "b") == rows[1:]  # a's is not offered to b
    assert second.due_deliveries(NOW, 10) == rows  # without a holder: every due one
    assert first.claim_deliveries(ids, "a", NOW, NOW + 10_000) == rows[:1]  # its own again
    # a dies holding its claim: once the claim ends, b takes the delivery.
    assert second.claim_deliveries(ids[:1], "b", NOW + 10_000, NOW + 20_000) == rows[:1]
    # An attempt recorded drops the claim: any replica may make the retry.
    attempt = rows[0]._replace(attempts=1, next_attempt_at=NOW + 30_000)
    event = AlertEventRow("dlv_1", "al_1", "delivery", NOW, webhook_id=ids[0], attempt=1, ok=False)
    second.record_attempt(ids[0], event, NOW + 30_000, "pending")
    assert first.claim_deliveries(ids[:1], "a", NOW + 30_000, NOW + 40_000) == [attempt]
    assert second.release_claims("b") == 1  # b stops: its claims go
    assert first.claim_deliveries(ids[1:], "a", NOW, NOW + 10_000) == rows[1:]


async def deliver_with(workers: list[DeliveryWorker], done: Callable[[], bool]) -> None:
    for worker in workers:
        await worker.start()
    try:
        deadline = time.monotonic() + 60
        while not done():
            assert time.monotonic() < deadline, "the webhooks were not all delivered"
            for worker in workers:
                worker.wake()
            await asyncio.sleep(0.02)
    finally:
        for worker in workers:
            await worker.stop()


def test_two_replicas_deliver_each_webhook_once(open_store: OpenStore) -> None:
    """Both replicas' workers look at one outbox at once: each webhook reaches the receiver
    once, under its own webhook-id (without claims, both attempt most of them)."""
    first, second = open_store(), open_store()
    with receiving() as receiver:
        with_alert(first, receiver.url)
        rows = deliveries(24)
        first.record_round([], {}, [], rows)
        workers = [
            DeliveryWorker(store, lambda: NOW, allow_private=True, holder=name, per_host=2)
            for store, name in ((first, "a"), (second, "b"))
        ]

        def all_delivered() -> bool:
            return all(first.get_delivery(row.id).status == "delivered" for row in rows)

        asyncio.run(deliver_with(workers, all_delivered))
        received = sorted(item.webhook_id for item in receiver.received)
    assert received == [row.id for row in rows]


def test_a_dead_replicas_claimed_delivery_is_sent_by_another_once_the_claim_ends(
    open_store: OpenStore,
) -> None:
    first, second = open_store(), open_store()
    clock = [NOW]
    with receiving() as receiver:
        with_alert(first, receiver.url)
        rows = deliveries(1)
        first.record_round([], {}, [], rows)
        # The dead replica claimed it, for 30 s, and died before attempting it.
        assert first.claim_deliveries([rows[0].id], "dead", NOW, NOW + 30_000) == rows
        worker = DeliveryWorker(second, lambda: clock[0], allow_private=True, holder="b")

        async def scenario() -> None:
            await worker.start()
            try:
                begun = worker.reads_begun
                await wait_async(lambda: worker.reads_ended > begun + 1)
                assert receiver.received == []  # still the dead replica's
                clock[0] = NOW + 30_000
                worker.wake()
                await wait_async(lambda: second.get_delivery(rows[0].id).status == "delivered")
            finally:
                await worker.stop()

        asyncio.run(scenario())
        assert [item.webhook_id for item in receiver.received] == [rows[0].id]


async def wait_async(condition: Callable[[], bool], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


# -- the rate limit -------------------------------------------------------------------------------


def test_the_request_count_is_shared_by_replicas(open_store: OpenStore) -> None:
    limiters = [
        SharedRateLimiter(
            "api", store.count_requests, store.forget_request_counts, 50, 60.0, clock=lambda: 600.0
        )
        for store in (open_store(), open_store())
    ]
    allowed = [limiters[n % 2].hit("key:k").allowed for n in range(150)]
    assert allowed == [True] * 50 + [False] * 100
    assert limiters[0].hit("key:other").remaining == 49  # each bucket its own count
    limiters[0].reset()  # the store's counts and this replica's own: a full budget again
    assert limiters[0].hit("key:k").remaining == 49


# -- two services on one PostgreSQL database -------------------------------------------------------


@pytest.fixture(scope="module")
def replicas(postgres_db: str) -> Iterator[tuple[RunningService, LocalService]]:
    """Two services on one PostgreSQL database: the first with the demo data."""
    first = start_service(postgres_db)
    store: Any = open_database(postgres_db)
    second = LocalService(store, replace(IN_PROCESS, rate_limit=100_000)).start()
    try:
        yield first, second
    finally:
        second.stop()
        store.close()
        first.service.stop()
        first.store.close()


def client(base_url: str, key: str) -> httpx.Client:
    return httpx.Client(
        base_url=base_url + "/", headers={"Authorization": f"Bearer {key}"}, timeout=30
    )


def test_a_list_pages_through_either_replica(
    replicas: tuple[RunningService, LocalService],
) -> None:
    first, second = replicas
    key = first.keys.workspace
    project = next(iter(first.keys.projects))
    with client(first.base_url, key) as a, client(second.base_url, key) as b:
        listing = {"project_id": project, "from": "2000-01-01T00:00:00Z"}
        whole = a.get("traces", params={**listing, "limit": 500}).json()["data"]
        assert len(whole) > 10
        page = a.get("traces", params={**listing, "limit": 5}).json()
        ids = [trace["id"] for trace in page["data"]]
        while page.get("next_cursor"):
            replica = b if len(ids) % 10 else a  # alternate replicas page by page
            page = replica.get(
                "traces", params={**listing, "limit": 5, "cursor": page["next_cursor"]}
            ).json()
            ids += [trace["id"] for trace in page["data"]]
    assert ids == [trace["id"] for trace in whole]


def test_a_revoked_key_is_refused_at_once_by_every_replica(
    replicas: tuple[RunningService, LocalService],
) -> None:
    """Nothing caches a key's scope: revoked through one replica's store, the other refuses
    it on the next request."""
    first, second = replicas
    key = new_api_key("ws")
    info = first.store.add_key(key, None, "short-lived")
    with client(first.base_url, key) as a, client(second.base_url, key) as b:
        assert a.get("projects").status_code == 200 and b.get("projects").status_code == 200
        assert first.store.revoke_key(info.key_id)
        assert b.get("projects").status_code == 401
        assert a.get("projects").status_code == 401


def test_the_rate_limit_holds_across_replicas(postgres_db: str) -> None:
    """A key's budget is one across replicas: requests spread over two services are
    allowed as many times in all as the limit says (without sharing: twice as many)."""
    limit = 30
    # Windows start at multiples of their length since the epoch: one of 10^9 s runs from 2001
    # to 2033, so the test never straddles two.
    config = replace(IN_PROCESS, rate_limit=limit, window_s=1_000_000_000.0)
    stores: list[Any] = [open_database(postgres_db), open_database(postgres_db)]
    key = new_api_key("ws")
    stores[0].add_key(key, None, "rate limited")
    services = [LocalService(store, config).start() for store in stores]
    try:
        clients = [client(service.base_url, key) for service in services]
        statuses = [clients[n % 2].get("projects").status_code for n in range(3 * limit)]
        for each in clients:
            each.close()
    finally:
        for service in services:
            service.stop()
        for store in stores:
            store.close()
    assert statuses.count(200) == limit and statuses.count(429) == 2 * limit


def test_the_store_says_whether_replicas_share_it(backend: str, open_store: OpenStore) -> None:
    assert open_store().is_shared() == (backend == "postgres")


def test_a_limiter_whose_store_cannot_count_counts_locally_for_a_while() -> None:
    """One failure of the shared count, then the replica counts in its memory without asking
    the store on every request (each ask would wait for a connection that is not there)."""
    asked: list[str] = []
    now = [1_000.0]

    def count(bucket: str, window_ms: int, hits: int) -> int:
        asked.append(bucket)
        raise OSError("the database is down")

    limiter = SharedRateLimiter("api", count, lambda before: 0, limit=3, clock=lambda: now[0])
    decisions = [limiter.hit("key:a") for _ in range(5)]
    assert len(asked) == 1  # asked once, then counted here
    assert [d.allowed for d in decisions] == [True, True, True, False, False]
    now[0] += STORE_BACKOFF_S
    limiter.hit("key:a")
    assert len(asked) == 2  # the store is asked again once the back-off is over


def test_a_pool_that_found_postgresql_unreachable_refuses_at_once_for_a_moment() -> None:
    """The first call waits for a connection and fails; the calls right after it are refused
    without waiting on the pool (during an outage every request would wait otherwise)."""
    from tui.server.store.postgres.pool import Connections

    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))  # a port nobody listens on
        port = unused.getsockname()[1]
        connections = Connections(f"postgresql://nobody@127.0.0.1:{port}/none", pool_size=1)
        try:
            with pytest.raises(StoreUnavailable), connections.connection():
                pass

            def no_pool(*args: object, **kwargs: object) -> None:
                raise AssertionError("the pool was asked during the fail-fast second")

            connections.pool.connection = no_pool  # type: ignore[assignment,method-assign]
            with pytest.raises(StoreUnavailable), connections.connection():
                pass
        finally:
            connections.close()
