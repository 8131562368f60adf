"""The annotate form, a modal that fits 80x24: what the cursor is on (a trace, a span or its whole
trace, a session; or every trace a query matches), a line of quick verdicts (one digit writes
one), then name (completed from the project's names), label (from that name's labels), score
and note. It also edits one annotation (a PATCH of what changed).

Nothing typed is lost: a refusal shows beside its field, any other failure under the fields,
and the form stays. A write whose outcome is unknown is looked for before it is sent again
(never twice), and a server that keeps no annotations is said so, with ctrl+g to copy what was
written. A bulk write goes batch after batch (tui/api/annotation_batches.py), saying how far it
got, and goes on from there."""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.suggester import SuggestFromList
from textual.widgets import Input, Label, Static, TextArea

from tui.api import ApiError, NotOffered, TraceSource, ValidationFailed
from tui.api.annotation_batches import BatchedWrite, Values
from tui.api.annotation_records import (
    Annotation,
    AnnotationChange,
    AnnotationDraft,
    AnnotationTarget,
)
from tui.api.annotation_source import Vocabulary
from tui.model.text import safe_text
from tui.model.verdicts import Verdict
from tui.ui.screens.base import AppModal, error_line
from tui.ui.widgets.verdict_line import VerdictLine

FIELDS = ("name", "label", "score", "note")
# A server's field (`data[0].explanation`, `result.label`) -> the form's.
SERVER_FIELDS = {"name": "name", "label": "label", "score": "score", "explanation": "note"}
TITLE_SHOWN = 68


@dataclass(frozen=True)
class AnnotateWhat:
    """What the form writes on: the first of `choices` ((words, target): a span and its whole
    trace, ctrl+t switches), or each of `many` (bulk); or the annotation `editing`."""

    project_id: str
    title: str
    choices: tuple[tuple[str, AnnotationTarget], ...] = ()
    many: tuple[AnnotationTarget, ...] = ()
    editing: Annotation | None = None
    seed: Vocabulary = field(default_factory=Vocabulary)  # names and labels already loaded


@dataclass(frozen=True)
class Written:
    """What the form did: the annotations stored or changed (none listed for a bulk write, whose
    `targets` says how many got one)."""

    stored: list[Annotation]
    targets: int = 1
    edited: bool = False


def form_field(server_field: str) -> str | None:
    """The form's field for a server's field path (`data[3].score` -> score), if it has one."""
    parts = [p for p in re.split(r"[.\[\]]", server_field) if p and not p.isdigit()]
    return SERVER_FIELDS.get(parts[-1]) if parts else None


class AnnotateForm(AppModal[Written | None]):
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="annotate.cancel"),
        Binding("ctrl+s", "save", "Save", id="annotate.save", tooltip="Write the annotation"),
        Binding(
            "ctrl+t",
            "switch_target",
            "Span/trace",
            id="annotate.target",
            tooltip="Annotate the span or its whole trace",
        ),
        Binding(
            "ctrl+g",
            "copy",
            "Copy",
            id="annotate.copy",
            tooltip="Copy what is written here (OSC 52)",
        ),
    ]
    DEFAULT_CSS = """
    AnnotateForm { align: center middle; }
    AnnotateForm > VerticalScroll { width: 76; max-width: 100%; height: auto; max-height: 100%; border: thick $primary; background: $surface; padding: 0 1; }
    AnnotateForm .title { text-style: bold; }
    AnnotateForm #target { color: $text-muted; }
    AnnotateForm VerdictLine { margin: 1 0 0 0; }
    AnnotateForm Input { border: none; height: 1; padding: 0 1; background: $boost; color: $text; }
    AnnotateForm Input:focus { border: none; background: $primary 30%; }
    AnnotateForm Input.-field-error, AnnotateForm TextArea.-field-error { background: $error 30%; }
    AnnotateForm TextArea { height: 4; border: none; padding: 0 1; background: $boost; }
    AnnotateForm TextArea:focus { border: none; background: $primary 30%; }
    AnnotateForm .field-error, AnnotateForm #form-error { color: $text-error; height: auto; }
    AnnotateForm #hint { color: $text-muted; }
    """

    def __init__(self, what: AnnotateWhat, verdicts: Sequence[Verdict] = ()) -> None:
        super().__init__()
        self.what = what
        self.verdicts = () if what.editing is not None or not verdicts else tuple(verdicts)
        self.choice = 0
        self.vocabulary = Vocabulary({k: list(v) for k, v in what.seed.labels.items()})
        for verdict in self.verdicts:
            self.vocabulary.add(verdict.name, verdict.label)
        self.submitting = False
        self.idempotency_key = uuid.uuid4().hex
        self._sent: dict[str, str] | None = None
        self.outcome_unknown = False  # a write may have been carried out: look before resending
        self.batched = BatchedWrite(what.project_id, what.many) if what.many else None

    # -- drawing ---------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        editing = self.what.editing
        with VerticalScroll(can_focus=False):
            verb = "Edit" if editing is not None else "Annotate"
            yield Static(safe_text(f"{verb} {self.what.title}", TITLE_SHOWN), classes="title")
            if len(self.what.choices) > 1:
                yield Static(id="target")
            if self.verdicts:
                yield VerdictLine(self.verdicts)
            initial = self._initial()
            for name in FIELDS:
                yield Label(
                    {
                        "name": "Name (e.g. correctness, root_cause, note)",
                        "label": "Label",
                        "score": "Score (a number)",
                        "note": "Note (explanation)",
                    }[name]
                )
                if name == "note":
                    yield TextArea(initial[name], id="field-note", soft_wrap=True)
                else:
                    yield Input(initial[name], id=f"field-{name}")
                error = Static("", classes="field-error", id=f"error-{name}")
                error.display = False
                yield error
            yield Static("", id="form-error")
            yield Static(Text(self._hint()), id="hint")

    def _initial(self) -> dict[str, str]:
        editing = self.what.editing
        if editing is None:
            return dict.fromkeys(FIELDS, "")
        score = editing.score
        return {
            "name": editing.name or "",
            "label": editing.label or "",
            "score": "" if score is None else f"{score:g}",
            "note": editing.explanation or "",
        }

    def _hint(self) -> str:
        parts = ["ctrl+s saves", "esc cancels", "tab moves"]
        if len(self.what.choices) > 1:
            parts.append("ctrl+t: span or whole trace")
        return " · ".join(parts)

    def on_mount(self) -> None:
        self._show_target()
        if self.verdicts:
            self.query_one(VerdictLine).focus()
        else:
            self.query_one("#field-name", Input).focus()
        self._suggest()
        if self.what.editing is None:
            self.call_api(
                lambda client: client.annotation_vocabulary(self.what.project_id),
                self._learnt,
                group="vocabulary",
                failed=self._vocabulary_failed,
                project_id=self.what.project_id,
                quiet=True,
            )

    def _show_target(self) -> None:
        if len(self.what.choices) < 2:
            return
        line = Text("on: ")
        for index, (words, _) in enumerate(self.what.choices):
            if index:
                line.append("  ·  ", style="dim")
            line.append_text(
                safe_text(words, 40, style="bold reverse" if index == self.choice else "")
            )
        self.query_one("#target", Static).update(line)

    def _learnt(self, vocabulary: Vocabulary) -> None:
        for name, labels in vocabulary.labels.items():
            self.vocabulary.add(name)
            for label in labels:
                self.vocabulary.add(name, label)
        self._suggest()

    def _vocabulary_failed(self, error: ApiError) -> bool:
        if isinstance(error, NotOffered):
            self.not_kept(error)
        return True  # the form works without completion

    def _suggest(self) -> None:
        names = [name for name in self.vocabulary.names if name]
        self.query_one("#field-name", Input).suggester = SuggestFromList(
            names, case_sensitive=False
        )
        self._suggest_labels()

    @on(Input.Changed, "#field-name")
    def _suggest_labels(self) -> None:
        name = self.query_one("#field-name", Input).value.strip()
        labels = self.vocabulary.labels.get(name, [])
        self.query_one("#field-label", Input).suggester = SuggestFromList(
            labels, case_sensitive=False
        )

    # -- the values ------------------------------------------------------------------------------

    def values(self) -> dict[str, str]:
        values = {name: self.query_one(f"#field-{name}", Input).value for name in FIELDS[:3]}
        values["note"] = self.query_one("#field-note", TextArea).text
        return values

    @staticmethod
    def read(values: dict[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
        """The typed values read (name, label, score, explanation), and what is wrong with them
        by field."""
        errors: dict[str, str] = {}
        score: float | None = None
        if values["score"].strip():
            try:
                score = float(values["score"])
                if not math.isfinite(score):
                    raise ValueError
            except ValueError:
                errors["score"] = "A number, e.g. 0.2 or 1."
        read = {
            "name": values["name"].strip(),
            "label": values["label"].strip() or None,
            "score": score,
            "explanation": values["note"].strip() or None,
        }
        return read, errors

    def show_errors(self, errors: dict[str, str], form_error: str = "") -> None:
        for name in FIELDS:
            message = errors.get(name, "")
            error = self.query_one(f"#error-{name}", Static)
            error.update(safe_text(message, multiline=True))
            error.display = bool(message)
            self.query_one(f"#field-{name}").set_class(bool(message), "-field-error")
        self.say(form_error)

    def say(self, text: str) -> None:
        self.query_one("#form-error", Static).update(safe_text(text, multiline=True))

    # -- actions ---------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "switch_target":
            return len(self.what.choices) > 1
        return super().check_action(action, parameters)

    def action_switch_target(self) -> None:
        self.choice = (self.choice + 1) % len(self.what.choices)
        self._show_target()

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_copy(self) -> None:
        values = self.values()
        text = "\n".join(f"{name}: {values[name]}" for name in FIELDS[:3] if values[name].strip())
        if values["note"].strip():
            text += ("\n" if text else "") + "note:\n" + values["note"]
        self.tui.copy_text(text or "(nothing written)", "annotation as written")

    def not_kept(self, error: ApiError) -> None:
        self.submitting = False
        self.say(f"{error.message} Nothing was sent: what you wrote stays here; ctrl+g copies it.")

    @on(VerdictLine.Chosen)
    def _verdict(self, event: VerdictLine.Chosen) -> None:
        verdict = event.verdict
        self.query_one("#field-name", Input).value = verdict.name
        label = self.query_one("#field-label", Input)
        label.value = verdict.label or ""
        score = "" if verdict.score is None else f"{verdict.score:g}"
        self.query_one("#field-score", Input).value = score
        if verdict.complete:
            self.action_save()
        else:
            label.focus()

    @on(Input.Submitted)
    def action_save(self) -> None:
        if self.submitting:
            return  # never two writes for one press
        values = self.values()
        read, errors = self.read(values)
        target = self.what.choices[self.choice][1] if self.what.choices else AnnotationTarget()
        if self.what.many:
            target = self.what.many[0]
        editing = self.what.editing
        if editing is not None:
            target = editing.target
        draft = AnnotationDraft(target, **read)
        for name, message in draft.problems().items():
            errors.setdefault("note" if name == "explanation" else name, message)
        self.show_errors(errors)
        if errors:
            return
        if self._sent is not None and values != self._sent:
            self.idempotency_key = uuid.uuid4().hex  # other values: another write
        self._sent = values
        self.submitting = True
        if editing is not None:
            self._edit(editing, read)
        elif self.batched is not None:
            self._write_many(Values(**read))
        else:
            self._write_one(draft)

    def _write_one(self, draft: AnnotationDraft) -> None:
        look_first, key, project = self.outcome_unknown, self.idempotency_key, self.what.project_id
        self.say("Saving…")

        async def send(client: TraceSource) -> Written:
            if look_first:
                earlier = await client.find_annotation(project, draft)
                if earlier is not None:
                    self.notify("The earlier attempt had stored it; nothing was sent again.")
                    return Written([earlier])
            return Written(await client.create_annotations(project, [draft], key))

        self.call_api(send, self._done, group="annotate", failed=self._failed, quiet=True)

    def _edit(self, annotation: Annotation, read: dict[str, Any]) -> None:
        before = {
            "name": annotation.name,
            "label": annotation.label,
            "score": annotation.score,
            "explanation": annotation.explanation,
        }
        changes = {k: v for k, v in read.items() if v != before[k]}
        if not changes:
            self.submitting = False
            self.dismiss(None)
            return
        self.say("Saving…")
        project, change = self.what.project_id, AnnotationChange(changes)
        self.call_api(
            lambda client: client.update_annotation(project, annotation, change),
            lambda changed: self._done(Written([changed], edited=True)),
            group="annotate",
            failed=self._failed,
            quiet=True,
        )

    def _write_many(self, values: Values) -> None:
        batched = self.batched
        assert batched is not None
        total = len(batched.targets)

        def progress(write: BatchedWrite) -> None:
            self.say(f"Stored {write.targets_stored:,} of {total:,} traces…")

        progress(batched)
        self.call_api(
            lambda client: batched.run(client, values, progress),
            lambda _: self._done(Written([], targets=total)),
            group="annotate",
            failed=self._failed,
            quiet=True,
        )

    def _done(self, written: Written) -> None:
        self.submitting = False
        self.dismiss(written)  # not awaited: this runs in the form's own worker

    def _failed(self, error: ApiError) -> bool:
        self.submitting = False
        if isinstance(error, NotOffered):
            self.not_kept(error)
            return True
        if isinstance(error, ValidationFailed):
            placed: dict[str, str] = {}
            unplaced = []
            for path, message in error.field_messages().items():
                name = form_field(path)
                if name is not None:
                    placed.setdefault(name, message)
                else:
                    unplaced.append(f"{path}: {message}")
            self.show_errors(placed, "\n".join([error.message, *unplaced]))
            return True
        self.outcome_unknown = self.outcome_unknown or error.outcome_unknown
        self.say(f"{error_line(error)} — {self.retry_text()}")
        return False  # the app learns of it too: a rate limit, a connection down

    def retry_text(self) -> str:
        batched = self.batched
        if batched is not None and batched.stored:
            done = f"{batched.targets_stored:,} of {len(batched.targets):,} traces are stored"
            return f"{done}; ctrl+s goes on from there, sending none twice."
        if self.outcome_unknown or (batched is not None and batched.unknown):
            return "It may have been stored anyway: ctrl+s looks first, and sends it only if not."
        return "Nothing is lost: ctrl+s tries again."
