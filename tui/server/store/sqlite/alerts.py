"""The SQLite store's alert tables: windows of traces for evaluation, alert states and history,
signing secrets and the webhook outbox. A part of `store.Store` (which mixes it in), kept apart
so that store.py stays about projects, traces and keys.

Evaluation reads a window [start, end) of a project's traces on the covering index
traces_by_project_started (project_id, started_at, duration_ms, error_count, total_cost_usd):
a window of a million traces is one walk of that index, never of the table, and each read asks
only for the columns its alerts need. The p95 is read from the top 5% of durations (an ORDER BY
... LIMIT whose sorter keeps only those), not from every duration brought into Python; the
top of that read is the window's slowest traces, which a firing latency alert names.

Also the tables replicas share the work through (leases, request counts, webhook claims), with
the PostgreSQL store's protocol: here one process holds every lease and claim, and its rate
limiter counts in memory (`is_shared` is False), but the same code runs on both.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from tui.server.alerts.drift import FALLBACK_KEYS, PROMPT_KEYS
from tui.server.alerts.metrics import lerp, p95_ranks
from tui.server.store.rows import (
    AlertEventRow,
    AlertRow,
    AlertSecretRow,
    AlertState,
    DeliveryRow,
    WindowStats,
)
from tui.server.store.sql import columns

WINDOW = "FROM traces WHERE project_id = ? AND started_at >= ? AND started_at < ?"
ERRORED = "error_count > 0"
SLOWEST = 5  # the slowest traces window_stats names along with the p95  # the service's status is "error" exactly when error_count > 0
# Ranked on the index alone (rowid and the measure), ties by rowid: asking for the id here
# would read the table for every row of the window (a million rows: 505 ms against 150 ms).
WORST = {
    "latency": f"SELECT rowid, duration_ms {WINDOW} ORDER BY duration_ms DESC, rowid LIMIT ?",
    "cost": f"SELECT rowid, total_cost_usd {WINDOW} ORDER BY total_cost_usd DESC, rowid LIMIT ?",
    "error_rate": (
        f"SELECT rowid, error_count {WINDOW} AND {ERRORED} "
        "ORDER BY error_count DESC, started_at DESC, rowid LIMIT ?"
    ),
}
PROMPT_KEY_LIST = ", ".join(f"'{key}'" for key in (*PROMPT_KEYS, *FALLBACK_KEYS))
# The prompt attributes of a trace's first LLM spans, picked out by SQLite's JSON reader: a
# span of a megabyte of attributes hands back only its prompt keys, each value cut short.
PROMPT_ATTRIBUTES = f"""
SELECT j.key, j.type, substr(j.value, 1, 65536)
FROM spans s, json_each(s.attributes) j
WHERE s.rowid IN (
    SELECT rowid FROM spans WHERE project_id = ? AND trace_id = ? AND kind = 'llm'
    ORDER BY started_at, id LIMIT ?)
  AND json_valid(s.attributes)
  AND (j.key IN ({PROMPT_KEY_LIST}) OR j.key GLOB 'gen_ai.prompt.[0-9]*'
       OR j.key GLOB 'llm.input_messages.[0-9]*' OR j.key GLOB 'llm.prompts.[0-9]*')
ORDER BY s.started_at, s.id
"""


# A webhook another replica is not attempting: unclaimed, its claim expired, or the holder's
# own. Parameters: now, holder.
CLAIMABLE = "(claimed_until IS NULL OR claimed_until <= ? OR claimed_by = ?)"


def event_row(values: Sequence[Any]) -> AlertEventRow:
    event = AlertEventRow._make(values)
    return event if event.ok is None else event._replace(ok=bool(event.ok))


class AlertTables:
    """Alert storage over the connection and transactions that `Store` provides."""

    def _connection(self) -> sqlite3.Connection:
        raise NotImplementedError

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    @contextmanager
    def _snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: the queries inside see one state of the database (WAL)."""
        db = self._connection()
        db.execute("BEGIN")
        try:
            yield db
        finally:
            db.execute("COMMIT")

    # -- alerts and their secrets ---------------------------------------------------------------

    def get_alert(self, alert_id: str) -> AlertRow | None:
        row = (
            self._connection()
            .execute(f"SELECT {columns(AlertRow)} FROM alerts WHERE id = ?", (alert_id,))
            .fetchone()
        )
        return None if row is None else AlertRow._make(row)

    def all_alerts(self) -> list[AlertRow]:
        rows = self._connection().execute(
            f"SELECT {columns(AlertRow)} FROM alerts ORDER BY project_id, created_at, id"
        )
        return list(map(AlertRow._make, rows))

    def alert_secret(self, alert_id: str) -> AlertSecretRow | None:
        row = (
            self._connection()
            .execute(
                f"SELECT {columns(AlertSecretRow)} FROM alert_secrets WHERE alert_id = ?",
                (alert_id,),
            )
            .fetchone()
        )
        return None if row is None else AlertSecretRow._make(row)

    def alerts_without_secret(self) -> list[str]:
        rows = self._connection().execute(
            "SELECT id FROM alerts WHERE id NOT IN (SELECT alert_id FROM alert_secrets)"
        )
        return [row[0] for row in rows]

    def set_webhook_url(self, alert_id: str, webhook_url: str) -> None:
        """Point an alert's webhook elsewhere (the demo points its alerts at its receiver)."""
        with self.transaction() as db:
            db.execute("UPDATE alerts SET webhook_url = ? WHERE id = ?", (webhook_url, alert_id))

    # -- states and events -----------------------------------------------------------------------

    def alert_states(self, project_id: str | None = None) -> dict[str, AlertState]:
        """The stored states of a project's alerts (every alert's if None), by alert id; an
        alert never evaluated has none."""
        sql = f"SELECT {', '.join('s.' + c for c in AlertState._fields)} FROM alert_states s"
        args: tuple[Any, ...] = ()
        if project_id is not None:
            sql += " JOIN alerts a ON a.id = s.alert_id WHERE a.project_id = ?"
            args = (project_id,)
        return {row[0]: AlertState._make(row) for row in self._connection().execute(sql, args)}

    def record_round(
        self,
        states: Sequence[AlertState],
        expected: dict[str, str],
        events: Sequence[AlertEventRow],
        deliveries: Sequence[DeliveryRow],
    ) -> list[str]:
        """Store a round's results in one transaction: each alert's new state, its state-change
        events and the webhooks to send. An alert whose stored state is no longer the one the
        round started from (`expected`, by alert id; "no_data" for none), because another
        evaluator got there first, is left alone with its events and webhooks. Returns the ids
        of the alerts left alone."""
        with self.transaction() as db:
            stored = {
                row[0]: row[1] for row in db.execute("SELECT alert_id, state FROM alert_states")
            }
            stale = [
                alert_id
                for alert_id, state in expected.items()
                if stored.get(alert_id, "no_data") != state
            ]
            skip = set(stale)
            db.executemany(
                f"INSERT OR REPLACE INTO alert_states ({columns(AlertState)}) "
                f"VALUES ({', '.join('?' * len(AlertState._fields))})",
                [s for s in states if s.alert_id not in skip],
            )
            db.executemany(self._insert_event_sql(), [e for e in events if e.alert_id not in skip])
            db.executemany(
                self._insert_delivery_sql(), [d for d in deliveries if d.alert_id not in skip]
            )
        return stale

    def list_alert_events(
        self, alert_id: str, limit: int, before: int | None = None
    ) -> tuple[list[tuple[int, AlertEventRow]], bool]:
        """One page of an alert's events, newest first, with their positions (seq), past the
        position `before`; and whether more follow."""
        sql = f"SELECT seq, {columns(AlertEventRow)} FROM alert_events WHERE alert_id = ?"
        args: list[Any] = [alert_id]
        if before is not None:
            sql += " AND seq < ?"
            args.append(before)
        sql += " ORDER BY seq DESC LIMIT ?"
        args.append(limit + 1)
        rows = [(row[0], event_row(row[1:])) for row in self._connection().execute(sql, args)]
        return rows[:limit], len(rows) > limit

    @staticmethod
    def _insert_event_sql() -> str:
        marks = ", ".join("?" * len(AlertEventRow._fields))
        return f"INSERT INTO alert_events ({columns(AlertEventRow)}) VALUES ({marks})"

    @staticmethod
    def _insert_delivery_sql() -> str:
        marks = ", ".join("?" * len(DeliveryRow._fields))
        return f"INSERT INTO webhook_deliveries ({columns(DeliveryRow)}) VALUES ({marks})"

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
        """Traces with start <= started_at < end: how many, how many errored, their summed cost
        and (if asked) the p95 of their durations, all from one snapshot. Only the columns
        asked for are read."""
        window = (project_id, start, end)
        picks = ["count(*)", f"sum({ERRORED})" if errors else "0", "total(total_cost_usd)"]
        if not cost:
            picks[2] = "0.0"
        with self._snapshot() as db:
            count, errored, total = db.execute(
                f"SELECT {', '.join(picks)} {WINDOW}", window
            ).fetchone()
            p95_ms = None
            slowest: list[tuple[int, float]] = []
            if p95 and count:
                low, high, fraction = p95_ranks(count)
                # The durations from the top down to the lower of the two ranks (the top 5%):
                # SQLite's sorter keeps only that many, and the top of it is the slowest traces.
                values: dict[int, float] = {}
                wanted = {count - 1 - low, count - 1 - high}
                rows = db.execute(
                    f"SELECT rowid, duration_ms {WINDOW} ORDER BY duration_ms DESC LIMIT ?",
                    (*window, count - low),
                )
                for position, (rowid, duration) in enumerate(rows):
                    if position < SLOWEST:
                        slowest.append((rowid, float(duration)))
                    if position in wanted:
                        values[position] = float(duration)
                if len(values) == len(wanted):
                    p95_ms = lerp(values[count - 1 - low], values[count - 1 - high], fraction)
            named = self._ids(db, slowest)
        return WindowStats(int(count), int(errored or 0), float(total or 0.0), p95_ms, named)

    def worst_traces(
        self, project_id: str, start: int, end: int, measure: str, limit: int = 5
    ) -> list[tuple[str, float]]:
        """The window's traces that weigh most on `measure` (latency: slowest; cost: dearest;
        error_rate: those with errors, most errors first), as (id, raw value)."""
        sql = WORST.get(measure)
        if sql is None:
            return []
        db = self._connection()
        ranked = db.execute(sql, (project_id, start, end, limit)).fetchall()
        return self._ids(db, [(rowid, float(value)) for rowid, value in ranked])

    @staticmethod
    def _ids(db: sqlite3.Connection, ranked: list[tuple[int, float]]) -> list[tuple[str, float]]:
        """(rowid, value) pairs as (trace id, value), in their order."""
        if not ranked:
            return []
        ids = dict(
            db.execute(
                "SELECT rowid, id FROM traces WHERE rowid IN (SELECT value FROM json_each(?))",
                (json.dumps([rowid for rowid, _ in ranked]),),
            ).fetchall()
        )
        return [(ids[rowid], value) for rowid, value in ranked if rowid in ids]

    def sample_traces(
        self, project_id: str, strata: Sequence[tuple[int, int]]
    ) -> list[tuple[str, int]]:
        """For each [start, end) of `strata`, the first trace started in it, as (id,
        span_count): a sample spread over a window however many traces it holds."""
        db = self._connection()
        picked = []
        sql = (
            "SELECT id, span_count FROM traces WHERE project_id = ? AND started_at >= ? "
            "AND started_at < ? ORDER BY started_at LIMIT 1"
        )
        for start, end in strata:
            row = db.execute(sql, (project_id, start, end)).fetchone()
            if row is not None:
                picked.append((row[0], row[1]))
        return picked

    def prompt_attributes_of(
        self, project_id: str, trace_ids: Sequence[str], spans: int = 3
    ) -> dict[str, list[tuple[str, Any]]]:
        """See TraceStore.prompt_attributes_of: a query per trace costs a function call here."""
        return {
            trace_id: self.prompt_attributes(trace_id, spans, project_id) for trace_id in trace_ids
        }

    def prompt_attributes(
        self, trace_id: str, spans: int = 3, project_id: str | None = None
    ) -> list[tuple[str, Any]]:
        """The prompt attributes (key, value) of a trace's first `spans` LLM spans; a value
        that is an array or object in the attributes comes back parsed when it is whole. The
        trace is `project_id`'s; without one, that of the one project holding this id (none
        if several do: never another project's prompts)."""
        found: list[tuple[str, Any]] = []
        db = self._connection()
        if project_id is None:
            holders = db.execute("SELECT project_id FROM traces WHERE id = ? LIMIT 2", (trace_id,))
            projects = [row[0] for row in holders]
            if len(projects) != 1:
                return found
            project_id = projects[0]
        for key, kind, value in db.execute(PROMPT_ATTRIBUTES, (project_id, trace_id, spans)):
            if kind in ("array", "object"):
                # Cut at 64 KB it does not parse: its text is still words.
                with contextlib.suppress(ValueError):
                    value = json.loads(value)
            found.append((key, value))
        return found

    def forget_alert_history(self, events_before: int, deliveries_before: int) -> int:
        """Drop alert events older than `events_before` and finished webhooks (delivered or
        given up) made before `deliveries_before` (epoch ms); returns how many rows went."""
        with self.transaction() as db:
            events = db.execute("DELETE FROM alert_events WHERE at < ?", (events_before,))
            done = db.execute(
                "DELETE FROM webhook_deliveries WHERE status != 'pending' AND created_at < ?",
                (deliveries_before,),
            )
        return events.rowcount + done.rowcount

    # -- the webhook outbox ----------------------------------------------------------------------

    def due_deliveries(self, now: int, limit: int, holder: str | None = None) -> list[DeliveryRow]:
        """Pending webhooks whose next attempt is due at `now`, the longest waiting first;
        with `holder`, not those another holder's unexpired claim covers."""
        sql = (
            f"SELECT {columns(DeliveryRow)} FROM webhook_deliveries "
            "WHERE status = 'pending' AND next_attempt_at <= ? "
        )
        args: list[Any] = [now]
        if holder is not None:
            sql += f"AND {CLAIMABLE} "
            args += [now, holder]
        rows = self._connection().execute(
            sql + "ORDER BY next_attempt_at, created_at LIMIT ?", (*args, limit)
        )
        return list(map(DeliveryRow._make, rows))

    def claim_deliveries(
        self, delivery_ids: Sequence[str], holder: str, now: int, until: int
    ) -> list[DeliveryRow]:
        """See AlertStore.claim_deliveries: one conditional UPDATE ... RETURNING."""
        if not delivery_ids:
            return []
        with self.transaction() as db:
            rows = db.execute(
                "UPDATE webhook_deliveries SET claimed_by = ?, claimed_until = ? "
                "WHERE id IN (SELECT value FROM json_each(?)) AND status = 'pending' "
                f"AND next_attempt_at <= ? AND {CLAIMABLE} RETURNING {columns(DeliveryRow)}",
                (holder, until, json.dumps(list(delivery_ids)), now, now, holder),
            ).fetchall()
        return list(map(DeliveryRow._make, rows))

    def release_claims(self, holder: str) -> int:
        with self.transaction() as db:
            released = db.execute(
                "UPDATE webhook_deliveries SET claimed_by = NULL, claimed_until = NULL "
                "WHERE claimed_by = ?",
                (holder,),
            )
        return released.rowcount

    def next_delivery_at(self) -> int | None:
        """When the earliest pending webhook is due (None if none is pending)."""
        row = (
            self._connection()
            .execute("SELECT min(next_attempt_at) FROM webhook_deliveries WHERE status = 'pending'")
            .fetchone()
        )
        return None if row is None or row[0] is None else int(row[0])

    def get_delivery(self, delivery_id: str) -> DeliveryRow | None:
        row = (
            self._connection()
            .execute(
                f"SELECT {columns(DeliveryRow)} FROM webhook_deliveries WHERE id = ?",
                (delivery_id,),
            )
            .fetchone()
        )
        return None if row is None else DeliveryRow._make(row)

    def record_attempt(
        self, delivery_id: str, attempt: AlertEventRow, next_attempt_at: int | None, status: str
    ) -> None:
        """One attempt made: its event in the alert's history and the delivery's new state
        (pending again with its next time, delivered, or failed), in one transaction."""
        with self.transaction() as db:
            db.execute(self._insert_event_sql(), attempt)
            db.execute(
                "UPDATE webhook_deliveries SET attempts = ?, next_attempt_at = ?, status = ?, "
                "claimed_by = NULL, claimed_until = NULL WHERE id = ?",
                (attempt.attempt, next_attempt_at, status, delivery_id),
            )

    # -- replicas: leases and request counts ------------------------------------------------------

    def is_shared(self) -> bool:
        """See ReplicaStore.is_shared: a SQLite file is served by one process."""
        return False

    def take_lease(self, name: str, holder: str, ttl_ms: int) -> bool:
        """See ReplicaStore.take_lease: one conditional upsert, by this machine's clock."""
        now = int(time.time() * 1000)
        with self.transaction() as db:
            taken = db.execute(
                "INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, "
                "expires_at = excluded.expires_at "
                "WHERE leases.holder = excluded.holder OR leases.expires_at <= ? "
                "RETURNING holder",
                (name, holder, now + ttl_ms, now),
            ).fetchone()
        return taken is not None

    def release_lease(self, name: str, holder: str) -> None:
        with self.transaction() as db:
            db.execute("DELETE FROM leases WHERE name = ? AND holder = ?", (name, holder))

    def count_requests(self, bucket: str, window_start: int, hits: int = 1) -> int:
        with self.transaction() as db:
            row = db.execute(
                "INSERT INTO rate_counts (bucket, window_start, hits) VALUES (?, ?, ?) "
                "ON CONFLICT (bucket, window_start) DO UPDATE SET hits = hits + excluded.hits "
                "RETURNING hits",
                (bucket, window_start, hits),
            ).fetchone()
        return int(row[0])

    def forget_request_counts(self, before: int | None = None) -> int:
        with self.transaction() as db:
            if before is None:
                gone = db.execute("DELETE FROM rate_counts")
            else:
                gone = db.execute("DELETE FROM rate_counts WHERE window_start < ?", (before,))
        return gone.rowcount
