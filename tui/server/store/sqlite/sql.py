"""Statements of the SQLite store's own: its ingest upsert, and the shared ones it runs on the
hot path, rendered once (store/sql.py)."""

from __future__ import annotations

from tui.server.store.dialect import SQLITE
from tui.server.store.logs import MAX_LOGS_PER_SPAN
from tui.server.store.rows import SpanRow
from tui.server.store.sql import INSERT, SPAN_UPDATE, upsert_traces

# A re-sent span replaces itself (exporters retry): every column but the key is updated.
UPSERT_SPAN = (
    f"{INSERT[SpanRow]} ON CONFLICT (project_id, trace_id, id) DO UPDATE SET {SPAN_UPDATE}"
)
UPSERT_TRACES = upsert_traces(SQLITE)
# Every span of project ?1's traces in the JSON list ?2 that has logs: its whole list of
# logs, in time order, set into its attributes (store/logs.py).
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
