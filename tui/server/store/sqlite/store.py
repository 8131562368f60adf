"""SQLite storage for the local service: the TraceStore of `backend`, over named rows.

Times are stored as integer milliseconds since the epoch (UTC). Listing a project's traces walks
the (project_id, listed_at, id) index from the cursor's position, so page N costs what page 1
costs: there is no OFFSET anywhere. A trace is known by its project and its id together: the
same id sent to two projects is two traces. Every INSERT and SELECT names its columns, taken
from the row classes of `rows` (through `store_sql`, which also holds the statements of ingest
and of trace reads). The schema and its versions live in `migrations`; the alert tables'
queries in `store_alerts`, the keys' and Idempotency-Keys' in `store_keys`.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from tui.server.alerts.signing import new_secret
from tui.server.api_keys import hash_key, new_api_key
from tui.server.ingest.summaries import derived, summarize, trace_rows
from tui.server.store.admin import AdminTables
from tui.server.store.protocol import StoreBusy, StoreUnavailable
from tui.server.store.rows import (
    AlertRow,
    AlertSecretRow,
    KeyScope,
    ProjectRow,
    SpanGroup,
    SpanInTrace,
    SpanRow,
    TracePosition,
    TraceRow,
    TraceSummary,
    TraceSums,
    new_alert,
    new_project,
    now_ms,
)
from tui.server.store.sql import (
    COUNT_ONCE,
    INSERT,
    NEWEST_SPAN_END,
    SELECT_SPANS,
    SELECT_TRACES,
    TABLES,
    UPSERT_SPAN,
    UPSERT_TRACES,
    columns,
)
from tui.server.store.sqlite import search
from tui.server.store.sqlite.alerts import AlertTables
from tui.server.store.sqlite.keys import KeyTables
from tui.server.store.sqlite.logs import LogTables, join_span_logs
from tui.server.store.sqlite.migrations import migrate

# Names other modules and the tests have always imported from here.
__all__ = [
    "INSERT",
    "UPSERT_TRACES",
    "KeyScope",
    "Store",
    "TracePosition",
    "hash_key",
    "new_api_key",
    "now_ms",
]
DEFAULT_PROJECT = "default"  # where the workspace key's spans go when no resource names one
DAY_MS = 86_400_000


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


def connect(path: str, checkpoint_pages: int = WAL_AUTOCHECKPOINT_PAGES) -> sqlite3.Connection:
    """A connection as the store makes them: write-ahead log, synced at checkpoints only (run
    by a commit once the log holds `checkpoint_pages`), waiting up to 5 s for another writer.
    Rows come back as plain tuples and become named rows in the store: sqlite3.Row costs a
    third of the time of a 50,000-span read."""
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA busy_timeout=5000")
    db.execute(f"PRAGMA wal_autocheckpoint={checkpoint_pages}")
    # The log's file is reused, not shrunk, when the log starts again: without a limit it kept
    # the size of the biggest burst or transaction ever (the demo's data: 57 MB) for good.
    db.execute(f"PRAGMA journal_size_limit={WAL_AUTOCHECKPOINT_PAGES * 4096}")
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


DEFAULT_RETENTION_DAYS = 30


class Store(LogTables, AlertTables, KeyTables, AdminTables, search.SearchTables):
    """One SQLite database; each thread gets its own connection (WAL lets readers run together).

    Opening brings the file to the latest schema version, or refuses, with SchemaTooNew, a file
    written by a newer tracetui. The alert tables' queries are in `store_alerts`, the keys' and
    the Idempotency-Keys' in `store_keys`, search's (filters, sessions, users) in
    `search.sqlite`.
    """

    def __init__(self, path: str | Path, checkpoint_pages: int = WAL_AUTOCHECKPOINT_PAGES) -> None:
        self.path = str(path)
        self.checkpoint_pages = checkpoint_pages
        self._local = threading.local()
        self._checkpointer: sqlite3.Connection | None = None  # checkpoint()'s own connection
        self._checkpointer_lock = threading.Lock()
        migrate(self._connection(), self.path)
        # Alerts made before webhooks were signed get a secret now (nobody was shown it: such
        # an alert is made again to verify its webhooks).
        missing = self.alerts_without_secret()
        if missing:
            with self.transaction() as db:
                db.executemany(
                    INSERT[AlertSecretRow],
                    [AlertSecretRow(alert_id, new_secret()) for alert_id in missing],
                )

    @property
    def location(self) -> str:
        """Where the data is, as serve prints it: the file's path."""
        return self.path

    # -- connections -------------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = connect(self.path, self.checkpoint_pages)
            self._local.db = db
        return db

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction taken up front, so check-then-insert sequences are atomic. It is
        undone whole on any error; a store that is locked too long raises StoreBusy, one that
        cannot write (a full disk) StoreUnavailable, so every write is refused the same way."""
        db = self._connection()
        try:
            db.execute("BEGIN IMMEDIATE")
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

    def _admin_write(self) -> AbstractContextManager[sqlite3.Connection]:
        return self.transaction()

    def _admin_read(self) -> AbstractContextManager[sqlite3.Connection]:
        return nullcontext(self._connection())

    def opener(self) -> Callable[[], Store]:
        """See TraceStore.opener: the same file, opened anew (its schema is already current),
        its commits leaving checkpoints to this store's `checkpoint`."""
        return functools.partial(Store, self.path, BACKGROUND_CHECKPOINT_PAGES)

    def checkpoint(self) -> tuple[int, int]:
        """See TraceStore.checkpoint: SQLite's PASSIVE checkpoint, on a connection of its own
        (whichever thread calls), which never waits on nor blocks a reader or a writer.

        The log starts again from its beginning only when a writer begins once all of it is
        copied, which never happens while writers take turns without a pause (two ingest
        workers at full speed: so before this task too): the file grows through a burst. So
        once a burst is over (all copied, nobody writing or reading the log) a big log is
        truncated; if anyone is, the next round tries again (no waiting: busy_timeout 0)."""
        with self._checkpointer_lock:
            db = self._checkpointer
            if db is None:
                db = self._checkpointer = connect(self.path)
                db.execute("PRAGMA busy_timeout=0")
            _, logged, copied = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            if logged >= WAL_AUTOCHECKPOINT_PAGES and copied == logged:
                busy, *after = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                if not busy:  # else someone was writing or reading: the next round
                    logged, copied = after
        return logged, copied

    def close(self) -> None:
        """Close this thread's connection, and checkpoint()'s."""
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None
        with self._checkpointer_lock:
            if self._checkpointer is not None:
                self._checkpointer.close()
                self._checkpointer = None

    # -- projects ------------------------------------------------------------------------------

    def list_projects(self, only: str | None = None) -> list[ProjectRow]:
        sql = f"SELECT {columns(ProjectRow)} FROM projects"
        args: tuple[Any, ...] = ()
        if only is not None:
            sql += " WHERE id = ?"
            args = (only,)
        rows = self._connection().execute(sql + " ORDER BY created_at, id", args)
        return list(map(ProjectRow._make, rows))

    def get_project(self, project_id: str) -> ProjectRow | None:
        projects = self.list_projects(only=project_id)
        return projects[0] if projects else None

    def insert_project(
        self,
        db: sqlite3.Connection,
        name: str,
        description: str | None,
        retention_days: int,
        project_id: str | None = None,
        created_at: int | None = None,
    ) -> ProjectRow:
        row = new_project(name, description, retention_days, project_id, created_at)
        db.execute(INSERT[ProjectRow], row)
        return row

    # -- traces and spans ----------------------------------------------------------------------

    def list_traces(
        self,
        project_id: str,
        start: int,
        end: int,
        limit: int,
        after: TracePosition | None = None,
        kept_since: int | None = None,
    ) -> tuple[list[TraceSummary], bool]:
        """One page, newest first, of traces with start <= listed_at < end, past `after`, and
        (with `kept_since`) whose newest span ends at or after it.

        Returns the rows and whether more follow. Reads one row beyond `limit` to know that.
        """
        # Ordered and paged by listed_at (see rows.TraceRow), which never changes once a trace
        # is stored. One upper bound, the tighter of `end` and the cursor: given two, SQLite
        # seeks with one and filters by the other, and a late page would scan every row before.
        upper = end - 1 if after is None else min(end - 1, after.listed_at)
        sql = SELECT_TRACES
        args: list[Any] = [project_id, start, upper]
        if kept_since is not None:
            # A filter, not the seek's lower bound: a trace listed before the retention's start
            # is still served while a span of it is newer (what the sweep keeps).
            sql += f" AND {NEWEST_SPAN_END} >= ?"
            args.append(kept_since)
        if after is not None:
            # Rows that share the cursor's position are ordered by id.
            sql += " AND (listed_at < ? OR id < ?)"
            args += [after.listed_at, after.trace_id]
        sql += " ORDER BY listed_at DESC, id DESC LIMIT ?"
        args.append(limit + 1)
        rows = list(map(TraceSummary._make, self._connection().execute(sql, args)))
        return rows[:limit], len(rows) > limit

    def models_of(
        self, project_id: str, trace_ids: list[str]
    ) -> dict[str, dict[str, tuple[float, int]]]:
        """For each of a project's traces, its spans' cost and tokens (in + out) summed by
        model; one grouped query over a page's traces, by the spans' (project_id, trace_id, ...)
        index."""
        found: dict[str, dict[str, tuple[float, int]]] = {}
        if not trace_ids:
            return found
        sql = (
            "SELECT trace_id, model, SUM(cost_usd), SUM(input_tokens + output_tokens) FROM spans"
            " WHERE project_id = ? AND trace_id IN (SELECT value FROM json_each(?))"
            " AND model IS NOT NULL AND model != '' GROUP BY trace_id, model"
        )
        rows = self._connection().execute(sql, (project_id, json.dumps(trace_ids)))
        for trace_id, model, cost, tokens in rows:
            found.setdefault(trace_id, {})[model] = (cost, tokens)
        return found

    def find_traces(self, trace_id: str, project_id: str | None = None) -> list[TraceRow]:
        """The traces with this id: in `project_id` (one at most), or in every project."""
        sql = f"SELECT {columns(TraceRow)} FROM traces WHERE id = ?"
        args: tuple[str, ...] = (trace_id,)
        if project_id is not None:
            sql += " AND project_id = ?"
            args += (project_id,)
        rows = self._connection().execute(sql + " ORDER BY project_id", args)
        return list(map(TraceRow._make, rows))

    def get_trace(self, trace_id: str, project_id: str | None = None) -> TraceRow | None:
        """The trace with this id in `project_id`; without one, the trace with this id if
        exactly one project holds it (None if none or several do)."""
        found = self.find_traces(trace_id, project_id)
        return found[0] if len(found) == 1 else None

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

    def list_spans(self, trace_id: str, project_id: str | None = None) -> list[SpanInTrace]:
        """The spans of iter_spans as a list, for readers that go over them more than once.
        Without `project_id`, those of the one project that holds this trace id (none if
        several do)."""
        if project_id is None:
            trace = self.get_trace(trace_id)
            if trace is None:
                return []
            project_id = trace.project_id
        return list(self.iter_spans(trace_id, project_id))

    def insert_traces(
        self,
        db: sqlite3.Connection,
        traces: Iterable[TraceRow],
        spans: Iterable[SpanRow] = (),
        project_id: str | None = None,
        texts: Iterable[tuple[str, str, str]] | None = None,
    ) -> None:
        """Bulk insert of whole traces (the demo data, benchmarks and tests). Rows may be plain
        tuples of the row classes' fields, those with defaults left out. A span goes to the
        project of its trace among `traces`, else to `project_id`. A trace's user, session,
        tags, output preview, models, unpriced spans and search text are read from its spans
        as ingest reads them, unless `texts` gives the search texts as (project_id, trace_id, text): then the
        rows are taken as they are (a test or a builder of big data fills them)."""
        rows = [t if isinstance(t, TraceRow) else TraceRow(*t) for t in traces]  # tuples too
        rows = [t if t.listed_at is not None else t._replace(listed_at=t.started_at) for t in rows]
        span_rows = [s if isinstance(s, SpanRow) else SpanRow(*s) for s in spans]
        if texts is None:
            rows, texts = derived(rows, span_rows)
        db.executemany(INSERT[TraceRow], rows)
        project_of = {t.id: t.project_id for t in rows}
        db.executemany(
            INSERT[SpanRow], ((project_of.get(span[0], project_id), *span) for span in span_rows)
        )
        search.write_text_rows(db, texts)

    # -- ingest --------------------------------------------------------------------------------

    def ingest(self, batches: Sequence[Sequence[SpanGroup]]) -> list[int]:
        """See TraceStore.ingest: every batch in one transaction."""
        with self.transaction() as db:
            return [sum(self._ingest_group(db, group) for group in batch) for batch in batches]

    def _ingest_group(self, db: sqlite3.Connection, group: SpanGroup) -> int:
        """Store one group's spans and their traces' rows; returns how many were refused (none:
        a trace id is its project's, so no other project's trace is in the way)."""
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
        join_span_logs(db, project_id, trace_ids)  # logs that came before their spans
        # Traces seen before are recomputed from all their stored spans; new ones (most, as
        # exporters send whole traces) take the sums of their batch, worked out as it was
        # decoded, which saves reading back what was just written.
        sums = summarize(group.spans) if group.traces is None else group.traces
        if stored:
            ids = json.dumps(list(stored))
            db.execute(COUNT_ONCE, (project_id, ids))  # a call's spans split across exports
            db.execute(UPSERT_TRACES, (project_id, group.resource, ids))
            again = [t for t in sums if t.id in stored]
            self._update_previews(db, project_id, again)
            search.update_stored(db, project_id, again)
        new = [t for t in sums if t.id not in stored]
        db.executemany(INSERT[TraceRow], trace_rows(new, project_id, group.resource))
        search.write_texts(db, project_id, new)
        return 0

    def _update_previews(
        self, db: sqlite3.Connection, project_id: str, sums: list[TraceSums]
    ) -> None:
        """A stored trace's preview from newly arrived spans: a root's replaces it (the root's
        input is the trace's), another span's only fills it in when there was none."""
        for t in sums:
            if t.input_preview is not None:
                db.execute(
                    "UPDATE traces SET input_preview = ?1 WHERE id = ?2 AND project_id = ?3"
                    + ("" if t.preview_from_root else " AND input_preview IS NULL"),
                    (t.input_preview, t.id, project_id),
                )

    def _project_named(self, db: sqlite3.Connection, name: str | None) -> str:
        """The project a resource names (by id, else by name), created if there is none."""
        name = (name or "").strip()[:200] or DEFAULT_PROJECT
        row = db.execute(
            "SELECT id FROM projects WHERE id = ?1 OR name = ?1 "
            "ORDER BY id = ?1 DESC, created_at, id LIMIT 1",
            (name,),
        ).fetchone()
        if row is not None:
            return str(row[0])
        description = "Created by OTLP ingest for the spans that named it."
        return self.insert_project(db, name, description, DEFAULT_RETENTION_DAYS).id

    # -- retention -----------------------------------------------------------------------------

    def expire(self, now: int, batch: int = 500, max_batches: int = 200) -> int:
        """See TraceStore.expire: a trace goes, whole, when its newest span ended before its
        project's retention (NEWEST_SPAN_END: its spans' latest end), never by an old root
        while newer spans came since. One short transaction per `batch` traces, so the ingest
        writer waits for one batch at most."""
        deleted = 0
        for project in self.list_projects():
            cutoff = now - project.retention_days * DAY_MS
            for _ in range(max_batches):
                with self.transaction() as db:
                    # A trace that ended before the cutoff started before it: the bound on
                    # started_at lets the covering index traces_by_project_started seek.
                    ids = [
                        row[0]
                        for row in db.execute(
                            "SELECT id FROM traces WHERE project_id = ?1 AND started_at < ?2 "
                            f"AND {NEWEST_SPAN_END} < ?2 LIMIT ?3",
                            (project.id, cutoff, batch),
                        )
                    ]
                    ids_json = json.dumps(ids)
                    db.execute(
                        "DELETE FROM spans WHERE project_id = ? "
                        "AND trace_id IN (SELECT value FROM json_each(?))",
                        (project.id, ids_json),
                    )
                    db.execute(
                        "DELETE FROM traces WHERE project_id = ? "
                        "AND id IN (SELECT value FROM json_each(?))",
                        (project.id, ids_json),
                    )
                deleted += len(ids)
                if len(ids) < batch:
                    break
        return deleted

    # -- alerts --------------------------------------------------------------------------------

    def list_alerts(self, project_id: str) -> list[AlertRow]:
        rows = self._connection().execute(
            f"SELECT {columns(AlertRow)} FROM alerts WHERE project_id = ? ORDER BY created_at, id",
            (project_id,),
        )
        return list(map(AlertRow._make, rows))

    def insert_alert(
        self, db: sqlite3.Connection, secret: str | None = None, **fields: Any
    ) -> AlertRow:
        """An alert from AlertRow's fields; id and created_at are made up when missing. Its
        signing secret is `secret`, or a new one (read it back with alert_secret)."""
        row = new_alert(**fields)
        db.execute(INSERT[AlertRow], row)
        db.execute(INSERT[AlertSecretRow], AlertSecretRow(row.id, secret or new_secret()))
        return row

    def count(self, table: str) -> int:
        """Rows in one of the service's tables (for tests and the demo banner)."""
        if table not in TABLES.values():
            raise ValueError(f"unknown table {table!r}")
        return int(self._connection().execute(f"SELECT count(*) FROM {table}").fetchone()[0])
