"""Annotating from the trace list (mixed into TracesScreen, tui/ui/screens/traces.py): `A` on the
selected trace, `v` its annotations, and `B` every trace the current query matches, which first
pages through them to say how many (at most MAX_BULK), then opens the form on all of them.

The list's rows keep their annotations' summary current as the form writes (the mark column
appears once a row has one), and after a bulk write the list is loaded again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from textual.binding import Binding

from tui.api import Trace
from tui.api.annotation_records import Annotation, AnnotationTarget
from tui.api.annotation_source import Vocabulary
from tui.api.pages import every_page
from tui.model.annotations import names_and_labels, summary_from, summary_of, with_annotation
from tui.model.trace_list import TraceListState
from tui.model.trace_list_rows import filtered, row_texts
from tui.ui.screens.annotate_form import AnnotateWhat, Written
from tui.ui.screens.annotation_actions import AnnotationActions, AnnotationsOf
from tui.ui.widgets.trace_table import TraceTable

if TYPE_CHECKING:
    from datetime import datetime

    from textual.screen import Screen

    from tui.api import TraceSource

MAX_BULK = 10_000  # traces one bulk write annotates at most: ten POSTs
BULK_PAGE = 500

BULK_BINDING = Binding(
    "B",
    "annotate_all",
    "Annotate all",
    show=False,
    id="traces.annotate_all",
    tooltip="Annotate every trace the query matches (says how many first)",
)


def trace_title(trace: Trace) -> str:
    """A trace in a form's title: `trace 4bf92f3577b3… checkout`."""
    name = f" {trace.name}" if trace.name else ""
    return f"trace {(trace.id or '?')[:12]}…{name}"


def seed_of(traces: Sequence[Any]) -> Vocabulary:
    """The names and labels the loaded rows carry, for the form's completion."""
    vocabulary = Vocabulary()
    for name, label in names_and_labels(summary_of(trace) for trace in traces):
        vocabulary.add(name, label)
    return vocabulary


@dataclass(frozen=True)
class Matching:
    """The traces a query matches over the list's range: their ids (MAX_BULK at most, and
    `more` when there were more), and the words that say which."""

    ids: list[str]
    more: bool
    words: str


async def matching_traces(
    client: TraceSource, project_id: str, state: TraceListState, now: datetime
) -> Matching:
    """Every trace of the range the list's query (and errors-only) keeps: what the server
    filters, asked of it; what it does not, applied to each page here."""
    start, end = state.time_range.bounds(now)
    asked, here = state.asked, state.query_here
    ids: list[str] = []
    pages = every_page(
        lambda after: client.list_traces(
            project_id, start=start, end=end, limit=BULK_PAGE, after=after, filters=asked
        )
    )
    async for page in pages:
        rows, _ = filtered(page.items, row_texts(page.items), here)
        if state.errors_here:
            rows = [row for row in rows if row.is_error]
        ids += [row.id for row in rows if row.id]
        if len(ids) > MAX_BULK:
            return Matching(ids[:MAX_BULK], True, "")
    words = " · ".join(
        part for part in (state.query_text, "errors only" if state.errors_only else "") if part
    )
    return Matching(ids, False, f"{words or 'every trace'}, {state.time_range.label}")


class TraceListAnnotating(AnnotationActions):
    """The trace list's annotation keys."""

    if TYPE_CHECKING:
        project_id: str
        traces: list[Trace]
        state: TraceListState

        def call_api(self, *args: Any, **kwargs: Any) -> Any: ...
        def update_position(self) -> None: ...
        def action_refresh(self) -> None: ...

    def _table(self) -> TraceTable:
        return cast("Screen[Any]", self).query_one(TraceTable)

    def selected_trace(self) -> Trace | None:
        trace = self._table().selected
        return trace if trace is not None and trace.id else None

    def annotate_what(self) -> AnnotateWhat | None:
        trace = self.selected_trace()
        if trace is None or trace.id is None:
            return None
        title = trace_title(trace)
        target = AnnotationTarget.trace(trace.id)
        return AnnotateWhat(self.project_id, title, ((title, target),), seed=seed_of(self.traces))

    def annotations_of(self) -> AnnotationsOf | None:
        trace = self.selected_trace()
        if trace is None or trace.id is None:
            return None
        return AnnotationsOf(self.project_id, AnnotationTarget.trace(trace.id), trace_title(trace))

    def annotations_written(self, written: Written) -> None:
        if not written.stored:  # a bulk write: every row may have changed
            self.action_refresh()
            return
        by_id = {trace.id: trace for trace in self.traces}
        for annotation in written.stored:
            trace = by_id.get(annotation.trace_id)
            if trace is not None:
                trace.annotations = with_annotation(trace.annotations, annotation)
        self.rows_annotated()

    def annotations_listed(self, of: AnnotationsOf, annotations: list[Annotation]) -> None:
        for trace in self.traces:
            if trace.id == of.target.trace_id:
                trace.annotations = summary_from(annotations)
        self.rows_annotated()

    def rows_annotated(self) -> None:
        """A row's annotations changed here: the marks and the selected row's line follow."""
        table = self._table()
        table.marks = True
        self.took_in_annotations()
        table.refresh()
        self.update_position()

    def took_in_annotations(self) -> None:
        """Done by the screen: what it draws of annotations besides the rows."""

    def action_annotate_all(self) -> None:
        """Every trace the query matches, counted first, then the form on all of them."""
        if self.annotations_refused():
            return
        project_id, state = self.project_id, self.state
        self.notify("Counting the traces the query matches…", timeout=3)

        def counted(matching: Matching) -> None:
            if matching.more:
                self.notify(
                    f"More than {MAX_BULK:,} traces match: narrow the query or the range "
                    f"(a bulk write annotates {MAX_BULK:,} at most).",
                    severity="warning",
                    timeout=8,
                )
                return
            if not matching.ids:
                self.notify("No trace matches: there is nothing to annotate.", timeout=5)
                return
            count = len(matching.ids)
            title = f"{count:,} trace{'s' if count != 1 else ''}: {matching.words}"
            targets = tuple(AnnotationTarget.trace(trace_id) for trace_id in matching.ids)
            self.open_form(AnnotateWhat(project_id, title, many=targets, seed=seed_of(self.traces)))

        self.call_api(
            lambda client: matching_traces(client, project_id, state, self.tui.now()),
            counted,
            group="bulk-count",
            project_id=project_id,
        )
