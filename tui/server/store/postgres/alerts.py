"""The PostgreSQL store's own half of the alert tables (store/alerts.py): windows of traces,
a sample of them and their prompt attributes each in one statement, and claiming webhooks with
FOR UPDATE SKIP LOCKED.

Windows are read on traces_by_project_started (project_id, started_at) INCLUDE (duration_ms,
error_count, total_cost_usd): an index-only scan. The p95 reads the two durations it needs by
rank (ORDER BY ... OFFSET, a bounded sort) and the slowest traces by a LIMIT, never every
duration of the window. Ties among equal measures are ordered by start then id (the SQLite
store orders them by rowid, which PostgreSQL has not).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tui.server.alerts.metrics import lerp, p95_ranks
from tui.server.store.alert_rows import DeliveryRow, WindowStats
from tui.server.store.alerts import (
    CLAIMABLE,
    ERRORED,
    PROMPT_KEY_LIST,
    SLOWEST,
    AlertTables,
    parsed_value,
)
from tui.server.store.alerts import WINDOW as SHARED_WINDOW
from tui.server.store.dialect import POSTGRES
from tui.server.store.postgres.pool import Connections
from tui.server.store.sql import columns

WINDOW = POSTGRES.sql(SHARED_WINDOW)
WORST = {
    "latency": f"SELECT id, duration_ms {WINDOW} ORDER BY duration_ms DESC, started_at, id LIMIT %s",
    "cost": (
        f"SELECT id, total_cost_usd {WINDOW} ORDER BY total_cost_usd DESC, started_at, id LIMIT %s"
    ),
    "error_rate": (
        f"SELECT id, error_count {WINDOW} AND {ERRORED} "
        "ORDER BY error_count DESC, started_at DESC, id LIMIT %s"
    ),
}
# The prompt attributes of the first LLM spans of several traces of one project: (trace id,
# key, type, value), each trace's rows in its spans' order. Read by PostgreSQL's JSON functions
# in the order the keys are written (json, not jsonb, which would sort them), each value cut
# short and given as SQLite's json_each gives it: a string's text, a number's digits,
# true/false as 1/0, an array or object as its JSON text. (IS JSON: PostgreSQL 16 and later.)
# Parameters: trace ids, project, spans per trace.
PROMPT_ATTRIBUTES_OF = f"""
SELECT t.trace_id, j.key, json_typeof(j.value),
    CASE json_typeof(j.value)
        WHEN 'string' THEN substr(j.value #>> '{{}}', 1, 65536)
        WHEN 'boolean' THEN CASE WHEN j.value::text = 'true' THEN '1' ELSE '0' END
        WHEN 'null' THEN NULL
        ELSE substr(j.value::text, 1, 65536)
    END
FROM unnest(%s::text[]) WITH ORDINALITY AS t(trace_id, n)
CROSS JOIN LATERAL (SELECT started_at, id, attributes FROM spans
      WHERE project_id = %s AND trace_id = t.trace_id AND kind = 'llm'
      ORDER BY started_at, id LIMIT %s) s
CROSS JOIN LATERAL json_each(
    CASE WHEN s.attributes IS JSON OBJECT THEN s.attributes::json ELSE '{{}}'::json END) j
WHERE j.key IN ({PROMPT_KEY_LIST}) OR j.key ~ '^gen_ai\\.prompt\\.[0-9]'
    OR j.key ~ '^llm\\.input_messages\\.[0-9]' OR j.key ~ '^llm\\.prompts\\.[0-9]'
ORDER BY t.n, s.started_at, s.id
"""


# Claims due deliveries among the ids asked for: the rows are picked and locked by the
# subquery, skipping those another replica's claim is writing at this moment (SKIP LOCKED:
# no waiting), and claimed by the UPDATE, in one statement.
CLAIM = POSTGRES.sql(f"""
UPDATE webhook_deliveries SET claimed_by = %s, claimed_until = %s
WHERE id IN (
    SELECT id FROM webhook_deliveries
    WHERE id = ANY(%s) AND status = 'pending' AND next_attempt_at <= %s AND {CLAIMABLE}
    FOR UPDATE SKIP LOCKED)
RETURNING {columns(DeliveryRow)}
""")


SAMPLE_TRACES = """
SELECT t.id, t.span_count
FROM unnest(%s::bigint[], %s::bigint[]) WITH ORDINALITY AS s(lo, hi, n)
CROSS JOIN LATERAL (
    SELECT id, span_count FROM traces
    WHERE project_id = %s AND started_at >= s.lo AND started_at < s.hi
    ORDER BY started_at LIMIT 1
) t
ORDER BY s.n
"""


class PostgresAlerts(AlertTables):
    """What PostgreSQL reads its own way for alerts, over the store's `Connections`."""

    _db: Connections

    def window_stats(
        self,
        project_id: str,
        start: int,
        end: int,
        errors: bool = True,
        cost: bool = True,
        p95: bool = False,
    ) -> WindowStats:
        """See AlertStore.window_stats: one snapshot (a repeatable-read transaction)."""
        window = (project_id, start, end)
        picks = [
            "count(*)",
            f"count(*) FILTER (WHERE {ERRORED})" if errors else "0",
            "coalesce(sum(total_cost_usd), 0.0)" if cost else "0.0",
        ]
        with self._db.snapshot() as db:
            found = db.execute(f"SELECT {', '.join(picks)} {WINDOW}", window).fetchone()
            count, errored, total = found if found is not None else (0, 0, 0.0)
            p95_ms = None
            slowest: list[tuple[str, float]] = []
            if p95 and count:
                low, high, fraction = p95_ranks(count)
                # Positions in the descending order of the two ranks the p95 lies between.
                first, last = sorted((count - 1 - low, count - 1 - high))
                values = [
                    float(row[0])
                    for row in db.execute(
                        f"SELECT duration_ms {WINDOW} ORDER BY duration_ms DESC OFFSET %s LIMIT %s",
                        (*window, first, last - first + 1),
                    )
                ]
                if len(values) == last - first + 1:
                    by_position = {first: values[0], last: values[-1]}
                    p95_ms = lerp(
                        by_position[count - 1 - low], by_position[count - 1 - high], fraction
                    )
                # As many as the SQLite store names: the slowest among the top ranks it reads.
                top = min(SLOWEST, count - low)
                slowest = [
                    (row[0], float(row[1])) for row in db.execute(WORST["latency"], (*window, top))
                ]
        return WindowStats(int(count), int(errored or 0), float(total or 0.0), p95_ms, slowest)

    def worst_traces(
        self, project_id: str, start: int, end: int, measure: str, limit: int = 5
    ) -> list[tuple[str, float]]:
        sql = WORST.get(measure)
        if sql is None:
            return []
        with self._db.connection() as db:
            rows = db.execute(sql, (project_id, start, end, limit)).fetchall()
        return [(row[0], float(row[1])) for row in rows]

    def sample_traces(
        self, project_id: str, strata: Sequence[tuple[int, int]]
    ) -> list[tuple[str, int]]:
        # One statement for every stratum (the first trace of each by started_at, as a query
        # per stratum would find): a round trip per stratum would be hundreds per round.
        if not strata:
            return []
        with self._db.connection() as db:
            rows = db.execute(
                SAMPLE_TRACES,
                ([start for start, _ in strata], [end for _, end in strata], project_id),
            ).fetchall()
        return [(row[0], int(row[1])) for row in rows]

    def prompt_attributes_of(
        self, project_id: str, trace_ids: Sequence[str], spans: int = 3
    ) -> dict[str, list[tuple[str, Any]]]:
        """See TraceStore.prompt_attributes_of: one statement for the whole sample (a round's
        first drift read made 1,200 round trips on the million-trace bench)."""
        found: dict[str, list[tuple[str, Any]]] = {trace_id: [] for trace_id in trace_ids}
        if not found:
            return found
        with self._db.connection() as db:
            rows = db.execute(PROMPT_ATTRIBUTES_OF, (list(found), project_id, spans)).fetchall()
        for trace_id, key, kind, value in rows:
            found[trace_id].append((key, parsed_value(kind, value)))
        return found

    def claim_deliveries(
        self, delivery_ids: Sequence[str], holder: str, now: int, until: int
    ) -> list[DeliveryRow]:
        """See AlertStore.claim_deliveries: one UPDATE over rows locked FOR UPDATE SKIP
        LOCKED."""
        if not delivery_ids:
            return []
        with self._db.transaction() as db:
            rows = db.execute(CLAIM, (holder, until, list(delivery_ids), now, now, holder))
            return list(map(DeliveryRow._make, rows.fetchall()))
