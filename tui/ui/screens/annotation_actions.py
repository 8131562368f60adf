"""The annotation keys a screen shares: `A` annotates what the cursor is on (the annotate form,
tui/ui/screens/annotate_form.py), `v` lists the annotations of what it is on, to read whole,
edit and delete (the annotations screen, through the app's navigation).

A server known to keep no annotations gets a plain sentence instead of a form; one not yet
known gets the form, which learns it and keeps what was typed (annotate_form.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual.binding import Binding

from tui.api.annotation_records import Annotation, AnnotationTarget
from tui.model import formatting as fmt
from tui.model.annotations import value_text
from tui.ui.screens.annotate_form import AnnotateForm, AnnotateWhat, Written

if TYPE_CHECKING:
    from tui.ui.app import TraceTuiApp


def annotation_bindings(
    prefix: str, what: str, show: bool = True, listed: str | None = None
) -> list[Binding]:
    """The two keys, with ids under `prefix` (traces, detail, sessions, session): `A` annotates
    `what`, `v` lists the annotations of `listed` (default: `what`); `show`: `A` in the footer
    (else offered there when there is room: FOOTER_WHEN_ROOM)."""
    return [
        Binding(
            "A",
            "annotate",
            "Annotate",
            show=show,
            id=f"{prefix}.annotate",
            tooltip=f"Annotate {what}: a label, a score, a note; or a quick verdict (1, 2, 3…)",
        ),
        Binding(
            "v",
            "annotations",
            "Notes",
            show=False,
            id=f"{prefix}.annotations",
            tooltip=f"The annotations and notes of {listed or what}, whole: edit (e), delete (d)",
        ),
    ]


@dataclass(frozen=True)
class AnnotationsOf:
    """What `v` lists: a target's annotations (a trace's own and its spans'), its words for the
    header, and the names of its spans (to say which span a note is on)."""

    project_id: str
    target: AnnotationTarget
    title: str
    span_names: dict[str, str] = field(default_factory=dict)


class AnnotationActions:
    """Mixed into a screen that says what its cursor is on (`annotate_what`, `annotations_of`)
    and shows what was written (`annotations_written`, `annotations_listed`)."""

    if TYPE_CHECKING:
        tui: TraceTuiApp

        def notify(self, *args: Any, **kwargs: Any) -> None: ...

    def annotate_what(self) -> AnnotateWhat | None:
        raise NotImplementedError

    def annotations_of(self) -> AnnotationsOf | None:
        raise NotImplementedError

    def annotations_written(self, written: Written) -> None:
        """The form stored (or changed) these: show them."""

    def annotations_listed(self, of: AnnotationsOf, annotations: list[Annotation]) -> None:
        """The annotations screen closed after a change: these are the target's now."""

    def annotations_refused(self) -> bool:
        """Whether the server is known to keep no annotations (then said plainly)."""
        try:
            client = self.tui.client
        except RuntimeError:  # still loading: the form finds out
            return False
        if client.offers_known and not client.offers.annotations:
            self.notify(
                f"This {client.server_name} server keeps no annotations: there is nowhere to "
                "write one.",
                title="No annotations here",
                severity="warning",
                timeout=8,
            )
            return True
        return False

    def action_annotate(self) -> None:
        if self.annotations_refused():
            return
        what = self.annotate_what()
        if what is None:
            self.notify("Nothing to annotate here yet: the cursor is on no row.", timeout=4)
            return
        self.open_form(what)

    def open_form(self, what: AnnotateWhat) -> None:
        def written(result: Written | None) -> None:
            if result is not None:
                self.notify(said(result), title="Annotated", timeout=5)
                self.annotations_written(result)

        self.tui.push_screen(AnnotateForm(what, self.tui.verdicts), written)

    def action_annotations(self) -> None:
        if self.annotations_refused():
            return
        of = self.annotations_of()
        if of is None:
            self.notify("Nothing here has annotations to list yet.", timeout=4)
            return

        def closed(annotations: list[Annotation] | None) -> None:
            if annotations is not None:
                self.annotations_listed(of, annotations)

        self.tui.open_annotations(of, closed)


def said(written: Written) -> str:
    """What a toast says of what the form did."""
    if written.edited:
        return "Saved the change."
    if not written.stored:
        return f"Annotated {fmt.counted(written.targets, 'trace')}."
    first = written.stored[0]
    value = value_text(first.label, first.score)
    what = f"{first.name} {value}".strip() if not first.is_note else "the note"
    where = first.target.kind
    return f"Stored {what} on the {where}" + (f" (by {first.author})." if first.author else ".")
