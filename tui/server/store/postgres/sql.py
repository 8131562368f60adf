"""Statements of the PostgreSQL store's own (binary COPY and its types, ingest's move from the
temporary table, the JSON join of span logs, the key look-up counted in one statement, leases
by the database's clock), and the shared ones it runs on the hot path, rendered once
(store/sql.py). Placeholders are psycopg's `%s`; every value is bound, never spliced.
"""

from __future__ import annotations

from typing import NamedTuple

from tui.server.store.annotation_rows import AnnotationRow
from tui.server.store.dialect import POSTGRES
from tui.server.store.logs import MAX_LOGS_PER_SPAN
from tui.server.store.replicas import TAKE_LEASE as TAKE_LEASE_BY
from tui.server.store.rows import SpanRow, TraceRow
from tui.server.store.sql import SPAN_UPDATE, TABLES, column_names, upsert_traces


def copy_sql(row_class: type[NamedTuple], table: str | None = None) -> str:
    """`COPY table (a, b, ...) FROM STDIN (FORMAT BINARY)` with the row class's columns."""
    names = column_names(row_class)
    return f"COPY {table or TABLES[row_class]} ({', '.join(names)}) FROM STDIN (FORMAT BINARY)"


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
COPY_SPANS = copy_sql(SpanRow)

# Ingest writes a batch's spans by binary COPY into this session's temporary table, then moves
# them with one INSERT ... SELECT ... ON CONFLICT (COPY itself cannot resolve conflicts).
INGEST_TABLE = "ingest_spans"
CREATE_INGEST_TABLE = (
    f"CREATE TEMPORARY TABLE IF NOT EXISTS {INGEST_TABLE} "
    "(LIKE spans INCLUDING DEFAULTS) ON COMMIT DELETE ROWS"
)
COPY_INGEST = copy_sql(SpanRow, INGEST_TABLE)
SPAN_COLUMNS = ", ".join(column_names(SpanRow))
# A re-sent span replaces itself (exporters retry): every column but the key is updated. The
# temporary table is emptied by the same statement, ready for the transaction's next group (and
# truncated at commit: temporary tables are never vacuumed).
MOVE_SPANS = (
    f"WITH moved AS (DELETE FROM {INGEST_TABLE} RETURNING {SPAN_COLUMNS}) "
    f"INSERT INTO spans ({SPAN_COLUMNS}) SELECT {SPAN_COLUMNS} FROM moved "
    f"ON CONFLICT (project_id, trace_id, id) DO UPDATE SET {SPAN_UPDATE}"
)
UPSERT_TRACES = upsert_traces(POSTGRES)

# Every span of project %(project)s's traces in %(traces)s that has logs: its whole list of
# logs, in time order, set into its attributes (store/logs.py). The attributes are TEXT: the
# join goes through jsonb, which refuses the escape \\u0000, so a span whose attributes hold
# one keeps them as they are (its logs stay stored).
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

# A request's count commits without waiting for its WAL to reach the disk (synchronous_commit
# off for its own transaction alone: set_config's `true`). Every request of a replica writes
# one, so a flush each would put the disk's latency (0.2 ms idle, milliseconds on a busy disk)
# into every request; a crash can lose at most the last few hundred ms of counts (the WAL
# writer flushes them within 3 x wal_writer_delay), which lets a key a few more requests in a
# window that ends within a minute anyway. Nothing else is written in these transactions.
RELAXED_COMMIT = "relaxed AS (SELECT set_config('synchronous_commit', 'off', true))"

# The key looked up and, if it is known, its request added to the bucket's window (as
# replicas.COUNT_REQUESTS): one statement, so one round trip and one atomic step.
KEY_SCOPE_COUNTED = f"""
WITH {RELAXED_COMMIT},
known AS (SELECT project_id FROM api_keys WHERE key_hash = %(hash)s),
counted AS (
    INSERT INTO rate_counts (bucket, window_start, hits)
    SELECT %(bucket)s, %(window)s, 1 FROM known
    ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_counts.hits + EXCLUDED.hits
    RETURNING hits
)
SELECT known.project_id, counted.hits FROM known CROSS JOIN counted CROSS JOIN relaxed
"""

# replicas.COUNT_REQUESTS (the limiter's count without a key's look-up: an address's, a spent
# window's, ingest's budget) with the same relaxed commit.
COUNT_REQUESTS = f"""
WITH {RELAXED_COMMIT}
INSERT INTO rate_counts (bucket, window_start, hits) SELECT %s, %s, %s FROM relaxed
ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_counts.hits + excluded.hits
RETURNING hits
"""

# A lease by the database's clock: the replicas' own clocks may disagree.
NOW_MS = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint"
TAKE_LEASE = POSTGRES.sql(TAKE_LEASE_BY.format(now=NOW_MS))

# A batch of annotations in one statement: each column as an array, unnested into rows
# (psycopg's executemany sends a statement per row, 1,000 for a batch).
ANNOTATION_TYPES = [
    *["text"] * 7,  # id, project_id, trace_id, span_id, session_id, name, label
    "float8",  # score
    *["text"] * 5,  # explanation, annotator_kind, identifier, author, metadata
    *["int8"] * 3,  # created_at, updated_at, listed_at
]
assert len(ANNOTATION_TYPES) == len(AnnotationRow._fields)
INSERT_ANNOTATIONS = (
    f"INSERT INTO annotations ({', '.join(AnnotationRow._fields)}) SELECT * FROM unnest("
    + ", ".join(f"%s::{kind}[]" for kind in ANNOTATION_TYPES)
    + ")"
)
