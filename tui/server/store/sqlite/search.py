"""The SQLite store's own half of search (store/search.py): the text index, written off ingest's
path, and how a text search picks its plan.

The text lives in the FTS5 table trace_texts (trigram tokenizer), each row keyed by
trace_text_keys' id for the trace, in a database file of its own (textfile.py: the indexer
takes its write lock, not the database's). Ingest writes a trace's text to trace_text_pending
in the database, from which the indexer moves it into the index in batches (index_pending;
store/texts.py says when): an FTS5 row written as each body was stored cost more than half of
ingest's write.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from tui.server.search.filters import TraceFilters
from tui.server.search.stored import Extras, merged
from tui.server.store.dialect import fts_match
from tui.server.store.rows import TraceSummary, TraceSums
from tui.server.store.search import SearchTables, text_parts


def write_texts(db: sqlite3.Connection, project_id: str, sums: Sequence[TraceSums]) -> None:
    """New traces' texts, for the indexer (index_pending): ingest's write."""
    db.executemany(
        "INSERT OR REPLACE INTO trace_text_pending (project_id, trace_id, body) VALUES (?, ?, ?)",
        [(project_id, t.id, t.search_text) for t in sums if t.search_text],
    )


def write_text_rows(db: sqlite3.Connection, rows: Iterable[tuple[str, str, str]]) -> int:
    """Texts of new traces, as (project_id, trace_id, text), for the indexer as ingest leaves
    them (bulk writes: the demo's data, benchmarks, tests; the store indexes them once their
    transaction is committed); returns how many."""
    texts = [row for row in rows if row[2]]
    db.executemany(
        "INSERT OR REPLACE INTO trace_text_pending (project_id, trace_id, body) VALUES (?, ?, ?)",
        texts,
    )
    return len(texts)


def stored_text(db: sqlite3.Connection, project_id: str, trace_id: str) -> str | None:
    """A stored trace's text: the one waiting for the index, else the indexed one."""
    found = db.execute(
        "SELECT body FROM trace_text_pending WHERE project_id = ? AND trace_id = ?",
        (project_id, trace_id),
    ).fetchone()
    if found is None:
        found = db.execute(
            "SELECT body FROM trace_texts WHERE rowid = (SELECT id FROM trace_text_keys"
            " WHERE project_id = ? AND trace_id = ?)",
            (project_id, trace_id),
        ).fetchone()
    return found[0] if found else None


def update_stored(db: sqlite3.Connection, project_id: str, sums: Sequence[TraceSums]) -> None:
    """Stored traces' extras merged with those of their newly arrived spans; a text that
    grew waits for the indexer, as a new one does."""
    for t in sums:
        row = db.execute(
            "SELECT user_id, session_id, tags, output_preview, models FROM traces"
            " WHERE project_id = ? AND id = ?",
            (project_id, t.id),
        ).fetchone()
        if row is None:
            continue
        text = stored_text(db, project_id, t.id)
        new = merged(Extras(row[0], row[1], row[2], row[3], row[4], text), t)
        db.execute(
            "UPDATE traces SET user_id = ?, session_id = ?, tags = ?, output_preview = ?,"
            " models = ? WHERE project_id = ? AND id = ?",
            (*new[:5], project_id, t.id),
        )
        if new.search_text and new.search_text != text:
            write_texts(db, project_id, [t._replace(search_text=new.search_text)])


def index_pending(db: sqlite3.Connection, limit: int) -> tuple[int, int]:
    """Index up to `limit` waiting texts, oldest first, in the indexer's write transaction on
    the text file (`db`: the database attached read-only); returns how many, and the number of
    the last one (the waiting rows up to it are the caller's to delete, once this is
    committed). A trace indexed before (its text grew since, or it is indexed again after a
    crash) has its FTS5 row replaced. Three statements for the batch, not two per text: 10%
    less of the indexer's time than a look-up of each text's key from Python."""
    count, last = db.execute(
        "SELECT count(*), max(id) FROM (SELECT id FROM trace_text_pending ORDER BY id LIMIT ?)",
        (limit,),
    ).fetchone()
    if not count:
        return 0, 0
    batch = (
        "FROM trace_text_pending p JOIN trace_text_keys k"
        " ON k.project_id = p.project_id AND k.trace_id = p.trace_id WHERE p.id <= ?"
    )
    db.execute(f"DELETE FROM trace_texts WHERE rowid IN (SELECT k.id {batch})", (last,))
    db.execute(
        "INSERT OR IGNORE INTO trace_text_keys (project_id, trace_id)"
        " SELECT project_id, trace_id FROM trace_text_pending WHERE id <= ? ORDER BY id",
        (last,),
    )
    db.execute(f"INSERT INTO trace_texts (rowid, body) SELECT k.id, p.body {batch}", (last,))
    return int(count), int(last)


def apply_tombstones(db: sqlite3.Connection, limit: int) -> tuple[int, int]:
    """Remove from the index the texts of up to `limit` deleted traces (their tombstones,
    oldest first), in the indexer's write transaction on the text file; returns how many
    tombstones, and the number of the last one (the caller's to delete once committed)."""
    last = db.execute(
        "SELECT count(*), max(id) FROM (SELECT id FROM trace_text_tombstones ORDER BY id LIMIT ?)",
        (limit,),
    ).fetchone()
    count, last_id = last[0], last[1] or 0
    if count:
        gone = (
            "SELECT k.id FROM trace_text_keys k JOIN trace_text_tombstones g"
            " ON g.project_id = k.project_id AND g.trace_id = k.trace_id WHERE g.id <= ?"
        )
        db.execute(f"DELETE FROM trace_texts WHERE rowid IN ({gone})", (last_id,))
        db.execute(f"DELETE FROM trace_text_keys WHERE id IN ({gone})", (last_id,))
    return count, last_id


# Where the two ways of searching the text cost about the same on 1,000,000 traces (measured:
# tests/perf/bench_search.py): ordering the matches costs ~13 us each, looking a trace up in
# the index ~50 us, and a page needs 100 / (matches / traces) lookups.
COMMON_MATCHES = 20_000


def is_common(db: sqlite3.Connection, terms: tuple[str, ...]) -> bool:
    """Whether the terms match COMMON_MATCHES traces or more (in any project): counted up
    to there only (~3 us a match)."""
    row = db.execute(
        "SELECT count(*) FROM (SELECT 1 FROM trace_texts WHERE trace_texts MATCH ? LIMIT ?)",
        (fts_match(terms), COMMON_MATCHES),
    ).fetchone()
    return bool(row and row[0] >= COMMON_MATCHES)


class SqliteSearch(SearchTables):
    """How SQLite runs a filtered listing: a text search's plan is picked by counting its
    matches first (is_common)."""

    # Measured on 1,000,000 traces (tests/perf/bench_annotations.py), sorted by duration: read
    # whole, 1,500 traces of a label took 49 ms and 10,000 of a score bound 160 ms; walked, 1,225
    # and 115 ms. Reading them costs a look-up each (~25 us); walking, 100 / density steps.
    annotated_common = 5_000

    def _search_rows(
        self,
        db: Any,
        filters: TraceFilters,
        limit: int,
        page: Callable[..., tuple[str, list[Any]]],
    ) -> list[TraceSummary]:
        every = (*filters.searched_terms, *(term for _, term in text_parts(filters)))
        common = bool(every) and is_common(db, every)
        sql, args = page(common_text=common)
        return list(map(TraceSummary._make, db.execute(sql, args)))
