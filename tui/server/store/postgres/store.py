"""PostgresStore: the TraceStore of `store.protocol` on PostgreSQL, behaving as the SQLite store
does (the same statements where they can be the same: the tables' mixins of tui/server/store),
for teams that run `tracetui serve` on a shared database, several replicas included.

Times are epoch milliseconds (BIGINT), as in SQLite. This module holds what is PostgreSQL's
own: the pool (`pool`: connections, transactions, and how a driver error becomes StoreBusy /
StoreUnavailable), the advisory locks that keep replicas from writing one trace, one project
name, one Idempotency-Key or one alert round at the same time (`locks`), and the statements that
differ. Ingest by binary COPY is `ingest`'s; the schema is `migrations`'.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

from tui.server.api_keys import hash_key
from tui.server.store import reads
from tui.server.store.admin import AdminTables
from tui.server.store.annotation_rows import AnnotationRow
from tui.server.store.annotations import AnnotationTables
from tui.server.store.dialect import POSTGRES, POSTGRES_TRGM
from tui.server.store.health import HealthTables
from tui.server.store.keys import KeyTables
from tui.server.store.postgres import locks
from tui.server.store.postgres.alerts import PostgresAlerts
from tui.server.store.postgres.ingest import PostgresIngest
from tui.server.store.postgres.migrations import has_trigram_index, migrate
from tui.server.store.postgres.pool import DEFAULT_POOL_SIZE, Connection, Connections, connect_once
from tui.server.store.postgres.search import PostgresSearch
from tui.server.store.postgres.sql import (
    COUNT_REQUESTS,
    INSERT_ANNOTATIONS,
    JOIN_LOGS,
    KEY_SCOPE_COUNTED,
    TAKE_LEASE,
)
from tui.server.store.replicas import ReplicaTables
from tui.server.store.rows import KeyScope, SpanInTrace
from tui.server.store.sql import SELECT_SPANS
from tui.server.store.url import redacted

# An ingest worker process writes one batch at a time: its store needs few connections.
OPENER_POOL_SIZE = 2
SELECT_SPANS_HERE = POSTGRES.sql(SELECT_SPANS)


class Opener:
    """How another process opens the same store (picklable; its repr hides the URL's
    password, as it may end up in a log line)."""

    def __init__(self, url: str, pool_size: int = OPENER_POOL_SIZE) -> None:
        self._url = url
        self.pool_size = pool_size

    def __call__(self) -> PostgresStore:
        return PostgresStore(self._url, pool_size=self.pool_size)

    def __repr__(self) -> str:
        return f"Opener({redacted(self._url)!r}, pool_size={self.pool_size})"


class PostgresStore(
    PostgresSearch,
    PostgresAlerts,
    PostgresIngest,
    AnnotationTables,
    KeyTables,
    AdminTables,
    ReplicaTables,
    HealthTables,
):
    """One PostgreSQL database through a pool of at most `pool_size` connections; any number of
    services (replicas) may share it (`is_shared`).

    Opening connects once (StoreUnreachable if it cannot: server down, login refused, no such
    database), brings the schema to the latest version under an advisory lock (SchemaTooNew
    for a database of a newer tracetui), then opens the pool."""

    dialect = POSTGRES
    SHARED = True

    def __init__(self, url: str, *, pool_size: int = DEFAULT_POOL_SIZE) -> None:
        self._url = url
        self.pool_size = pool_size
        self._location = redacted(url)
        first = connect_once(url, self._location)
        try:
            migrate(first, self._location)
            if has_trigram_index(first):
                self.dialect = POSTGRES_TRGM
        finally:
            first.close()
        self._db = Connections(url, pool_size)
        try:
            self._sign_unsigned_alerts()
        except BaseException:
            self._db.close()
            raise

    def __repr__(self) -> str:
        return f"PostgresStore({self._location!r})"

    @property
    def location(self) -> str:
        """The database's URL without its password: safe to print."""
        return self._location

    # -- connections and locks ----------------------------------------------------------------

    def transaction(self) -> AbstractContextManager[Connection]:
        """A write transaction (for bulk writes); rolled back whole on any error."""
        return self._db.transaction()

    def _read(self) -> AbstractContextManager[Connection]:
        guard = reads.current()
        if guard is None:
            return self._db.connection()
        return self._db.bounded(guard)

    def _write(self) -> AbstractContextManager[Connection]:
        return self._db.transaction()

    def _write_one(self) -> AbstractContextManager[Connection]:
        return self._db.connection()

    def _execute_many(self, db: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with db.cursor() as cursor:
            cursor.executemany(sql, rows)

    def _lock_traces(self, db: Any, traces: Iterable[tuple[str, str]]) -> None:
        locks.lock_traces(db, traces)

    def _lock_project_name(self, db: Any, name: str) -> None:
        locks.lock_name(db, locks.PROJECT_NAMES, name)

    def _lock_idempotency_key(self, db: Any, key_hash: str, idempotency_key: str) -> None:
        locks.lock_name(db, locks.IDEMPOTENCY, key_hash, idempotency_key)

    def _lock_sessions(self, db: Any, sessions: Iterable[tuple[str, str]]) -> None:
        locks.lock_names(db, locks.ANNOTATED_SESSIONS, sessions)

    def _lock_project_alerts(self, db: Any, project_id: str) -> None:
        locks.lock_name(db, locks.PROJECT_ALERTS, project_id)

    def _lock_rounds(self, db: Any) -> None:
        locks.lock_name(db, locks.ROUNDS)

    def _hold_project_writes(self, db: Any) -> None:
        # Only other writers of the table wait on this lock (readers never do).
        db.execute("LOCK TABLE projects IN SHARE ROW EXCLUSIVE MODE")

    def _hold_project(self, db: Any, project_id: str) -> None:
        # The row's strongest lock: ingest's FOR KEY SHARE (below) waits for it, and it for
        # ingest's; a rename (FOR NO KEY UPDATE) does not conflict with ingest's.
        db.execute("SELECT 1 FROM projects WHERE id = %s FOR UPDATE", (project_id,))

    def _projects_kept(self, db: Any, project_ids: Iterable[str]) -> set[str]:
        ids = sorted(set(project_ids))
        if not ids:
            return set()
        rows = db.execute(
            "SELECT id FROM projects WHERE id = ANY(%s) ORDER BY id FOR KEY SHARE", (ids,)
        ).fetchall()
        return {str(row[0]) for row in rows}

    def opener(self) -> Callable[[], PostgresStore]:
        """See TraceStore.opener: the same URL, a pool of OPENER_POOL_SIZE."""
        return Opener(self._url)

    def checkpoint(self) -> tuple[int, int]:
        """See TraceStore.checkpoint: PostgreSQL checkpoints by itself; nothing to do."""
        return 0, 0

    def close(self) -> None:
        self._db.close()

    # -- what PostgreSQL does its own way -----------------------------------------------------

    def iter_spans(self, trace_id: str, project_id: str) -> Iterator[SpanInTrace]:
        """Every span of a project's trace by start time, then id. The rows come in one
        result (libpq holds it in C memory) and become named rows one at a time as they are
        read; the connection goes back to the pool when the reader is done or stops."""
        with self._db.connection() as db:
            cursor = db.execute(SELECT_SPANS_HERE, (project_id, trace_id))
            yield from map(SpanInTrace._make, cursor)

    def key_scope_counted(
        self, api_key: str, bucket: str, window_start: int
    ) -> tuple[KeyScope, int] | None:
        """See TraceStore.key_scope_counted: one statement, so one round trip."""
        key_hash = hash_key(api_key)
        with self._db.connection() as db:
            row = db.execute(
                KEY_SCOPE_COUNTED, {"hash": key_hash, "bucket": bucket, "window": window_start}
            ).fetchone()
        return None if row is None else (KeyScope(key_hash, row[0]), int(row[1]))

    def count_requests(self, bucket: str, window_start: int, hits: int = 1) -> int:
        """See ReplicaStore.count_requests: committed without waiting for the disk
        (sql.RELAXED_COMMIT)."""
        with self._db.connection() as db:
            row = db.execute(COUNT_REQUESTS, (bucket, window_start, hits)).fetchone()
        return int(row[0]) if row is not None else hits

    def take_lease(self, name: str, holder: str, ttl_ms: int) -> bool:
        """See ReplicaStore.take_lease: one conditional upsert, by the database's clock."""
        with self._db.connection() as db:
            taken = db.execute(TAKE_LEASE, (name, holder, ttl_ms)).fetchone()
        return taken is not None

    def _insert_annotations(self, db: Any, rows: list[AnnotationRow]) -> None:
        db.execute(INSERT_ANNOTATIONS, [list(column) for column in zip(*rows, strict=True)])

    def _join_logs(self, db: Any, project_id: str, trace_ids: list[str]) -> None:
        db.execute(JOIN_LOGS, {"project": project_id, "traces": trace_ids})

    def _stored_event(self, event: str) -> str:
        # jsonb refuses the escape \u0000: the join would fail on it.
        return event.replace("\\u0000", "\\ufffd")
