"""SQLite's text index in a database file of its own, beside the database: `<path>-text`.

One SQLite file has one write lock, and ingest's two worker processes were bound by it; the
service's indexer (store/texts.py) held it a third as long as they did, writing FTS5 rows
(docs/benchmarks.md, "SQLite after the text left the request's write"). So the FTS5 table
`trace_texts` and its keys `trace_text_keys` live in a second file, whose lock only the indexer
takes:

- every ordinary connection of the store attaches the text file READ-ONLY as schema `text`
  (`BEGIN IMMEDIATE` takes the write lock of every read-write attached database, and of no
  read-only one), so a search joins traces with the index as before (unqualified names resolve
  across the attached schemas);
- the indexer writes on a connection of its own whose main database is the text file, with the
  database attached read-only as `data`: it reads the texts waiting in `trace_text_pending` and
  the tombstones of deleted traces (`trace_text_tombstones`), writes the index, commits, and only
  then deletes what it used from the database in one short transaction (Store.index_texts).
  A crash in between indexes the same texts again: a trace's FTS5 row is replaced, never
  doubled. Both tables number their rows with AUTOINCREMENT, so a row written after the
  indexer read never takes the number of one it read (it would be deleted unindexed).
- a trace's deletion cannot reach another file from a trigger: the trigger of the database
  writes a tombstone, which the indexer applies before the texts it read in the same snapshot
  (a trace deleted, then sent again, keeps its new text).

The file is named so that `cp tracetui.sqlite3*` copies both (and their logs). It is found by
the database's real path (symlinks resolved, as SQLite names its main file), so a database
opened through a link and through its target finds the same text file. A text file that is
missing (the database copied alone) is made anew, empty, and the store logs a warning: the
texts of the traces stored until then are not found by `q` again (a trace that gets new spans
is found by their text).
"""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from collections.abc import Iterator

TEXT_SUFFIX = "-text"
TEXT_SCHEMA_NAME = "text"  # the text file, attached read-only to every ordinary connection
DATA_SCHEMA_NAME = "data"  # the database, attached read-only to the indexer's connection

# The text file's schema (the tables of migration 8, moved by migration 15). trace_texts'
# rowid is the trace's trace_text_keys.id.
TEXT_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS trace_text_keys (
    id INTEGER PRIMARY KEY,
    project_id TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    UNIQUE (project_id, trace_id)
)""",
    "CREATE VIRTUAL TABLE IF NOT EXISTS trace_texts USING fts5(body, tokenize = 'trigram')",
)
OPEN_WAIT_MS = 5000  # how long making the file's tables waits for another process doing it


def text_path(path: str) -> str:
    """The text file of the database at `path` (beside its real file)."""
    return os.path.realpath(path) + TEXT_SUFFIX


def file_uri(path: str) -> str:
    """`path` as a URI that names that very file (its characters escaped: a path such as
    `file:x.db` or `a?b` is a file's name, as a plain path is)."""
    return "file:" + urllib.parse.quote(os.path.abspath(path))


def read_only_uri(path: str) -> str:
    """`path` as a URI that SQLite opens read-only."""
    return file_uri(path) + "?mode=ro"


def attach_read_only(db: sqlite3.Connection, path: str, name: str) -> None:
    """Attach the database file at `path` to `db` (opened with uri=True) read-only as `name`."""
    db.execute(f"ATTACH DATABASE ? AS {name}", (read_only_uri(path),))


def make_text_file(path: str) -> bool:
    """Make the text file of the database at `path`, with its tables, if it lacks either
    (write-ahead log, as the database); returns whether the file was missing."""
    missing = not os.path.exists(text_path(path))
    db = sqlite3.connect(text_path(path), isolation_level=None)
    try:
        db.execute(f"PRAGMA busy_timeout={OPEN_WAIT_MS}")
        db.execute("PRAGMA journal_mode=WAL")
        for statement in TEXT_SCHEMA:
            db.execute(statement)
    finally:
        db.close()
    return missing


def main_file(db: sqlite3.Connection) -> str:
    """The path of `db`'s main database file."""
    for _, name, file in db.execute("PRAGMA database_list"):
        if name == "main":
            return str(file)
    raise sqlite3.OperationalError("no main database")


MOVE_BATCH = 2_000


def move_texts(db: sqlite3.Connection) -> None:
    """Migration 15, in the database's migration transaction on `db`: the texts indexed in the
    database are indexed again in the text file, keyed by the same ids, then dropped here with
    their trigger; deletions become tombstones, and the texts waiting get numbers never reused.

    A transaction over two files is atomic per file only, so the text file's part commits
    first, starting from empty tables (whatever an interrupted run left is dropped): if the
    database's part then fails, the version is not recorded and the next opening runs it all
    again."""
    text = sqlite3.connect(text_path(main_file(db)), isolation_level=None)
    try:
        text.execute(f"PRAGMA busy_timeout={OPEN_WAIT_MS}")
        text.execute("PRAGMA journal_mode=WAL")
        text.execute("BEGIN IMMEDIATE")
        try:
            text.execute("DROP TABLE IF EXISTS trace_texts")
            text.execute("DROP TABLE IF EXISTS trace_text_keys")
            for statement in TEXT_SCHEMA:
                text.execute(statement)
            for rows in _indexed_texts(db):
                text.executemany(
                    "INSERT INTO trace_text_keys (id, project_id, trace_id) VALUES (?, ?, ?)",
                    [row[:3] for row in rows],
                )
                text.executemany(
                    "INSERT INTO trace_texts (rowid, body) VALUES (?, ?)",
                    [(row[0], row[3]) for row in rows],
                )
            text.execute("COMMIT")
        except BaseException:
            text.execute("ROLLBACK")
            raise
    finally:
        text.close()
    for statement in MAIN_AFTER_MOVE:
        db.execute(statement)


def _indexed_texts(db: sqlite3.Connection) -> Iterator[list[tuple[int, str, str, str]]]:
    """The database's indexed texts as (key, project_id, trace_id, text), MOVE_BATCH at a time."""
    cursor = db.execute(
        "SELECT k.id, k.project_id, k.trace_id, f.body FROM trace_text_keys k"
        " JOIN trace_texts f ON f.rowid = k.id ORDER BY k.id"
    )
    try:
        while rows := cursor.fetchmany(MOVE_BATCH):
            yield rows
    finally:
        cursor.close()


# The database's part of migration 15. The texts waiting are numbered by AUTOINCREMENT (see the
# module's docstring); a deleted trace leaves a tombstone, and its waiting text goes at once.
MAIN_AFTER_MOVE = (
    "DROP TRIGGER trace_texts_gone",
    "DROP TABLE trace_texts",
    "DROP TABLE trace_text_keys",
    "DROP TRIGGER trace_text_pending_gone",
    """CREATE TABLE trace_text_pending_v15 (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    body TEXT NOT NULL,
    UNIQUE (project_id, trace_id)
)""",
    "INSERT INTO trace_text_pending_v15 (id, project_id, trace_id, body)"
    " SELECT id, project_id, trace_id, body FROM trace_text_pending ORDER BY id",
    "DROP TABLE trace_text_pending",
    "ALTER TABLE trace_text_pending_v15 RENAME TO trace_text_pending",
    """CREATE TABLE trace_text_tombstones (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id TEXT NOT NULL,
    trace_id TEXT NOT NULL
)""",
    """CREATE TRIGGER trace_text_gone AFTER DELETE ON traces BEGIN
    DELETE FROM trace_text_pending WHERE project_id = old.project_id AND trace_id = old.id;
    INSERT INTO trace_text_tombstones (project_id, trace_id) VALUES (old.project_id, old.id);
END""",
)
