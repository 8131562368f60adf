"""Ingest shared fairly between keys (ingest/turns.py): one key's flood of exports does not make
another project's export wait behind all of it, and cannot take every place the service has for
bodies in hand."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sqlite3
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.support.otlp import (
    new_span_id,
    new_trace_id,
    partial,
    post,
    request,
    root_client,
    span,
)
from tests.support.service import local_service, wait_for
from tui.server.api_keys import hash_key, new_api_key
from tui.server.ingest.turns import FairTurns, InFlight
from tui.server.run import LocalService
from tui.server.store.sqlite.store import Store

# -- the turns on their own ---------------------------------------------------------------------


def test_turns_go_round_robin_between_the_keys_waiting() -> None:
    async def scenario() -> list[str]:
        turns = FairTurns(lambda: 1)
        given: list[str] = []

        async def body(key: str, name: str) -> None:
            async with turns.turn(key):
                given.append(name)
                await release.wait()  # held until the test lets the first one go

        release = asyncio.Event()
        tasks = [asyncio.create_task(body("a", "a1"))]
        await until(lambda: given == ["a1"])
        later = (("a", "a2"), ("a", "a3"), ("a", "a4"), ("b", "b1"), ("c", "c1"))
        for n, (key, name) in enumerate(later, start=1):
            tasks.append(asyncio.create_task(body(key, name)))
            await until(lambda n=n: sum(map(len, turns.waiting.values())) == n)  # type: ignore[misc]
        assert turns.waiting_for("a") == 3
        release.set()
        await asyncio.gather(*tasks)
        return given

    assert asyncio.run(scenario()) == ["a1", "a2", "b1", "c1", "a3", "a4"]


def test_a_body_that_leaves_while_waiting_or_as_its_turn_comes_gives_its_turn_on() -> None:
    async def scenario() -> None:
        turns = FairTurns(lambda: 1)
        await turns.acquire("a")
        leaving = asyncio.create_task(turns.acquire("b"))
        staying = asyncio.create_task(turns.acquire("c"))
        await until(lambda: turns.waiting_for("b") == 1 and turns.waiting_for("c") == 1)
        leaving.cancel()  # its client hung up while it waited
        with contextlib.suppress(asyncio.CancelledError):
            await leaving
        assert turns.waiting_for("b") == 0
        turns.release()
        await staying
        # Given its turn and cancelled before it ran: the turn goes on to the next.
        late = asyncio.create_task(turns.acquire("d"))
        after = asyncio.create_task(turns.acquire("e"))
        await until(lambda: turns.waiting_for("e") == 1)
        turns.release()  # d's turn, given...
        late.cancel()  # ...as it is cancelled
        with contextlib.suppress(asyncio.CancelledError):
            await late
        await asyncio.wait_for(after, 30)
        assert turns.busy == 1

    asyncio.run(scenario())


def test_bodies_in_hand_are_bounded_in_all_and_per_key() -> None:
    in_flight = InFlight(total=3, per_key=2)
    assert in_flight.enter("a") and in_flight.enter("a")
    assert not in_flight.enter("a")  # a's share is taken
    assert in_flight.enter("b")
    assert not in_flight.enter("c")  # all taken
    in_flight.leave("a")
    assert in_flight.enter("c") and in_flight.by_key == {"a": 1, "b": 1, "c": 1}


async def until(condition: Callable[[], bool]) -> None:
    """Let the other tasks run until `condition` holds (a bounded number of rounds)."""
    for _ in range(10_000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("never came true")


# -- over HTTP, against a service with a worker process ----------------------------------------


@pytest.fixture
def pooled(tmp_path: Path) -> Iterator[tuple[LocalService, str, str, Path]]:
    """A service ingesting in one worker process, its two project keys, and its database."""
    path = tmp_path / "fair.sqlite3"
    store = Store(path)
    keys = []
    for project in ("proj_flood", "proj_other"):
        with store.transaction() as db:
            store.insert_project(db, project, None, 30, project_id=project)
        key = new_api_key("pk")
        store.add_key(key, project, "test")
        keys.append(key)
    with local_service(store, ingest_processes=1) as service:
        wait_for(lambda: service.app.state.ingest.processes.ready, what="the worker")
        yield service, keys[0], keys[1], path


def commit_order(path: Path) -> list[str]:
    """Trace ids in the order their rows were written (SQLite's rowid)."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        return [row[0] for row in db.execute("SELECT id FROM traces ORDER BY rowid")]


def test_another_projects_export_goes_before_the_rest_of_a_flood(
    pooled: tuple[LocalService, str, str, Path],
) -> None:
    service, flooder, other, path = pooled
    ingest = service.app.state.ingest
    pool = ingest.processes._pool
    (worker,) = set(pool._processes)
    flood = [new_trace_id() for _ in range(4)]
    mine = new_trace_id()

    def send(key: str, trace: bytes) -> httpx.Response:
        with root_client(service.base_url, key) as client:
            return post(client, request(span(trace, new_span_id())))

    os.kill(worker, signal.SIGSTOP)  # the worker holds the flood's first body meanwhile
    try:
        with ThreadPoolExecutor(5) as senders:
            flooding: list[Future[httpx.Response]] = []
            for trace in flood:
                flooding.append(senders.submit(send, flooder, trace))
                count = len(flooding)
                # Each of the flood's bodies in the service (with the pool, or waiting for a
                # turn) before the next is sent, and all before the other project's.
                wait_for(
                    lambda count=count: (
                        len(pool._pending_work_items)  # type: ignore[misc]
                        + ingest.turns.waiting_for(hash_key(flooder))
                        == count
                    ),
                    what="the flood's bodies in the service",
                )
            answered = senders.submit(send, other, mine)
            wait_for(
                lambda: (
                    ingest.turns.waiting_for(hash_key(other)) == 1
                    or len(pool._pending_work_items) == 5
                ),
                what="the other project's body in the service",
            )
            os.kill(worker, signal.SIGCONT)
            assert partial(answered.result(timeout=120)) == (0, "")
            for each in flooding:
                assert partial(each.result(timeout=120)) == (0, "")
    finally:
        os.kill(worker, signal.SIGCONT)
    order = commit_order(path)
    # The worker takes one body and has one ready: the flood's first two are ahead of the
    # other project's, then the flood and the other take turns.
    assert order == [flood[0].hex(), flood[1].hex(), flood[2].hex(), mine.hex(), flood[3].hex()]


def held_upload(base_url: str, key: str) -> socket.socket:
    """An export whose body never comes: its head is sent, then one byte of its body."""
    address = urlsplit(base_url)
    assert address.hostname is not None and address.port is not None
    connection = socket.create_connection((address.hostname, address.port), timeout=60)
    head = (
        "POST /v1/traces HTTP/1.1\r\n"
        f"Host: {address.hostname}\r\n"
        f"Authorization: Bearer {key}\r\n"
        "Content-Type: application/x-protobuf\r\n"
        "Content-Length: 100\r\n\r\n"
    )
    connection.sendall(head.encode() + b"\x0a")
    return connection


def answered(connection: socket.socket) -> bytes:
    """What the service has answered on `connection` so far (nothing: b"")."""
    connection.setblocking(False)
    try:
        return connection.recv(4096)
    except BlockingIOError:
        return b""
    finally:
        connection.setblocking(True)


def test_one_key_cannot_take_every_place_for_bodies(
    pooled: tuple[LocalService, str, str, Path],
) -> None:
    service, flooder, other, _ = pooled
    ingest = service.app.state.ingest
    base_url = service.base_url
    uploads = [held_upload(base_url, flooder) for _ in range(ingest.in_flight.total)]
    try:
        refused: dict[int, bytes] = {}

        def settled() -> bool:
            for n, connection in enumerate(uploads):
                if n not in refused and (got := answered(connection)):
                    refused[n] = got
            in_hand: int = ingest.in_flight.count
            return in_hand + len(refused) == len(uploads)

        wait_for(settled, what="each held upload in hand or refused")
        assert all(b" 503 " in got and b"retry-after: 1" in got.lower() for got in refused.values())
        with root_client(base_url, other) as client:
            response = post(client, request(span(new_trace_id(), new_span_id())))
        assert response.status_code == 200, response.text
        assert len(refused) == ingest.in_flight.total - ingest.in_flight.per_key
    finally:
        for connection in uploads:
            connection.close()
    wait_for(lambda: ingest.in_flight.count == 0, what="the held uploads let go")
