"""Two `tracetui serve` processes on one PostgreSQL database, as a team runs replicas behind a
load balancer: OTLP sent to both at once is listed by either; an alert fires and resolves with
exactly one signed webhook per transition however the replicas share the rounds; and kill -9
of the replica holding the alert rounds hands them to the other within about an interval,
without losing a span either acknowledged."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from http.server import ThreadingHTTPServer
from typing import Any

import httpx
import psycopg
import pytest

from tests.support.exporter import (
    READ_EVERY_TRACE,
    assert_acknowledged_stored,
    exporting,
    post_one,
    stored_spans,
)
from tests.support.otlp import new_span_id, new_trace_id, post, request, root_client, span
from tests.support.serve import Served, serving
from tests.support.service import wait_for
from tests.support.webhooks import WORKSPACE_KEY, Receiver, handler_for
from tui.server.store.opening import open_store

P = "proj_replicas"
# The receiver answers this long after a webhook arrives: longer than a delivery worker waits
# between looks at the outbox (1 s), so the other replica looks while an attempt is in flight.
ANSWER_AFTER_S = 1.5
INTERVAL_S = 1.0
ALERTS_LEASE = "evaluate-alerts"
FLAGS = (
    "--alert-interval",
    str(INTERVAL_S),
    "--allow-private-webhooks",
    "--ingest-processes",
    "1",
    *READ_EVERY_TRACE,
)


@pytest.fixture
def database(postgres_db: str) -> str:
    """The module's database with a project for the alert and the workspace key (so neither
    replica makes one)."""
    store: Any = open_store(postgres_db)
    try:
        with store.transaction() as db:
            store.insert_project(db, "replicas", None, 30, project_id=P)
        store.add_key(WORKSPACE_KEY, None, "workspace")
    finally:
        store.close()
    return postgres_db


def lease_holder(url: str) -> int | None:
    """The process id of the replica holding the alert rounds' lease (its holder id is
    host:pid:random), None if nobody holds it."""
    with psycopg.connect(url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT holder FROM leases WHERE name = %s AND expires_at > "
            "(extract(epoch FROM clock_timestamp()) * 1000)::bigint",
            (ALERTS_LEASE,),
        ).fetchone()
    return None if row is None else int(str(row[0]).split(":")[1])


def outbox(url: str) -> list[tuple[str, str, int]]:
    """Every webhook made: (event type, status, attempts recorded)."""
    with psycopg.connect(url, autocommit=True) as connection:
        rows = connection.execute(
            "SELECT d.event_type, d.status, count(e.id) FROM webhook_deliveries d "
            "LEFT JOIN alert_events e ON e.webhook_id = d.id AND e.kind = 'delivery' "
            "GROUP BY d.id, d.event_type, d.status, d.created_at ORDER BY d.created_at"
        ).fetchall()
    return [(str(kind), str(status), int(attempts)) for kind, status, attempts in rows]


def send_traces(client: httpx.Client, durations_ms: list[int]) -> None:
    """One trace per duration, in project P, started so that it ends now."""
    now = time.time_ns() // 1_000_000
    for duration in durations_ms:
        trace = span(new_trace_id(), new_span_id(), start_ms=now - duration, duration_ms=duration)
        answer = post(client, request(trace, resource={"tracetui.project": P}))
        assert answer.status_code == 200, answer.text


@contextmanager
def slow_receiving() -> Iterator[Receiver]:
    """tests.support.webhooks' receiver (it verifies signatures), answering ANSWER_AFTER_S
    after each webhook arrives."""
    receiver = Receiver()

    class Slow(handler_for(receiver)):  # type: ignore[misc]
        def do_POST(self) -> None:
            time.sleep(ANSWER_AFTER_S)
            super().do_POST()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    server.daemon_threads = True
    receiver.server = server
    thread = threading.Thread(target=server.serve_forever, name="slow-receiver", daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def replicas(database: str) -> Iterator[tuple[Served, Served]]:
    with ExitStack() as stack:
        first = stack.enter_context(serving(database, *FLAGS, new_session=True))
        second = stack.enter_context(serving(database, *FLAGS, new_session=True))
        yield first, second


def test_two_replicas_share_ingest_alerts_and_survive_a_kill(
    database: str, replicas: tuple[Served, Served]
) -> None:
    first, second = replicas
    by_pid = {first.process.pid: first, second.process.pid: second}
    with ExitStack() as stack:
        receiver = stack.enter_context(slow_receiving())
        clients = [
            stack.enter_context(root_client(served.otlp_endpoint, WORKSPACE_KEY))
            for served in replicas
        ]
        # OTLP to both at once; what one replica acknowledged, the other lists.
        exporters = [
            stack.enter_context(exporting(served.otlp_endpoint, WORKSPACE_KEY, threads=1, spans=5))
            for served in replicas
        ]
        for sender, reader in ((clients[0], clients[1]), (clients[1], clients[0])):
            answer, trace_id = post_one(sender)
            assert answer.status_code == 200
            assert stored_spans(reader, trace_id) == 3

        created = clients[0].post(
            f"/v1/projects/{P}/alerts",
            json={
                "name": "slow",
                "metric": "latency_ms_1m",
                "condition": "gt",
                "threshold": 1000,
                "webhook_url": receiver.url,
            },
        )
        assert created.status_code == 201, created.text
        alert = created.json()
        receiver.secrets[alert["id"]] = alert["webhook_secret"]

        send_traces(clients[1], [5000])  # a slow trace: the alert fires
        receiver.wait_for(1, seconds=30)

        # kill -9 of the replica holding the rounds; the other takes them over.
        wait_for(lambda: lease_holder(database) in by_pid, what="a replica holding the rounds")
        holder = lease_holder(database)
        assert holder is not None
        victim = by_pid[holder]
        survivor = second if victim is first else first
        killed_at = time.monotonic()
        victim.send(signal.SIGKILL, group=True)
        victim.process.wait()
        wait_for(lambda: lease_holder(database) == survivor.process.pid, what="the takeover")
        takeover_s = time.monotonic() - killed_at
        print(f"takeover of the alert rounds after kill -9: {takeover_s:.2f} s")

        survivor_client = clients[0] if survivor is first else clients[1]
        send_traces(survivor_client, [50] * 40)  # fast traces: the p95 falls, it resolves
        receiver.wait_for(2, seconds=30)
        for each in exporters:
            each.stop()
        wait_for(
            lambda: all(status == "delivered" for _, status, _ in outbox(database)),
            what="every webhook delivered",
        )

        # Exactly one signed webhook per transition, each attempted once.
        assert receiver.types() == ["alert.firing", "alert.resolved"]
        assert len({item.webhook_id for item in receiver.received}) == 2
        assert outbox(database) == [
            ("alert.firing", "delivered", 1),
            ("alert.resolved", "delivered", 1),
        ]
        # No acknowledged span lost: the survivor lists every body either replica took.
        answers = [answer for each in exporters for answer in each.answers]
        assert sum(answer.acknowledged for answer in answers) > 0
        assert_acknowledged_stored(survivor_client, answers)
