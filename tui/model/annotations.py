"""Annotations as the screens show them (pure): a trace's or span's summary read from what the
server sent (`{name: {label, score, count, updated_at}}`), said in one line or one mark, and a
list of stored annotations said whole (who, when, what) for the trace summary and the sessions'
notes. Every server string goes through the safe-text helper where it becomes a Text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from rich.text import Text

from tui.api.annotation_records import NOTE, Annotation
from tui.core.lenient import to_datetime, to_float, to_int, to_str
from tui.model import formatting as fmt
from tui.model.text import safe_text

NOTE_MARK = "✎"  # in the trace list and the span tree: annotated, with a note
MARK = "◆"  # annotated, without a note
NAME_SHOWN = 24  # a name or label in a one-line digest is cut to this
NOTE_SHOWN = 10_000  # a note said whole (the contract's bound) in the lists of annotations
EARLIEST = datetime.min.replace(tzinfo=timezone.utc)  # an annotation that says not when


@dataclass(frozen=True)
class NameSummary:
    """What a trace's row (or a span) says of its annotations of one name: the latest label
    and score, how many there are, when the latest was written."""

    label: str | None = None
    score: float | None = None
    count: int = 0
    updated_at: datetime | None = None


Summary = dict[str, NameSummary]


def summary_of(record: Any) -> Summary | None:
    """A trace's or span's annotations by name, read tolerantly from its `annotations`; None
    when the server sent none at all (it keeps none, or does not summarise them), {} when it
    said there are none."""
    raw = getattr(record, "annotations", None)
    if not isinstance(raw, Mapping):
        return None
    summary: Summary = {}
    for name, value in raw.items():
        if not isinstance(name, str) or not name:
            continue
        fields = value if isinstance(value, Mapping) else {}
        count = to_int(fields.get("count"))
        summary[name] = NameSummary(
            label=to_str(fields.get("label")),
            score=to_float(fields.get("score")),
            count=count if count is not None and count > 0 else 1,
            updated_at=to_datetime(fields.get("updated_at")),
        )
    return summary


def mark_of(summary: Summary | None) -> str:
    """The one-cell mark of an annotated trace or span: ✎ with a note, ◆ without, else none."""
    if not summary:
        return ""
    return NOTE_MARK if NOTE in summary else MARK


def value_text(label: str | None, score: float | None) -> str:
    """A label and a score as one short phrase: `wrong 0.2`, `wrong`, `0.2`."""
    parts = [label] if label else []
    if score is not None:
        parts.append(fmt_score(score))
    return " ".join(parts)


def fmt_score(score: float) -> str:
    """A score as people write it: 1, 0.5, 0.125 (at most four significant digits)."""
    return f"{score:.4g}"


def digest(summary: Summary | None) -> Text:
    """A summary in one line: `root_cause retriever · correctness wrong 0 · 2 notes`, the names
    in the order given (the server's), notes counted last."""
    line = Text(no_wrap=True, overflow="ellipsis")
    if not summary:
        return line
    for name, each in summary.items():
        if name == NOTE:
            continue
        if line.plain:
            line.append(" · ", style="dim")
        line.append_text(safe_text(name, NAME_SHOWN, style="bold"))
        value = value_text(each.label, each.score)
        if value:
            line.append(" ")
            line.append_text(safe_text(value, NAME_SHOWN))
        if each.count > 1:
            line.append(f" ×{each.count}", style="dim")
    notes = summary.get(NOTE)
    if notes is not None:
        if line.plain:
            line.append(" · ", style="dim")
        line.append(fmt.counted(notes.count, "note"), style="italic")
    return line


def names_and_labels(summaries: Iterable[Summary | None]) -> list[tuple[str, str | None]]:
    """Each (name, latest label) the summaries hold, once, in the order met: what the query
    line and the annotate form complete from the loaded rows."""
    seen: dict[tuple[str, str | None], None] = {}
    for summary in summaries:
        for name, each in (summary or {}).items():
            seen.setdefault((name, each.label), None)
    return list(seen)


def target_text(annotation: Annotation, span_names: Mapping[str, str] | None = None) -> str:
    """What an annotation is on, in words: `the trace`, `span retrieve`, `the session`."""
    target = annotation.target
    if target.kind == "span":
        name = (span_names or {}).get(target.span_id or "")
        return f"span {name}" if name else f"span {target.span_id}"
    return f"the {target.kind}"


def annotation_lines(
    annotations: Sequence[Annotation],
    now: datetime,
    span_names: Mapping[str, str] | None = None,
) -> list[Text]:
    """Each annotation said whole, newest first: its name and values, what it is on, who wrote
    it and how long ago; then a note's (or explanation's) whole text, on its own lines."""
    lines: list[Text] = []
    for annotation in annotations:
        lines.append(heading(annotation, now, span_names))
        if annotation.explanation:
            body = safe_text(annotation.explanation, NOTE_SHOWN, multiline=True)
            body.pad_left(2)
            # Each line ends as a line does: a Group measures its height by the line ends, and
            # a last line without one is not counted (the note was cut off the screen).
            body.end = "\n"
            lines.append(body)
    return lines


def heading(
    annotation: Annotation, now: datetime, span_names: Mapping[str, str] | None = None
) -> Text:
    """`✎ note on span retrieve · on-call laptop · 3m ago` / `◆ correctness wrong 0 on the
    trace · ...`: an annotation's first line."""
    line = Text()
    line.append(f"{NOTE_MARK if annotation.is_note else MARK} ", style="bold")
    line.append_text(safe_text(annotation.name or "?", 64, style="bold"))
    value = value_text(annotation.label, annotation.score)
    if value:
        line.append(" ")
        line.append_text(safe_text(value, 200))
    line.append(" on ", style="dim")
    line.append_text(safe_text(target_text(annotation, span_names), 80, style="dim"))
    line.append(" · ", style="dim")
    line.append_text(safe_text(annotation.author or "someone", 60, style="italic"))
    when = annotation.updated_at or annotation.created_at
    if when is not None:
        line.append(f" · {fmt.ago(when, now)}", style="dim")
    if annotation.annotator_kind and annotation.annotator_kind != "HUMAN":
        line.append(f" · {annotation.annotator_kind}", style="dim")
    return line


# -- summaries kept current as annotations are written, changed and deleted ---------------------


def _moment(annotation: Annotation) -> str | None:
    when = annotation.updated_at or annotation.created_at
    return when.isoformat() if when is not None else None


def with_annotation(raw: Any, annotation: Annotation) -> dict[str, Any]:
    """A summary as the server sends it (`{name: {label, score, count, updated_at}}`), with one
    more annotation written: its name's count grows, its values are the latest."""
    summary = {k: dict(v) for k, v in raw.items()} if isinstance(raw, Mapping) else {}
    name = annotation.name or "?"
    before = summary.get(name) or {}
    count = to_int(before.get("count")) or 0
    summary[name] = {
        "label": annotation.label,
        "score": annotation.score,
        "count": count + 1,
        "updated_at": _moment(annotation),
    }
    return summary


def summary_from(annotations: Iterable[Annotation]) -> dict[str, Any]:
    """The summary the server would send for these annotations (each name's latest values and
    count), newest last as written: what a trace shows once its list has been changed here."""
    ordered = sorted(
        annotations, key=lambda a: (a.updated_at or a.created_at or EARLIEST, a.id or "")
    )
    summary: dict[str, Any] = {}
    for annotation in ordered:
        summary = with_annotation(summary, annotation)
    return summary


def by_span(annotations: Iterable[Annotation]) -> dict[str, dict[str, Any]]:
    """Each span's summary, from a trace's annotations (those on spans)."""
    spans: dict[str, list[Annotation]] = {}
    for annotation in annotations:
        if annotation.target.kind == "span" and annotation.span_id:
            spans.setdefault(annotation.span_id, []).append(annotation)
    return {span_id: summary_from(each) for span_id, each in spans.items()}


ANNOTATED_IN_JSON = b'"annotations"'


def annotated_positions(spans: Sequence[Any]) -> set[int]:
    """The positions of the spans that carry annotations. A big trace's spans (a SpanTable) are
    made into Span objects only when their JSON names annotations at all."""
    from tui.api.span_table import SpanTable  # loaded by the read that made these spans

    table = spans if isinstance(spans, SpanTable) else None
    found: set[int] = set()
    for i in range(len(spans)):
        if table is not None and ANNOTATED_IN_JSON not in table.json_of(i):
            continue
        if summary_of(spans[i]):
            found.add(i)
    return found
