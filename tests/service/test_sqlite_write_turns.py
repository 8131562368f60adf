"""SQLite's write lock as the store's writers take it (sqlite.store.begin_write): tried again
every millisecond while another writer holds it, refused (StoreBusy, a 503) once the wait is
over, and the statements inside the transaction keep the busy timeout every statement has."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tui.server.store.errors import StoreBusy
from tui.server.store.sqlite.store import BUSY_TIMEOUT_MS, Store, begin_write, connect, refusal_of

DEADLINE_S = 30.0


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store(tmp_path / "turns.sqlite3")
    try:
        yield opened
    finally:
        opened.close()


def holder(store: Store) -> sqlite3.Connection:
    """Another writer's connection, holding the write lock."""
    db = connect(store.path)
    db.execute("BEGIN IMMEDIATE")
    return db


def test_a_waiting_writer_takes_the_lock_once_it_is_let_go(store: Store) -> None:
    other = holder(store)
    began = threading.Event()
    failed: list[BaseException] = []

    def write() -> None:
        try:
            with store.transaction() as db:
                began.set()
                store.insert_project(db, "turns", None, 30, project_id="p_turns")
        except BaseException as error:  # reported to the test's thread
            failed.append(error)
            began.set()

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert not began.wait(0.2), "the write began while another writer held the lock"
    finally:
        other.execute("COMMIT")
        other.close()
    assert began.wait(DEADLINE_S)
    writer.join(DEADLINE_S)
    assert not failed, failed
    assert store.get_project("p_turns") is not None


def test_a_lock_held_past_the_wait_is_refused_as_busy(store: Store) -> None:
    other = holder(store)
    db = connect(store.path)
    try:
        with pytest.raises(sqlite3.OperationalError) as raised:
            begin_write(db, wait_s=0.05)
        assert isinstance(refusal_of(raised.value), StoreBusy)
        assert not db.in_transaction
    finally:
        other.execute("ROLLBACK")
        other.close()
    # Refused, the connection waits for locks as before, and writes once the lock is free.
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
    begin_write(db)
    assert db.in_transaction
    db.execute("ROLLBACK")
    db.close()


def test_statements_inside_a_transaction_keep_the_busy_timeout(store: Store) -> None:
    with store.transaction() as db:
        assert db.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
