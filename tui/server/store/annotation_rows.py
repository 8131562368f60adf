"""The named rows of annotations (scores, labels and notes on a trace, a span or a session) and
the small values that travel with them. Nothing here knows SQL.

An annotation's target is its trace (`trace_id` alone), a span of its trace (`trace_id` and
`span_id`) or a session (`session_id` alone). Its `author` is the label of the key that wrote it
last, set by the service. The record is Phoenix's, so a client of either reads the other's.
"""

from __future__ import annotations

import os
import time
from typing import Any, NamedTuple

ANNOTATOR_KINDS = ("HUMAN", "LLM", "CODE")
MAX_PER_TARGET = 100  # annotations on one trace, one span or one session
NOTE = "note"  # the name of a note: its text is the explanation (Phoenix's notes are the same)


class AnnotationRow(NamedTuple):
    """An annotation as stored (its metadata as JSON object text), with its trace's listed_at
    (None for a session's): the store finds annotated traces in the list's order by it."""

    id: str
    project_id: str
    trace_id: str | None
    span_id: str | None
    session_id: str | None
    name: str
    label: str | None
    score: float | None
    explanation: str | None
    annotator_kind: str
    identifier: str | None
    author: str
    metadata: str
    created_at: int
    updated_at: int
    listed_at: int | None = None


class NewAnnotation(NamedTuple):
    """One annotation of a write, checked field by field (the route did): what the store adds,
    or, given an identifier already used on its target and name, what it updates."""

    trace_id: str | None
    span_id: str | None
    session_id: str | None
    name: str
    label: str | None
    score: float | None
    explanation: str | None
    annotator_kind: str
    identifier: str | None
    metadata: str  # a JSON object as text

    @property
    def target(self) -> Target:
        return Target(self.trace_id, self.span_id, self.session_id)


class Target(NamedTuple):
    """What an annotation is on: (trace, None, None), (trace, span, None) or (None, None,
    session)."""

    trace_id: str | None
    span_id: str | None
    session_id: str | None

    @property
    def kind(self) -> str:
        if self.session_id is not None:
            return "session"
        return "span" if self.span_id is not None else "trace"


class AnnotationPosition(NamedTuple):
    """The last annotation of the previous page: its created_at and id."""

    created_at: int
    id: str


class AnnotationQuery(NamedTuple):
    """Which of a project's annotations a listing reads (None: any)."""

    trace_id: str | None = None
    span_id: str | None = None
    session_id: str | None = None
    name: str | None = None


class Latest(NamedTuple):
    """One name's annotations on a target (or a trace with its spans): the latest one's label,
    score and updated_at, and how many there are."""

    label: str | None
    score: float | None
    total: int
    updated_at: int
    latest_id: str  # breaks ties of updated_at when summaries are merged


# A trace's or a span's annotations by name.
Summary = dict[str, Latest]


def merged(summaries: list[Summary]) -> Summary:
    """Several targets' summaries as one: counts added, the latest of each name kept."""
    found: Summary = {}
    for summary in summaries:
        for name, latest in summary.items():
            seen = found.get(name)
            if seen is None:
                found[name] = latest
                continue
            newer = max(seen, latest, key=lambda item: (item.updated_at, item.latest_id))
            found[name] = newer._replace(total=seen.total + latest.total)
    return found


class AnnotationRefused(Exception):
    """A write the store refuses (the route answers 422 on `field`): a target that is not in
    the project, a target past MAX_PER_TARGET, an identifier taken by a rename."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def new_annotation_id() -> str:
    """`ann_`, the time in ms (12 hex digits) and 80 random bits: new ids sort after older
    ones, so the primary key's index grows at its end instead of at random places (a batch of
    1,000 writes fewer pages)."""
    return f"ann_{time.time_ns() // 1_000_000:012x}{os.urandom(10).hex()}"


def stored_row(
    project_id: str,
    item: NewAnnotation,
    author: str,
    now: int,
    listed_at: int | None,
    annotation_id: str | None = None,
) -> AnnotationRow:
    """The row a new annotation is stored as (`listed_at`: its trace's)."""
    return AnnotationRow(
        annotation_id or new_annotation_id(),
        project_id,
        *item.target,
        item.name,
        item.label,
        item.score,
        item.explanation,
        item.annotator_kind,
        item.identifier,
        author,
        item.metadata,
        now,
        now,
        listed_at,
    )


def row_of(values: Any) -> AnnotationRow:
    """A row as read (a store's tuple): the score a float, as both stores give it."""
    row = AnnotationRow._make(values)
    return row if row.score is None else row._replace(score=float(row.score))
