"""The forms that change what exists (an alert, a project) and the one that makes a key: the
create forms' fields, checks and kept-on-failure behaviour (forms.py), filled in with the
record, sending only what changed. Shortening a project's retention first asks the server
(a dry run) how many traces that deletes, and asks the user when it is any."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.binding import Binding, BindingType

from tui.api import Alert, KeyInfo, Project, TraceSource
from tui.model.formatting import counted
from tui.model.text import notice
from tui.ui.screens.forms import AlertForm, CreateForm, FieldSpec, ProjectForm

SAVE_BINDINGS: list[BindingType] = [
    Binding("escape", "cancel", "Cancel", id="form.cancel"),
    Binding("ctrl+s", "submit", "Save", id="form.submit"),
]
SAVE_HINT = "ctrl+s saves · esc cancels · tab moves between fields"
SAVE_RETRY = "Press ctrl+s to retry: the same change sent twice is one change."


def number_text(value: float | None) -> str:
    """A threshold as typed: 2500, not 2500.0; every digit kept."""
    if value is None:
        return ""
    return str(int(value)) if value.is_integer() else repr(value)


@dataclass(frozen=True)
class LossToConfirm:
    """A retention change would delete `traces` stored traces: asked before it is sent."""

    traces: int


class AlertEditForm(AlertForm):
    """The alert form, filled in; ctrl+s sends the fields that changed."""

    BINDINGS = SAVE_BINDINGS
    HINT_TEXT = SAVE_HINT
    BUSY_TEXT = "Saving…"

    def __init__(self, project_id: str, alert: Alert) -> None:
        super().__init__(project_id, alert.name or "")
        self.alert = alert
        self.TITLE_TEXT = f"Edit alert {notice(alert.name or alert.id or '')}"
        self.initial = {
            "name": alert.name or "",
            "metric": alert.metric or "",
            "condition": alert.condition or "",
            "threshold": number_text(alert.threshold),
            "webhook_url": alert.webhook_url or "",
        }

    def changes(self, values: dict[str, str]) -> dict[str, Any]:
        body = self.draft(values).body()
        before = {
            "name": self.alert.name,
            "metric": self.alert.metric,
            "condition": self.alert.condition,
            "threshold": self.alert.threshold,
            "webhook_url": self.alert.webhook_url,
        }
        return {field: value for field, value in body.items() if before.get(field) != value}

    async def create(self, client: TraceSource, values: dict[str, str]) -> Alert:
        changes = self.changes(values)
        if not changes:
            return self.alert
        return await client.update_alert(self.project_id, self.alert.id or "", changes)

    async def find_earlier(self, client: TraceSource, values: dict[str, str]) -> Alert | None:
        return None  # a change sent again is the same change

    def retry_text(self) -> str:
        return SAVE_RETRY


class ProjectEditForm(ProjectForm):
    """The project form, filled in; a shorter retention is confirmed with what it deletes."""

    BINDINGS = SAVE_BINDINGS
    HINT_TEXT = SAVE_HINT
    BUSY_TEXT = "Saving…"

    def __init__(self, project: Project) -> None:
        super().__init__()
        self.project = project
        self.TITLE_TEXT = f"Edit project {notice(project.name or project.id or '')}"
        self.initial = {
            "name": project.name or "",
            "description": project.description or "",
            "retention_days": "" if project.retention_days is None else str(project.retention_days),
        }
        self.loss_confirmed_for: dict[str, Any] | None = None
        # A project with a retention keeps one: emptying the field is refused, not ignored.
        self.RETENTION_REQUIRED = project.retention_days is not None

    def changes(self, values: dict[str, str]) -> dict[str, Any]:
        fields = self.fields(values)
        changes: dict[str, Any] = {}
        if fields["name"] != self.project.name:
            changes["name"] = fields["name"]
        if (fields["description"] or "") != (self.project.description or ""):
            changes["description"] = fields["description"] or ""
        days = fields["retention_days"]
        if days is not None and days != self.project.retention_days:
            changes["retention_days"] = days
        return changes

    def shortens_retention(self, changes: dict[str, Any]) -> bool:
        days = changes.get("retention_days")
        before = self.project.retention_days
        return days is not None and (before is None or days < before)

    async def create(self, client: TraceSource, values: dict[str, str]) -> Any:
        """The project as saved, or LossToConfirm when the change would delete traces."""
        changes = self.changes(values)
        if not changes:
            return self.project
        project_id = self.project.id or ""
        if self.shortens_retention(changes) and self.loss_confirmed_for != changes:
            would = await client.update_project(project_id, changes, dry_run=True)
            if would.traces_to_delete:
                return LossToConfirm(would.traces_to_delete)
        return (await client.update_project(project_id, changes)).project

    async def find_earlier(self, client: TraceSource, values: dict[str, str]) -> Project | None:
        return None

    def retry_text(self) -> str:
        return SAVE_RETRY

    def _created(self, outcome: tuple[Any, bool]) -> None:
        result, _ = outcome
        if not isinstance(result, LossToConfirm):
            super()._created(outcome)
            return
        self.submitting = False
        from tui.ui.screens.dialogs import ConfirmDialog

        values = self.values()
        changes = self.changes(values)
        self.show_errors({}, "")

        def answered(yes: bool | None) -> None:
            if yes:
                self.loss_confirmed_for = changes
                self.submit(values)
            else:
                self.show_errors({}, "Not saved: the retention is as it was.")

        question = Text(
            f"A retention of {counted(changes.get('retention_days') or 0, 'day')} deletes "
            f"{counted(result.traces, 'stored trace')} now. Save?",
            style="bold",
        )
        self.app.push_screen(ConfirmDialog(question, "They cannot be brought back."), answered)


class KeyLabelForm(CreateForm):
    """A new key's label; the key comes back once, for the dialog that shows it."""

    FIELDS = (FieldSpec("label", "Label (who or what uses it)", "e.g. laptop, ci, prod-app"),)
    HINT_TEXT = "ctrl+s creates the key · esc cancels"

    def __init__(self, project_id: str | None, project_name: str) -> None:
        super().__init__()
        self.project_id = project_id
        self.TITLE_TEXT = f"New key for {notice(project_name)}"

    def check(self, values: dict[str, str]) -> dict[str, str]:
        label = values["label"].strip()
        if not label:
            return {"label": "A label is required: it tells the keys apart."}
        if len(label) > 100:
            return {"label": "At most 100 characters."}
        return {}

    async def create(self, client: TraceSource, values: dict[str, str]) -> KeyInfo:
        return await client.create_key(
            self.project_id, values["label"].strip(), idempotency_key=self.idempotency_key
        )

    async def find_earlier(self, client: TraceSource, values: dict[str, str]) -> KeyInfo | None:
        # The key itself is never listed: the same Idempotency-Key makes the server replay its
        # answer, key included, instead.
        return None
