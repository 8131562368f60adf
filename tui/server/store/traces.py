"""Projects, traces and spans on both stores: listing and paging traces, reading a trace, the
project ingest routes a resource to, retention, and what bulk writes share.

Listing a project's traces walks the (project_id, listed_at, id) index from the cursor's
position, so page N costs what page 1 costs: there is no OFFSET anywhere. Each store writes
ingested spans its own way (SQLite: executemany; PostgreSQL: binary COPY under per-trace
locks) and reads a big trace's spans its own way (iter_spans); the rest is here, once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from tui.server.alerts.signing import new_secret
from tui.server.ingest.summaries import derived
from tui.server.store.alert_rows import AlertRow, AlertSecretRow, new_alert
from tui.server.store.annotations import forget_annotations
from tui.server.store.rows import (
    DAY_MS,
    DEFAULT_PROJECT,
    DEFAULT_RETENTION_DAYS,
    ProjectRow,
    SpanInTrace,
    SpanRow,
    TracePosition,
    TraceRow,
    TraceSummary,
    TraceSums,
    new_project,
)
from tui.server.store.sql import (
    FILL_PREVIEW,
    INSERT,
    NEWEST_SPAN_END,
    SELECT_TRACES,
    TABLES,
    UPDATE_PREVIEW,
    columns,
)
from tui.server.store.tables import Tables

CREATED_BY_INGEST = "Created by OTLP ingest for the spans that named it."
MAX_PROJECT_NAME = 200
# The traces retention deletes in one transaction, and the transactions of one sweep at most:
# a writer waits for one batch at most, and what a sweep leaves is taken by the next.
EXPIRE_BATCH = 500
EXPIRE_BATCHES = 200
EXPIRED = (
    f"SELECT id FROM traces WHERE project_id = ? AND started_at < ? AND {NEWEST_SPAN_END} < ? "
    "LIMIT ?"
)
DELETE_EXPIRED = (
    f"DELETE FROM traces WHERE project_id = ? AND id = ANY(?) AND {NEWEST_SPAN_END} < ? "
    "RETURNING id, session_id"
)
MODELS_OF = (
    "SELECT trace_id, model, sum(cost_usd), CAST(sum(input_tokens + output_tokens) AS BIGINT)"
    " FROM spans WHERE project_id = ? AND trace_id = ANY(?)"
    " AND model IS NOT NULL AND model != '' GROUP BY trace_id, model"
)
PROJECT_NAMED = (
    "SELECT id FROM projects WHERE id = ? OR name = ? ORDER BY id = ? DESC, created_at, id LIMIT 1"
)


def bulk_rows(
    traces: Iterable[TraceRow],
    spans: Iterable[SpanRow],
    texts: Iterable[tuple[str, str, str]] | None,
) -> tuple[list[TraceRow], list[SpanRow], Iterable[tuple[str, str, str]]]:
    """What a bulk insert writes: rows that may be plain tuples of the row classes' fields
    (those with defaults left out), with listed_at set from started_at where missing; without
    `texts`, each trace's user, session, tags, output preview, models, unpriced spans and
    search text read from its spans as ingest reads them."""
    rows = [t if isinstance(t, TraceRow) else TraceRow(*t) for t in traces]
    rows = [t if t.listed_at is not None else t._replace(listed_at=t.started_at) for t in rows]
    span_rows = [s if isinstance(s, SpanRow) else SpanRow(*s) for s in spans]
    if texts is None:
        rows, texts = derived(rows, span_rows)
    return rows, span_rows, texts


class TraceTables(Tables):
    """Projects, traces and spans over the store's connections."""

    def iter_spans(self, trace_id: str, project_id: str) -> Iterator[SpanInTrace]:
        raise NotImplementedError

    # -- projects ----------------------------------------------------------------------------

    def list_projects(self, only: str | None = None) -> list[ProjectRow]:
        sql = f"SELECT {columns(ProjectRow)} FROM projects"
        args: tuple[Any, ...] = ()
        if only is not None:
            sql += " WHERE id = ?"
            args = (only,)
        with self._read() as db:
            rows = db.execute(self._sql(sql + " ORDER BY created_at, id"), args).fetchall()
        return list(map(ProjectRow._make, rows))

    def get_project(self, project_id: str) -> ProjectRow | None:
        projects = self.list_projects(only=project_id)
        return projects[0] if projects else None

    def insert_project(
        self,
        db: Any,
        name: str,
        description: str | None,
        retention_days: int,
        project_id: str | None = None,
        created_at: int | None = None,
    ) -> ProjectRow:
        row = new_project(name, description, retention_days, project_id, created_at)
        db.execute(self._sql(INSERT[ProjectRow]), row)
        return row

    def _project_named(self, db: Any, name: str | None) -> str:
        """The project a resource names (by id, else by name), made if there is none; in the
        caller's transaction."""
        name = (name or "").strip()[:MAX_PROJECT_NAME] or DEFAULT_PROJECT
        self._lock_project_name(db, name)
        row = db.execute(self._sql(PROJECT_NAMED), (name, name, name)).fetchone()
        if row is not None:
            return str(row[0])
        return self.insert_project(db, name, CREATED_BY_INGEST, DEFAULT_RETENTION_DAYS).id

    # -- traces and spans --------------------------------------------------------------------

    def list_traces(
        self,
        project_id: str,
        start: int,
        end: int,
        limit: int,
        after: TracePosition | None = None,
        kept_since: int | None = None,
    ) -> tuple[list[TraceSummary], bool]:
        """See TraceStore.list_traces. Reads one row beyond `limit` to know whether more
        follow."""
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
        with self._read() as db:
            rows = list(map(TraceSummary._make, db.execute(self._sql(sql), args)))
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
        with self._read() as db:
            rows = db.execute(
                self._sql(MODELS_OF), (project_id, self.dialect.values(trace_ids))
            ).fetchall()
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
        with self._read() as db:
            rows = db.execute(self._sql(sql + " ORDER BY project_id"), args).fetchall()
        return list(map(TraceRow._make, rows))

    def get_trace(self, trace_id: str, project_id: str | None = None) -> TraceRow | None:
        """The trace with this id in `project_id`; without one, the trace with this id if
        exactly one project holds it (None if none or several do)."""
        found = self.find_traces(trace_id, project_id)
        return found[0] if len(found) == 1 else None

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

    def _update_previews(self, db: Any, project_id: str, sums: list[TraceSums]) -> None:
        """Stored traces' previews from newly arrived spans (sql.UPDATE_PREVIEW)."""
        for t in sums:
            if t.input_preview is not None:
                statement = UPDATE_PREVIEW if t.preview_from_root else FILL_PREVIEW
                db.execute(self._sql(statement), (t.input_preview, t.id, project_id))

    # -- retention -----------------------------------------------------------------------------

    def expire(self, now: int, batch: int = EXPIRE_BATCH, max_batches: int = EXPIRE_BATCHES) -> int:
        """See TraceStore.expire: a trace goes, whole (its spans and annotations, and a
        session's annotations with the session's last trace), when its newest span ended
        before its project's retention (NEWEST_SPAN_END: its spans' latest end), never by an old root
        while newer spans came since. One short transaction per `batch` traces; in each, the
        traces' locks are taken (as ingest takes them) and the rule checked again under them,
        so a span that a replica adds meanwhile keeps its trace."""
        deleted = 0
        for project in self.list_projects():
            cutoff = now - project.retention_days * DAY_MS
            for _ in range(max_batches):
                with self._write() as db:
                    # A trace that ended before the cutoff started before it: the bound on
                    # started_at lets the index traces_by_project_started seek.
                    expired = db.execute(self._sql(EXPIRED), (project.id, cutoff, cutoff, batch))
                    ids = [row[0] for row in expired]
                    self._lock_traces(db, ((project.id, trace_id) for trace_id in ids))
                    deleted_rows = db.execute(
                        self._sql(DELETE_EXPIRED), (project.id, self.dialect.values(ids), cutoff)
                    ).fetchall()
                    gone = [row[0] for row in deleted_rows]
                    db.execute(
                        self._sql("DELETE FROM spans WHERE project_id = ? AND trace_id = ANY(?)"),
                        (project.id, self.dialect.values(gone)),
                    )
                    sessions = sorted({row[1] for row in deleted_rows if row[1] is not None})
                    # As annotation writes lock them: one on a session being emptied either
                    # commits first (and goes now) or finds the session gone.
                    self._lock_sessions(db, [(project.id, s) for s in sessions])
                    forget_annotations(self, db, project.id, gone, sessions)
                deleted += len(gone)
                if len(ids) < batch:
                    break
        return deleted

    # -- alerts --------------------------------------------------------------------------------

    def list_alerts(self, project_id: str) -> list[AlertRow]:
        sql = f"SELECT {columns(AlertRow)} FROM alerts WHERE project_id = ? ORDER BY created_at, id"
        with self._read() as db:
            rows = db.execute(self._sql(sql), (project_id,)).fetchall()
        return list(map(AlertRow._make, rows))

    def insert_alert(self, db: Any, secret: str | None = None, **fields: Any) -> AlertRow:
        """An alert from AlertRow's fields; id and created_at are made up when missing. Its
        signing secret is `secret`, or a new one (read it back with alert_secret)."""
        row = new_alert(**fields)
        db.execute(self._sql(INSERT[AlertRow]), row)
        db.execute(
            self._sql(INSERT[AlertSecretRow]), AlertSecretRow(row.id, secret or new_secret())
        )
        return row

    def count(self, table: str) -> int:
        """Rows in one of the service's tables (for tests and the demo banner)."""
        if table not in TABLES.values():
            raise ValueError(f"unknown table {table!r}")
        with self._read() as db:
            row = db.execute(f"SELECT count(*) FROM {table}").fetchone()
        return int(row[0]) if row is not None else 0
