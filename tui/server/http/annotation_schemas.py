"""The request bodies of the annotation routes (validated field by field) and the JSON of an
annotation and of the summaries the trace answers carry.

A body gives label, score and explanation flat or inside `result` (Phoenix's shape); answers
carry both. What pydantic cannot say field by field (the target's shape, at least one value, the
two shapes agreeing) is checked by `checked`, which names the field as pydantic would:
`data[3].label`.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tui.server.http.errors import ServiceError
from tui.server.http.schemas import Patch, iso_ms
from tui.server.store.annotation_rows import AnnotationRow, NewAnnotation, Summary

MAX_BATCH = 1000
MAX_NAME = 64
MAX_LABEL = 200
MAX_EXPLANATION = 10_000
MAX_ID = 200  # a trace, span or session id, an identifier
MAX_METADATA_BYTES = 16_384
VALUES = ("label", "score", "explanation")


def _not_blank(value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise ValueError("must not be blank")
    return value


def _bounded(value: dict[str, Any] | None) -> dict[str, Any] | None:
    if value is None:
        return value
    try:
        encoded = metadata_text(value).encode()
    except ValueError:
        raise ValueError("must be JSON without NaN or Infinity") from None
    if len(encoded) > MAX_METADATA_BYTES:
        raise ValueError(f"must be at most {MAX_METADATA_BYTES // 1024} KB as JSON")
    return value


def metadata_text(value: dict[str, Any]) -> str:
    if not value:
        return "{}"  # the usual case, skipped: a batch holds up to 1,000
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def label_field() -> Any:
    return Field(default=None, min_length=1, max_length=MAX_LABEL, strict=True)


def score_field() -> Any:
    return Field(default=None, strict=True, allow_inf_nan=False, description="A finite number.")


def explanation_field() -> Any:
    return Field(
        default=None,
        min_length=1,
        max_length=MAX_EXPLANATION,
        strict=True,
        description="Free text: a note's body for the annotation named `note`.",
    )


def id_field() -> Any:
    return Field(default=None, min_length=1, max_length=MAX_ID, strict=True)


class AnnotationResult(BaseModel):
    """Phoenix's shape of the values: the same as giving them flat."""

    model_config = ConfigDict(extra="forbid")

    label: str | None = label_field()
    score: float | None = score_field()
    explanation: str | None = explanation_field()


class AnnotationIn(BaseModel):
    """One annotation of POST /v1/projects/{project_id}/annotations. Its target: `trace_id`
    alone (the trace), with `span_id` (a span of it), or `session_id` alone (a session). At
    least one of label, score and explanation, flat or in `result`."""

    model_config = ConfigDict(extra="forbid")

    trace_id: str | None = id_field()
    span_id: str | None = id_field()
    session_id: str | None = id_field()
    name: str = Field(
        min_length=1,
        max_length=MAX_NAME,
        strict=True,
        description="e.g. `correctness`, `root_cause`, or `note` for a note.",
    )
    label: str | None = label_field()
    score: float | None = score_field()
    explanation: str | None = explanation_field()
    result: AnnotationResult | None = None
    annotator_kind: Literal["HUMAN", "LLM", "CODE"] = "HUMAN"
    identifier: str | None = Field(
        default=None,
        max_length=MAX_ID,
        strict=True,
        description="Given, a second write with the same target, name and identifier updates"
        " that annotation instead of adding one.",
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="At most 16 KB as JSON.")

    _name = field_validator("name")(_not_blank)
    _metadata = field_validator("metadata")(_bounded)


class AnnotationBatch(BaseModel):
    """POST /v1/projects/{project_id}/annotations: 1 to 1,000, stored all or none."""

    model_config = ConfigDict(extra="forbid")

    data: list[AnnotationIn] = Field(min_length=1, max_length=MAX_BATCH)


class AnnotationUpdate(Patch):
    """PATCH /v1/projects/{project_id}/annotations/{annotation_id}: the fields given change
    (label, score and explanation may be null, as long as one of them is left)."""

    NULLABLE: ClassVar[frozenset[str]] = frozenset(VALUES)

    name: str | None = Field(default=None, min_length=1, max_length=MAX_NAME, strict=True)
    label: str | None = label_field()
    score: float | None = score_field()
    explanation: str | None = explanation_field()
    metadata: dict[str, Any] | None = None

    _name = field_validator("name")(_not_blank)
    _metadata = field_validator("metadata")(_bounded)

    def stored_changes(self) -> dict[str, Any]:
        """The changes as the store takes them (the metadata as JSON text)."""
        changes = self.changes()
        if "metadata" in changes:
            changes["metadata"] = metadata_text(changes["metadata"])
        return changes


def refused(field: str, message: str) -> ServiceError:
    return ServiceError(
        422, "validation_error", f"Invalid fields: {field}.", [{"field": field, "message": message}]
    )


def checked(index: int, item: AnnotationIn) -> NewAnnotation:
    """The item as the store takes it; 422 naming `data[index].<field>` for what its fields
    say together."""
    at = f"data[{index}]"
    if item.session_id is not None:
        if item.trace_id is not None or item.span_id is not None:
            raise refused(f"{at}.session_id", "a session annotation has no trace_id or span_id")
    elif item.trace_id is None:
        field = "trace_id"
        message = "required: a trace_id (with a span_id for a span) or a session_id"
        if item.span_id is not None:
            message = "required with span_id"
        raise refused(f"{at}.{field}", message)
    values: dict[str, Any] = {
        "label": item.label,
        "score": item.score,
        "explanation": item.explanation,
    }
    if item.result is not None:
        for name in VALUES:
            inner = getattr(item.result, name)
            if inner is None:
                continue
            if values[name] is not None and values[name] != inner:
                raise refused(f"{at}.result.{name}", f"differs from {name}: give it once")
            values[name] = inner
    if values["label"] is None and values["score"] is None and values["explanation"] is None:
        raise refused(f"{at}.label", "an annotation needs a label, a score or an explanation")
    return NewAnnotation(
        item.trace_id,
        item.span_id,
        item.session_id,
        item.name,
        values["label"],
        values["score"],
        values["explanation"],
        item.annotator_kind,
        item.identifier,
        metadata_text(item.metadata),
    )


def annotation_json(row: AnnotationRow) -> dict[str, Any]:
    values = {"label": row.label, "score": row.score, "explanation": row.explanation}
    created = iso_ms(row.created_at)
    return {
        "id": row.id,
        "project_id": row.project_id,
        "trace_id": row.trace_id,
        "span_id": row.span_id,
        "session_id": row.session_id,
        "name": row.name,
        **values,
        "annotator_kind": row.annotator_kind,
        "identifier": row.identifier,
        "author": row.author,
        "metadata": json.loads(row.metadata) if row.metadata != "{}" else {},
        "created_at": created,
        "updated_at": created if row.updated_at == row.created_at else iso_ms(row.updated_at),
        "result": dict(values),
    }


def summary_json(summary: Summary | None) -> dict[str, Any]:
    """A trace's or span's annotations by name: {name: {label, score, count, updated_at}}."""
    return {
        name: {
            "label": latest.label,
            "score": latest.score,
            "count": latest.total,
            "updated_at": iso_ms(latest.updated_at),
        }
        for name, latest in sorted((summary or {}).items())
    }
