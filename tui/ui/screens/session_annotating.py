"""Annotating sessions (mixed into the sessions screens, tui/ui/screens/sessions.py): `A` annotates
the selected session (or the one open), `v` lists its annotations and notes to read whole, edit
and delete. The session open shows its notes above its conversation, each whole, with who wrote
it and when; they follow what the form and the list change."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tui.api import ApiError
from tui.api.annotation_records import Annotation, AnnotationTarget
from tui.api.models import Session
from tui.model import formatting as fmt
from tui.model.annotations import value_text
from tui.ui.screens.annotate_form import AnnotateWhat, Written
from tui.ui.screens.annotation_actions import AnnotationActions, AnnotationsOf
from tui.ui.widgets.blocks import Block, piece

if TYPE_CHECKING:
    from datetime import datetime


def session_title(session: Session) -> str:
    return f"session {session.id}"


class SessionAnnotating(AnnotationActions):
    """What both sessions screens share: the session the keys are about."""

    if TYPE_CHECKING:
        project_id: str

    def chosen_session(self) -> Session | None:
        raise NotImplementedError

    def annotate_what(self) -> AnnotateWhat | None:
        session = self.chosen_session()
        if session is None or not session.id:
            return None
        title = session_title(session)
        target = AnnotationTarget.session(session.id)
        return AnnotateWhat(self.project_id, title, ((title, target),))

    def annotations_of(self) -> AnnotationsOf | None:
        session = self.chosen_session()
        if session is None or not session.id:
            return None
        target = AnnotationTarget.session(session.id)
        return AnnotationsOf(self.project_id, target, session_title(session))


def note_blocks(annotations: list[Annotation], now: datetime) -> list[Block]:
    """A session's annotations above its conversation: a rule, then each one, newest first,
    its note whole below its header (what, who, when)."""
    if not annotations:
        return []
    blocks = [
        Block(
            [(f"── {fmt.counted(len(annotations), 'annotation')} of this session ", "dim")],
            rule=True,
        )
    ]
    for annotation in annotations:
        value = value_text(annotation.label, annotation.score)
        header = [
            ("✎ " if annotation.is_note else "◆ ", "key"),
            piece(annotation.name or "?", "key", 64),
        ]
        if value:
            header.append(piece(f" {value}", "", 200))
        header.append(piece(f" · {annotation.author or 'someone'}", "dim", 60))
        when = annotation.updated_at or annotation.created_at
        if when is not None:
            header.append((f" · {fmt.ago(when, now)}", "dim"))
        blocks.append(
            Block(header, annotation.explanation, copy=annotation.explanation, what="note")
        )
    return blocks


class OneSessionAnnotating(SessionAnnotating):
    """The session open: its notes, loaded with it and kept current."""

    if TYPE_CHECKING:
        session: Session

        def call_api(self, *args: Any, **kwargs: Any) -> Any: ...
        def show_document(self) -> None: ...

    notes: list[Annotation]

    def chosen_session(self) -> Session | None:
        return self.session

    def load_notes(self) -> None:
        session_id = self.session.id
        if not session_id:
            return
        target = AnnotationTarget.session(session_id)

        def listed(annotations: list[Annotation]) -> None:
            self.notes = annotations
            self.show_document()

        def failed(_error: ApiError) -> bool:
            return True  # a server without annotations: the conversation alone

        self.call_api(
            lambda client: client.list_annotations(self.project_id, target),
            listed,
            group="session-notes",
            failed=failed,
            project_id=self.project_id,
            quiet=True,
        )

    def annotations_written(self, written: Written) -> None:
        self.notes = [*written.stored, *self.notes]
        self.show_document()

    def annotations_listed(self, of: AnnotationsOf, annotations: list[Annotation]) -> None:
        self.notes = annotations
        self.show_document()
