"""Statements of the PostgreSQL store, made from the row classes' fields (as the SQLite store's
`store_sql`), so no statement names a column the rows do not have. Placeholders are psycopg's
`%s`; every value is bound, never spliced.
"""

from __future__ import annotations

from typing import NamedTuple

from tui.server.ingest.conventions import COUNTED_IN
from tui.server.store.rows import AlertState, SpanInTrace, SpanRow, TraceRow, TraceSummary
from tui.server.store.sql import LEADING, TABLES, columns


def insert_sql(row_class: type[NamedTuple]) -> str:
    """`INSERT INTO table (a, b, ...) VALUES (%s, %s, ...)`, after the LEADING columns."""
    names = (*LEADING.get(row_class, ()), *row_class._fields)
    marks = ", ".join(["%s"] * len(names))
    return f"INSERT INTO {TABLES[row_class]} ({', '.join(names)}) VALUES ({marks})"


def copy_sql(row_class: type[NamedTuple], table: str | None = None) -> str:
    """`COPY table (a, b, ...) FROM STDIN (FORMAT BINARY)` with the row class's columns."""
    names = (*LEADING.get(row_class, ()), *row_class._fields)
    return f"COPY {table or TABLES[row_class]} ({', '.join(names)}) FROM STDIN (FORMAT BINARY)"


INSERT = {row_class: insert_sql(row_class) for row_class in TABLES}

# The PostgreSQL types of the columns binary COPY writes (it sends no type names: they must be
# set, in the columns' order).
SPAN_TYPES = [
    "text",  # project_id
    "text",  # trace_id
    "text",  # id
    "text",  # parent_id
    "text",  # name
    "text",  # kind
    "text",  # model
    "int8",  # started_at
    "int8",  # duration_ms
    "int8",  # input_tokens
    "int8",  # output_tokens
    "float8",  # cost_usd
    "text",  # status
    "text",  # error_message
    "text",  # attributes
    "text",  # cost_source
    "int8",  # cache_read_tokens
    "int8",  # cache_write_tokens
    "int8",  # reasoning_tokens
]
TRACE_TYPES = [
    "text",  # id
    "text",  # project_id
    "text",  # name
    "int8",  # started_at
    "int8",  # duration_ms
    "int8",  # span_count
    "int8",  # input_tokens
    "int8",  # output_tokens
    "float8",  # total_cost_usd
    "text",  # status
    "int8",  # error_count
    "text",  # attributes
    "int8",  # listed_at
    "text",  # input_preview
    "text",  # user_id
    "text",  # session_id
    "text",  # tags (a JSON list)
    "text",  # output_preview
    "text",  # models (a JSON list)
    "int8",  # unpriced_spans
]
assert len(SPAN_TYPES) == len(SpanRow._fields) + 1 and len(TRACE_TYPES) == len(TraceRow._fields)
# Traces written with their search text (search.text), a column of traces beyond TraceRow's.
COPY_TRACES_WITH_TEXT = (
    f"COPY traces ({', '.join((*TraceRow._fields, 'search_text'))}) FROM STDIN (FORMAT BINARY)"
)
TRACE_WITH_TEXT_TYPES = [*TRACE_TYPES, "text"]

# Ingest writes a batch's spans by binary COPY into this session's temporary table, then moves
# them with one INSERT ... SELECT ... ON CONFLICT (COPY itself cannot resolve conflicts).
INGEST_TABLE = "ingest_spans"
CREATE_INGEST_TABLE = (
    f"CREATE TEMPORARY TABLE IF NOT EXISTS {INGEST_TABLE} "
    "(LIKE spans INCLUDING DEFAULTS) ON COMMIT DELETE ROWS"
)
SPAN_COLUMNS = ", ".join(("project_id", *SpanRow._fields))
# A re-sent span replaces itself (exporters retry): every column but the key is updated. The
# temporary table is emptied by the same statement, ready for the transaction's next group (and
# truncated at commit: temporary tables are never vacuumed).
MOVE_SPANS = (
    f"WITH moved AS (DELETE FROM {INGEST_TABLE} RETURNING {SPAN_COLUMNS}) "
    f"INSERT INTO spans ({SPAN_COLUMNS}) SELECT {SPAN_COLUMNS} FROM moved "
    "ON CONFLICT (project_id, trace_id, id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in SpanRow._fields[2:])
)

SELECT_SPANS = (
    f"SELECT {columns(SpanInTrace)} FROM spans WHERE project_id = %s AND trace_id = %s "
    "ORDER BY started_at, id"
)
SELECT_TRACES = (
    f"SELECT {columns(TraceSummary)} FROM traces WHERE project_id = %s AND listed_at >= %s "
    "AND listed_at <= %s"
)
# As the SQLite store's: a trace is kept while its newest span is (its spans' latest end).
NEWEST_SPAN_END = "started_at + duration_ms"

# Each model call counted once across exports, by the rule of the SQLite store's COUNT_ONCE
# (and of conventions.counted_once), in project %(project)s's traces whose ids are in
# %(ids)s: run before UPSERT_TRACES. The parent is read as it was before the statement (one
# snapshot); that is what SQLite's reading gives too, as a parent this changes is counted in
# its own parent and so still counts as reporting tokens.
COUNT_ONCE = f"""
UPDATE spans s SET input_tokens = 0, output_tokens = 0, cost_usd = 0.0, cost_source = NULL,
    cache_read_tokens = 0, cache_write_tokens = 0, reasoning_tokens = 0,
    attributes = CASE WHEN right(s.attributes, 1) <> '}}' THEN s.attributes
        ELSE left(s.attributes, -1)
        || CASE WHEN s.attributes = '{{}}' THEN '' ELSE ',' END
        || '"{COUNTED_IN}":"' || s.parent_id || '"}}' END
FROM spans p
WHERE s.project_id = %(project)s AND s.trace_id = ANY(%(ids)s) AND s.kind = 'llm'
    AND (s.input_tokens > 0 OR s.output_tokens > 0)
    AND p.project_id = s.project_id AND p.trace_id = s.trace_id AND p.id = s.parent_id
    AND p.kind = 'llm' AND (p.input_tokens > 0 OR p.output_tokens > 0
        OR strpos(p.attributes, '"{COUNTED_IN}":"' || p.parent_id || '"') > 0)
"""

# The trace rows of project %(project)s's traces whose ids are in %(ids)s, computed from all
# their stored spans, by the rules of the SQLite store's UPSERT_TRACES (and of
# ingest.summaries): named after the earliest root, else the earliest span; listed_at and the
# attributes set when the trace is first stored, never changed; unpriced_spans counts the
# spans whose model has no price (COUNT_ONCE leaves a counted-once span's cost_source NULL).
UPSERT_TRACES = """
INSERT INTO traces (id, project_id, name, started_at, duration_ms, span_count, input_tokens,
    output_tokens, total_cost_usd, status, error_count, attributes, listed_at, unpriced_spans)
SELECT s.trace_id, %(project)s,
    coalesce(
        (SELECT r.name FROM spans r
         WHERE r.project_id = %(project)s AND r.trace_id = s.trace_id AND r.parent_id IS NULL
         ORDER BY r.started_at, r.id LIMIT 1),
        (SELECT r.name FROM spans r WHERE r.project_id = %(project)s AND r.trace_id = s.trace_id
         ORDER BY r.started_at, r.id LIMIT 1)),
    min(s.started_at), max(s.started_at + s.duration_ms) - min(s.started_at), count(*),
    sum(s.input_tokens)::bigint, sum(s.output_tokens)::bigint,
    round(sum(s.cost_usd)::numeric, 9)::float8,
    CASE WHEN count(*) FILTER (WHERE s.status = 'error') > 0 THEN 'error' ELSE 'ok' END,
    count(*) FILTER (WHERE s.status = 'error'),
    %(attributes)s, min(s.started_at),
    count(*) FILTER (WHERE s.cost_source = 'unknown_model')
FROM spans s WHERE s.project_id = %(project)s AND s.trace_id = ANY(%(ids)s)
GROUP BY s.trace_id
ON CONFLICT (id, project_id) DO UPDATE SET name = excluded.name,
    started_at = excluded.started_at, duration_ms = excluded.duration_ms,
    span_count = excluded.span_count, input_tokens = excluded.input_tokens,
    output_tokens = excluded.output_tokens, total_cost_usd = excluded.total_cost_usd,
    status = excluded.status, error_count = excluded.error_count,
    unpriced_spans = excluded.unpriced_spans
"""

UPSERT_ALERT_STATE = (
    f"INSERT INTO alert_states ({columns(AlertState)}) "
    f"VALUES ({', '.join(['%s'] * len(AlertState._fields))}) "
    "ON CONFLICT (alert_id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in AlertState._fields[1:])
)
