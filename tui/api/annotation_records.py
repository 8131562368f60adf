"""Annotations as the client reads and writes them: scores, labels and notes on a trace, a span or
a session (Phoenix's record, which the local service keeps too: docs/api.md).

- `Annotation`: a stored one, read tolerantly (its values flat or inside Phoenix's `result`; an
  author, where the server names one).
- `AnnotationTarget`: what it is on (a trace; a span of a trace; a session), and `AnnotationDraft`:
  a new one as the app or the command line writes it, checked against the bounds every server
  of the contract keeps (`problems`), its body in the contract's shape (`body`).
- `AnnotationChange`: an edit of one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from pydantic import model_validator

from tui.api.models import LFloat, LStr, LTime, Record, aliases

NOTE = "note"  # a note is the annotation of this name, its text the explanation
KINDS = ("HUMAN", "LLM", "CODE")
MAX_BATCH = 1000  # a POST carries at most this many
MAX_NAME = 64
MAX_LABEL = 200
MAX_EXPLANATION = 10_000
MAX_PER_TARGET = 100


class Annotation(Record):
    """A stored annotation. `label`, `score` and `explanation` are read flat or from Phoenix's
    `result`; `author` is who wrote it last (the label of the service's key; Phoenix names a
    user id, or nobody)."""

    id: LStr = aliases("id", "annotation_id")
    project_id: LStr = aliases("project_id", "projectId")
    trace_id: LStr = aliases("trace_id", "traceId")
    span_id: LStr = aliases("span_id", "spanId")
    session_id: LStr = aliases("session_id", "sessionId")
    name: LStr = aliases("name")
    label: LStr = aliases("label")
    score: LFloat = aliases("score")
    explanation: LStr = aliases("explanation")
    annotator_kind: LStr = aliases("annotator_kind", "annotatorKind")
    identifier: LStr = aliases("identifier")
    author: LStr = aliases("author")
    metadata: Any = aliases("metadata")
    created_at: LTime = aliases("created_at", "createdAt")
    updated_at: LTime = aliases("updated_at", "updatedAt")

    @model_validator(mode="before")
    @classmethod
    def _flatten_result(cls, data: Any) -> Any:
        """Phoenix gives the values inside `result`: taken from there where not given flat."""
        if isinstance(data, dict) and isinstance(data.get("result"), dict):
            data = dict(data)
            for name, value in data["result"].items():
                if name in ("label", "score", "explanation") and data.get(name) is None:
                    data[name] = value
        return data

    @property
    def is_note(self) -> bool:
        return self.name == NOTE

    @property
    def target(self) -> AnnotationTarget:
        return AnnotationTarget(self.trace_id, self.span_id, self.session_id)


@dataclass(frozen=True)
class AnnotationTarget:
    """What an annotation is on: a trace (`trace_id`), a span of it (`trace_id` and
    `span_id`), or a session (`session_id` alone)."""

    trace_id: str | None = None
    span_id: str | None = None
    session_id: str | None = None

    @classmethod
    def trace(cls, trace_id: str) -> AnnotationTarget:
        return cls(trace_id=trace_id)

    @classmethod
    def span(cls, trace_id: str, span_id: str) -> AnnotationTarget:
        return cls(trace_id=trace_id, span_id=span_id)

    @classmethod
    def session(cls, session_id: str) -> AnnotationTarget:
        return cls(session_id=session_id)

    @property
    def kind(self) -> str:
        """ "span", "trace" or "session" ("nothing" for a target that names none)."""
        if self.session_id is not None and self.trace_id is None:
            return "session"
        if self.trace_id is not None:
            return "span" if self.span_id is not None else "trace"
        return "nothing"

    def fields(self) -> dict[str, str]:
        """The target's fields as a body carries them (only those it has)."""
        given = {
            "trace_id": self.trace_id,
            "span_id": self.span_id,
            "session_id": self.session_id,
        }
        return {name: value for name, value in given.items() if value is not None}


@dataclass(frozen=True)
class AnnotationDraft:
    """A new annotation: its target, name and values (at least one of label, score,
    explanation), who made it (annotator_kind) and, optionally, an identifier (a second write
    with the same target, name and identifier updates the first instead of adding one)."""

    target: AnnotationTarget
    name: str
    label: str | None = None
    score: float | None = None
    explanation: str | None = None
    annotator_kind: str = "HUMAN"
    identifier: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def is_note(self) -> bool:
        return self.name == NOTE

    def problems(self) -> dict[str, str]:
        """What the contract's bounds refuse, by field (name, label, score, explanation,
        annotator_kind, target); {} when a server of the contract takes it."""
        found: dict[str, str] = {}
        if not self.name.strip():
            found["name"] = "A name is required (e.g. correctness, root_cause, note)."
        elif len(self.name) > MAX_NAME:
            found["name"] = f"At most {MAX_NAME} characters."
        if self.label is not None and len(self.label) > MAX_LABEL:
            found["label"] = f"At most {MAX_LABEL} characters."
        if self.score is not None and not math.isfinite(self.score):
            found["score"] = "A finite number, e.g. 0.2."
        if self.explanation is not None and len(self.explanation) > MAX_EXPLANATION:
            found["explanation"] = f"At most {MAX_EXPLANATION:,} characters."
        if self.label is None and self.score is None and not self.explanation:
            found["label"] = "Give a label, a score or a note."
        if self.annotator_kind not in KINDS:
            found["annotator_kind"] = "HUMAN, LLM or CODE."
        if self.target.kind == "nothing":
            found["target"] = "A trace, a span of a trace, or a session."
        return found

    def body(self) -> dict[str, Any]:
        """The annotation as POST /v1/projects/{id}/annotations takes it (the values flat)."""
        body: dict[str, Any] = {**self.target.fields(), "name": self.name}
        for name in ("label", "score", "explanation", "identifier"):
            value = getattr(self, name)
            if value is not None:
                body[name] = value
        body["annotator_kind"] = self.annotator_kind
        if self.metadata:
            body["metadata"] = self.metadata
        return body

    def same_values(self, annotation: Annotation) -> bool:
        """Whether a stored annotation holds this draft's target, name and values: after a
        write whose outcome is unknown, whether it was carried out."""
        return (
            annotation.target == self.target
            and annotation.name == self.name
            and annotation.label == self.label
            and annotation.score == self.score
            and (annotation.explanation or None) == (self.explanation or None)
            and (self.identifier is None or annotation.identifier == self.identifier)
        )


@dataclass(frozen=True)
class AnnotationChange:
    """An edit of an annotation: the fields given change; a value set to None is removed (as
    long as one of label, score and explanation stays)."""

    changes: dict[str, Any]

    def problems(self, annotation: Annotation) -> dict[str, str]:
        """What the bounds refuse of the annotation as changed."""
        merged = {
            "name": annotation.name or "",
            "label": annotation.label,
            "score": annotation.score,
            "explanation": annotation.explanation,
            **self.changes,
        }
        draft = AnnotationDraft(
            annotation.target,
            merged["name"],
            merged["label"],
            merged["score"],
            merged["explanation"],
        )
        return {k: v for k, v in draft.problems().items() if k != "target"}
