"""The PostgreSQL store's trigram function (migration 6's tracetui_grams), which the text index
and every text search go through: its keys are exactly the distinct 3-character substrings of
the lower-cased text, by their plain definition, for any text (hypothesis); a database at
version 5 finds what it found before once migrated; and the function takes linear work (its
speed is a bench row: `make bench BENCH=bench_backends`)."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.service.conftest import schema_url
from tui.server.search.filters import TraceFilters
from tui.server.store.postgres import migrations
from tui.server.store.postgres.store import PostgresStore
from tui.server.store.rows import SpanGroup, SpanRow

NOW = 1_795_000_000_000

# The definition, spelled out: every position's 3 characters (chr(1) read as chr(2), as the
# function does, so that its pieces split where they should).
BY_DEFINITION = (
    "SELECT coalesce(array_agg(DISTINCT substr(b, i, 3)), '{}') FROM (SELECT"
    " replace(lower(%(t)s COLLATE {c}), chr(1), chr(2)) AS b) AS s,"
    " generate_series(1, length(b) - 2) AS i"
)
# The tests' database is in the C locale; a team's may lower-case all of Unicode, where
# lower() can lengthen a text (İ becomes i̇): PostgreSQL 18's built-in full case mapping.
COLLATIONS = ('"C"', "pg_unicode_fast")


@pytest.fixture(scope="module")
def connection(store_database: str) -> Iterator[psycopg.Connection]:
    url = schema_url(store_database)
    PostgresStore(url, pool_size=1).close()  # migrated to the latest version
    with psycopg.connect(url, autocommit=True) as connection:
        yield connection


TEXTS = st.text(
    alphabet=st.one_of(
        st.sampled_from("aAbB \n\t\x01\x02é€😀İΣ"),
        st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
    ),
    max_size=40,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=TEXTS, collation=st.sampled_from(COLLATIONS))
def test_the_trigrams_are_every_3_characters_of_the_lower_cased_text(
    connection: psycopg.Connection, text: str, collation: str
) -> None:
    made = connection.execute(
        f"SELECT tracetui_grams(%(t)s COLLATE {collation})".encode(), {"t": text}
    ).fetchone()
    meant = connection.execute(
        BY_DEFINITION.replace("{c}", collation).encode(), {"t": text}
    ).fetchone()
    assert made is not None and meant is not None
    assert sorted(set(made[0])) == sorted(meant[0]), text


def test_a_database_at_version_5_finds_its_texts_once_migrated(store_database: str) -> None:
    """Traces stored under the quadratic function of version 5 are found after the upgrade,
    a text holding chr(1) included (its keys changed: the index is rebuilt)."""
    url = schema_url(store_database)
    with psycopg.connect(url, autocommit=True) as db:
        migrations.migrate(db, "test", migrations.MIGRATIONS[:5])
    texts = {"a" * 32: "the refund was sent", "b" * 32: "x\x01refund\x01y", "c" * 32: "nothing"}
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(
            "INSERT INTO projects (id, name, description, retention_days, created_at)"
            " VALUES ('p', 'p', '', 30, 0)"
        )
        for trace_id, text in texts.items():
            db.execute(
                "INSERT INTO traces (id, project_id, name, started_at, duration_ms, span_count,"
                " input_tokens, output_tokens, total_cost_usd, status, error_count, attributes,"
                " listed_at, search_text) VALUES (%s, 'p', 'run', %s, 1, 1, 0, 0, 0, 'ok', 0,"
                " '{}', %s, %s)",
                (trace_id, NOW - 10, NOW - 10, text),
            )
    store = PostgresStore(url, pool_size=1)
    try:
        found, _ = store.search_traces("p", TraceFilters(q="refund"), NOW - 1000, NOW, 10)
        assert sorted(t.id for t in found) == ["a" * 32, "b" * 32]
        with_separator, _ = store.search_traces("p", TraceFilters(q="x\x01r"), NOW - 1000, NOW, 10)
        assert [t.id for t in with_separator] == ["b" * 32]
        store.ingest([[SpanGroup("p", None, "{}", [span("d" * 32, "late refund")])]])
        found, _ = store.search_traces("p", TraceFilters(q="REFUND"), NOW - 1000, NOW, 10)
        assert sorted(t.id for t in found) == ["a" * 32, "b" * 32, "d" * 32]
    finally:
        store.close()


def span(trace_id: str, name: str) -> SpanRow:
    return SpanRow(
        trace_id, "s1", None, name, "chain", None, NOW - 10, 1, 0, 0, 0.0, "ok", None, "{}"
    )
