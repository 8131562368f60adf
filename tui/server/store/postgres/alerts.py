"""The PostgreSQL store's alert tables: windows of traces for evaluation, alert states and
history, signing secrets and the webhook outbox (`store_alerts.AlertTables` of the SQLite
store, on PostgreSQL). A part of `store.PostgresStore` (which mixes it in).

Windows are read on traces_by_project_started (project_id, started_at) INCLUDE (duration_ms,
error_count, total_cost_usd): an index-only scan. The p95 reads the two durations it needs by
rank (ORDER BY ... OFFSET, a bounded sort) and the slowest traces by a LIMIT, never every
duration of the window. Ties among equal measures are ordered by start then id (the SQLite
store orders them by rowid, which PostgreSQL has not).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from typing import Any

from tui.server.alerts.drift import FALLBACK_KEYS, PROMPT_KEYS
from tui.server.alerts.metrics import lerp, p95_ranks
from tui.server.store.postgres import locks
from tui.server.store.postgres.leases import ReplicaTables
from tui.server.store.postgres.pool import Connections
from tui.server.store.postgres.sql import INSERT, UPSERT_ALERT_STATE
from tui.server.store.rows import (
    AlertEventRow,
    AlertRow,
    AlertSecretRow,
    AlertState,
    DeliveryRow,
    WindowStats,
)
from tui.server.store.sql import columns
from tui.server.store.sqlite.alerts import SLOWEST, event_row

WINDOW = "FROM traces WHERE project_id = %s AND started_at >= %s AND started_at < %s"
ERRORED = "error_count > 0"
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
PROMPT_KEY_LIST = ", ".join(f"'{key}'" for key in (*PROMPT_KEYS, *FALLBACK_KEYS))
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


def parsed_value(kind: str, value: Any) -> Any:
    """A prompt attribute's value as read: an array or object parsed when it is whole."""
    if kind in ("array", "object"):
        with contextlib.suppress(ValueError, RecursionError):  # cut at 64 KB it does not parse
            return json.loads(value)
    return value


# A webhook another replica is not attempting: unclaimed, its claim expired, or the holder's
# own. Parameters: now, holder.
CLAIMABLE = "(claimed_until IS NULL OR claimed_until <= %s OR claimed_by = %s)"
# Claims due deliveries among the ids asked for: the rows are picked and locked by the
# subquery, skipping those another replica's claim is writing at this moment (SKIP LOCKED:
# no waiting), and claimed by the UPDATE, in one statement.
CLAIM = f"""
UPDATE webhook_deliveries SET claimed_by = %s, claimed_until = %s
WHERE id IN (
    SELECT id FROM webhook_deliveries
    WHERE id = ANY(%s) AND status = 'pending' AND next_attempt_at <= %s AND {CLAIMABLE}
    FOR UPDATE SKIP LOCKED)
RETURNING {columns(DeliveryRow)}
"""


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


class AlertTables(ReplicaTables):
    """Alert storage over the store's `Connections` (and the replicas' leases and request
    counts, `leases.ReplicaTables`)."""

    _db: Connections

    # -- alerts and their secrets ---------------------------------------------------------------

    def get_alert(self, alert_id: str) -> AlertRow | None:
        with self._db.connection() as db:
            row = db.execute(
                f"SELECT {columns(AlertRow)} FROM alerts WHERE id = %s", (alert_id,)
            ).fetchone()
        return None if row is None else AlertRow._make(row)

    def all_alerts(self) -> list[AlertRow]:
        with self._db.connection() as db:
            rows = db.execute(
                f"SELECT {columns(AlertRow)} FROM alerts ORDER BY project_id, created_at, id"
            ).fetchall()
        return list(map(AlertRow._make, rows))

    def alert_secret(self, alert_id: str) -> AlertSecretRow | None:
        with self._db.connection() as db:
            row = db.execute(
                f"SELECT {columns(AlertSecretRow)} FROM alert_secrets WHERE alert_id = %s",
                (alert_id,),
            ).fetchone()
        return None if row is None else AlertSecretRow._make(row)

    def alerts_without_secret(self) -> list[str]:
        with self._db.connection() as db:
            rows = db.execute(
                "SELECT id FROM alerts WHERE id NOT IN (SELECT alert_id FROM alert_secrets)"
            ).fetchall()
        return [row[0] for row in rows]

    def set_webhook_url(self, alert_id: str, webhook_url: str) -> None:
        """Point an alert's webhook elsewhere (the demo points its alerts at its receiver)."""
        with self._db.transaction() as db:
            db.execute("UPDATE alerts SET webhook_url = %s WHERE id = %s", (webhook_url, alert_id))

    # -- states and events -----------------------------------------------------------------------

    def alert_states(self, project_id: str | None = None) -> dict[str, AlertState]:
        sql = f"SELECT {', '.join('s.' + c for c in AlertState._fields)} FROM alert_states s"
        args: tuple[Any, ...] = ()
        if project_id is not None:
            sql += " JOIN alerts a ON a.id = s.alert_id WHERE a.project_id = %s"
            args = (project_id,)
        with self._db.connection() as db:
            rows = db.execute(sql, args).fetchall()
        return {row[0]: AlertState._make(row) for row in rows}

    def record_round(
        self,
        states: Sequence[AlertState],
        expected: dict[str, str],
        events: Sequence[AlertEventRow],
        deliveries: Sequence[DeliveryRow],
    ) -> list[str]:
        """See AlertStore.record_round: one transaction, under the rounds' lock, so two
        evaluators (two replicas) never both store a change from the same state."""
        with self._db.transaction() as db:
            locks.lock_name(db, locks.ROUNDS)
            stored = dict(db.execute("SELECT alert_id, state FROM alert_states").fetchall())
            stale = [
                alert_id
                for alert_id, state in expected.items()
                if stored.get(alert_id, "no_data") != state
            ]
            skip = set(stale)
            with db.cursor() as cursor:
                cursor.executemany(
                    UPSERT_ALERT_STATE, [s for s in states if s.alert_id not in skip]
                )
                cursor.executemany(
                    INSERT[AlertEventRow], [e for e in events if e.alert_id not in skip]
                )
                cursor.executemany(
                    INSERT[DeliveryRow], [d for d in deliveries if d.alert_id not in skip]
                )
        return stale

    def list_alert_events(
        self, alert_id: str, limit: int, before: int | None = None
    ) -> tuple[list[tuple[int, AlertEventRow]], bool]:
        sql = f"SELECT seq, {columns(AlertEventRow)} FROM alert_events WHERE alert_id = %s"
        args: list[Any] = [alert_id]
        if before is not None:
            sql += " AND seq < %s"
            args.append(before)
        sql += " ORDER BY seq DESC LIMIT %s"
        args.append(limit + 1)
        with self._db.connection() as db:
            rows = [(row[0], event_row(row[1:])) for row in db.execute(sql, args)]
        return rows[:limit], len(rows) > limit

    # -- windows of traces -----------------------------------------------------------------------

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

    def prompt_attributes(
        self, trace_id: str, spans: int = 3, project_id: str | None = None
    ) -> list[tuple[str, Any]]:
        found: list[tuple[str, Any]] = []
        with self._db.connection() as db:
            if project_id is None:
                holders = db.execute(
                    "SELECT project_id FROM traces WHERE id = %s LIMIT 2", (trace_id,)
                ).fetchall()
                if len(holders) != 1:
                    return found
                project_id = holders[0][0]
        return self.prompt_attributes_of(project_id, [trace_id], spans)[trace_id]

    def forget_alert_history(self, events_before: int, deliveries_before: int) -> int:
        with self._db.transaction() as db:
            events = db.execute("DELETE FROM alert_events WHERE at < %s", (events_before,))
            done = db.execute(
                "DELETE FROM webhook_deliveries WHERE status != 'pending' AND created_at < %s",
                (deliveries_before,),
            )
        return events.rowcount + done.rowcount

    # -- the webhook outbox ----------------------------------------------------------------------

    def due_deliveries(self, now: int, limit: int, holder: str | None = None) -> list[DeliveryRow]:
        sql = (
            f"SELECT {columns(DeliveryRow)} FROM webhook_deliveries "
            "WHERE status = 'pending' AND next_attempt_at <= %s "
        )
        args: list[Any] = [now]
        if holder is not None:
            sql += f"AND {CLAIMABLE} "
            args += [now, holder]
        with self._db.connection() as db:
            rows = db.execute(
                sql + "ORDER BY next_attempt_at, created_at LIMIT %s", (*args, limit)
            ).fetchall()
        return list(map(DeliveryRow._make, rows))

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

    def release_claims(self, holder: str) -> int:
        with self._db.transaction() as db:
            released = db.execute(
                "UPDATE webhook_deliveries SET claimed_by = NULL, claimed_until = NULL "
                "WHERE claimed_by = %s",
                (holder,),
            )
        return released.rowcount

    def next_delivery_at(self) -> int | None:
        with self._db.connection() as db:
            row = db.execute(
                "SELECT min(next_attempt_at) FROM webhook_deliveries WHERE status = 'pending'"
            ).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def get_delivery(self, delivery_id: str) -> DeliveryRow | None:
        with self._db.connection() as db:
            row = db.execute(
                f"SELECT {columns(DeliveryRow)} FROM webhook_deliveries WHERE id = %s",
                (delivery_id,),
            ).fetchone()
        return None if row is None else DeliveryRow._make(row)

    def record_attempt(
        self, delivery_id: str, attempt: AlertEventRow, next_attempt_at: int | None, status: str
    ) -> None:
        with self._db.transaction() as db:
            db.execute(INSERT[AlertEventRow], attempt)
            db.execute(
                "UPDATE webhook_deliveries SET attempts = %s, next_attempt_at = %s, status = %s, "
                "claimed_by = NULL, claimed_until = NULL WHERE id = %s",
                (attempt.attempt, next_attempt_at, status, delivery_id),
            )
