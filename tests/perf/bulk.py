"""Bulk writes of the benchmarks' big databases (million.py, bench_search.py): rows of the
store's row classes (TraceRow, SpanRow) written under the columns those classes name, by
executemany on SQLite and binary COPY on PostgreSQL with each column's type read from the
database itself.

No builder keeps a column list of its own: a column the schema gains is a field of its row
class (with a default), so the builders write it too, and a schema change cannot leave a
builder one value short (`make bench` once failed so: "expected 21 values in row, got 20").
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from tui.server.store.sql import LEADING, TABLES

# information_schema's names of the types the row classes use, as binary COPY names them.
PG_TYPES = {
    "text": "text",
    "bigint": "int8",
    "integer": "int4",
    "double precision": "float8",
    "boolean": "bool",
}


def columns_of(row_class: type[NamedTuple], extra: Sequence[str] = ()) -> tuple[str, ...]:
    """The columns a row of `row_class` is written under: its table's leading ones (a span's
    project), its fields, then `extra` (a trace's search text on PostgreSQL)."""
    return (*LEADING.get(row_class, ()), *row_class._fields, *extra)


def table_of(row_class: type[NamedTuple]) -> str:
    return TABLES[row_class]


def check_columns(table: str, known: Sequence[str], found: dict[str, bool]) -> None:
    """`found`: the table's columns, each True if it must be given (NOT NULL, no default).
    Stops the build with the names of the columns the row classes and the schema disagree on."""
    missing = [c for c in known if c not in found]
    unknown = [c for c, required in found.items() if required and c not in known]
    if missing or unknown:
        raise RuntimeError(
            f"the schema's {table} table and its row class disagree: columns the table lacks "
            f"{missing}, NOT NULL columns without a default the row class lacks {unknown}"
        )


# -- SQLite ----------------------------------------------------------------------------------


def sqlite_insert(db: sqlite3.Connection, row_class: type[NamedTuple]) -> str:
    """The INSERT of `row_class`'s rows, checked against the table's columns first."""
    table, names = table_of(row_class), columns_of(row_class)
    info = db.execute(f"PRAGMA table_info({table})").fetchall()
    check_columns(table, names, {r[1]: bool(r[3]) and r[4] is None and not r[5] for r in info})
    return f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"


# -- PostgreSQL ------------------------------------------------------------------------------


class Copy(NamedTuple):
    """A binary COPY into a table: its statement and the types of its columns, in order."""

    statement: str
    types: list[str]


def pg_copy(db: Any, row_class: type[NamedTuple], extra: Sequence[str] = ()) -> Copy:
    """The COPY of `row_class`'s rows (then `extra` columns) on psycopg connection `db`, the
    types read from the table, checked against its columns first."""
    table, names = table_of(row_class), columns_of(row_class, extra)
    info = db.execute(
        "SELECT column_name, data_type, is_nullable = 'NO' AND column_default IS NULL "
        "FROM information_schema.columns WHERE table_name = %s",
        (table,),
    ).fetchall()
    check_columns(table, names, {r[0]: r[2] for r in info})
    types = {r[0]: r[1] for r in info}
    statement = f"COPY {table} ({', '.join(names)}) FROM STDIN (FORMAT BINARY)"
    return Copy(statement, [PG_TYPES[types[name]] for name in names])


def pg_write(cursor: Any, copy: Copy, rows: Iterable[Sequence[Any]]) -> None:
    """`rows` (each in `copy`'s columns' order) into the table by binary COPY."""
    with cursor.copy(copy.statement.encode()) as writer:
        writer.set_types(copy.types)
        for row in rows:
            writer.write_row(row)
