"""The PostgreSQL store's span logs: as the SQLite store's (tui/server/store_logs.py), over
the store's `Connections`; `ingest` calls join_span_logs as it writes spans.

Ingest and add_span_logs take the same trace locks (`locks.lock_traces`), so a span and its
logs written at once by two replicas never miss each other: whichever commits second sees the
first. The attributes are TEXT: the join goes through jsonb, which refuses the escape \\u0000,
so a span whose attributes hold one keeps them as they are (its logs stay stored), and a log's
NUL escapes become U+FFFD.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

import psycopg

from tui.server.ingest.logs import LogGroup
from tui.server.store.postgres import locks
from tui.server.store.postgres.pool import Connections
from tui.server.store.sqlite.logs import MAX_LOGS_PER_SPAN, SWEEP_EVERY_S, UNJOINED_KEPT_MS

HAS_LOGS = "SELECT EXISTS (SELECT 1 FROM span_logs WHERE project_id = %s AND trace_id = ANY(%s))"
JOIN_LOGS = f"""
UPDATE spans s SET attributes = (s.attributes::jsonb || jsonb_build_object('tracetui.logs', l.logs))::text
FROM (SELECT trace_id, span_id, jsonb_agg(event::jsonb ORDER BY time_unix_nano, id) AS logs
    FROM (SELECT *, row_number() OVER (PARTITION BY trace_id, span_id
            ORDER BY time_unix_nano, id) AS n
        FROM span_logs WHERE project_id = %(project)s AND trace_id = ANY(%(traces)s)) numbered
    WHERE n <= {MAX_LOGS_PER_SPAN} GROUP BY trace_id, span_id) l
WHERE s.project_id = %(project)s AND s.trace_id = l.trace_id AND s.id = l.span_id
AND position('\\u0000' in s.attributes) = 0
"""
INSERT_LOG = (
    "INSERT INTO span_logs (project_id, trace_id, span_id, time_unix_nano, received_at, event) "
    "VALUES (%s, %s, %s, %s, %s, %s)"
)
SWEEP = """
DELETE FROM span_logs WHERE received_at < %s AND NOT EXISTS (
    SELECT 1 FROM traces t WHERE t.project_id = span_logs.project_id AND t.id = span_logs.trace_id)
"""


def join_span_logs(
    connection: psycopg.Connection[Any], project_id: str, trace_ids: Iterable[str]
) -> None:
    """Join the stored logs of these traces' spans into the spans (in the caller's
    transaction, after it wrote them, under the traces' locks)."""
    ids = sorted(set(trace_ids))
    row = connection.execute(HAS_LOGS, (project_id, ids)).fetchone()
    if row is not None and row[0]:
        connection.execute(JOIN_LOGS, {"project": project_id, "traces": ids})


class LogTables:
    """Span logs over the store's `Connections`."""

    _db: Connections
    _logs_swept_at: float = 0.0

    def add_span_logs(self, groups: Sequence[LogGroup], project_id: str | None, now: int) -> None:
        """See store_logs.LogTables.add_span_logs."""
        from tui.server.store.postgres.ingest import project_named

        sweep = time.monotonic() - self._logs_swept_at > SWEEP_EVERY_S
        with self._db.transaction() as db:
            routed = [(project_id or project_named(db, g.project_name), g) for g in groups]
            locks.lock_traces(db, ((p, log.trace_id) for p, g in routed for log in g.logs))
            for project, group in routed:
                with db.cursor() as cursor:
                    cursor.executemany(
                        INSERT_LOG,
                        [
                            (
                                project,
                                log.trace_id,
                                log.span_id,
                                log.time_unix_nano,
                                now,
                                log.event.replace("\\u0000", "\\ufffd"),
                            )
                            for log in group.logs
                        ],
                    )
                db.execute(
                    JOIN_LOGS,
                    {"project": project, "traces": sorted({log.trace_id for log in group.logs})},
                )
            if sweep:
                db.execute(SWEEP, (now - UNJOINED_KEPT_MS,))
        if sweep:
            self._logs_swept_at = time.monotonic()
