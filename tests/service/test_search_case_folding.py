"""`q` folds case the same way on both stores, whatever the script (issue 39, point 8: under the
C locale the tests and `make serve-pg` use, PostgreSQL's ILIKE folded ASCII only, so "école" did
not find "ÉCOLE" nor "οδυσσεας" "ΟΔΥΣΣΕΑΣ", which SQLite's FTS5 found).

A trace's text is folded (str.casefold) when ingest makes it (search.text.searched_text) and a
query's words when they are searched: a word is found exactly when its folded form is a
substring of the folded text, on either store. Here hypothesis writes texts in many scripts and
searches for a piece of each in another case; a trace stored before the fold (its text as it
came) is folded by the migration (test_store_migrations.py checks that part).
"""

from __future__ import annotations

import itertools
import sqlite3
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from tui.server.search.filters import MIN_TERM, TraceFilters
from tui.server.search.text import searched_text
from tui.server.store.dialect import POSTGRES, SQLITE
from tui.server.store.postgres import migrations as postgres_migrations
from tui.server.store.rows import ProjectRow, TraceRow
from tui.server.store.sql import INSERT
from tui.server.store.sqlite import migrations as sqlite_migrations

NOW = 1_795_000_000_000

# Letters of scripts with case (Latin, Greek, Cyrillic, Armenian, Georgian, Cherokee, Deseret,
# ligatures, the dotted and dotless i, sharp s, final sigma), and some without.
alphabet = st.characters(
    codec="utf-8",
    categories=("Lu", "Ll", "Lt", "Lo", "Nd", "Mn"),
    min_codepoint=0x41,
    max_codepoint=0x1044F,
) | st.sampled_from([*"ßẞİıſςΣσﬁﬀǅǄǆKÅΩ", "\u0130", "\u1e9e", "\u13a0", "\uab70"])
texts = st.text(alphabet, min_size=MIN_TERM, max_size=30)
VARIANTS = (str.upper, str.lower, str.casefold, str.swapcase, str.title, lambda s: s)

counter = itertools.count()


def stored_with(store: Any, text: str) -> str:
    """A new project holding one trace whose span's input is `text`, stored as ingest stores
    it (its search text made by searched_text); the project's id."""
    project = f"fold-{next(counter)}"
    trace = trace_row(project, "a" * 32)
    searched = searched_text([("t", None, {"input.value": text})])
    with store.transaction() as db:
        store.insert_project(db, project, None, 30, project_id=project)
        store.insert_traces(db, [trace], texts=[(project, trace.id, searched)])
    return project


def trace_row(project: str, trace_id: str) -> TraceRow:
    fields = (trace_id, project, "t", NOW, 1, 1, 0, 0, 0.0, "ok", 0, "{}", NOW, None)
    return TraceRow(*fields, None, None, "[]", None, "[]")


def finds(store: Any, project: str, word: str) -> bool:
    rows, _ = store.search_traces(project, TraceFilters(q=word), NOW - 1, NOW + 1, 10)
    return bool(rows)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=texts, data=st.data())
@example(text="L'ÉCOLE", data=None)
@example(text="ΟΔΥΣΣΕΑΣ", data=None)
@example(text="Straße", data=None)
def test_a_word_in_another_case_is_found_as_its_folded_form_says_on_both_stores(
    store: Any, text: str, data: Any
) -> None:
    project = stored_with(store, text)
    if data is None:  # the examples: the issue's words, and sharp s's full folding
        words = {"L'ÉCOLE": "école", "ΟΔΥΣΣΕΑΣ": "οδυσσεας", "Straße": "STRASSE"}
        assert finds(store, project, words[text])
        return
    start = data.draw(st.integers(0, len(text) - MIN_TERM), label="start")
    end = data.draw(st.integers(start + MIN_TERM, len(text)), label="end")
    variant = data.draw(st.sampled_from(VARIANTS), label="variant")
    word = variant(text[start:end])
    assume(len(word) >= MIN_TERM and not any(c.isspace() or c == '"' for c in word))
    expected = word.casefold() in text.casefold()
    assert finds(store, project, word) == expected, (text, word)


@pytest.mark.parametrize(
    ("text", "word"),
    [("école", "ÉCOLE"), ("ÉCOLE", "école"), ("ΟΔΥΣΣΕΑΣ", "οδυσσεας"), ("STRASSE", "straße")],
)
def test_the_issue_s_words_are_found_both_ways(store: Any, text: str, word: str) -> None:
    assert finds(store, stored_with(store, text), word)


# The versions that fold the texts stored before: the database is made at the one before.
FOLDING = {"sqlite": 12, "postgres": 9}
STORED_AS_THEY_CAME = {"a" * 32: "À L'ÉCOLE", "b" * 32: "Straße 5", "c" * 32: "Refund sent"}


def before_folding(backend: str, url: str) -> None:
    """A database at the version before texts were folded, holding the texts as they came."""
    project = ProjectRow("p", "p", None, 30, 0)
    rows = [trace_row("p", trace_id) for trace_id in STORED_AS_THEY_CAME]
    if backend == "sqlite":
        db = sqlite3.connect(url, isolation_level=None)
        before = [m for m in sqlite_migrations.MIGRATIONS if m.version < FOLDING[backend]]
        sqlite_migrations.migrate(db, url, before)
        db.execute("BEGIN")
        db.execute(SQLITE.sql(INSERT[ProjectRow]), project)
        db.executemany(SQLITE.sql(INSERT[TraceRow]), rows)
        # Indexed, as the index then held them (in the database: textfile.py moved it later).
        for key, (trace_id, text) in enumerate(STORED_AS_THEY_CAME.items(), start=1):
            db.execute("INSERT INTO trace_text_keys VALUES (?, 'p', ?)", (key, trace_id))
            db.execute("INSERT INTO trace_texts (rowid, body) VALUES (?, ?)", (key, text))
        db.execute("COMMIT")
        db.close()
        return
    with psycopg.connect(url, autocommit=True) as connection:
        before = [m for m in postgres_migrations.MIGRATIONS if m.version < FOLDING[backend]]
        postgres_migrations.migrate(connection, "test", before)
        connection.execute(POSTGRES.sql(INSERT[ProjectRow]), project)
        for row in rows:
            connection.execute(
                POSTGRES.sql(INSERT[TraceRow].replace(") VALUES (", ", search_text) VALUES (?, ")),
                (*row, STORED_AS_THEY_CAME[row.id]),
            )


def test_texts_stored_before_folding_are_folded_by_the_migration(
    backend: str, store_url: str, open_store: Any
) -> None:
    before_folding(backend, store_url)
    store = open_store()  # migrated to the latest version
    for word, trace_id in [("école", "a"), ('"à l\'"', "a"), ("STRASSE", "b"), ("refund", "c")]:
        assert finds(store, "p", word), word
        rows, _ = store.search_traces("p", TraceFilters(q=word), NOW - 1, NOW + 1, 10)
        assert [r.id for r in rows] == [trace_id * 32], word
