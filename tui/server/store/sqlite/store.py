"""The SQLite store: the TraceStore of `store.protocol` over one database file.

Times are stored as integer milliseconds since the epoch (UTC). What both stores share is
written once in the tables' mixins of tui/server/store (traces, keys, admin, alerts, logs,
search, replicas, annotations); this module holds what is SQLite's own: its connections (one
per thread, write-ahead log) and transactions, how its errors become StoreBusy / StoreUnavailable, its
checkpoints, and its hot paths: ingest by executemany, and a big trace's spans streamed. The
schema and its versions live in `migrations`, the SQLite half of alerts and search in `alerts`
and `search`.
"""

from __future__ import annotations

import functools
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from pathlib import Path
from typing import Any

from tui.server.ingest.summaries import summarize, trace_rows
from tui.server.search.text import in_part
from tui.server.store import reads
from tui.server.store.admin import AdminTables
from tui.server.store.annotations import AnnotationTables
from tui.server.store.counting import CallCounting, may_change_counts
from tui.server.store.dialect import SQLITE
from tui.server.store.errors import StoreBusy, StoreUnavailable
from tui.server.store.health import HealthTables
from tui.server.store.keys import KeyTables
from tui.server.store.logs import LogTables
from tui.server.store.replicas import TAKE_LEASE, ReplicaTables
from tui.server.store.rows import SpanGroup, SpanInTrace, SpanRow, TraceRow
from tui.server.store.sql import INSERT, SELECT_SPANS, upsert_traces_args
from tui.server.store.sqlite import search
from tui.server.store.sqlite.alerts import SqliteAlerts
from tui.server.store.sqlite.migrations import migrate
from tui.server.store.sqlite.sql import JOIN_LOGS, UPSERT_SPAN, UPSERT_TRACES
from tui.server.store.sqlite.textfile import (
    DATA_SCHEMA_NAME,
    TEXT_SCHEMA_NAME,
    attach_read_only,
    file_uri,
    make_text_file,
    text_path,
)
from tui.server.store.texts import INDEX_BATCH
from tui.server.store.traces import TraceTables, bulk_rows

log = logging.getLogger("tracetui.server")

# Pages the write-ahead log may hold before a commit copies them into the database (SQLite's
# default is 1,000). Each such checkpoint syncs the disk twice, and ingest dirties a page of
# every index per trace: at 1,000, 50,000 spans made some 50 checkpoints, and the syncs were
# 60% of the time on a slow disk (2.9 -> 1.9 s at 10,000). 32 MiB of log, as long as
# writers pause now and then (see Store.checkpoint).
WAL_AUTOCHECKPOINT_PAGES = 8192
# The same for stores opened by `Store.opener` (ingest worker processes): their commits leave
# the copying to the service's background task (`Store.checkpoint`), which runs beside the
# writers, so a worker does not stop for a checkpoint's two disk syncs at every 32 MiB. A
# single writer still checkpoints itself at 256 MiB, so its log starts again from there.
BACKGROUND_CHECKPOINT_PAGES = 65536
# The page cache of a connection, in KiB: SQLite's default (2 MiB) for the service's own, one
# per thread; 16 MiB for an ingest worker's, whose every body inserts into the traces' and spans'
# indexes at random places, so what the last bodies read is what the next ones need (the write
# of bench_ingest's 50,000 spans: 10-16% less CPU with 8 to 32 MiB, measured in-process).
DEFAULT_CACHE_KIB = 2000
INGEST_CACHE_KIB = 16384
# How long a statement waits for a lock (SQLite's busy handler), and a write transaction for
# the write lock (begin_write), before the write is refused (StoreBusy: a 503 with Retry-After).
BUSY_TIMEOUT_MS = 5000
# How often a write transaction that waits tries the write lock again. SQLite's busy handler
# sleeps 1, 2, 5, 10 ... 100 ms between tries, so a waiter woke up to tens of ms after the lock
# was free, and a writer that had waited longest (the text indexer, a request's write) kept
# losing the lock to two ingest workers handing it on. bench_ingest, pairs of passes: on an
# idle machine a median of 3.02 s polling against 3.34 s (five pairs), on a loaded one 4.10 /
# 5.39 / 5.89 s against 4.63 / 5.57 / 7.87 s, the text found within 0.7-0.9 s at p95 against
# up to 1.7 s (docs/benchmarks.md).
WRITE_POLL_S = 0.001


def begin_write(db: sqlite3.Connection, wait_s: float = BUSY_TIMEOUT_MS / 1000) -> None:
    """BEGIN IMMEDIATE on `db`, trying every WRITE_POLL_S while another writer holds the
    lock, for `wait_s` at most (then SQLite's busy error, which refusal_of reads)."""
    db.execute("PRAGMA busy_timeout=0")
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                db.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as error:
                if not is_busy(error) or time.monotonic() >= deadline:
                    raise
            time.sleep(WRITE_POLL_S)
    finally:
        db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")


def connect(
    path: str,
    checkpoint_pages: int = WAL_AUTOCHECKPOINT_PAGES,
    cache_kib: int = DEFAULT_CACHE_KIB,
    with_text: bool = True,
) -> sqlite3.Connection:
    """A connection as the store makes them: write-ahead log, synced at checkpoints only (run
    by a commit once the log holds `checkpoint_pages`), waiting up to 5 s for another writer,
    with a page cache of `cache_kib`; `with_text`: the text index's file attached read-only
    (textfile.py; it must exist: the Store makes it).
    Rows come back as plain tuples and become named rows in the store: sqlite3.Row costs a
    third of the time of a 50,000-span read."""
    # uri=True: ATTACH takes the read-only file: URI; the file itself is named by a URI too, so
    # that a path that looks like one (`file:x.db`) is still a file's name.
    db = sqlite3.connect(file_uri(path), isolation_level=None, check_same_thread=False, uri=True)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    db.execute(f"PRAGMA wal_autocheckpoint={checkpoint_pages}")
    db.execute(f"PRAGMA cache_size=-{cache_kib}")  # negative: in KiB, not pages
    # The log's file is reused, not shrunk, when the log starts again: without a limit it kept
    # the size of the biggest burst or transaction ever (the demo's data: 57 MB) for good.
    db.execute(f"PRAGMA journal_size_limit={WAL_AUTOCHECKPOINT_PAGES * 4096}")
    # `input:` and `output:` check the traces the text index finds with it (dialect.sqlite_text).
    db.create_function("tracetui_in_part", 3, in_part, deterministic=True)
    if with_text:
        attach_read_only(db, text_path(path), TEXT_SCHEMA_NAME)
    return db


def connect_text_writer(path: str, cache_kib: int = DEFAULT_CACHE_KIB) -> sqlite3.Connection:
    """The indexer's connection (textfile.py): the text file of the database at `path` as its
    main database, so that its BEGIN IMMEDIATE takes that file's write lock only, and the
    database attached read-only as `data`."""
    db = connect(text_path(path), cache_kib=cache_kib, with_text=False)
    attach_read_only(db, path, DATA_SCHEMA_NAME)
    return db


def is_busy(error: sqlite3.Error) -> bool:
    """SQLITE_BUSY or SQLITE_LOCKED (by code from Python 3.11, by message before)."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED (extended codes: low byte)
    return "locked" in str(error)


# SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN: the disk, not the request.
CANNOT_WRITE_CODES = frozenset({8, 10, 13, 14})
CANNOT_WRITE_WORDS = ("disk is full", "disk i/o error", "readonly database", "unable to open")


def cannot_write(error: sqlite3.Error) -> bool:
    """Whether `error` says the database cannot be written for now (full, read-only, failing)."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in CANNOT_WRITE_CODES
    return any(words in str(error).lower() for words in CANNOT_WRITE_WORDS)


def refusal_of(error: sqlite3.Error) -> StoreBusy | None:
    """The StoreBusy (or StoreUnavailable) a write's error means, None for any other error."""
    if is_busy(error):  # the write lock, waited for busy_timeout in vain
        return StoreBusy("the database stayed locked by other writers")
    if cannot_write(error):
        return StoreUnavailable("the database cannot be written (disk full or read-only)")
    return None


@contextmanager
def writing(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A write transaction on `db`, taken up front (begin_write), undone whole on any error;
    a lock held too long by others raises StoreBusy, a file that cannot be written (a full
    disk) StoreUnavailable."""
    try:
        begin_write(db)
        try:
            yield db
        except BaseException:
            if db.in_transaction:  # SQLite may have rolled back by itself (a full disk)
                db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
    except sqlite3.Error as error:
        if db.in_transaction:  # a COMMIT that failed leaves the transaction open
            db.execute("ROLLBACK")
        refusal = refusal_of(error)
        if refusal is None:
            raise
        raise refusal from None


def checkpoint_file(db: sqlite3.Connection) -> tuple[int, int]:
    """A PASSIVE checkpoint of `db`'s main file, then its log truncated if big and all copied
    (Store.checkpoint); returns the log's pages and those copied."""
    _, logged, copied = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    if logged >= WAL_AUTOCHECKPOINT_PAGES and copied == logged:
        busy, *after = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if not busy:  # else someone was writing or reading: the next round
            logged, copied = after
    return int(logged), int(copied)


class Store(
    search.SqliteSearch,
    SqliteAlerts,
    CallCounting,
    AnnotationTables,
    LogTables,
    KeyTables,
    AdminTables,
    ReplicaTables,
    HealthTables,
    TraceTables,
):
    """One SQLite database; each thread gets its own connection (WAL lets readers run together).

    Opening brings the file to the latest schema version, or refuses, with SchemaTooNew, a file
    written by a newer tracetui. A SQLite file is served by one process (`is_shared` is False):
    it holds every lease, and its rate limiter counts in memory.
    """

    dialect = SQLITE

    def __init__(
        self,
        path: str | Path,
        checkpoint_pages: int = WAL_AUTOCHECKPOINT_PAGES,
        cache_kib: int = DEFAULT_CACHE_KIB,
    ) -> None:
        self.path = str(path)
        self.checkpoint_pages = checkpoint_pages
        self.cache_kib = cache_kib
        self._local = threading.local()
        # checkpoint()'s own connections: to the database and to its text file
        self._checkpointer: tuple[sqlite3.Connection, sqlite3.Connection] | None = None
        self._checkpointer_lock = threading.Lock()
        self._close_checkpointer = False  # close() came while a checkpoint ran
        self._indexing = threading.Lock()  # one indexer at a time (index_texts)
        db = connect(self.path, self.checkpoint_pages, self.cache_kib, with_text=False)
        try:
            migrate(db, self.path)
            if make_text_file(self.path) and db.execute("SELECT 1 FROM traces LIMIT 1").fetchone():
                log.warning(
                    "the text index was missing beside the database and is made anew, empty:"
                    " the traces stored before it are not found by their text (q)"
                )
            attach_read_only(db, text_path(self.path), TEXT_SCHEMA_NAME)
        except BaseException:
            db.close()
            raise
        self._local.db = db
        self._sign_unsigned_alerts()

    @property
    def location(self) -> str:
        """Where the data is, as serve prints it: the file's path."""
        return self.path

    # -- connections -------------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = connect(self.path, self.checkpoint_pages, self.cache_kib)
            self._local.db = db
        return db

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction taken up front, so check-then-insert sequences are atomic. It is
        undone whole on any error; a store that is locked too long raises StoreBusy, one that
        cannot write (a full disk) StoreUnavailable, so every write is refused the same way."""
        try:
            with writing(self._connection()) as db:
                yield db
        finally:
            texts_written = getattr(self._local, "texts_written", False)
            self._local.texts_written = False
        if texts_written:  # a bulk write's texts (insert_traces): found once it returns
            # Committed whatever comes: texts the indexer cannot write now wait for the
            # service's indexer, as ingest's do.
            with suppress(StoreBusy):
                while self.index_texts(INDEX_BATCH) >= INDEX_BATCH:
                    pass

    def _read(self) -> AbstractContextManager[sqlite3.Connection]:
        guard = reads.current()
        if guard is None:
            return nullcontext(self._connection())
        return self._guarded_read(guard)

    @contextmanager
    def _guarded_read(self, guard: reads.ReadGuard) -> Iterator[sqlite3.Connection]:
        """This thread's connection, its statements stopped (QueryStopped) once `guard` is
        (reads.py): a progress handler looks at it every PROGRESS_STEPS steps."""
        if guard.stopped:
            raise guard.error()
        db = self._connection()
        db.set_progress_handler(guard.progress, reads.PROGRESS_STEPS)
        try:
            yield db
        except sqlite3.OperationalError:
            if guard.stopped:  # "interrupted": the handler stopped the statement
                raise guard.error() from None
            raise
        finally:
            db.set_progress_handler(None, 0)

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return self.transaction()

    @contextmanager
    def _snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: the queries inside see one state of the database (WAL)."""
        db = self._connection()
        db.execute("BEGIN")
        try:
            yield db
        finally:
            db.execute("COMMIT")

    def _execute_many(self, db: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        db.executemany(sql, rows)

    def opener(self) -> Callable[[], Store]:
        """See TraceStore.opener: the same file, opened anew (its schema is already current),
        its commits leaving checkpoints to this store's `checkpoint`, with an ingest writer's
        page cache."""
        return functools.partial(Store, self.path, BACKGROUND_CHECKPOINT_PAGES, INGEST_CACHE_KIB)

    def checkpoint(self) -> tuple[int, int]:
        """See TraceStore.checkpoint: SQLite's PASSIVE checkpoint, on a connection of its own
        (whichever thread calls), which never waits on nor blocks a reader or a writer.

        The log starts again from its beginning only when a writer begins once all of it is
        copied, which never happens while writers take turns without a pause (two ingest
        workers at full speed: so before this task too): the file grows through a burst. So
        once a burst is over (all copied, nobody writing or reading the log) a big log is
        truncated; if anyone is, the next round tries again (no waiting: busy_timeout 0).

        The text index's file (textfile.py) is checkpointed alike, on a connection to it of its
        own (the store's attach it read-only, and a read-only connection cannot copy its log);
        the figures returned are the database's."""
        with self._checkpointer_lock:
            if self._checkpointer is None:
                self._checkpointer = (
                    connect(self.path, with_text=False),
                    connect(text_path(self.path), with_text=False),
                )
                for db in self._checkpointer:
                    db.execute("PRAGMA busy_timeout=0")
            main, text = self._checkpointer
            logged, copied = checkpoint_file(main)
            checkpoint_file(text)
            if self._close_checkpointer:  # close() came meanwhile
                self._drop_checkpointer()
        return logged, copied

    def close(self) -> None:
        """Close this thread's connection, and checkpoint()'s. A checkpoint under way is not
        waited for (its disk syncs can take long on a busy disk, and `serve` closes the store
        as it stops): it closes its connection itself as it ends."""
        opened = [
            (getattr(self._local, name, None), name, schema)
            for name, schema in (("db", TEXT_SCHEMA_NAME), ("text_writer", DATA_SCHEMA_NAME))
        ]
        # The last connection to close a file copies its log into it and removes the log, if
        # it can write the file: so the read-only attachments go first, else a stopped store
        # could leave its data in a `-wal` beside the two files.
        for db, _, schema in opened:
            if db is not None:
                with suppress(sqlite3.Error):
                    db.execute(f"DETACH DATABASE {schema}")
        for db, name, _ in opened:
            if db is not None:
                db.close()
                setattr(self._local, name, None)
        if not self._checkpointer_lock.acquire(blocking=False):
            self._close_checkpointer = True
            return
        try:
            self._drop_checkpointer()
        finally:
            self._checkpointer_lock.release()

    def _drop_checkpointer(self) -> None:
        """Close checkpoint()'s connection (its lock held)."""
        self._close_checkpointer = False
        if self._checkpointer is not None:
            for db in self._checkpointer:
                db.close()
            self._checkpointer = None

    def take_lease(self, name: str, holder: str, ttl_ms: int) -> bool:
        """See ReplicaStore.take_lease: one conditional upsert, by this machine's clock."""
        now = int(time.time() * 1000)
        with self.transaction() as db:
            taken = db.execute(TAKE_LEASE.format(now="?"), (name, holder, now, ttl_ms, now))
            return taken.fetchone() is not None

    # -- a big trace's spans, and bulk writes -------------------------------------------------

    def iter_spans(self, trace_id: str, project_id: str) -> Iterator[SpanInTrace]:
        """Every span of a project's trace ordered by start time, as the cursor reads them.

        Streamed, not fetched: the garbage collector never untracks a NamedTuple (it does a plain
        tuple of strings and numbers), so holding the 50,000 rows of a big trace would promote
        them all and set off full collections; one row at a time, each dies young.
        """
        cursor = self._connection().execute(SELECT_SPANS, (project_id, trace_id))
        try:
            yield from map(SpanInTrace._make, cursor)
        finally:
            cursor.close()  # also when the reader stops early: no read transaction left open

    def insert_traces(
        self,
        db: sqlite3.Connection,
        traces: Iterable[TraceRow],
        spans: Iterable[SpanRow] = (),
        project_id: str | None = None,
        texts: Iterable[tuple[str, str, str]] | None = None,
    ) -> None:
        """Bulk insert of whole traces (the demo data, benchmarks and tests), in `db`'s
        transaction. Rows may be plain tuples of the row classes' fields, those with defaults
        left out. A span goes to the project of its trace among `traces`, else to
        `project_id`. A trace's user, session, tags, output preview, models, unpriced spans and
        search text are read from its spans as ingest reads them, unless `texts` gives the
        search texts as (project_id, trace_id, text): then the rows are taken as they are (a
        test or a builder of big data fills them)."""
        rows, span_rows, texts = bulk_rows(traces, spans, texts)
        db.executemany(INSERT[TraceRow], rows)
        project_of = {t.id: t.project_id for t in rows}
        db.executemany(
            INSERT[SpanRow], ((project_of.get(span[0], project_id), *span) for span in span_rows)
        )
        if search.write_text_rows(db, texts):
            self._local.texts_written = True  # indexed once committed (transaction)

    # -- ingest --------------------------------------------------------------------------------

    def ingest(self, batches: Sequence[Sequence[SpanGroup]]) -> None:
        """See TraceStore.ingest: every batch in one transaction."""
        with self.transaction() as db:
            # A project deleted since its key was checked takes its spans with it: they are
            # dropped, as if they had come just before the deletion (which, holding the write
            # lock, came first or waits for this commit and deletes what it wrote).
            kept = self._projects_kept(
                db, (g.project_id for b in batches for g in b if g.project_id)
            )
            for batch in batches:
                for group in batch:
                    if group.project_id is None or group.project_id in kept:
                        self._ingest_group(db, group)

    def _ingest_group(self, db: sqlite3.Connection, group: SpanGroup) -> None:
        """Store one group's spans and their traces' rows."""
        project_id = group.project_id or self._project_named(db, group.project_name)
        trace_ids = {span.trace_id for span in group.spans}
        stored = {
            row[0]
            for row in db.execute(
                "SELECT id FROM traces WHERE project_id = ? "
                "AND id IN (SELECT value FROM json_each(?))",
                (project_id, json.dumps(list(trace_ids))),
            )
        }
        db.executemany(UPSERT_SPAN, ((project_id, *span) for span in group.spans))
        self._join_span_logs(db, project_id, trace_ids)  # logs that came before their spans
        # Traces seen before are recomputed from all their stored spans; new ones (most, as
        # exporters send whole traces) take the sums of their batch, worked out as it was
        # decoded, which saves reading back what was just written.
        sums = summarize(group.spans) if group.traces is None else group.traces
        if stored:
            # A call's spans split across exports: see store/counting.py.
            self._count_calls_once(db, project_id, sorted(stored & may_change_counts(group.spans)))
            ids = json.dumps(list(stored))
            db.execute(UPSERT_TRACES, upsert_traces_args(project_id, group.resource, ids))
            again = [t for t in sums if t.id in stored]
            self._update_previews(db, project_id, again)
            search.update_stored(db, project_id, again)
        new = [t for t in sums if t.id not in stored]
        db.executemany(INSERT[TraceRow], trace_rows(new, project_id, group.resource))
        search.write_texts(db, project_id, new)

    def index_texts(self, limit: int = INDEX_BATCH) -> int:
        """See TraceStore.index_texts: rounds on the text file (textfile.py), each applying up
        to `limit` tombstones and, once none is left over, indexing up to `limit` waiting texts
        read in the same snapshot of the database (so every deletion before a text is applied
        before it); then the database forgets what the round used, in a short transaction of
        its own. Returns how many texts were indexed."""
        with self._indexing:
            while True:
                gone, texts = self._index_round(limit)
                if gone[0] or texts[0]:
                    with self.transaction() as db:
                        db.execute("DELETE FROM trace_text_tombstones WHERE id <= ?", (gone[1],))
                        db.execute("DELETE FROM trace_text_pending WHERE id <= ?", (texts[1],))
                if gone[0] < limit:
                    return texts[0]

    def _index_round(self, limit: int) -> tuple[tuple[int, int], tuple[int, int]]:
        """One write transaction on the text file: (tombstones applied, texts indexed), each
        as (how many, the last one's number)."""
        writer: sqlite3.Connection | None = getattr(self._local, "text_writer", None)
        if writer is None:
            writer = self._local.text_writer = connect_text_writer(self.path, self.cache_kib)
        with writing(writer):
            gone = search.apply_tombstones(writer, limit)
            texts = search.index_pending(writer, limit) if gone[0] < limit else (0, 0)
        return gone, texts

    def _join_logs(self, db: Any, project_id: str, trace_ids: list[str]) -> None:
        db.execute(JOIN_LOGS, (project_id, json.dumps(trace_ids)))
