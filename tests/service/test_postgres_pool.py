"""The PostgreSQL store's pool hands out a connection without a round trip, and never hands out
one PostgreSQL has hung up on (pool.hung_up)."""

from __future__ import annotations

import select
from pathlib import Path

import psycopg

from tests.service.conftest import schema_url
from tests.support.service import wait_for
from tui.server.store.postgres.store import PostgresStore


def sent_messages(trace: Path) -> list[str]:
    """The frontend's messages in a libpq trace file (one per line, "F" in the second or
    first field)."""
    lines = trace.read_text().splitlines()
    return [line for line in lines if "F" in line.split("\t")[:2]]


def test_a_connection_is_taken_from_the_pool_without_a_round_trip(
    store_database: str, tmp_path: Path
) -> None:
    store = PostgresStore(schema_url(store_database), pool_size=1)
    trace = tmp_path / "libpq.trace"
    try:
        with open(trace, "w") as out:
            with store._db.connection() as connection:
                pid = connection.info.backend_pid
                connection.pgconn.trace(out.fileno())
            with store._db.connection() as connection:  # the same one: a pool of one
                assert connection.info.backend_pid == pid
                connection.pgconn.untrace()
        assert sent_messages(trace) == []
        # The trace does show what is sent.
        with open(trace, "w") as out, store._db.connection() as connection:
            connection.pgconn.trace(out.fileno())
            connection.execute("SELECT 1")
            connection.pgconn.untrace()
        assert sent_messages(trace) != []
    finally:
        store.close()


def test_a_connection_postgresql_hung_up_on_is_replaced_before_a_call_gets_it(
    store_database: str,
) -> None:
    url = schema_url(store_database)
    store = PostgresStore(url, pool_size=1)
    try:
        with store._db.connection() as connection:
            pid = connection.info.backend_pid
            socket = connection.pgconn.socket
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))

        def hung_up() -> bool:
            return bool(select.select([socket], [], [], 0)[0])

        wait_for(hung_up, what="the terminated backend's socket to say so")
        assert store.list_projects() == []  # no error: the pool took a new connection
        with store._db.connection() as connection:
            assert connection.info.backend_pid != pid
    finally:
        store.close()
