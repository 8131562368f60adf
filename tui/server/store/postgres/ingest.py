"""Ingest on PostgreSQL: a call's batches in one transaction, spans by binary COPY.

Per call: the projects that resources name are found (or made, under a lock per name, so two
replicas make one), then the locks of every trace the call touches are taken (`locks`), and
each group's spans go by binary COPY into the session's temporary table and from there into
spans with one INSERT ... SELECT ... ON CONFLICT DO UPDATE: a re-sent span replaces itself.
A trace stored before (by an earlier group, call or replica) has each model call among its
stored spans counted once (store/counting.py: a call's spans may come in different exports), then
is recomputed from all its stored spans (sql.upsert_traces); a new one takes the sums its
batch's spans make (worked out as the body was decoded), as the SQLite store does. The trace
locks make that read-then-write safe: while one transaction writes a trace, another writing
the same trace waits, then sees it stored and sums every span of both.

Why COPY: binary COPY into a temporary table, then one upsert, was the fastest of the ways
measured (docs/postgres-notes.md: 48,700 spans/s against 16,100 for pipelined executemany and
7,400 for multi-row INSERT, batches of 500).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import psycopg

from tui.server.ingest.summaries import summarize, trace_rows
from tui.server.store.counting import CallCounting, may_change_counts
from tui.server.store.logs import LogTables
from tui.server.store.postgres.pool import Connection
from tui.server.store.postgres.search import update_stored
from tui.server.store.postgres.sql import (
    COPY_INGEST,
    COPY_SPANS,
    COPY_TRACES_WITH_TEXT,
    MOVE_SPANS,
    SPAN_TYPES,
    TRACE_WITH_TEXT_TYPES,
    UPSERT_TRACES,
)
from tui.server.store.rows import SpanGroup, SpanRow, TraceRow, TraceSums
from tui.server.store.sql import upsert_traces_args
from tui.server.store.traces import TraceTables, bulk_rows


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


def copy_rows(
    connection: psycopg.Connection[Any], statement: str, types: list[str], rows: Iterable[Any]
) -> None:
    with connection.cursor().copy(statement.encode()) as copy:
        copy.set_types(types)
        for row in rows:
            copy.write_row(row)


class PostgresIngest(CallCounting, LogTables, TraceTables):
    """PostgresStore's ingest and bulk writes, by binary COPY."""

    def transaction(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def ingest(self, batches: Sequence[Sequence[SpanGroup]]) -> None:
        """See TraceStore.ingest: every batch in one transaction."""
        with self.transaction() as db:
            names = sorted({(g.project_name or "") for b in batches for g in b if not g.project_id})
            # Names first, in order, then traces: every transaction takes its locks in that order.
            named = {name: self._project_named(db, name) for name in names}
            routed = [
                [(group.project_id or named[group.project_name or ""], group) for group in batch]
                for batch in batches
            ]
            # A project deleted since its key was checked takes its spans with it: they are
            # dropped, as if they had come just before the deletion. Held from here on (a
            # deletion waits), before any write, so the two never wait on each other.
            kept = self._projects_kept(db, (p for batch in routed for p, _ in batch))
            routed = [[(p, group) for p, group in batch if p in kept] for batch in routed]
            self._lock_traces(
                db,
                (
                    (project_id, span.trace_id)
                    for batch in routed
                    for project_id, g in batch
                    for span in g.spans
                ),
            )
            for batch in routed:
                for project_id, group in batch:
                    self._write_group(db, project_id, group)

    def _write_group(self, db: Connection, project_id: str, group: SpanGroup) -> None:
        """Store one group's spans and their traces' rows."""
        # The last version of a span sent twice in one group wins (one upsert may not touch a
        # row twice).
        spans = list({(s.trace_id, s.id): s for s in group.spans}.values())
        trace_ids = list({span.trace_id for span in spans})
        stored = {
            row[0]
            for row in db.execute(
                "SELECT id FROM traces WHERE project_id = %s AND id = ANY(%s)",
                (project_id, trace_ids),
            )
        }
        copy_rows(db, COPY_INGEST, SPAN_TYPES, clean_rows([(project_id, *s) for s in spans]))
        db.execute(MOVE_SPANS)  # and empties the temporary table for the next group
        self._join_span_logs(db, project_id, trace_ids)  # logs that came before their spans
        sums = summarize(group.spans) if group.traces is None else group.traces
        resource = without_nul(group.resource)
        if stored:
            ids = list(stored)
            self._count_calls_once(db, project_id, sorted(stored & may_change_counts(spans)))
            db.execute(UPSERT_TRACES, upsert_traces_args(project_id, resource, ids))
            again = [t for t in sums if t.id in stored]
            self._update_previews(db, project_id, again)
            update_stored(db, project_id, [clean_sums(t) for t in again])
        fresh = [t for t in sums if t.id not in stored]
        new = trace_rows(fresh, project_id, resource)
        with_text = [(*row, t.search_text or None) for row, t in zip(new, fresh, strict=True)]
        copy_rows(db, COPY_TRACES_WITH_TEXT, TRACE_WITH_TEXT_TYPES, clean_rows(with_text))

    def insert_traces(
        self,
        db: Connection,
        traces: Iterable[TraceRow],
        spans: Iterable[SpanRow] = (),
        project_id: str | None = None,
        texts: Iterable[tuple[str, str, str]] | None = None,
    ) -> None:
        """Bulk insert of whole traces by binary COPY (the demo data, benchmarks and tests), as
        the SQLite store's (sqlite.store.Store.insert_traces)."""
        rows, span_rows, texts = bulk_rows(traces, spans, texts)
        text_of = {(p, i): text for p, i, text in texts}
        copy_rows(
            db,
            COPY_TRACES_WITH_TEXT,
            TRACE_WITH_TEXT_TYPES,
            clean_rows([(*t, text_of.get((t.project_id, t.id))) for t in rows]),
        )
        project_of = {t.id: t.project_id for t in rows}
        copied = [(project_of.get(span.trace_id, project_id), *span) for span in span_rows]
        copy_rows(db, COPY_SPANS, SPAN_TYPES, clean_rows(copied))
