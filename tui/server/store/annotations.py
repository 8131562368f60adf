"""Annotations on both stores, the SQL written once: a batch added (or updated by identifier)
in one transaction, a project's annotations listed newest first, one changed or deleted, the
summaries the trace answers carry, and the clauses of GET /v1/traces's annotation filters.

A batch is set-based, whatever its size (up to 1,000): one read of its targets' traces, one of
their spans, one of its sessions, one of the annotations already on them (for the per-target
bound and the identifiers), then one executemany of the inserts and one of the updates. The
targets are locked first (PostgreSQL: the traces' locks ingest and retention take, and a lock
per session), so the bound and the identifiers hold when replicas write at once, and a trace
that the retention sweep deletes meanwhile takes its annotations with it or is refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from tui.server.search.filters import TraceFilters
from tui.server.store.annotation_rows import (
    MAX_PER_TARGET,
    AnnotationPosition,
    AnnotationQuery,
    AnnotationRefused,
    AnnotationRow,
    Latest,
    NewAnnotation,
    Summary,
    Target,
    merged,
    row_of,
    stored_row,
)
from tui.server.store.keys import REMEMBERED, answered_before, remember
from tui.server.store.rows import IdempotencyRow, Once, Remembered, Reply, now_ms
from tui.server.store.sql import INSERT, NEWEST_SPAN_END, columns
from tui.server.store.tables import Tables

COLUMNS = columns(AnnotationRow)
UPDATE = (
    "UPDATE annotations SET name = ?, label = ?, score = ?, explanation = ?, annotator_kind = ?,"
    " author = ?, metadata = ?, updated_at = ? WHERE id = ? AND project_id = ?"
)
KEPT_TRACES = f"SELECT id, listed_at FROM traces WHERE project_id = ? AND id = ANY(?) AND {NEWEST_SPAN_END} >= ?"
SPANS_OF = (
    "SELECT trace_id, id FROM spans WHERE project_id = ? AND trace_id = ANY(?) AND id = ANY(?)"
)
SESSIONS_OF = (
    "SELECT DISTINCT session_id FROM traces WHERE project_id = ? AND session_id = ANY(?)"
    f" AND {NEWEST_SPAN_END} >= ?"
)
ON_TRACES = (
    "SELECT id, trace_id, span_id, session_id, name, identifier, created_at FROM annotations"
    " WHERE project_id = ? AND trace_id = ANY(?)"
)
ON_SESSIONS = (
    "SELECT id, trace_id, span_id, session_id, name, identifier, created_at FROM annotations"
    " WHERE project_id = ? AND session_id = ANY(?)"
)
AUTHOR = "SELECT label FROM api_keys WHERE key_hash = ?"
UNKNOWN_AUTHOR = "a key since revoked"
# Each (target, name)'s latest annotation and how many there are: one row per group, so a
# page's summaries are bounded by its traces' names, not by their annotations.
LATEST = """
SELECT trace_id, span_id, name, label, score, updated_at, id, n FROM (
    SELECT trace_id, span_id, name, label, score, updated_at, id,
        count(*) OVER (PARTITION BY trace_id, span_id, name) AS n,
        row_number() OVER (PARTITION BY trace_id, span_id, name
            ORDER BY updated_at DESC, id DESC) AS r
    FROM annotations WHERE project_id = ? AND trace_id = ANY(?)) AS latest
WHERE r = 1
"""
# Traces past their project's retention: their annotations go with them (traces.expire), and a
# session's when no trace of it is left.
DELETE_OF_TRACES = "DELETE FROM annotations WHERE project_id = ? AND trace_id = ANY(?)"
DELETE_OF_SESSIONS_GONE = (
    "DELETE FROM annotations WHERE project_id = ? AND session_id = ANY(?) AND NOT EXISTS ("
    "SELECT 1 FROM traces t WHERE t.project_id = annotations.project_id"
    " AND t.session_id = annotations.session_id)"
)
NOT_IN_PROJECT = {
    "trace": ("trace_id", "no trace with this id in this project"),
    "span": ("span_id", "no span with this id in this trace of this project"),
    "session": ("session_id", "no session with this id in this project"),
}

# -- the filters of GET /v1/traces ----------------------------------------------------------

ANNOTATED = (
    "EXISTS (SELECT 1 FROM annotations a WHERE a.project_id = traces.project_id"
    " AND a.trace_id = traces.id AND a.name = ?"
)


def annotation_clauses(filters: TraceFilters) -> list[tuple[str, list[Any]]]:
    """The annotation filters as (clause, args) on `traces`: each an EXISTS on the annotations
    of the trace and its spans (by annotations_by_trace)."""
    found: list[tuple[str, list[Any]]] = []
    for name in filters.annotations:
        found.append((ANNOTATED + ")", [name]))
    for name, label in filters.labels:
        found.append((ANNOTATED + " AND a.label = ?)", [name, label]))
    for name, bound in filters.min_scores:
        found.append((ANNOTATED + " AND a.score >= ?)", [name, bound]))
    for name, bound in filters.max_scores:
        found.append((ANNOTATED + " AND a.score <= ?)", [name, bound]))
    return found


class AnnotationTables(Tables):
    """Annotations over the store's connections."""

    def _insert_annotations(self, db: Any, rows: list[AnnotationRow]) -> None:
        """Insert `rows` in the caller's transaction (PostgreSQL: one statement, not one per
        row)."""
        self._execute_many(db, self._sql(INSERT[AnnotationRow]), rows)

    # -- writes --------------------------------------------------------------------------------

    def add_annotations(
        self,
        project_id: str,
        items: Sequence[NewAnnotation],
        key_hash: str,
        kept_since: int,
        once: Once | None = None,
        answer: Callable[[list[AnnotationRow]], object] | None = None,
        now: int | None = None,
    ) -> list[AnnotationRow] | Remembered:
        """See AnnotationStore.add_annotations."""
        now = now_ms() if now is None else now
        targets = [item.target for item in items]
        traces = sorted({t.trace_id for t in targets if t.trace_id is not None})
        sessions = sorted({t.session_id for t in targets if t.session_id is not None})
        with self._write() as db:
            if once is not None:
                self._lock_idempotency_key(db, once.key_hash, once.idempotency_key)
                seen = db.execute(self._sql(REMEMBERED), once[:2]).fetchone()
                if seen is not None:
                    return Remembered(seen[0], seen[1], json.loads(seen[2]))
            self._lock_traces(db, ((project_id, trace_id) for trace_id in traces))
            self._lock_sessions(db, [(project_id, session) for session in sessions])
            listed = self._check_targets(db, project_id, targets, traces, sessions, kept_since)
            existing = self._existing(db, project_id, traces, sessions)
            author = self._author(db, key_hash)
            rows = self._apply(db, project_id, items, existing, author, now, listed)
            if once is not None and answer is not None:
                body = json.dumps(answer(rows))
                db.execute(
                    self._sql(INSERT[IdempotencyRow]),
                    IdempotencyRow(*once, 201, body, now_ms()),
                )
        return rows

    def _check_targets(
        self,
        db: Any,
        project_id: str,
        targets: list[Target],
        traces: list[str],
        sessions: list[str],
        kept_since: int,
    ) -> dict[str, int]:
        """The listed_at of each trace of the targets; AnnotationRefused for the first target
        not in the project (within its retention): the same words whether it is another
        project's or nowhere."""
        values = self.dialect.values
        kept: dict[str, int] = {}
        if traces:
            found = db.execute(
                self._sql(KEPT_TRACES), (project_id, values(traces), kept_since)
            ).fetchall()
            kept = {row[0]: int(row[1]) for row in found}
        spans: set[tuple[str, str]] = set()
        span_ids = sorted({t.span_id for t in targets if t.span_id is not None})
        if span_ids:
            of_spans = sorted({str(t.trace_id) for t in targets if t.span_id is not None})
            found = db.execute(
                self._sql(SPANS_OF), (project_id, values(of_spans), values(span_ids))
            ).fetchall()
            spans = {(row[0], row[1]) for row in found}
        known_sessions = set()
        if sessions:
            found = db.execute(
                self._sql(SESSIONS_OF), (project_id, values(sessions), kept_since)
            ).fetchall()
            known_sessions = {row[0] for row in found}
        for index, target in enumerate(targets):
            if target.session_id is not None:
                missing = target.session_id not in known_sessions
                field, message = NOT_IN_PROJECT["session"]
            elif target.trace_id not in kept:
                missing = True
                field, message = NOT_IN_PROJECT["trace"]
            else:
                missing = (
                    target.span_id is not None and (target.trace_id, target.span_id) not in spans
                )
                field, message = NOT_IN_PROJECT["span"]
            if missing:
                raise AnnotationRefused(f"data[{index}].{field}", message)
        return kept

    def _existing(
        self, db: Any, project_id: str, traces: list[str], sessions: list[str]
    ) -> list[tuple[Any, ...]]:
        """(id, trace_id, span_id, session_id, name, identifier, created_at) of the annotations
        already on the batch's traces (and their spans) and sessions."""
        found: list[tuple[Any, ...]] = []
        if traces:
            args = (project_id, self.dialect.values(traces))
            found += db.execute(self._sql(ON_TRACES), args).fetchall()
        if sessions:
            args = (project_id, self.dialect.values(sessions))
            found += db.execute(self._sql(ON_SESSIONS), args).fetchall()
        return found

    def _author(self, db: Any, key_hash: str) -> str:
        row = db.execute(self._sql(AUTHOR), (key_hash,)).fetchone()
        return str(row[0]) if row is not None else UNKNOWN_AUTHOR

    def _apply(
        self,
        db: Any,
        project_id: str,
        items: Sequence[NewAnnotation],
        existing: list[tuple[Any, ...]],
        author: str,
        now: int,
        listed: dict[str, int],
    ) -> list[AnnotationRow]:
        """Insert or update (by identifier) each item in order; AnnotationRefused past
        MAX_PER_TARGET on a target. Returns each item's row as it wrote it."""
        counts: dict[Target, int] = {}
        by_identifier: dict[tuple[Target, str, str | None], tuple[str, int]] = {}
        for aid, trace_id, span_id, session_id, name, identifier, created_at in existing:
            target = Target(trace_id, span_id, session_id)
            counts[target] = counts.get(target, 0) + 1
            if identifier is not None:
                by_identifier[(target, name, identifier)] = (aid, created_at)
        inserts: dict[str, AnnotationRow] = {}
        updates: dict[str, AnnotationRow] = {}
        rows = []
        for index, item in enumerate(items):
            key = (item.target, item.name, item.identifier)
            if item.identifier is not None and key in by_identifier:
                aid, created_at = by_identifier[key]
                row = stored_row(
                    project_id, item, author, now, listed.get(item.trace_id or ""), aid
                )._replace(created_at=created_at)
                if aid in inserts:
                    inserts[aid] = row  # added earlier in this batch: inserted as it ends up
                else:
                    updates[aid] = row
            else:
                counts[item.target] = counts.get(item.target, 0) + 1
                if counts[item.target] > MAX_PER_TARGET:
                    raise AnnotationRefused(
                        "data",
                        f"data[{index}] would be annotation {MAX_PER_TARGET + 1} on its"
                        f" {item.target.kind}: at most {MAX_PER_TARGET} on one trace, span or"
                        " session",
                    )
                row = stored_row(project_id, item, author, now, listed.get(item.trace_id or ""))
                inserts[row.id] = row
                if item.identifier is not None:
                    by_identifier[key] = (row.id, now)
            rows.append(row)
        if inserts:
            self._insert_annotations(db, list(inserts.values()))
        if updates:
            self._execute_many(db, self._sql(UPDATE), [_update_args(r) for r in updates.values()])
        return rows

    def update_annotation(
        self,
        project_id: str,
        annotation_id: str,
        changes: dict[str, Any],
        key_hash: str,
        now: int | None = None,
        once: Once | None = None,
        answer: Callable[[AnnotationRow], Any] | None = None,
    ) -> AnnotationRow | None:
        """See AnnotationStore.update_annotation."""
        now = now_ms() if now is None else now
        with self._write() as db:
            answered_before(self, db, None if once is None else Reply(once, 200, None))
            row = self._one(db, project_id, annotation_id)
            if row is None:
                return None
            target = Target(row.trace_id, row.span_id, row.session_id)
            if target.trace_id is not None:
                self._lock_traces(db, [(project_id, target.trace_id)])
            else:
                self._lock_sessions(db, [(project_id, str(target.session_id))])
            changed = row._replace(**changes, author=self._author(db, key_hash), updated_at=now)
            if changed.label is None and changed.score is None and changed.explanation is None:
                raise AnnotationRefused(
                    "label", "an annotation needs a label, a score or an explanation"
                )
            if changed.identifier is not None and changed.name != row.name:
                self._refuse_taken_identifier(db, changed)
            db.execute(self._sql(UPDATE), _update_args(changed))
            if once is not None:
                body = None if answer is None else answer(changed)
                remember(self, db, Reply(once, 200, body))
        return changed

    def _refuse_taken_identifier(self, db: Any, row: AnnotationRow) -> None:
        same = "IS NULL" if row.span_id is None else "= ?"
        args: list[Any] = [row.project_id, row.name, row.identifier, row.id]
        if row.session_id is not None:
            where = "session_id = ?"
            args.append(row.session_id)
        else:
            where = f"trace_id = ? AND span_id {same}"
            args += [row.trace_id] + ([] if row.span_id is None else [row.span_id])
        taken = db.execute(
            self._sql(
                "SELECT 1 FROM annotations WHERE project_id = ? AND name = ? AND identifier = ?"
                f" AND id <> ? AND {where}"
            ),
            args,
        ).fetchone()
        if taken is not None:
            raise AnnotationRefused(
                "name", "another annotation of this target has this name and identifier"
            )

    def delete_annotation(
        self, project_id: str, annotation_id: str, once: Once | None = None
    ) -> bool:
        """See AnnotationStore.delete_annotation."""
        reply = None if once is None else Reply(once, 204, None)
        with self._write_one() as db:
            answered_before(self, db, reply)
            gone = db.execute(
                self._sql("DELETE FROM annotations WHERE id = ? AND project_id = ?"),
                (annotation_id, project_id),
            )
            if gone.rowcount:
                remember(self, db, reply)
        return bool(gone.rowcount)

    # -- reads ---------------------------------------------------------------------------------

    def _one(self, db: Any, project_id: str, annotation_id: str) -> AnnotationRow | None:
        found = db.execute(
            self._sql(f"SELECT {COLUMNS} FROM annotations WHERE id = ? AND project_id = ?"),
            (annotation_id, project_id),
        ).fetchone()
        return None if found is None else row_of(found)

    def get_annotation(self, project_id: str, annotation_id: str) -> AnnotationRow | None:
        with self._read() as db:
            return self._one(db, project_id, annotation_id)

    def list_annotations(
        self,
        project_id: str,
        query: AnnotationQuery,
        limit: int,
        after: AnnotationPosition | None = None,
    ) -> tuple[list[AnnotationRow], bool]:
        """See AnnotationStore.list_annotations."""
        where = ["project_id = ?"]
        args: list[Any] = [project_id]
        for column in AnnotationQuery._fields:
            value = getattr(query, column)
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        if after is not None:
            where.append("(created_at, id) < (?, ?)")
            args += [after.created_at, after.id]
        sql = (
            f"SELECT {COLUMNS} FROM annotations WHERE {' AND '.join(where)}"
            " ORDER BY created_at DESC, id DESC LIMIT ?"
        )
        with self._read() as db:
            rows = [row_of(r) for r in db.execute(self._sql(sql), [*args, limit + 1])]
        return rows[:limit], len(rows) > limit

    def annotation_summaries(self, project_id: str, trace_ids: Sequence[str]) -> dict[str, Summary]:
        """See AnnotationStore.annotation_summaries."""
        if not trace_ids:
            return {}
        by_target = self._latest(project_id, list(trace_ids))
        found: dict[str, list[Summary]] = {}
        for (trace_id, _span_id), summary in by_target.items():
            found.setdefault(trace_id, []).append(summary)
        return {trace_id: merged(parts) for trace_id, parts in found.items()}

    def trace_annotations(
        self, project_id: str, trace_id: str
    ) -> tuple[Summary, dict[str, Summary]]:
        """See AnnotationStore.trace_annotations."""
        by_target = self._latest(project_id, [trace_id])
        spans = {span: s for (_, span), s in by_target.items() if span is not None}
        return merged(list(by_target.values())), spans

    def _latest(
        self, project_id: str, trace_ids: list[str]
    ) -> dict[tuple[str, str | None], Summary]:
        """Each (trace, span or None)'s summary, of these traces: one statement."""
        with self._read() as db:
            rows = db.execute(
                self._sql(LATEST), (project_id, self.dialect.values(trace_ids))
            ).fetchall()
        found: dict[tuple[str, str | None], Summary] = {}
        for trace_id, span_id, name, label, score, updated_at, aid, count in rows:
            score = None if score is None else float(score)
            latest = Latest(label, score, int(count), int(updated_at), aid)
            found.setdefault((trace_id, span_id), {})[name] = latest
        return found


def forget_annotations(
    tables: Tables, db: Any, project_id: str, trace_ids: list[str], sessions: list[str]
) -> None:
    """In the caller's transaction, as these traces are deleted (after the statement that
    deletes them): their annotations and their spans', and those of `sessions` that no trace
    of the project names any more."""
    values = tables.dialect.values
    if trace_ids:
        db.execute(tables.dialect.sql(DELETE_OF_TRACES), (project_id, values(trace_ids)))
    if sessions:
        db.execute(tables.dialect.sql(DELETE_OF_SESSIONS_GONE), (project_id, values(sessions)))


def _update_args(row: AnnotationRow) -> tuple[Any, ...]:
    return (
        row.name,
        row.label,
        row.score,
        row.explanation,
        row.annotator_kind,
        row.author,
        row.metadata,
        row.updated_at,
        row.id,
        row.project_id,
    )
