"""Annotating from the trace detail (mixed into TraceDetailScreen, tui/ui/screens/trace_detail.py):
`A` annotates the span under the tree's cursor or, by ctrl+t in the form, the whole trace; `v`
lists the trace's annotations and its spans', to read whole, edit and delete.

What is known is shown where people look: under the summary, a line of the trace's annotations
by name and the newest note (who, when, its first words; `v` reads it whole), and a ✎ on each
annotated span of the tree. Both follow what the form and the list change, without loading the
trace again."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from rich.text import Text

from tui.api import ApiError, Trace
from tui.api.annotation_records import Annotation, AnnotationTarget
from tui.api.annotation_source import Vocabulary
from tui.model import formatting as fmt
from tui.model.annotations import (
    NOTE_MARK,
    digest,
    names_and_labels,
    summary_from,
    summary_of,
    with_annotation,
)
from tui.model.text import safe_text
from tui.ui.screens.annotate_form import AnnotateWhat, Written
from tui.ui.screens.annotation_actions import AnnotationActions, AnnotationsOf
from tui.ui.widgets.span_tree import SpanTreeView

if TYPE_CHECKING:
    from datetime import datetime

    from textual.screen import Screen

    from tui.model.spans import TraceTree

NOTE_WORDS = 200  # the newest note's words in the summary's line (v reads it whole)


class DetailAnnotating(AnnotationActions):
    """The trace detail's annotation keys, and what it shows of the trace's annotations."""

    if TYPE_CHECKING:
        project_id: str | None
        trace_id: str
        trace: Trace | None
        trace_tree: TraceTree | None

        def call_api(self, *args: Any, **kwargs: Any) -> Any: ...
        def show_summary(self) -> None: ...

    marked: set[int]  # the positions of annotated spans
    newest_note: Annotation | None = None

    def _views(self) -> list[SpanTreeView]:
        return list(cast("Screen[Any]", self).query(SpanTreeView))

    def _project(self) -> str | None:
        trace = self.trace
        return (trace.project_id if trace is not None else None) or self.project_id

    def _span_at_cursor(self) -> tuple[int, Any] | None:
        for view in self._views():
            position = view.position
            if position is not None and self.trace_tree is not None:
                return position, self.trace_tree.spans[position]
        return None

    def annotate_what(self) -> AnnotateWhat | None:
        project, tree = self._project(), self.trace_tree
        if project is None or tree is None:
            return None
        whole = ("the whole trace", AnnotationTarget.trace(self.trace_id))
        seed = Vocabulary()
        for name, label in names_and_labels([summary_of(self.trace)]):
            seed.add(name, label)
        at = self._span_at_cursor()
        title = f"trace {self.trace_id[:12]}…"
        if at is None or not at[1].id:
            return AnnotateWhat(project, title, (whole,), seed=seed)
        span = at[1]
        words = f"span {span.name or span.id}"
        choice = (words, AnnotationTarget.span(self.trace_id, span.id))
        # The title names the trace; the line under it, which of the two is chosen (ctrl+t).
        return AnnotateWhat(project, title, (choice, whole), seed=seed)

    def annotations_of(self) -> AnnotationsOf | None:
        project, tree = self._project(), self.trace_tree
        if project is None or tree is None:
            return None
        names = {}
        for position in self.marked:
            span = tree.spans[position]
            if span.id:
                names[span.id] = span.name or span.id
        target = AnnotationTarget.trace(self.trace_id)
        return AnnotationsOf(project, target, f"trace {self.trace_id[:12]}…", names)

    # -- keeping what is shown current -----------------------------------------------------------

    def annotations_written(self, written: Written) -> None:
        trace = self.trace
        if trace is None:
            return
        for annotation in written.stored:
            trace.annotations = with_annotation(trace.annotations, annotation)
            if annotation.is_note:
                self.newest_note = annotation
            self._mark(annotation)
        self.show_summary()

    def annotations_listed(self, of: AnnotationsOf, annotations: list[Annotation]) -> None:
        trace = self.trace
        if trace is None:
            return
        trace.annotations = summary_from(annotations)
        self.marked.clear()
        for annotation in annotations:
            self._mark(annotation)
        self.newest_note = next((a for a in annotations if a.is_note), None)
        for view in self._views():
            view.refresh()
        self.show_summary()

    def _mark(self, annotation: Annotation) -> None:
        tree = self.trace_tree
        if tree is None or annotation.target.kind != "span" or annotation.span_id is None:
            return
        try:
            position = tree.keys.index(annotation.span_id)
        except ValueError:
            return
        self.marked.add(position)
        for view in self._views():
            view.marked = self.marked
            view.refresh()

    def load_notes(self) -> None:
        """The trace's newest note, for the summary's line (a trace without notes asks
        nothing)."""
        project = self._project()
        summary = summary_of(self.trace)
        if project is None or not summary or "note" not in summary:
            return
        target = AnnotationTarget.trace(self.trace_id)

        def listed(notes: list[Annotation]) -> None:
            self.newest_note = notes[0] if notes else None
            self.show_summary()

        def failed(_error: ApiError) -> bool:
            return True  # the line says the names and counts without it

        self.call_api(
            lambda client: client.list_annotations(project, target, "note"),
            listed,
            group="notes",
            failed=failed,
            project_id=project,
            quiet=True,
        )

    def annotation_lines(self, now: datetime) -> list[Text]:
        """Under the summary: the annotations by name, then the newest note."""
        summary = summary_of(self.trace)
        if not summary:
            return []
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(f"{NOTE_MARK} ", style="bold yellow")
        line.append_text(digest(summary))
        line.append("  v reads them whole", style="dim")
        lines = [line]
        note = self.newest_note
        if note is not None and note.explanation:
            said = Text(no_wrap=True, overflow="ellipsis")
            said.append("  “", style="dim")
            said.append_text(safe_text(" ".join(note.explanation.split()), NOTE_WORDS))
            said.append("” ", style="dim")
            said.append_text(safe_text(note.author or "someone", 40, style="italic"))
            when = note.updated_at or note.created_at
            if when is not None:
                said.append(f", {fmt.ago(when, now)}", style="dim")
            lines.append(said)
        return lines
