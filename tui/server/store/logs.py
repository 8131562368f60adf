"""Span logs on both stores: GenAI log events (POST /v1/logs) kept in `span_logs` and joined into
their span's attributes as `tracetui.logs`, so the span's conversation shows them.

Logs and spans arrive in either order, from separate exporters. Logs that find their span
stored are joined as they are written (add_span_logs); a span that comes after its logs is
joined as it is written (_join_span_logs, which ingest calls: one look-up per batch, which finds
nothing unless the batch's traces have logs). Either way the span's whole list is set, never
appended to, so the result is the same whatever the order and however often a span is sent
again. Ingest and add_span_logs take the same trace locks (PostgreSQL), so a span and its logs
written at once by two replicas never miss each other: whichever commits second sees the first.
A trace's logs are deleted with it (a trigger of the schema); logs whose trace has not come a
day after they did are dropped (at most once an hour, as logs are written): they name a span
this service will not see. Each store joins in its own JSON functions (`_join_logs`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from tui.server.store.rows import LogGroup
from tui.server.store.tables import Tables

UNJOINED_KEPT_MS = 86_400_000  # how long logs wait for their trace
SWEEP_EVERY_S = 3600.0
MAX_LOGS_PER_SPAN = 1000

HAS_LOGS = "SELECT EXISTS (SELECT 1 FROM span_logs WHERE project_id = ? AND trace_id = ANY(?))"
INSERT_LOG = (
    "INSERT INTO span_logs (project_id, trace_id, span_id, time_unix_nano, received_at, event) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)
SWEEP = """
DELETE FROM span_logs WHERE received_at < ? AND NOT EXISTS (
    SELECT 1 FROM traces t WHERE t.project_id = span_logs.project_id AND t.id = span_logs.trace_id)
"""


class LogTables(Tables):
    """Span logs over the store's connections, its project routing and its JSON join."""

    _logs_swept_at: float = 0.0

    def _join_logs(self, db: Any, project_id: str, trace_ids: list[str]) -> None:
        """Set the whole list of logs of every span of these traces that has logs, in time
        order, into its attributes (MAX_LOGS_PER_SPAN at most)."""
        raise NotImplementedError

    def _stored_event(self, event: str) -> str:
        """A log event's JSON text as this store keeps it."""
        return event

    def _join_span_logs(self, db: Any, project_id: str, trace_ids: Iterable[str]) -> None:
        """Join the stored logs of these traces' spans into the spans (in the caller's
        transaction, after it wrote them, under the traces' locks)."""
        ids = sorted(set(trace_ids))
        row = db.execute(self._sql(HAS_LOGS), (project_id, self.dialect.values(ids))).fetchone()
        if row is not None and row[0]:
            self._join_logs(db, project_id, ids)

    def add_span_logs(self, groups: Sequence[LogGroup], project_id: str | None, now: int) -> None:
        """Store the groups' logs, in `project_id` (a project key's) or else the project each
        group's resource names, and join them into their spans where those are stored."""
        sweep = time.monotonic() - self._logs_swept_at > SWEEP_EVERY_S
        with self._write() as db:
            # Projects first, then traces: every transaction takes its locks in that order.
            routed = [(project_id or self._project_named(db, g.project_name), g) for g in groups]
            self._lock_traces(db, ((p, log.trace_id) for p, g in routed for log in g.logs))
            for project, group in routed:
                rows = [
                    (
                        project,
                        log.trace_id,
                        log.span_id,
                        log.time_unix_nano,
                        now,
                        self._stored_event(log.event),
                    )
                    for log in group.logs
                ]
                self._execute_many(db, self._sql(INSERT_LOG), rows)
                self._join_logs(db, project, sorted({log.trace_id for log in group.logs}))
            if sweep:
                db.execute(self._sql(SWEEP), (now - UNJOINED_KEPT_MS,))
        if sweep:
            self._logs_swept_at = time.monotonic()
