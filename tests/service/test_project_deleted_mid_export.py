"""An export in flight while its project is deleted (issue 39, point 7): the key is checked, the
project is deleted, then the export's write comes. The write must not leave a trace in the
deleted project (unreachable: no key, no listing, no retention sweep ever finds it): the spans
are dropped, as if they had come just before the deletion, which deleted everything of the
project's. On both stores, each interleaving made deterministic: the deletion committed between
the key's check and the write, and (PostgreSQL, where the two run at once) each of the two
held inside its transaction while the other starts, by a store whose hook waits on an event.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from tests.support.otlp import request
from tests.support.otlp import span as otlp_span
from tui.server.ingest.body import PROTOBUF
from tui.server.ingest.costs import PRICES
from tui.server.ingest.processes import decode, groups_of
from tui.server.store.postgres.store import PostgresStore
from tui.server.store.rows import now_ms

DEADLINE_S = 60.0  # for conditions: generous, never a measure
TRACE = bytes.fromhex("c3" * 16)
OTHER = bytes.fromhex("d4" * 16)


def body_of(trace: bytes) -> bytes:
    spans = [
        otlp_span(trace, bytes([1]) * 8, b"", name="root", start_ms=now_ms() - 1000),
        otlp_span(trace, bytes([2]) * 8, bytes([1]) * 8, name="child", start_ms=now_ms() - 900),
    ]
    return request(*spans).SerializeToString()


def groups_for(project_id: str, trace: bytes = TRACE) -> list[Any]:
    """The groups an ingest worker writes for a project key's export, once decoded."""
    return groups_of(decode(PROTOBUF, body_of(trace), PRICES, now_ms()), project_id)


def make_projects(store: Any, *ids: str) -> None:
    with store.transaction() as db:
        for project_id in ids:
            store.insert_project(db, project_id, None, 30, project_id=project_id)


def rows_of(store: Any, project_id: str) -> tuple[int, int]:
    """(traces, spans) the tables hold for `project_id`, whatever reads would show."""
    with store._read() as db:
        traces = db.execute(
            store._sql("SELECT count(*) FROM traces WHERE project_id = ?"), (project_id,)
        ).fetchone()[0]
        spans = db.execute(
            store._sql("SELECT count(*) FROM spans WHERE project_id = ?"), (project_id,)
        ).fetchone()[0]
    return int(traces), int(spans)


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


def test_a_write_after_its_project_was_deleted_stores_nothing_of_it(store: Any) -> None:
    """The deletion commits between the route's key check and the worker's write (the write
    comes with the project id the key gave): nothing is stored in the deleted project, nor is
    the project made again; another request's spans in the same transaction (the writer
    thread commits several at once) are stored."""
    make_projects(store, "doomed", "alive")
    doomed, alive = groups_for("doomed"), groups_for("alive", OTHER)
    assert store.delete_project("doomed")
    store.ingest([doomed, alive])
    assert rows_of(store, "doomed") == (0, 0)
    assert store.get_project("doomed") is None
    assert store.find_traces(TRACE.hex()) == []
    assert rows_of(store, "alive") == (1, 2)


class Held(PostgresStore):
    """A PostgreSQL store whose ingest (after writing its spans) or project deletion (after
    holding the project) waits inside its transaction until `release` is set."""

    def __init__(self, url: str, hold: str) -> None:
        super().__init__(url)
        self.hold = hold
        self.holding = threading.Event()
        self.release = threading.Event()

    def _pause(self, where: str) -> None:
        if self.hold == where:
            self.holding.set()
            assert self.release.wait(DEADLINE_S)

    def _write_group(self, db: Any, project_id: str, group: Any) -> None:
        super()._write_group(db, project_id, group)
        self._pause("ingest")

    def _hold_project(self, db: Any, project_id: str) -> None:
        super()._hold_project(db, project_id)
        self._pause("delete")


def started(work: Callable[[], Any], results: list[Any]) -> threading.Thread:
    """`work` running in a thread of its own; its result (or the exception it raised) is
    appended to `results`."""

    def run() -> None:
        try:
            results.append(work())
        except Exception as error:  # the test asserts on it
            results.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def waiting_on_a_lock(url: str, statement: str) -> Callable[[], bool]:
    """Whether a backend of this database runs a statement starting with `statement` and
    waits on a lock (a row lock of the projects table, here)."""

    def check() -> bool:
        with psycopg.connect(url, autocommit=True) as connection:
            rows = connection.execute(
                "SELECT query FROM pg_stat_activity WHERE datname = current_database()"
                " AND wait_event_type = 'Lock' AND state = 'active'"
            ).fetchall()
        return any(query.lstrip().startswith(statement) for (query,) in rows)

    return check


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_a_deletion_waits_for_an_export_being_written_then_deletes_it(store_url: str) -> None:
    """The export's transaction holds the project (and has written its spans) when the
    deletion starts: the deletion waits for its commit, then deletes what it wrote."""
    store = Held(store_url, hold="ingest")
    try:
        make_projects(store, "doomed")
        written: list[Any] = []
        writer = started(lambda: store.ingest([groups_for("doomed")]), written)
        assert store.holding.wait(DEADLINE_S)
        deleted: list[Any] = []
        deleter = started(lambda: store.delete_project("doomed"), deleted)
        wait_until(waiting_on_a_lock(store_url, "SELECT 1 FROM projects"), "the deletion to wait")
        store.release.set()
        writer.join(DEADLINE_S)
        deleter.join(DEADLINE_S)
        assert (written, deleted) == ([None], [True])
        assert rows_of(store, "doomed") == (0, 0)
    finally:
        store.release.set()
        store.close()


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_an_export_waits_for_a_deletion_under_way_then_stores_nothing(store_url: str) -> None:
    """The deletion holds the project when the export's write starts: the write waits for
    the deletion's commit, then drops the spans (nothing to sweep, no project made again)."""
    store = Held(store_url, hold="delete")
    try:
        make_projects(store, "doomed")
        deleted: list[Any] = []
        deleter = started(lambda: store.delete_project("doomed"), deleted)
        assert store.holding.wait(DEADLINE_S)
        written: list[Any] = []
        writer = started(lambda: store.ingest([groups_for("doomed")]), written)
        wait_until(waiting_on_a_lock(store_url, "SELECT id FROM projects"), "the write to wait")
        store.release.set()
        deleter.join(DEADLINE_S)
        writer.join(DEADLINE_S)
        assert (written, deleted) == ([None], [True])
        assert rows_of(store, "doomed") == (0, 0)
        assert store.get_project("doomed") is None
    finally:
        store.release.set()
        store.close()
