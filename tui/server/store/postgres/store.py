"""PostgresStore: the TraceStore of `backend` on PostgreSQL, behaving as the SQLite `Store`
does (same rows, order, paging, retention, idempotency and alert rounds), for teams that run
`tracetui serve` on a shared database, several replicas included.

Times are epoch milliseconds (BIGINT), as in SQLite. Listing walks traces_by_project_listed
from the cursor's position (keyset paging: no OFFSET). The schema is `migrations`'; the
connections, transactions and error mapping are `pool`'s; ingest is `ingest`'s; the alert
tables' and keys' queries are in `alerts` and `keys`. Bulk writes for the demo data and the
tests (`transaction`, `insert_project`, `insert_traces`, `insert_alert`, `count`) have the
SQLite store's signatures, so the same builders fill either store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

from tui.server.alerts.signing import new_secret
from tui.server.ingest.summaries import derived
from tui.server.store.admin import AdminTables
from tui.server.store.postgres import ingest as ingest_spans
from tui.server.store.postgres import locks
from tui.server.store.postgres.alerts import AlertTables
from tui.server.store.postgres.keys import KeyTables
from tui.server.store.postgres.logs import LogTables
from tui.server.store.postgres.migrations import migrate
from tui.server.store.postgres.pool import DEFAULT_POOL_SIZE, Connection, Connections, connect_once
from tui.server.store.postgres.search import SearchTables
from tui.server.store.postgres.sql import (
    COPY_TRACES_WITH_TEXT,
    INSERT,
    NEWEST_SPAN_END,
    SELECT_SPANS,
    SELECT_TRACES,
    SPAN_TYPES,
    TRACE_WITH_TEXT_TYPES,
    copy_sql,
)
from tui.server.store.rows import (
    AlertRow,
    AlertSecretRow,
    ProjectRow,
    SpanGroup,
    SpanInTrace,
    SpanRow,
    TracePosition,
    TraceRow,
    TraceSummary,
    new_alert,
    new_project,
)
from tui.server.store.sql import TABLES, columns
from tui.server.store.url import redacted

DAY_MS = 86_400_000
# An ingest worker process writes one batch at a time: its store needs few connections.
OPENER_POOL_SIZE = 2


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


class PostgresStore(LogTables, AlertTables, KeyTables, AdminTables, SearchTables):
    """One PostgreSQL database through a pool of at most `pool_size` connections.

    Opening connects once (StoreUnreachable if it cannot: server down, login refused, no such
    database), brings the schema to the latest version under an advisory lock (SchemaTooNew
    for a database of a newer tracetui), then opens the pool."""

    def __init__(self, url: str, *, pool_size: int = DEFAULT_POOL_SIZE) -> None:
        self._url = url
        self.pool_size = pool_size
        self._location = redacted(url)
        first = connect_once(url, self._location)
        try:
            migrate(first, self._location)
        finally:
            first.close()
        self._db = Connections(url, pool_size)
        try:
            # Alerts made without a secret (by a bulk write) get one, as in the SQLite store.
            missing = self.alerts_without_secret()
            if missing:
                with self._db.transaction() as db, db.cursor() as cursor:
                    cursor.executemany(
                        INSERT[AlertSecretRow] + " ON CONFLICT (alert_id) DO NOTHING",
                        [AlertSecretRow(alert_id, new_secret()) for alert_id in missing],
                    )
        except BaseException:
            self._db.close()
            raise

    def __repr__(self) -> str:
        return f"PostgresStore({self._location!r})"

    @property
    def location(self) -> str:
        """The database's URL without its password: safe to print."""
        return self._location

    # -- connections -------------------------------------------------------------------------

    def transaction(self) -> AbstractContextManager[Connection]:
        """A write transaction (for the bulk writes below); rolled back whole on any error."""
        return self._db.transaction()

    PLACEHOLDER = "%s"

    def _admin_write(self) -> AbstractContextManager[Connection]:
        return self._db.transaction()

    def _admin_read(self) -> AbstractContextManager[Connection]:
        return self._db.connection()

    def _reading(self) -> AbstractContextManager[Connection]:
        return self._db.connection()

    def opener(self) -> Callable[[], PostgresStore]:
        """See TraceStore.opener: the same URL, a pool of OPENER_POOL_SIZE."""
        return Opener(self._url)

    def checkpoint(self) -> tuple[int, int]:
        """See TraceStore.checkpoint: PostgreSQL checkpoints by itself; nothing to do."""
        return 0, 0

    def close(self) -> None:
        self._db.close()

    # -- projects ------------------------------------------------------------------------------

    def list_projects(self, only: str | None = None) -> list[ProjectRow]:
        sql = f"SELECT {columns(ProjectRow)} FROM projects"
        args: tuple[Any, ...] = ()
        if only is not None:
            sql += " WHERE id = %s"
            args = (only,)
        with self._db.connection() as db:
            rows = db.execute(sql + " ORDER BY created_at, id", args).fetchall()
        return list(map(ProjectRow._make, rows))

    def get_project(self, project_id: str) -> ProjectRow | None:
        projects = self.list_projects(only=project_id)
        return projects[0] if projects else None

    def insert_project(
        self,
        db: Connection,
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
        """See TraceStore.list_traces: the SQLite store's query, keyset paged by
        (listed_at, id) on traces_by_project_listed."""
        upper = end - 1 if after is None else min(end - 1, after.listed_at)
        sql = SELECT_TRACES
        args: list[Any] = [project_id, start, upper]
        if kept_since is not None:
            sql += f" AND {NEWEST_SPAN_END} >= %s"
            args.append(kept_since)
        if after is not None:
            sql += " AND (listed_at < %s OR id < %s)"
            args += [after.listed_at, after.trace_id]
        sql += " ORDER BY listed_at DESC, id DESC LIMIT %s"
        args.append(limit + 1)
        with self._db.connection() as db:
            rows = list(map(TraceSummary._make, db.execute(sql, args)))
        return rows[:limit], len(rows) > limit

    def models_of(
        self, project_id: str, trace_ids: list[str]
    ) -> dict[str, dict[str, tuple[float, int]]]:
        found: dict[str, dict[str, tuple[float, int]]] = {}
        if not trace_ids:
            return found
        sql = (
            "SELECT trace_id, model, sum(cost_usd), sum(input_tokens + output_tokens)::bigint"
            " FROM spans WHERE project_id = %s AND trace_id = ANY(%s)"
            " AND model IS NOT NULL AND model != '' GROUP BY trace_id, model"
        )
        with self._db.connection() as db:
            rows = db.execute(sql, (project_id, trace_ids)).fetchall()
        for trace_id, model, cost, tokens in rows:
            found.setdefault(trace_id, {})[model] = (cost, tokens)
        return found

    def find_traces(self, trace_id: str, project_id: str | None = None) -> list[TraceRow]:
        sql = f"SELECT {columns(TraceRow)} FROM traces WHERE id = %s"
        args: tuple[str, ...] = (trace_id,)
        if project_id is not None:
            sql += " AND project_id = %s"
            args += (project_id,)
        with self._db.connection() as db:
            rows = db.execute(sql + " ORDER BY project_id", args).fetchall()
        return list(map(TraceRow._make, rows))

    def get_trace(self, trace_id: str, project_id: str | None = None) -> TraceRow | None:
        """The trace with this id in `project_id`; without one, the trace with this id if
        exactly one project holds it (None if none or several do)."""
        found = self.find_traces(trace_id, project_id)
        return found[0] if len(found) == 1 else None

    def iter_spans(self, trace_id: str, project_id: str) -> Iterator[SpanInTrace]:
        """Every span of a project's trace by start time, then id. The rows come in one
        result (libpq holds it in C memory) and become named rows one at a time as they are
        read; the connection goes back to the pool when the reader is done or stops."""
        with self._db.connection() as db:
            cursor = db.execute(SELECT_SPANS, (project_id, trace_id))
            yield from map(SpanInTrace._make, cursor)

    def list_spans(self, trace_id: str, project_id: str | None = None) -> list[SpanInTrace]:
        if project_id is None:
            trace = self.get_trace(trace_id)
            if trace is None:
                return []
            project_id = trace.project_id
        return list(self.iter_spans(trace_id, project_id))

    def insert_traces(
        self,
        db: Connection,
        traces: Iterable[TraceRow],
        spans: Iterable[SpanRow] = (),
        project_id: str | None = None,
        texts: Iterable[tuple[str, str, str]] | None = None,
    ) -> None:
        """Bulk insert of whole traces by binary COPY (the demo data, benchmarks and tests), as
        the SQLite store's: rows may be plain tuples, a span goes to its trace's project among
        `traces`, else to `project_id`; the extras and texts as the SQLite store's."""
        rows = [t if isinstance(t, TraceRow) else TraceRow(*t) for t in traces]
        rows = [t if t.listed_at is not None else t._replace(listed_at=t.started_at) for t in rows]
        spans = [s if isinstance(s, SpanRow) else SpanRow(*s) for s in spans]
        if texts is None:
            rows, texts = derived(rows, spans)
        text_of = {(p, i): text for p, i, text in texts}
        ingest_spans.copy_rows(
            db,
            COPY_TRACES_WITH_TEXT,
            TRACE_WITH_TEXT_TYPES,
            ingest_spans.clean_rows([(*t, text_of.get((t.project_id, t.id))) for t in rows]),
        )
        project_of = {t.id: t.project_id for t in rows}
        span_rows = [(project_of.get(span.trace_id, project_id), *span) for span in spans]
        ingest_spans.copy_rows(
            db, copy_sql(SpanRow), SPAN_TYPES, ingest_spans.clean_rows(span_rows)
        )

    # -- ingest --------------------------------------------------------------------------------

    def ingest(self, batches: Sequence[Sequence[SpanGroup]]) -> list[int]:
        """See TraceStore.ingest: every batch in one transaction (ingest.py)."""
        with self._db.transaction() as db:
            return ingest_spans.ingest(db, batches)

    # -- retention -----------------------------------------------------------------------------

    def expire(self, now: int, batch: int = 500, max_batches: int = 200) -> int:
        """See TraceStore.expire: a trace goes, whole, when its newest span ended before its
        project's retention. One short transaction per `batch` traces; in each, the traces'
        locks are taken (as ingest takes them) and the rule checked again under them, so a
        span that a replica adds meanwhile keeps its trace."""
        deleted = 0
        for project in self.list_projects():
            cutoff = now - project.retention_days * DAY_MS
            for _ in range(max_batches):
                with self._db.transaction() as db:
                    # A trace that ended before the cutoff started before it: the bound on
                    # started_at lets traces_by_project_started seek.
                    ids = [
                        row[0]
                        for row in db.execute(
                            "SELECT id FROM traces WHERE project_id = %(p)s "
                            f"AND started_at < %(cutoff)s AND {NEWEST_SPAN_END} < %(cutoff)s "
                            "LIMIT %(batch)s",
                            {"p": project.id, "cutoff": cutoff, "batch": batch},
                        )
                    ]
                    locks.lock_traces(db, ((project.id, trace_id) for trace_id in ids))
                    gone = [
                        row[0]
                        for row in db.execute(
                            "DELETE FROM traces WHERE project_id = %(p)s AND id = ANY(%(ids)s) "
                            f"AND {NEWEST_SPAN_END} < %(cutoff)s RETURNING id",
                            {"p": project.id, "ids": ids, "cutoff": cutoff},
                        )
                    ]
                    db.execute(
                        "DELETE FROM spans WHERE project_id = %s AND trace_id = ANY(%s)",
                        (project.id, gone),
                    )
                deleted += len(gone)
                if len(ids) < batch:
                    break
        return deleted

    # -- alerts --------------------------------------------------------------------------------

    def list_alerts(self, project_id: str) -> list[AlertRow]:
        with self._db.connection() as db:
            rows = db.execute(
                f"SELECT {columns(AlertRow)} FROM alerts WHERE project_id = %s "
                "ORDER BY created_at, id",
                (project_id,),
            ).fetchall()
        return list(map(AlertRow._make, rows))

    def insert_alert(self, db: Connection, secret: str | None = None, **fields: Any) -> AlertRow:
        """An alert from AlertRow's fields; id and created_at are made up when missing. Its
        signing secret is `secret`, or a new one."""
        row = new_alert(**fields)
        db.execute(INSERT[AlertRow], row)
        db.execute(INSERT[AlertSecretRow], AlertSecretRow(row.id, secret or new_secret()))
        return row

    def count(self, table: str) -> int:
        """Rows in one of the service's tables (for tests and the demo banner)."""
        if table not in TABLES.values():
            raise ValueError(f"unknown table {table!r}")
        with self._db.connection() as db:
            row = db.execute(f"SELECT count(*) FROM {table}").fetchone()
        return int(row[0]) if row is not None else 0
