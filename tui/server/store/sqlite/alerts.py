"""The SQLite store's own half of the alert tables (store/alerts.py): windows of traces read by
rowid on the covering index, a trace's prompt attributes by SQLite's JSON reader, and claiming
webhooks with one UPDATE ... RETURNING.

Evaluation reads a window on the covering index traces_by_project_started (project_id,
started_at, duration_ms, error_count, total_cost_usd). The p95 is read from the top 5% of
durations (an ORDER BY ... LIMIT whose sorter keeps only those), not from every duration
brought into Python; the top of that read is the window's slowest traces, which a firing
latency alert names.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

from tui.server.alerts.metrics import lerp, p95_ranks
from tui.server.store.alert_rows import DeliveryRow, WindowStats
from tui.server.store.alerts import (
    CLAIMABLE,
    ERRORED,
    PROMPT_KEY_LIST,
    SLOWEST,
    WINDOW,
    AlertTables,
    parsed_value,
)
from tui.server.store.sql import columns

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
CLAIM = (
    "UPDATE webhook_deliveries SET claimed_by = ?, claimed_until = ? "
    "WHERE id IN (SELECT value FROM json_each(?)) AND status = 'pending' "
    f"AND next_attempt_at <= ? AND {CLAIMABLE} RETURNING {columns(DeliveryRow)}"
)
FIRST_IN = (
    "SELECT id, span_count FROM traces WHERE project_id = ? AND started_at >= ? "
    "AND started_at < ? ORDER BY started_at LIMIT 1"
)


class SqliteAlerts(AlertTables):
    """What SQLite reads its own way for alerts, over the store's connection."""

    def _connection(self) -> sqlite3.Connection:
        raise NotImplementedError

    def _snapshot(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def window_stats(
        self,
        project_id: str,
        start: int,
        end: int,
        errors: bool = True,
        cost: bool = True,
        p95: bool = False,
    ) -> WindowStats:
        """See AlertStore.window_stats: one snapshot (a read transaction). Only the columns
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
        """See AlertStore.sample_traces: a query per stratum costs a function call here."""
        db = self._connection()
        picked = []
        for start, end in strata:
            row = db.execute(FIRST_IN, (project_id, start, end)).fetchone()
            if row is not None:
                picked.append((row[0], row[1]))
        return picked

    def prompt_attributes_of(
        self, project_id: str, trace_ids: Sequence[str], spans: int = 3
    ) -> dict[str, list[tuple[str, Any]]]:
        """See AlertStore.prompt_attributes_of: a query per trace costs a function call here."""
        return {
            trace_id: list(self._prompts(project_id, trace_id, spans)) for trace_id in trace_ids
        }

    def _prompts(self, project_id: str, trace_id: str, spans: int) -> Iterator[tuple[str, Any]]:
        rows = self._connection().execute(PROMPT_ATTRIBUTES, (project_id, trace_id, spans))
        for key, kind, value in rows:
            yield key, parsed_value(kind, value)

    def claim_deliveries(
        self, delivery_ids: Sequence[str], holder: str, now: int, until: int
    ) -> list[DeliveryRow]:
        """See AlertStore.claim_deliveries: one conditional UPDATE ... RETURNING."""
        if not delivery_ids:
            return []
        with self.transaction() as db:
            rows = db.execute(
                CLAIM, (holder, until, json.dumps(list(delivery_ids)), now, now, holder)
            ).fetchall()
        return list(map(DeliveryRow._make, rows))
