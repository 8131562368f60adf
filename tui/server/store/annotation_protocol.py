"""What the annotation routes and the trace answers need of a store (protocol.TraceStore holds
it whole): annotations written in batches, listed, changed and deleted, and summarised for
the traces they are on. Every method may block: call from a thread."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from tui.server.store.annotation_rows import (
    AnnotationPosition,
    AnnotationQuery,
    AnnotationRow,
    NewAnnotation,
    Summary,
)
from tui.server.store.rows import Once, Remembered


class AnnotationStore(Protocol):
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
        """Store `items` in the project, all or none, in one transaction, each written by the
        key `key_hash` (its label is the author) at `now` (epoch ms); returns each item's row as
        it wrote it, in order. An item whose target, name and identifier (not None) match an
        annotation's updates that one instead of adding. AnnotationRefused (nothing stored) for
        a target that is not in the project (a trace whose newest span ended before
        `kept_since` is not), or a target past annotation_rows.MAX_PER_TARGET. With `once`,
        the answer `answer(rows)` is remembered with the rows (status 201); if `once`'s key was
        used before, nothing is stored and what was remembered is returned."""
        ...

    def list_annotations(
        self,
        project_id: str,
        query: AnnotationQuery,
        limit: int,
        after: AnnotationPosition | None = None,
    ) -> tuple[list[AnnotationRow], bool]:
        """One page of the project's annotations `query` selects (a trace_id alone: the
        trace's and its spans'), newest created_at first, ties by id, past `after`; and
        whether more follow."""
        ...

    def get_annotation(self, project_id: str, annotation_id: str) -> AnnotationRow | None:
        """The project's annotation with this id (None for another project's)."""
        ...

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
        """Change the fields `changes` names (name, label, score, explanation, metadata) of the
        project's annotation, its author now the label of the key `key_hash`; the row as
        changed, or None if the project has no such annotation. AnnotationRefused for a change
        that leaves no label, score or explanation, or a name whose identifier another
        annotation of the target has. With `once` (an Idempotency-Key's use), the answer
        (200, `answer(row)`) is kept in the change's transaction (AlreadyAnswered: a repeat's)."""
        ...

    def delete_annotation(
        self, project_id: str, annotation_id: str, once: Once | None = None
    ) -> bool:
        """Delete the project's annotation with this id; True if there was one. With `once`,
        its answer (204) is kept in the deletion's transaction, as update_annotation's."""
        ...

    def annotation_summaries(self, project_id: str, trace_ids: Sequence[str]) -> dict[str, Summary]:
        """For each of these traces of the project that has annotations (its own or its
        spans'), each name's latest label and score and how many: one statement."""
        ...

    def trace_annotations(
        self, project_id: str, trace_id: str
    ) -> tuple[Summary, dict[str, Summary]]:
        """A trace's summary (its own annotations and its spans') and each annotated span's
        own: one statement, however many spans the trace has."""
        ...
