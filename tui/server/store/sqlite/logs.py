"""The SQLite store's span logs: GenAI log events (POST /v1/logs) kept in `span_logs` and joined
into their span's attributes as `tracetui.logs`, so the span's conversation shows them. A part
of `store.Store` (which mixes it in, and calls join_span_logs as it ingests spans).

Logs and spans arrive in either order, from separate exporters. Logs that find their span
stored are joined as they are written (add_span_logs); a span that comes after its logs is
joined as it is written (join_span_logs: one look-up per batch, which finds nothing unless the
batch's traces have logs). Either way the span's whole list is set, never appended to, so the
result is the same whatever the order and however often a span is sent again. A trace's logs
are deleted with it (migration 9's trigger); logs whose trace has not come a day after they
did are dropped (at most once an hour, as logs are written): they name a span this service
will not see.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager

from tui.server.ingest.logs import LogGroup

UNJOINED_KEPT_MS = 86_400_000  # how long logs wait for their trace
SWEEP_EVERY_S = 3600.0
MAX_LOGS_PER_SPAN = 1000

HAS_LOGS = (
    "SELECT EXISTS (SELECT 1 FROM span_logs WHERE project_id = ?1 "
    "AND trace_id IN (SELECT value FROM json_each(?2)))"
)
# Every span of project ?1's traces in the JSON list ?2 that has logs: its whole list of
# logs, in time order, set into its attributes.
JOIN_LOGS = f"""
UPDATE spans SET attributes = json_set(attributes, '$."tracetui.logs"', json((
    SELECT json_group_array(json(event)) FROM (
        SELECT event FROM span_logs l WHERE l.project_id = spans.project_id
        AND l.trace_id = spans.trace_id AND l.span_id = spans.id
        ORDER BY time_unix_nano, id LIMIT {MAX_LOGS_PER_SPAN}))))
WHERE project_id = ?1 AND json_valid(attributes) AND (trace_id, id) IN (
    SELECT trace_id, span_id FROM span_logs
    WHERE project_id = ?1 AND trace_id IN (SELECT value FROM json_each(?2)))
"""
INSERT_LOG = (
    "INSERT INTO span_logs (project_id, trace_id, span_id, time_unix_nano, received_at, event) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)
SWEEP = """
DELETE FROM span_logs WHERE received_at < ?1 AND NOT EXISTS (
    SELECT 1 FROM traces t WHERE t.project_id = span_logs.project_id AND t.id = span_logs.trace_id)
"""


def join_span_logs(db: sqlite3.Connection, project_id: str, trace_ids: Iterable[str]) -> None:
    """Join the stored logs of these traces' spans into the spans (in the caller's
    transaction, after it wrote them)."""
    ids = json.dumps(sorted(set(trace_ids)))
    if db.execute(HAS_LOGS, (project_id, ids)).fetchone()[0]:
        db.execute(JOIN_LOGS, (project_id, ids))


class LogTables:
    """Span logs over the transactions and project look-up that `Store` provides."""

    _logs_swept_at: float = 0.0

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def _project_named(self, db: sqlite3.Connection, name: str | None) -> str:
        raise NotImplementedError

    def add_span_logs(self, groups: Sequence[LogGroup], project_id: str | None, now: int) -> None:
        """Store the groups' logs, in `project_id` (a project key's) or else the project each
        group's resource names, and join them into their spans where those are stored."""
        sweep = time.monotonic() - self._logs_swept_at > SWEEP_EVERY_S
        with self.transaction() as db:
            for group in groups:
                project = project_id or self._project_named(db, group.project_name)
                db.executemany(
                    INSERT_LOG,
                    (
                        (project, log.trace_id, log.span_id, log.time_unix_nano, now, log.event)
                        for log in group.logs
                    ),
                )
                ids = json.dumps(sorted({log.trace_id for log in group.logs}))
                db.execute(JOIN_LOGS, (project, ids))
            if sweep:
                db.execute(SWEEP, (now - UNJOINED_KEPT_MS,))
        if sweep:
            self._logs_swept_at = time.monotonic()
