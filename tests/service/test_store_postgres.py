"""What only the PostgreSQL store has to show: migrations under an advisory lock (replicas
starting at once migrate once), a database it cannot open refused in one line without the
password, the same trace written by two transactions at once summed right, and PostgreSQL
restarting under an open store (refused for now meanwhile, working again by itself)."""

from __future__ import annotations

import pickle
import threading

import psycopg
import pytest

from tests.service.conftest import schema_url
from tests.support.postgres import PostgresServer
from tests.support.service import wait_for
from tui.server.store.errors import SchemaTooNew, StoreBusy, StoreUnavailable, StoreUnreachable
from tui.server.store.postgres.migrations import LATEST, VERSION_TABLE
from tui.server.store.postgres.store import PostgresStore
from tui.server.store.rows import SpanGroup, SpanRow

NOW = 1_795_000_000_000


def versions(url: str) -> list[int]:
    with psycopg.connect(url) as connection:
        rows = connection.execute(f"SELECT version FROM {VERSION_TABLE} ORDER BY version")
        return [row[0] for row in rows]


def test_replicas_starting_at_once_migrate_once(store_database: str) -> None:
    url = schema_url(store_database)
    stores: list[PostgresStore] = []
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            stores.append(PostgresStore(url, pool_size=1))
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=open_one) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for store in stores:
        store.close()
    assert errors == [] and len(stores) == 6
    assert versions(url) == list(range(1, LATEST + 1))


def test_a_database_from_a_newer_tracetui_is_refused_untouched(
    store_database: str, postgres_server: PostgresServer
) -> None:
    url = schema_url(store_database)
    PostgresStore(url).close()
    with psycopg.connect(url) as connection:
        connection.execute(
            f"INSERT INTO {VERSION_TABLE} (version, summary) VALUES (%s, 'x')", (LATEST + 1,)
        )
    password_url = url.replace("tracetui@", f"tracetui:{postgres_server.password}@")
    with pytest.raises(SchemaTooNew) as refused:
        PostgresStore(password_url)
    message = str(refused.value)
    assert f"version {LATEST + 1}" in message and postgres_server.password not in message
    assert versions(url) == [*range(1, LATEST + 1), LATEST + 1]


def test_a_database_it_cannot_open_is_refused_in_one_line_without_the_password(
    postgres_server: PostgresServer,
) -> None:
    wrong = postgres_server.tcp_url("postgres").replace(
        postgres_server.password, "not-the-password-123"
    )
    missing = postgres_server.tcp_url("no_such_database")
    down = "postgresql://tracetui:hunter2-secret@127.0.0.1:1/db"
    for url, words in ((wrong, "password"), (missing, "no_such_database"), (down, "127.0.0.1")):
        with pytest.raises(StoreUnreachable) as refused:
            PostgresStore(url)
        message = str(refused.value)
        assert "\n" not in message and words in message, message
        for secret in ("not-the-password-123", postgres_server.password, "hunter2-secret"):
            assert secret not in message
        assert "***" in message  # the URL, shown redacted


def test_the_location_and_the_opener_never_show_the_password(
    store_database: str, postgres_server: PostgresServer
) -> None:
    url = schema_url(store_database).replace("tracetui@", f"tracetui:{postgres_server.password}@")
    store = PostgresStore(url)
    try:
        assert postgres_server.password not in store.location + repr(store)
        opener = store.opener()
        assert postgres_server.password not in repr(opener)
        other = pickle.loads(pickle.dumps(opener))()  # noqa: S301 - our own bytes
        try:
            assert other.checkpoint() == (0, 0) and other.list_projects() == []
        finally:
            other.close()
    finally:
        store.close()


def test_one_trace_written_by_two_transactions_at_once_sums_every_span(
    store_database: str,
) -> None:
    # Two stores (two replicas' pools) write halves of each trace at the same moment.
    url = schema_url(store_database)
    first, second = PostgresStore(url, pool_size=2), PostgresStore(url, pool_size=2)
    with first.transaction() as db:
        first.insert_project(db, "p", None, 30, project_id="p")
    rounds, half = 25, 20

    def spans(trace: str, part: int) -> list[SpanRow]:
        return [
            SpanRow(
                trace,
                f"s{part}-{n:02d}",
                None if n == 0 and part == 0 else "s0-00",
                "x",
                "agent" if n == 0 and part == 0 else "llm",  # calls below one agent
                "m",
                NOW + part * 100 + n,
                5,
                1,
                2,
                0.125,
                "ok",
                None,
                "{}",
            )
            for n in range(half)
        ]

    errors: list[BaseException] = []

    def write(store: PostgresStore, part: int, barrier: threading.Barrier) -> None:
        try:
            for round_ in range(rounds):
                barrier.wait(timeout=60)
                store.ingest([[SpanGroup("p", None, "{}", spans(f"t{round_}", part))]])
        except BaseException as error:
            errors.append(error)

    barrier = threading.Barrier(2)
    threads = [
        threading.Thread(target=write, args=(store, part, barrier))
        for part, store in enumerate((first, second))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for round_ in range(rounds):
        trace = first.get_trace(f"t{round_}", "p")
        assert trace is not None
        assert (trace.span_count, trace.input_tokens, trace.output_tokens) == (40, 40, 80)
        assert trace.total_cost_usd == 5.0 and trace.duration_ms == 100 + half - 1 + 5 - 0
    assert first.count("spans") == rounds * 2 * half
    first.close()
    second.close()


def test_postgresql_restarting_under_an_open_store(
    store_database: str, postgres_server: PostgresServer
) -> None:
    store = PostgresStore(schema_url(store_database), pool_size=2)
    try:
        with store.transaction() as db:
            store.insert_project(db, "p", None, 30, project_id="p")
        group = SpanGroup(
            "p",
            None,
            "{}",
            [SpanRow("t1", "s1", None, "x", "chain", None, NOW, 5, 0, 0, 0.0, "ok", None, "{}")],
        )
        postgres_server.stop("fast")
        try:
            with pytest.raises(StoreBusy):
                store.ingest([[group]])
            with pytest.raises(StoreUnavailable):
                store.list_projects()
        finally:
            postgres_server.start()

        def works() -> bool:
            try:
                store.ingest([[group]])
                return True
            except StoreBusy:
                return False

        wait_for(works, what="the store to work again after PostgreSQL restarted")
        assert [p.id for p in store.list_projects()] == ["p"]
        assert store.count("spans") == 1
    finally:
        store.close()


def test_text_with_nul_is_stored_with_a_replacement_character(store_database: str) -> None:
    # PostgreSQL's text cannot hold U+0000 (SQLite's can): it becomes U+FFFD, in what is
    # written and in what is looked up, so the id sent finds its trace, and nothing fails.
    store = PostgresStore(schema_url(store_database), pool_size=1)
    try:
        row = SpanRow(
            "t\x00", "s1", None, "a\x00b", "chain", None, NOW, 5, 0, 0, 0.0, "ok", None, "{}"
        )
        store.ingest([[SpanGroup(None, "p\x00", "{}", [row])]])
        (project,) = store.list_projects()
        assert project.name == "p\ufffd"
        assert [s.name for s in store.iter_spans("t\ufffd", project.id)] == ["a\ufffdb"]
        assert [t.name for t in store.find_traces("t\x00")] == ["a\ufffdb"]
        assert store.key_scope("k\x00") is None
        assert store.get_project("p\x00") is None
    finally:
        store.close()
