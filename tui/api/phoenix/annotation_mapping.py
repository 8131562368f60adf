"""Phoenix's annotation records and targets as the app's (tui/api/annotation_records.py): the
three kinds of target Phoenix keeps apart (a span's, a trace's and a session's annotations,
each with its own routes and GraphQL mutations), a record of its lists read as an Annotation,
what Phoenix cannot keep of a draft (a label or a score on a note), and the summary of a
trace's annotations that the local service sends with a trace (`{name: {label, score, count,
updated_at}}`), made here from Phoenix's records."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from tui.api.annotation_records import Annotation, AnnotationDraft, AnnotationTarget
from tui.api.errors import FieldError
from tui.api.models import Trace

EARLIEST = datetime.min.replace(tzinfo=timezone.utc)
IDS_PER_REQUEST = 200  # ids in one query string: a proxy in front of Phoenix may refuse long lines


@dataclass(frozen=True)
class Kind:
    """What Phoenix calls one kind of target: its routes, its id field and its mutations."""

    name: str  # span, trace, session
    id_field: str  # span_id...
    annotations: str  # the path of its list (under the project) and of its write
    notes: str
    patch: str  # the GraphQL mutation that changes one ("" where it takes another shape)
    delete: str
    delete_notes: str


SPAN = Kind(
    "span",
    "span_id",
    "span_annotations",
    "span_notes",
    "patchSpanAnnotations",
    "deleteSpanAnnotations",
    "deleteSpanNotes",
)
TRACE = Kind(
    "trace",
    "trace_id",
    "trace_annotations",
    "trace_notes",
    "patchTraceAnnotations",
    "deleteTraceAnnotations",
    "deleteTraceNotes",
)
SESSION = Kind(
    "session",
    "session_id",
    "session_annotations",
    "session_notes",
    "",
    "deleteProjectSessionAnnotation",
    "deleteProjectSessionNotes",
)
KINDS = {kind.name: kind for kind in (SPAN, TRACE, SESSION)}


def kind_of(target: AnnotationTarget) -> Kind:
    kind = KINDS.get(target.kind)
    if kind is None:
        raise ValueError(f"an annotation target names no trace, span or session: {target}")
    return kind


def target_id(target: AnnotationTarget) -> str:
    return getattr(target, kind_of(target).id_field) or ""


def read_annotation(item: Any, project_id: str) -> Annotation | None:
    """A record of Phoenix's annotation lists as the app's Annotation (its target's trace is
    set by the caller for a span's). Phoenix names who wrote it by a user's GlobalID only
    (none without authentication): no author is made of it."""
    if not isinstance(item, Mapping):
        return None
    fields = dict(item)
    fields["project_id"] = project_id
    fields["identifier"] = fields.get("identifier") or None  # Phoenix's "" is none
    fields.pop("author", None)
    return Annotation.model_validate(fields)


def phoenix_problems(drafts: Sequence[AnnotationDraft]) -> tuple[FieldError, ...]:
    """What Phoenix cannot keep of a batch, by the contract's field paths (data[3].label)."""
    found: list[FieldError] = []
    for index, draft in enumerate(drafts):
        if not draft.is_note:
            continue
        where = f"data[{index}]"
        if draft.label is not None:
            found.append(FieldError(f"{where}.label", "Phoenix keeps a note's text only."))
        if draft.score is not None:
            found.append(FieldError(f"{where}.score", "Phoenix keeps a note's text only."))
        if not (draft.explanation or "").strip():
            found.append(FieldError(f"{where}.explanation", "Phoenix needs a note's text."))
        if draft.annotator_kind != "HUMAN" or draft.metadata:
            found.append(
                FieldError(
                    f"{where}.annotator_kind",
                    "Phoenix keeps notes as HUMAN, without metadata.",
                )
            )
    return tuple(found)


def newest_first(records: list[Annotation]) -> list[Annotation]:
    return sorted(
        records,
        key=lambda a: (a.created_at is not None, a.created_at or 0, a.id or ""),
        reverse=True,
    )


def summary_of(annotations: Iterable[Annotation]) -> dict[str, Any]:
    """Each name's latest label and score, its count and latest time, over `annotations`."""
    ordered = sorted(
        annotations, key=lambda a: (a.updated_at or a.created_at or EARLIEST, a.id or "")
    )
    summary: dict[str, Any] = {}
    for annotation in ordered:
        name = annotation.name or "?"
        count = summary.get(name, {}).get("count", 0)
        when = annotation.updated_at or annotation.created_at
        summary[name] = {
            "label": annotation.label,
            "score": annotation.score,
            "count": count + 1,
            "updated_at": when.isoformat() if when is not None else None,
        }
    return summary


def summaries(
    annotations: Iterable[Annotation],
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """(a trace's summary over its own annotations and its spans', each span's own)."""
    annotations = list(annotations)
    on_spans: dict[str, list[Annotation]] = {}
    for annotation in annotations:
        if annotation.span_id:
            on_spans.setdefault(annotation.span_id, []).append(annotation)
    return summary_of(annotations), {span: summary_of(each) for span, each in on_spans.items()}


def annotate_trace(trace: Trace, annotations: Iterable[Annotation]) -> None:
    """Give a trace read from Phoenix the summaries the local service sends with one: the
    trace's over its own annotations and its spans', and each annotated span's own."""
    trace.annotations, on_spans = summaries(annotations)
    for span in trace.spans or ():
        if span.id in on_spans:
            span.annotations = on_spans[span.id]


def row_summary(records: Iterable[Any]) -> dict[str, Any]:
    """A trace list row's summary from the GraphQL records of the trace's own annotations."""
    annotations = [
        Annotation.model_validate(record) for record in records if isinstance(record, Mapping)
    ]
    return summary_of(annotations)
