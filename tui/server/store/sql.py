"""What every part of the SQLite store shares: the table of each row class, the column lists
and INSERT statements made from the row classes' fields (so that no SQL names a column the rows
do not have), and the statements of ingest and of the trace reads.

A trace is known by its project and its id together (migrations, version 5): every statement
on traces or spans names both.
"""

from __future__ import annotations

from typing import NamedTuple

from tui.server.ingest.conventions import COUNTED_IN
from tui.server.store.rows import (
    AlertEventRow,
    AlertRow,
    AlertSecretRow,
    AlertState,
    ApiKeyRow,
    DeliveryRow,
    IdempotencyRow,
    ProjectRow,
    SpanInTrace,
    SpanRow,
    TraceRow,
    TraceSummary,
)

TABLES = {
    ProjectRow: "projects",
    ApiKeyRow: "api_keys",
    TraceRow: "traces",
    SpanRow: "spans",
    AlertRow: "alerts",
    IdempotencyRow: "idempotency",
    AlertSecretRow: "alert_secrets",
    AlertState: "alert_states",
    AlertEventRow: "alert_events",
    DeliveryRow: "webhook_deliveries",
}


def columns(row_class: type[NamedTuple]) -> str:
    return ", ".join(row_class._fields)


# Columns a row class's table has ahead of the class's fields. A span is decoded before the
# store knows its project (the workspace key's spans are routed by name, in the store), so it
# is written as (project_id, *span).
LEADING: dict[type[NamedTuple], tuple[str, ...]] = {SpanRow: ("project_id",)}


def insert_sql(row_class: type[NamedTuple], verb: str = "INSERT") -> str:
    """`INSERT INTO table (a, b, ...) VALUES (?, ?, ...)`: positions bound by the row's names
    (after the LEADING columns of its table, if any)."""
    names = (*LEADING.get(row_class, ()), *row_class._fields)
    marks = ", ".join("?" * len(names))
    return f"{verb} INTO {TABLES[row_class]} ({', '.join(names)}) VALUES ({marks})"


INSERT = {row_class: insert_sql(row_class) for row_class in TABLES}

# -- traces and spans ------------------------------------------------------------------------------

SELECT_SPANS = (
    f"SELECT {columns(SpanInTrace)} FROM spans WHERE project_id = ? AND trace_id = ? "
    "ORDER BY started_at, id"
)
SELECT_TRACES = (
    f"SELECT {columns(TraceSummary)} FROM traces WHERE project_id = ? AND listed_at >= ? "
    "AND listed_at <= ?"
)
# A trace is kept while its newest span is: the latest end of its spans, which is
# started_at + duration_ms (the earliest start plus the span to the latest end).
NEWEST_SPAN_END = "started_at + duration_ms"
# A re-sent span replaces itself (exporters retry): every column but the key is updated.
UPSERT_SPAN = (
    INSERT[SpanRow]
    + " ON CONFLICT (project_id, trace_id, id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in SpanRow._fields[2:])
)
# Each model call counted once across exports, as conventions.counted_once counts it within
# one: in project ?1's traces whose ids are in the JSON array ?2, a model-call span reporting
# tokens whose parent is a model-call span reporting tokens (or counted in its own parent,
# which it then reported) gets its tokens and cost set to 0 and `tracetui.counted_in` added.
# Run before UPSERT_TRACES on the traces stored before: a span and its parent may come in
# different exports, in either order. A span it changes no longer reports tokens, so running
# it again changes nothing, and a span sent again (which replaces itself) is changed again.
COUNT_ONCE = f"""
UPDATE spans SET input_tokens = 0, output_tokens = 0, cost_usd = 0.0, cost_source = NULL,
    cache_read_tokens = 0, cache_write_tokens = 0, reasoning_tokens = 0,
    attributes = CASE WHEN substr(attributes, -1) <> '}}' THEN attributes
        ELSE substr(attributes, 1, length(attributes) - 1)
        || CASE WHEN attributes = '{{}}' THEN '' ELSE ',' END
        || '"{COUNTED_IN}":"' || parent_id || '"}}' END
WHERE project_id = ?1 AND trace_id IN (SELECT value FROM json_each(?2)) AND kind = 'llm'
    AND (input_tokens > 0 OR output_tokens > 0)
    AND EXISTS (SELECT 1 FROM spans p WHERE p.project_id = ?1 AND p.trace_id = spans.trace_id
        AND p.id = spans.parent_id AND p.kind = 'llm' AND (p.input_tokens > 0
            OR p.output_tokens > 0
            OR instr(p.attributes, '"{COUNTED_IN}":"' || p.parent_id || '"') > 0))
"""
# The trace rows of project ?1's traces whose ids are in the JSON array ?3, computed from all
# their stored spans: right after every batch, whatever order and however often spans came.
# Named after the earliest root (no parent), else the earliest span while the root has not
# come. listed_at and the attributes (?2) are set when the trace is first stored and never
# change. unpriced_spans counts the spans whose model has no price (`IS`, not `=`: a NULL
# cost_source, as COUNT_ONCE leaves a counted-once span, counts 0 and never makes the sum NULL).
UPSERT_TRACES = """
INSERT INTO traces (id, project_id, name, started_at, duration_ms, span_count, input_tokens,
    output_tokens, total_cost_usd, status, error_count, attributes, listed_at, unpriced_spans)
SELECT s.trace_id, ?1,
    coalesce(
        (SELECT r.name FROM spans r
         WHERE r.project_id = ?1 AND r.trace_id = s.trace_id AND r.parent_id IS NULL
         ORDER BY r.started_at, r.id LIMIT 1),
        (SELECT r.name FROM spans r WHERE r.project_id = ?1 AND r.trace_id = s.trace_id
         ORDER BY r.started_at, r.id LIMIT 1)),
    min(s.started_at), max(s.started_at + s.duration_ms) - min(s.started_at), count(*),
    sum(s.input_tokens), sum(s.output_tokens), round(sum(s.cost_usd), 9),
    CASE WHEN sum(s.status = 'error') > 0 THEN 'error' ELSE 'ok' END, sum(s.status = 'error'),
    ?2, min(s.started_at),
    sum(s.cost_source IS 'unknown_model')
FROM spans s WHERE s.project_id = ?1 AND s.trace_id IN (SELECT value FROM json_each(?3))
GROUP BY s.trace_id
ON CONFLICT (id, project_id) DO UPDATE SET name = excluded.name,
    started_at = excluded.started_at, duration_ms = excluded.duration_ms,
    span_count = excluded.span_count, input_tokens = excluded.input_tokens,
    output_tokens = excluded.output_tokens, total_cost_usd = excluded.total_cost_usd,
    status = excluded.status, error_count = excluded.error_count,
    unpriced_spans = excluded.unpriced_spans
"""
