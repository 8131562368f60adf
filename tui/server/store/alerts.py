"""The alert tables on both stores: alerts and their secrets, states and history, and the webhook
outbox; and what each store reads its own way, named here: windows of traces for evaluation
(window_stats, worst_traces, sample_traces), a trace's prompt attributes, and claiming webhooks.

Evaluation reads a window [start, end) of a project's traces on the index
traces_by_project_started, which covers what the measures need (duration, errors, cost): a
window of a million traces is one walk of that index, never of the table, and each read asks
only for the columns its alerts need.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from typing import Any

from tui.server.alerts.drift import FALLBACK_KEYS, PROMPT_KEYS
from tui.server.alerts.signing import new_secret
from tui.server.store.alert_rows import (
    AlertEventRow,
    AlertRow,
    AlertSecretRow,
    AlertState,
    DeliveryRow,
)
from tui.server.store.sql import INSERT, UPSERT_ALERT_STATE, columns
from tui.server.store.tables import Tables

WINDOW = "FROM traces WHERE project_id = ? AND started_at >= ? AND started_at < ?"
ERRORED = "error_count > 0"  # the service's status is "error" exactly when error_count > 0
SLOWEST = 5  # the slowest traces window_stats names along with the p95
# The attributes a prompt is read from (alerts.drift), as an SQL list.
PROMPT_KEY_LIST = ", ".join(f"'{key}'" for key in (*PROMPT_KEYS, *FALLBACK_KEYS))
# A webhook another replica is not attempting: unclaimed, its claim expired, or the holder's
# own. Parameters: now, holder.
CLAIMABLE = "(claimed_until IS NULL OR claimed_until <= ? OR claimed_by = ?)"


SIGN_UNSIGNED = f"{INSERT[AlertSecretRow]} ON CONFLICT (alert_id) DO NOTHING"


def parsed_value(kind: str, value: Any) -> Any:
    """A prompt attribute's value as read: an array or object parsed when it is whole (cut at
    64 KB it does not parse, and its text is still words)."""
    if kind in ("array", "object"):
        with contextlib.suppress(ValueError, RecursionError):
            return json.loads(value)
    return value


def event_row(values: Sequence[Any]) -> AlertEventRow:
    """An event as read: `ok` a bool whichever way the store keeps it."""
    event = AlertEventRow._make(values)
    return event if event.ok is None else event._replace(ok=bool(event.ok))


class AlertTables(Tables):
    """Alert storage over the store's connections."""

    # -- alerts and their secrets ---------------------------------------------------------------

    def get_alert(self, alert_id: str) -> AlertRow | None:
        with self._read() as db:
            row = db.execute(
                self._sql(f"SELECT {columns(AlertRow)} FROM alerts WHERE id = ?"), (alert_id,)
            ).fetchone()
        return None if row is None else AlertRow._make(row)

    def all_alerts(self) -> list[AlertRow]:
        """Every alert of every project."""
        sql = f"SELECT {columns(AlertRow)} FROM alerts ORDER BY project_id, created_at, id"
        with self._read() as db:
            rows = db.execute(sql).fetchall()
        return list(map(AlertRow._make, rows))

    def alert_secret(self, alert_id: str) -> AlertSecretRow | None:
        sql = f"SELECT {columns(AlertSecretRow)} FROM alert_secrets WHERE alert_id = ?"
        with self._read() as db:
            row = db.execute(self._sql(sql), (alert_id,)).fetchone()
        return None if row is None else AlertSecretRow._make(row)

    def alerts_without_secret(self) -> list[str]:
        """Alerts a bulk write made without a secret (the store gives them one as it opens)."""
        sql = "SELECT id FROM alerts WHERE id NOT IN (SELECT alert_id FROM alert_secrets)"
        with self._read() as db:
            rows = db.execute(sql).fetchall()
        return [row[0] for row in rows]

    def _sign_unsigned_alerts(self) -> None:
        """Alerts made without a secret (before webhooks were signed, or by a bulk write) get
        one as the store opens (nobody was shown it: such an alert is made again to verify its
        webhooks)."""
        missing = self.alerts_without_secret()
        if missing:
            rows = [AlertSecretRow(alert_id, new_secret()) for alert_id in missing]
            with self._write() as db:
                self._execute_many(db, self._sql(SIGN_UNSIGNED), rows)

    def set_webhook_url(self, alert_id: str, webhook_url: str) -> None:
        """Point an alert's webhook elsewhere (the demo points its alerts at its receiver)."""
        with self._write() as db:
            db.execute(
                self._sql("UPDATE alerts SET webhook_url = ? WHERE id = ?"), (webhook_url, alert_id)
            )

    # -- states and events -----------------------------------------------------------------------

    def alert_states(self, project_id: str | None = None) -> dict[str, AlertState]:
        """The stored states of a project's alerts (every alert's if None), by alert id; an
        alert never evaluated has none."""
        sql = f"SELECT {', '.join('s.' + c for c in AlertState._fields)} FROM alert_states s"
        args: tuple[Any, ...] = ()
        if project_id is not None:
            sql += " JOIN alerts a ON a.id = s.alert_id WHERE a.project_id = ?"
            args = (project_id,)
        with self._read() as db:
            rows = db.execute(self._sql(sql), args).fetchall()
        return {row[0]: AlertState._make(row) for row in rows}

    def record_round(
        self,
        states: Sequence[AlertState],
        expected: dict[str, str],
        events: Sequence[AlertEventRow],
        deliveries: Sequence[DeliveryRow],
    ) -> list[str]:
        """Store a round's results in one transaction, under the rounds' lock: each alert's new
        state, its state-change events and the webhooks to send. An alert whose stored state is
        no longer the one the round started from (`expected`, by alert id; "no_data" for none),
        because another evaluator (another replica) got there first, or deleted since, is left
        alone with its events and webhooks. Returns the ids of the alerts left alone."""
        with self._write() as db:
            self._lock_rounds(db)
            stored = dict(db.execute("SELECT alert_id, state FROM alert_states").fetchall())
            alive = {row[0] for row in db.execute("SELECT id FROM alerts").fetchall()}
            stale = [
                alert_id
                for alert_id, state in expected.items()
                if stored.get(alert_id, "no_data") != state or alert_id not in alive
            ]
            skip = set(stale)
            self._execute_many(
                db, self._sql(UPSERT_ALERT_STATE), [s for s in states if s.alert_id not in skip]
            )
            self._execute_many(
                db, self._sql(INSERT[AlertEventRow]), [e for e in events if e.alert_id not in skip]
            )
            self._execute_many(
                db,
                self._sql(INSERT[DeliveryRow]),
                [d for d in deliveries if d.alert_id not in skip],
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
        with self._read() as db:
            rows = [(row[0], event_row(row[1:])) for row in db.execute(self._sql(sql), args)]
        return rows[:limit], len(rows) > limit

    def forget_alert_history(self, events_before: int, deliveries_before: int) -> int:
        """Drop alert events older than `events_before` and finished webhooks (delivered or
        given up) made before `deliveries_before` (epoch ms); returns how many rows went."""
        with self._write() as db:
            events = db.execute(
                self._sql("DELETE FROM alert_events WHERE at < ?"), (events_before,)
            )
            done = db.execute(
                self._sql(
                    "DELETE FROM webhook_deliveries WHERE status != 'pending' AND created_at < ?"
                ),
                (deliveries_before,),
            )
        return int(events.rowcount + done.rowcount)

    # -- a trace's prompt ------------------------------------------------------------------------

    def prompt_attributes_of(
        self, project_id: str, trace_ids: Sequence[str], spans: int = 3
    ) -> dict[str, list[tuple[str, Any]]]:
        """prompt_attributes of each of `project_id`'s traces in `trace_ids` (an alert round's
        sample), each store its own way."""
        raise NotImplementedError

    def prompt_attributes(
        self, trace_id: str, spans: int = 3, project_id: str | None = None
    ) -> list[tuple[str, Any]]:
        """The prompt attributes (key, value) of a trace's first `spans` LLM spans; a value
        that is an array or object in the attributes comes back parsed when it is whole. The
        trace is `project_id`'s; without one, that of the one project holding this id (none
        if several do: never another project's prompts)."""
        if project_id is None:
            with self._read() as db:
                holders = db.execute(
                    self._sql("SELECT project_id FROM traces WHERE id = ? LIMIT 2"), (trace_id,)
                ).fetchall()
            if len(holders) != 1:
                return []
            project_id = holders[0][0]
        return self.prompt_attributes_of(project_id, [trace_id], spans)[trace_id]

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
        sql += "ORDER BY next_attempt_at, created_at LIMIT ?"
        with self._read() as db:
            rows = db.execute(self._sql(sql), (*args, limit)).fetchall()
        return list(map(DeliveryRow._make, rows))

    def release_claims(self, holder: str) -> int:
        with self._write() as db:
            released = db.execute(
                self._sql(
                    "UPDATE webhook_deliveries SET claimed_by = NULL, claimed_until = NULL "
                    "WHERE claimed_by = ?"
                ),
                (holder,),
            )
        return int(released.rowcount)

    def next_delivery_at(self) -> int | None:
        """When the earliest pending webhook is due (None if none is pending)."""
        sql = "SELECT min(next_attempt_at) FROM webhook_deliveries WHERE status = 'pending'"
        with self._read() as db:
            row = db.execute(sql).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def get_delivery(self, delivery_id: str) -> DeliveryRow | None:
        sql = f"SELECT {columns(DeliveryRow)} FROM webhook_deliveries WHERE id = ?"
        with self._read() as db:
            row = db.execute(self._sql(sql), (delivery_id,)).fetchone()
        return None if row is None else DeliveryRow._make(row)

    def record_attempt(
        self, delivery_id: str, attempt: AlertEventRow, next_attempt_at: int | None, status: str
    ) -> None:
        """One attempt made: its event in the alert's history and the delivery's new state
        (pending again with its next time, delivered, or failed) with its claim dropped, in one
        transaction. A delivery deleted meanwhile (with its alert or project) leaves no event:
        nothing of a deleted alert is written after it."""
        with self._write() as db:
            kept = db.execute(
                self._sql(
                    "UPDATE webhook_deliveries SET attempts = ?, next_attempt_at = ?, status = ?, "
                    "claimed_by = NULL, claimed_until = NULL WHERE id = ?"
                ),
                (attempt.attempt, next_attempt_at, status, delivery_id),
            )
            if kept.rowcount:
                db.execute(self._sql(INSERT[AlertEventRow]), attempt)
