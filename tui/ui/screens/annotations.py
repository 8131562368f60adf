"""The annotations of one trace (its own and its spans') or one session, newest first: a row each
(what, on what, who, when), and under the rows the selected one whole, its note's every line.
`e` edits it (the annotate form), `d` deletes it (after a yes), `A` adds one. Leaving hands the
screen beneath the list as it now is, when anything changed, so its marks follow."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from tui.api import ApiError
from tui.api.annotation_records import Annotation
from tui.model import formatting as fmt
from tui.model.annotations import (
    MARK,
    NOTE_MARK,
    annotation_lines,
    target_text,
    value_text,
)
from tui.model.text import safe_text
from tui.ui.screens.annotate_form import AnnotateForm, AnnotateWhat, Written
from tui.ui.screens.annotation_actions import AnnotationsOf, said
from tui.ui.screens.base import AppScreenOf, error_line
from tui.ui.widgets.key_footer import KeyFooter
from tui.ui.widgets.status_bar import StatusBar
from tui.ui.widgets.table import Column, Table

COLUMNS = (
    Column("Annotation", least=12, most=40, share=3),
    Column("On", least=8, most=30, share=2),
    Column("By", least=8, most=24, share=1, optional=True),
    Column("When", least=8),
)
EMPTY = Text("No annotations here yet: A writes one.")


class AnnotationsScreen(AppScreenOf[list[Annotation] | None]):
    """A full screen (so `?` lists its keys) that hands back the target's annotations when they
    changed."""

    BINDINGS = [
        Binding("escape", "back", "Back", id="annotations.back"),
        Binding("A", "add", "Add", id="annotations.add", tooltip="Write another annotation"),
        Binding("e", "edit", "Edit", id="annotations.edit", tooltip="Change this annotation"),
        Binding("d", "delete", "Delete", id="annotations.delete", tooltip="Delete it (asks)"),
        Binding("r", "refresh", "Refresh", id="annotations.refresh"),
    ]
    DEFAULT_CSS = """
    AnnotationsScreen { background: $background; }
    AnnotationsScreen #header { height: auto; background: $boost; padding: 0 1; }
    AnnotationsScreen Table { height: 2fr; }
    AnnotationsScreen #whole { height: 3fr; border-top: solid $primary-darken-2; padding: 0 1; }
    """

    def __init__(self, of: AnnotationsOf) -> None:
        super().__init__()
        self.of = of
        self.annotations: list[Annotation] = []
        self.changed = False
        self.state = "loading…"

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        yield Table(COLUMNS)
        with VerticalScroll(id="whole", can_focus=False):
            yield Static(id="text")
        yield StatusBar()
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(Table).focus()
        self.action_refresh()

    def action_refresh(self) -> None:
        self.state = "loading…"
        self.update_header()
        of = self.of
        self.call_api(
            lambda client: client.list_annotations(of.project_id, of.target),
            self._loaded,
            group="annotations",
            failed=self._failed,
            retry=self.action_refresh,
            project_id=of.project_id,
        )

    def _failed(self, error: ApiError) -> None:
        self.state = error_line(error)  # what was listed stays
        self.update_header()

    def _loaded(self, annotations: list[Annotation]) -> None:
        self.annotations = annotations
        self.state = fmt.counted(len(annotations), "annotation")
        self.show_rows()

    def show_rows(self) -> None:
        now = self.tui.now()
        table = self.query_one(Table)
        rows = []
        for annotation in self.annotations:
            mark = NOTE_MARK if annotation.is_note else MARK
            what = (
                f"{mark} {annotation.name or '?'} {value_text(annotation.label, annotation.score)}"
            )
            if annotation.is_note and annotation.explanation:
                what = f"{mark} {annotation.explanation.splitlines()[0] if annotation.explanation.strip() else ''}"
            cells = (
                what.rstrip(),
                target_text(annotation, self.of.span_names),
                annotation.author or "–",
                fmt.ago(annotation.updated_at or annotation.created_at, now),
            )
            rows.append((cells, annotation.id))
        table.set_rows(rows)
        table.empty_text = EMPTY
        self.update_header()
        self.show_whole()

    def update_header(self) -> None:
        text = Text("Annotations of ", style="bold")
        text.append_text(safe_text(self.of.title, 60, style="bold"))
        text.append(" · ")
        text.append_text(safe_text(self.state, 100, style="italic"))
        self.query_one("#header", Static).update(text)

    @property
    def selected(self) -> Annotation | None:
        row = self.query_one(Table).cursor_row
        return self.annotations[row] if 0 <= row < len(self.annotations) else None

    def on_data_table_row_highlighted(self, _event: DataTable.RowHighlighted) -> None:
        self.show_whole()

    def show_whole(self) -> None:
        selected = self.selected
        text = self.query_one("#text", Static)
        if selected is None:
            text.update(Text(""))
            return
        text.update(Group(*annotation_lines([selected], self.tui.now(), self.of.span_names)))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("edit", "delete"):
            return self.selected is not None
        return super().check_action(action, parameters)

    def action_back(self) -> None:
        self.dismiss(self.annotations if self.changed else None)

    def _form(self, what: AnnotateWhat) -> None:
        def written(result: Written | None) -> None:
            if result is None:
                return
            self.notify(said(result), title="Annotated", timeout=5)
            self.changed = True
            self.action_refresh()

        self.tui.push_screen(AnnotateForm(what, self.tui.verdicts), written)

    def action_add(self) -> None:
        of = self.of
        self._form(AnnotateWhat(of.project_id, of.title, ((of.title, of.target),)))

    def action_edit(self) -> None:
        annotation = self.selected
        if annotation is not None:
            title = f"{annotation.name} on {target_text(annotation, self.of.span_names)}"
            self._form(AnnotateWhat(self.of.project_id, title, editing=annotation))

    def action_delete(self) -> None:
        annotation = self.selected
        if annotation is None:
            return
        from tui.ui.screens.dialogs import ConfirmDialog

        question = Text("Delete ", style="bold")
        question.append_text(safe_text(annotation.name or "this annotation", 64, style="bold"))
        question.append(" on ")
        question.append_text(safe_text(target_text(annotation, self.of.span_names), 60))
        question.append("?")
        project_id = self.of.project_id

        def deleted(_: None) -> None:
            self.annotations = [a for a in self.annotations if a.id != annotation.id]
            self.changed = True
            self.state = fmt.counted(len(self.annotations), "annotation")
            self.notify(f"Deleted {annotation.name or 'the annotation'}.", timeout=4)
            self.show_rows()

        def answered(yes: bool | None) -> None:
            if yes:
                self.call_api(
                    lambda client: client.delete_annotation(project_id, annotation),
                    deleted,
                    group="annotation-delete",
                    project_id=project_id,
                )

        detail = "By " + (annotation.author or "someone") + ". It cannot be undone."
        self.tui.push_screen(ConfirmDialog(question, detail), answered)
