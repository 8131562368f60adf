"""Stores of both backends for the store's contract tests: `open_store` is parametrised over
SQLite (a file in tmp_path) and PostgreSQL (a schema of its own in this module's database, on
the one PostgreSQL of this test process), so each test runs on both and sees an empty store.

PostgreSQL costs a database per module (CREATE DATABASE from the template, ~0.5 s on a loaded
machine) and a schema per test (milliseconds, plus the store's migrations: tens of ms).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

import tests.conftest as shared
from tests.support.postgres import PostgresServer, postgres_server_fixture
from tui.server.store.sqlite.store import Store

# One PostgreSQL per test process (per xdist worker): the session's shared fixture if the
# top-level conftest has it, else this one (never both: two servers per worker).
if not hasattr(shared, "postgres_server"):
    postgres_server = postgres_server_fixture()

BACKENDS = ["sqlite", "postgres"]
OpenStore = Callable[..., Any]  # open_store(pool_size=...) -> Store | PostgresStore


@pytest.fixture(scope="module")
def store_database(request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh database for this module (its socket URL), dropped afterwards."""
    server: PostgresServer = request.getfixturevalue("postgres_server")
    name = server.create_database()
    try:
        yield server.socket_url(name)
    finally:
        if server.running:
            server.drop_database(name)


def schema_url(database_url: str) -> str:
    """`database_url` with a new, empty schema of its own as the search path."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}".encode())
    return f"{database_url}&options=-csearch_path%3D{schema}"


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store_url(backend: str, request: pytest.FixtureRequest, tmp_path: Any) -> str:
    """Where this test's store lives: a SQLite file, or a PostgreSQL URL (a fresh schema)."""
    if backend == "sqlite":
        return str(tmp_path / "store.sqlite3")
    return schema_url(request.getfixturevalue("store_database"))


@pytest.fixture
def open_store(store_url: str, backend: str) -> Iterator[OpenStore]:
    """Opens this test's store (again, for a second handle on the same data); every store
    it opened is closed at the end."""
    opened: list[Any] = []

    def open_it(**options: Any) -> Any:
        if backend == "sqlite":
            store: Any = Store(store_url)
        else:
            from tui.server.store.postgres.store import PostgresStore

            store = PostgresStore(store_url, **options)
        opened.append(store)
        return store

    yield open_it
    for store in opened:
        store.close()


@pytest.fixture
def store(open_store: OpenStore) -> Any:
    """This test's store, empty, of either backend."""
    return open_store()
