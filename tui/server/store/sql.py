"""The SQL both stores share, written once: the table of each row class, the column lists and
INSERT statements made from the row classes' fields (so that no SQL names a column the rows do
not have), and the statements of the trace reads and of ingest. `?` placeholders and
`= ANY(?)` lists, rendered for a store by its dialect (dialect.py).

A trace is known by its project and its id together: every statement on traces or spans names
both.
"""

from __future__ import annotations

from typing import NamedTuple

from tui.server.store.alert_rows import (
    AlertEventRow,
    AlertRow,
    AlertSecretRow,
    AlertState,
    DeliveryRow,
)
from tui.server.store.annotation_rows import AnnotationRow
from tui.server.store.dialect import Dialect
from tui.server.store.rows import (
    ApiKeyRow,
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
    AnnotationRow: "annotations",
}


def columns(row_class: type[NamedTuple]) -> str:
    return ", ".join(row_class._fields)


# Columns a row class's table has ahead of the class's fields. A span is decoded before the
# store knows its project (the workspace key's spans are routed by name, in the store), so it
# is written as (project_id, *span).
LEADING: dict[type[NamedTuple], tuple[str, ...]] = {SpanRow: ("project_id",)}


def column_names(row_class: type[NamedTuple]) -> tuple[str, ...]:
    """The columns a row of `row_class` is written to: its table's LEADING ones, then its
    fields."""
    return (*LEADING.get(row_class, ()), *row_class._fields)


def insert_sql(row_class: type[NamedTuple]) -> str:
    """`INSERT INTO table (a, b, ...) VALUES (?, ?, ...)`: positions bound by the row's names."""
    names = column_names(row_class)
    marks = ", ".join("?" * len(names))
    return f"INSERT INTO {TABLES[row_class]} ({', '.join(names)}) VALUES ({marks})"


def updated(names: tuple[str, ...]) -> str:
    """`a = excluded.a, b = excluded.b, ...`: an upsert's new row, whole but for its key."""
    return ", ".join(f"{name} = excluded.{name}" for name in names)


INSERT = {row_class: insert_sql(row_class) for row_class in TABLES}
# An alert's state after a round replaces the one stored.
UPSERT_ALERT_STATE = (
    f"{INSERT[AlertState]} ON CONFLICT (alert_id) DO UPDATE SET {updated(AlertState._fields[1:])}"
)

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
# The columns of a span a re-sent one replaces (exporters retry): all but its key.
SPAN_UPDATE = updated(SpanRow._fields[2:])


def upsert_traces(dialect: Dialect) -> str:
    """The trace rows of project ?'s traces whose ids are in the list ?, computed from all their
    stored spans: right after every batch, whatever order and however often spans came.
    Parameters: (project, project, project, attributes, project, ids).

    Named after the earliest root (no parent), else the earliest span while the root has not
    come (the rules of ingest.summaries). listed_at and the attributes are set when the trace is
    first stored and never change. unpriced_spans counts the spans whose model has no price (a
    NULL cost_source, as a span counted once in its parent has, counts 0: store/counting.py)."""
    return dialect.sql(f"""
INSERT INTO traces (id, project_id, name, started_at, duration_ms, span_count, input_tokens,
    output_tokens, total_cost_usd, status, error_count, attributes, listed_at, unpriced_spans)
SELECT s.trace_id, ?,
    coalesce(
        (SELECT r.name FROM spans r
         WHERE r.project_id = ? AND r.trace_id = s.trace_id AND r.parent_id IS NULL
         ORDER BY r.started_at, r.id LIMIT 1),
        (SELECT r.name FROM spans r WHERE r.project_id = ? AND r.trace_id = s.trace_id
         ORDER BY r.started_at, r.id LIMIT 1)),
    min(s.started_at), max(s.started_at + s.duration_ms) - min(s.started_at), count(*),
    CAST(sum(s.input_tokens) AS BIGINT), CAST(sum(s.output_tokens) AS BIGINT),
    {dialect.rounded("sum(s.cost_usd)", 9)},
    CASE WHEN count(CASE WHEN s.status = 'error' THEN 1 END) > 0 THEN 'error' ELSE 'ok' END,
    count(CASE WHEN s.status = 'error' THEN 1 END),
    ?, min(s.started_at),
    count(CASE WHEN s.cost_source = 'unknown_model' THEN 1 END)
FROM spans s WHERE s.project_id = ? AND s.trace_id = ANY(?)
GROUP BY s.trace_id
ON CONFLICT (id, project_id) DO UPDATE SET name = excluded.name,
    started_at = excluded.started_at, duration_ms = excluded.duration_ms,
    span_count = excluded.span_count, input_tokens = excluded.input_tokens,
    output_tokens = excluded.output_tokens, total_cost_usd = excluded.total_cost_usd,
    status = excluded.status, error_count = excluded.error_count,
    unpriced_spans = excluded.unpriced_spans
""")


def upsert_traces_args(project_id: str, attributes: str, ids: object) -> tuple[object, ...]:
    """upsert_traces' parameters, in its order."""
    return (project_id, project_id, project_id, attributes, project_id, ids)


# A stored trace's preview from newly arrived spans: a root's replaces it (the root's input is
# the trace's), another span's only fills it in when there was none.
UPDATE_PREVIEW = "UPDATE traces SET input_preview = ? WHERE id = ? AND project_id = ?"
FILL_PREVIEW = UPDATE_PREVIEW + " AND input_preview IS NULL"
