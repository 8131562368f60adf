"""Ingest on PostgreSQL: a call's batches in one transaction, spans by binary COPY.

Per call: the projects that resources name are found (or made, under a lock per name, so two
replicas make one), then the locks of every trace the call touches are taken (`locks`), and
each group's spans go by binary COPY into the session's temporary table and from there into
spans with one INSERT ... SELECT ... ON CONFLICT DO UPDATE: a re-sent span replaces itself.
A trace stored before (by an earlier group, call or replica) has each model call among its
stored spans counted once (sql.COUNT_ONCE: a call's spans may come in different exports), then
is recomputed from all its stored spans (sql.UPSERT_TRACES); a new one takes the sums its
batch's spans make (worked out as the body was decoded), as the SQLite store does. The trace
locks make that read-then-write safe: while one transaction writes a trace, another writing
the same trace waits, then sees it stored and sums every span of both.

Why COPY: binary COPY into a temporary table, then one upsert, was the fastest of the ways
measured (docs/postgres-notes.md: 48,700 spans/s against 16,100 for pipelined executemany and
7,400 for multi-row INSERT, batches of 500).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import psycopg

from tui.server.ingest.summaries import summarize, trace_rows
from tui.server.store.postgres import locks
from tui.server.store.postgres.logs import join_span_logs
from tui.server.store.postgres.search import update_stored
from tui.server.store.postgres.sql import (
    COPY_TRACES_WITH_TEXT,
    COUNT_ONCE,
    INGEST_TABLE,
    MOVE_SPANS,
    SPAN_TYPES,
    TRACE_WITH_TEXT_TYPES,
    UPSERT_TRACES,
    copy_sql,
)
from tui.server.store.rows import SpanGroup, SpanRow, TraceSums, new_project

DEFAULT_PROJECT = "default"  # as the SQLite store: the workspace key's spans with no project
DEFAULT_RETENTION_DAYS = 30
CREATED_BY_INGEST = "Created by OTLP ingest for the spans that named it."
COPY_SPANS = copy_sql(SpanRow, INGEST_TABLE)


def without_nul(value: Any) -> Any:
    """A text value PostgreSQL accepts: TEXT cannot hold U+0000 (SQLite's can), so it becomes
    U+FFFD, the replacement character, as undecodable bytes do."""
    if isinstance(value, str) and "\x00" in value:
        return value.replace("\x00", "\ufffd")
    return value


def clean_rows(rows: Sequence[Sequence[Any]]) -> Sequence[Sequence[Any]]:
    """`rows` with U+0000 replaced in their text (see without_nul). One search over all their
    text at C speed first: a row is rebuilt only when some text holds one, which is rare."""
    text = "".join([value for row in rows for value in row if value.__class__ is str])
    if "\x00" not in text:
        return rows
    return [tuple(map(without_nul, row)) for row in rows]


def copy_rows(
    connection: psycopg.Connection[Any], statement: str, types: list[str], rows: Iterable[Any]
) -> None:
    with connection.cursor().copy(statement.encode()) as copy:
        copy.set_types(types)
        for row in rows:
            copy.write_row(row)


def project_named(connection: psycopg.Connection[Any], name: str | None) -> str:
    """The project a resource names (by id, else by name), made if there is none."""
    name = (name or "").strip()[:200] or DEFAULT_PROJECT
    locks.lock_name(connection, locks.PROJECT_NAMES, name)
    row = connection.execute(
        "SELECT id FROM projects WHERE id = %(name)s OR name = %(name)s "
        "ORDER BY id = %(name)s DESC, created_at, id LIMIT 1",
        {"name": without_nul(name)},
    ).fetchone()
    if row is not None:
        return str(row[0])
    project = new_project(without_nul(name), CREATED_BY_INGEST, DEFAULT_RETENTION_DAYS)
    connection.execute(
        "INSERT INTO projects (id, name, description, retention_days, created_at) "
        "VALUES (%s, %s, %s, %s, %s)",
        project,
    )
    return project.id


def ingest(
    connection: psycopg.Connection[Any], batches: Sequence[Sequence[SpanGroup]]
) -> list[int]:
    """See TraceStore.ingest; `connection` is in the call's transaction."""
    names = sorted({(g.project_name or "") for b in batches for g in b if not g.project_id})
    # Names first, in order, then traces: every transaction takes its locks in that order.
    named = {name: project_named(connection, name) for name in names}
    routed = [
        [(group.project_id or named[group.project_name or ""], group) for group in batch]
        for batch in batches
    ]
    locks.lock_traces(
        connection,
        (
            (project_id, span.trace_id)
            for batch in routed
            for project_id, g in batch
            for span in g.spans
        ),
    )
    return [sum(_write_group(connection, p, g) for p, g in batch) for batch in routed]


def _write_group(connection: psycopg.Connection[Any], project_id: str, group: SpanGroup) -> int:
    """Store one group's spans and their traces' rows; returns how many were refused (none)."""
    # The last version of a span sent twice in one group wins (one upsert may not touch a
    # row twice).
    spans = list({(s.trace_id, s.id): s for s in group.spans}.values())
    trace_ids = list({span.trace_id for span in spans})
    stored = {
        row[0]
        for row in connection.execute(
            "SELECT id FROM traces WHERE project_id = %s AND id = ANY(%s)", (project_id, trace_ids)
        )
    }
    copy_rows(connection, COPY_SPANS, SPAN_TYPES, clean_rows([(project_id, *s) for s in spans]))
    connection.execute(MOVE_SPANS)  # and empties the temporary table for the next group
    join_span_logs(connection, project_id, trace_ids)  # logs that came before their spans
    sums = summarize(group.spans) if group.traces is None else group.traces
    resource = without_nul(group.resource)
    if stored:
        ids = list(stored)
        connection.execute(COUNT_ONCE, {"project": project_id, "ids": ids})  # see sql.COUNT_ONCE
        connection.execute(
            UPSERT_TRACES, {"project": project_id, "attributes": resource, "ids": ids}
        )
        again = [t for t in sums if t.id in stored]
        _update_previews(connection, project_id, again)
        update_stored(connection, project_id, [clean_sums(t) for t in again])
    fresh = [t for t in sums if t.id not in stored]
    new = trace_rows(fresh, project_id, resource)
    with_text = [(*row, t.search_text or None) for row, t in zip(new, fresh, strict=True)]
    copy_rows(connection, COPY_TRACES_WITH_TEXT, TRACE_WITH_TEXT_TYPES, clean_rows(with_text))
    return 0


def clean_sums(sums: TraceSums) -> TraceSums:
    """`sums` with U+0000 replaced in the text it writes (see without_nul)."""
    return sums._replace(
        user_id=without_nul(sums.user_id),
        session_id=without_nul(sums.session_id),
        tags=tuple(map(without_nul, sums.tags)),
        models=tuple(map(without_nul, sums.models)),
        output_preview=without_nul(sums.output_preview),
        search_text=without_nul(sums.search_text),
    )


def _update_previews(
    connection: psycopg.Connection[Any], project_id: str, sums: list[TraceSums]
) -> None:
    """A stored trace's preview from newly arrived spans: a root's replaces it, another
    span's only fills it in when there was none (as the SQLite store)."""
    for t in sums:
        if t.input_preview is not None:
            connection.execute(
                "UPDATE traces SET input_preview = %s WHERE id = %s AND project_id = %s"
                + ("" if t.preview_from_root else " AND input_preview IS NULL"),
                (without_nul(t.input_preview), t.id, project_id),
            )
