"""Stores filled for tests and benchmarks: many small traces written straight into a store."""

from __future__ import annotations

from tui.server.store.rows import SpanRow, TraceRow
from tui.server.store.sqlite.store import Store


def add_bulk_traces(
    store: Store, project_id: str, count: int, now: int, span: int = 60_000
) -> None:
    """`count` one-span traces spread evenly over the `span` ms before `now`, ids
    `{project_id}-00000000` onwards, newest first."""
    rows, spans = [], []
    step = max(1, span // max(count, 1))
    for i in range(count):
        trace_id = f"{project_id}-{i:08d}"
        start = now - 1 - i * step
        rows.append(
            TraceRow(trace_id, project_id, f"bulk {i}", start, 10, 1, 1, 1, 0.0, "ok", 0, "{}")
        )
        spans.append(
            SpanRow(
                trace_id, "s1", None, "root", "chain", None, start, 10, 1, 1, 0.0, "ok", None, "{}"
            )
        )
    with store.transaction() as db:
        store.insert_traces(db, rows, spans)
