"""What every part of the SQLite store shares: the table of each row class, and the column
lists and INSERT statements made from the row classes' fields (so that no SQL names a column
the rows do not have)."""

from __future__ import annotations

from typing import NamedTuple

from tui.server.rows import (
    AlertEventRow,
    AlertRow,
    AlertSecretRow,
    AlertState,
    ApiKeyRow,
    DeliveryRow,
    IdempotencyRow,
    ProjectRow,
    SpanRow,
    TraceRow,
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


def insert_sql(row_class: type[NamedTuple], verb: str = "INSERT") -> str:
    """`INSERT INTO table (a, b, ...) VALUES (?, ?, ...)`: positions bound by the row's names."""
    marks = ", ".join("?" * len(row_class._fields))
    return f"{verb} INTO {TABLES[row_class]} ({columns(row_class)}) VALUES ({marks})"


INSERT = {row_class: insert_sql(row_class) for row_class in TABLES}
