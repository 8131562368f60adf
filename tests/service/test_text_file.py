"""SQLite's text index in a file of its own (store/sqlite/textfile.py): a deleted trace's text
leaves the index (through a tombstone the indexer applies), a trace deleted and sent again is
found by its new text, also when that happens while the indexer works; a database of the
version before keeps its texts; and the indexer's write never holds ingest's (the point of the
file: each file has its own write lock). The deletions are tested on both stores; the rest is
SQLite's own. Conditions are waited for with a generous deadline, never timed."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tui.server.search.filters import TraceFilters
from tui.server.store.dialect import SQLITE
from tui.server.store.errors import StoreUnavailable
from tui.server.store.rows import ProjectRow, SpanGroup, SpanRow, TraceRow, now_ms
from tui.server.store.sql import INSERT
from tui.server.store.sqlite import migrations, search
from tui.server.store.sqlite.store import Store
from tui.server.store.sqlite.textfile import read_only_uri, text_path

NOW = now_ms()
START, END = NOW - 3_600_000, NOW + 3_600_000
LONG_AGO = NOW - 100 * 86_400_000  # beyond the project's retention (30 days)
DEADLINE_S = 60.0  # for conditions: generous, never a measure


def span_row(trace_id: str, words: str, started_at: int = NOW - 1000) -> SpanRow:
    return SpanRow(
        trace_id, "r1", None, "step", "chain", None, started_at, 10, 0, 0, 0.0, "ok", None,
        '{"input.value": "' + words + '"}',
    )  # fmt: skip


def ingest(store: Any, trace_id: str, words: str, started_at: int = NOW - 1000) -> None:
    store.ingest([[SpanGroup("p", None, "{}", [span_row(trace_id, words, started_at)])]])


def found(store: Any, words: str) -> list[str]:
    rows, _ = store.search_traces("p", TraceFilters(q=words), START, END, 10)
    return [row.id for row in rows]


def indexed(path: str, words: str) -> int:
    """How many rows of the text file (beside the database at `path`) hold `words`."""
    db = sqlite3.connect(read_only_uri(text_path(path)), uri=True)
    try:
        match = '"' + words + '"'
        return int(db.execute("SELECT count(*) FROM trace_texts(?)", (match,)).fetchone()[0])
    finally:
        db.close()


def with_project(store: Any) -> Any:
    with store.transaction() as db:
        store.insert_project(db, "p", None, 30, project_id="p")
    return store


@pytest.fixture
def project_store(store: Any) -> Any:
    return with_project(store)


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[Store]:
    """A SQLite store with project "p": what has an indexer between ingest and the index
    (PostgreSQL indexes a text as it writes it)."""
    store = with_project(Store(tmp_path / "store.sqlite3"))
    try:
        yield store
    finally:
        store.close()


def test_a_deleted_traces_text_leaves_the_index(project_store: Any, backend: str) -> None:
    store, trace = project_store, "d1" * 16
    ingest(store, trace, "narwhal tusk", started_at=LONG_AGO)
    store.index_texts()
    if backend == "sqlite":
        assert indexed(store.path, "narwhal") == 1
    assert store.expire(NOW) == 1  # past its retention: deleted
    store.index_texts()
    assert found(store, "narwhal") == []
    if backend == "sqlite":
        assert indexed(store.path, "narwhal") == 0  # the row itself, not just its trace
        with store._read() as db:  # and the tombstone, once applied, is forgotten
            assert db.execute("SELECT count(*) FROM trace_text_tombstones").fetchone() == (0,)


def test_a_trace_deleted_then_sent_again_is_found_by_its_new_text(
    project_store: Any, backend: str
) -> None:
    """Deleted once indexed, and again before the indexer saw its next text: each time it is
    sent again, its new words find it and its old ones do not."""
    store, trace = project_store, "e2" * 16
    ingest(store, trace, "first wombat", started_at=LONG_AGO)
    store.index_texts()
    assert store.expire(NOW) == 1
    ingest(store, trace, "second quokka", started_at=LONG_AGO)  # before any indexing
    assert store.expire(NOW) == 1
    ingest(store, trace, "third dugong")
    store.index_texts()
    assert found(store, "dugong") == [trace]
    assert found(store, "wombat") == found(store, "quokka") == []
    if backend == "sqlite":
        assert [indexed(store.path, w) for w in ("wombat", "quokka", "dugong")] == [0, 0, 1]


def test_a_trace_deleted_and_sent_again_while_the_indexer_works_keeps_its_text(
    sqlite_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The indexer has read the trace's text and not yet said so to the database when the
    trace is deleted and sent again with the same words: those words still find it after the
    indexer's next round (the new text's row is not taken for the one it read)."""
    store, trace = sqlite_store, "f3" * 16
    other = Store(store.path)  # ingest's own connection, as a worker process has
    ingest(store, trace, "same capybara", started_at=LONG_AGO)
    done = False

    def meanwhile(*args: Any) -> Any:
        nonlocal done
        result = real(*args)
        if not done:  # deleted and sent again after the indexer read it
            done = True
            assert other.expire(NOW) == 1
            ingest(other, trace, "same capybara")
        return result

    real = search.index_pending
    monkeypatch.setattr(search, "index_pending", meanwhile)
    try:
        store.index_texts()
        assert done
        store.index_texts()
        assert found(store, "capybara") == [trace]
        assert indexed(store.path, "capybara") == 1
    finally:
        other.close()


def test_the_indexers_write_does_not_hold_ingests(
    sqlite_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the indexer is in the middle of its write transaction, another connection's
    ingest (a worker's) takes the database's write lock and commits."""
    store = sqlite_store
    ingest(store, "a1" * 16, "indexed while")
    mid, go = threading.Event(), threading.Event()
    real = search.index_pending

    def held(*args: Any) -> Any:
        result = real(*args)
        mid.set()
        go.wait(DEADLINE_S)
        return result

    monkeypatch.setattr(search, "index_pending", held)
    indexer = threading.Thread(target=store.index_texts)
    indexer.start()
    other = Store(store.path)
    try:
        assert mid.wait(DEADLINE_S), "the indexer did not start"
        ingest(other, "b2" * 16, "ingested meanwhile")  # StoreBusy if the lock were held
        assert [t.id for t in other.find_traces("b2" * 16)] == ["b2" * 16]
    finally:
        go.set()
        indexer.join(DEADLINE_S)
        other.close()
    assert not indexer.is_alive()
    store.index_texts()
    assert found(store, "indexed while") == ["a1" * 16]
    assert found(store, "ingested meanwhile") == ["b2" * 16]


# -- a database of the version before (14: the index in the database itself) ---------------

TEXTS = {"a" * 32: "the lighthouse keeper", "b" * 32: "a parcel of saffron"}
WAITING = ("c" * 32, "waiting for the heron")


def version_14_database(path: Path) -> str:
    """A database at version 14 whose index holds two texts, and one text still waits."""
    db = sqlite3.connect(path, isolation_level=None)
    migrations.migrate(db, str(path), migrations.MIGRATIONS[:14])
    db.execute("BEGIN")
    db.execute(SQLITE.sql(INSERT[ProjectRow]), ProjectRow("p", "p", None, 30, 0))
    for trace_id in (*TEXTS, WAITING[0]):
        fields = (trace_id, "p", "run", NOW, 5, 1, 0, 0, 0.0, "ok", 0, "{}", NOW, None)
        db.execute(SQLITE.sql(INSERT[TraceRow]), TraceRow(*fields, None, None, "[]", None, "[]"))
    for key, (trace_id, text) in enumerate(TEXTS.items(), start=1):
        db.execute("INSERT INTO trace_text_keys VALUES (?, 'p', ?)", (key, trace_id))
        db.execute("INSERT INTO trace_texts (rowid, body) VALUES (?, ?)", (key, text))
    db.execute(
        "INSERT INTO trace_text_pending (project_id, trace_id, body) VALUES ('p', ?, ?)", WAITING
    )
    db.execute("COMMIT")
    db.close()
    return str(path)


def check_texts_found(store: Store) -> None:
    assert found(store, "lighthouse") == ["a" * 32] and found(store, "saffron") == ["b" * 32]
    assert store.index_texts() == 1
    assert found(store, "heron") == [WAITING[0]]
    assert [indexed(store.path, w) for w in ("lighthouse", "saffron", "heron")] == [1, 1, 1]
    raw = sqlite3.connect(store.path)
    try:
        tables = {name for (name,) in raw.execute("SELECT name FROM sqlite_master")}
    finally:
        raw.close()
    assert "trace_texts" not in tables and "trace_text_keys" not in tables


def test_an_older_database_keeps_its_texts_in_the_text_file(tmp_path: Path) -> None:
    store = Store(version_14_database(tmp_path / "v14.sqlite3"))
    try:
        assert migrations.user_version(store._connection()) == migrations.LATEST
        check_texts_found(store)
    finally:
        store.close()


def test_the_move_interrupted_after_the_text_file_committed_is_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The text file's part committed, the database's failed: the database stays at 14 and
    the next opening moves the texts again, each indexed once."""
    from tui.server.store.sqlite import textfile

    path = version_14_database(tmp_path / "v14.sqlite3")
    failing = (*textfile.MAIN_AFTER_MOVE, "CREATE TABLO broken (x)")
    monkeypatch.setattr(textfile, "MAIN_AFTER_MOVE", failing)
    with pytest.raises(sqlite3.OperationalError):
        Store(path)
    assert indexed(path, "lighthouse") == 1  # the text file's part is in
    raw = sqlite3.connect(path)
    assert migrations.user_version(raw) == 14
    raw.close()
    monkeypatch.undo()
    store = Store(path)
    try:
        check_texts_found(store)
    finally:
        store.close()


def test_ordinary_connections_cannot_write_the_text_file(sqlite_store: Store) -> None:
    # SQLite's "attempt to write a readonly database"
    with pytest.raises(StoreUnavailable), sqlite_store.transaction() as db:
        db.execute("INSERT INTO trace_texts (rowid, body) VALUES (1, 'x')")


def test_the_checkpoint_copies_the_text_files_log_too(sqlite_store: Store) -> None:
    """The indexer's commits leave the index in the text file's write-ahead log; the store's
    checkpoint (the background task's) copies it into the file."""
    store = sqlite_store
    for n in range(50):
        ingest(store, f"{n:032x}", f"log copied {n} " + "lorem ipsum " * 40)
    assert store.index_texts() == 50
    text_file = Path(f"{store.path}-text")
    before = text_file.stat().st_size
    store.checkpoint()
    assert text_file.stat().st_size > before


def test_a_database_opened_through_a_link_keeps_its_texts(tmp_path: Path) -> None:
    """The text file is found beside the database's real file: migration 15 (which names it
    from SQLite's own path of the database, links resolved) and the store's connections agree
    on it."""
    (tmp_path / "real").mkdir()
    (tmp_path / "link").mkdir()
    version_14_database(tmp_path / "real" / "v14.sqlite3")
    (tmp_path / "link" / "v14.sqlite3").symlink_to(tmp_path / "real" / "v14.sqlite3")
    store = Store(tmp_path / "link" / "v14.sqlite3")
    try:
        check_texts_found(store)
    finally:
        store.close()
    assert not (tmp_path / "link" / "v14.sqlite3-text").exists()


def test_a_closed_store_leaves_two_whole_files(sqlite_store: Store, tmp_path: Path) -> None:
    """Closed, the store leaves no write-ahead log behind (the last connection to close each
    file copies its log in): the two files copied alone hold everything."""
    ingest(sqlite_store, "d4" * 16, "kept within two files")
    assert sqlite_store.index_texts() == 1
    sqlite_store.close()
    path = Path(sqlite_store.path)
    assert sorted(p.name for p in path.parent.glob(path.name + "*")) == [
        "store.sqlite3",
        "store.sqlite3-text",
    ]
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("store.sqlite3", "store.sqlite3-text"):
        (copy / name).write_bytes((path.parent / name).read_bytes())
    copied = Store(copy / "store.sqlite3")
    try:
        assert found(copied, "kept within two files") == ["d4" * 16]
    finally:
        copied.close()


def test_a_path_that_looks_like_a_uri_is_a_files_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--db file:x.sqlite3` names a file called so, as it did before the text file."""
    monkeypatch.chdir(tmp_path)
    store = with_project(Store("file:x.sqlite3"))
    try:
        ingest(store, "e5" * 16, "named like uri")
        store.index_texts()
        assert found(store, "named like uri") == ["e5" * 16]
    finally:
        store.close()
    assert (tmp_path / "file:x.sqlite3").exists() and (tmp_path / "file:x.sqlite3-text").exists()
    assert not (tmp_path / "x.sqlite3").exists()


def test_a_missing_text_file_is_made_anew_and_said(
    sqlite_store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    ingest(sqlite_store, "f6" * 16, "before the loss")
    assert sqlite_store.index_texts() == 1
    sqlite_store.close()
    Path(sqlite_store.path + "-text").unlink()
    with caplog.at_level("WARNING", logger="tracetui.server"):
        store = Store(sqlite_store.path)
    try:
        assert "text index was missing" in caplog.text
        assert found(store, "before the loss") == []
        ingest(store, "f6" * 16, "after the loss")
        store.index_texts()
        assert found(store, "after the loss") == ["f6" * 16]
    finally:
        store.close()


def test_a_bulk_write_is_committed_while_the_text_file_is_held(sqlite_store: Store) -> None:
    """A bulk write's texts are indexed once it commits; if the text file's lock stays held
    by another writer, the write still returns (its texts wait for the indexer), and they are
    found once the indexer runs."""
    other = sqlite3.connect(sqlite_store.path + "-text", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with sqlite_store.transaction() as db:
            row = (
                "a7" * 16, "p", "bulk", NOW - 1000, 5, 1, 0, 0, 0.0, "ok", 0, "{}", NOW - 1000,
            )  # fmt: skip
            sqlite_store.insert_traces(db, [row], [], texts=[("p", "a7" * 16, "held lock text")])
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert found(sqlite_store, "held lock text") == []
    sqlite_store.index_texts()
    assert found(sqlite_store, "held lock text") == ["a7" * 16]
