"""Create forms (project, alert) as modals: client checks, server field errors beside their
fields, everything typed kept on failure, and a retry that never creates twice: one
idempotency key per form until it succeeds, and, after a failure that may have been carried out
anyway (a timeout, a dropped connection, a 5xx), a look for the record before sending again, as
a server need not honour the key."""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.css.query import NoMatches
from textual.widget import Widget
from textual.widgets import Input, Label, Select, Static

from tui.api import Alert, ApiError, Conflict, Project, TraceSource, ValidationFailed
from tui.core.alert_rules import (
    CONDITIONS,
    AlertDraft,
    metric_problem,
)
from tui.core.urls import split_url
from tui.model.text import notice, safe_text
from tui.ui.screens.base import AppModal, error_line
from tui.ui.trace_pages import Collected, collect
from tui.ui.widgets.alert_preview import AlertPreview
from tui.ui.widgets.metric_picker import ConditionPicker, MetricPicker

# The alert form's preview: the last day of the metric, and the longest usual period before it.
PREVIEW_SPAN = timedelta(hours=24)
PREVIEW_LOOKBACK = timedelta(hours=24)
FRESH = timedelta(minutes=5)  # traces paged in this recently will do for the preview

# A webhook URL of a host the service sends to (a reserved name such as example.com passes
# creation but is never sent to: it never resolves).
WEBHOOK_EXAMPLE = "https://hooks.slack.com/services/T000/B000/XXXX"
WEBHOOK_HINT = (
    "A public host: example.com never receives; loopback and private ones need a service "
    "run with --allow-private-webhooks."
)
# A form's title is cut to this (it may hold a project's name, which a server sent).
TITLE_MAX_CHARS = 68


@dataclass(frozen=True)
class FieldSpec:
    name: str
    label: str
    placeholder: str = ""
    value: str = ""
    hint: str = ""  # a line under the field, for what the label cannot say


def url_problem(text: str) -> str | None:
    """What is wrong with a webhook URL as typed, in words; None when it will do."""
    url = split_url(text)
    if url is None:
        return "This URL cannot be read (a stray [ or ], or a bad port?)."
    if url.scheme not in ("http", "https"):
        return f"Start with http:// or https://, e.g. {WEBHOOK_EXAMPLE}."
    if not url.hostname:
        return f"Add the host after {url.scheme}://, e.g. {WEBHOOK_EXAMPLE}."
    return None


class CreateForm(AppModal[Any]):
    """A form of text fields; subclasses check the values and call the API."""

    TITLE_TEXT = "Create"
    FIELDS: tuple[FieldSpec, ...] = ()
    HINT_TEXT = "ctrl+s creates · esc cancels · tab moves between fields"
    BUSY_TEXT = "Creating…"
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="form.cancel"),
        Binding("ctrl+s", "submit", "Create", id="form.submit"),
    ]
    DEFAULT_CSS = """
    CreateForm { align: center middle; }
    CreateForm > VerticalScroll { width: 72; max-width: 100%; height: auto; max-height: 100%; border: thick $primary; background: $surface; padding: 0 1; }
    CreateForm Label.title { text-style: bold; margin-bottom: 1; }
    CreateForm .field-error { color: $text-error; height: auto; }
    CreateForm #form-error { color: $text-error; height: auto; }
    CreateForm Input { border: none; height: 1; padding: 0 1; background: $boost; color: $text; }
    CreateForm Input > .input--placeholder { color: $text-disabled; text-style: italic; }
    CreateForm .field-hint { color: $text-muted; height: auto; }
    CreateForm Input:focus { border: none; background: $primary 30%; }
    CreateForm Input.-field-error { background: $error 30%; }
    CreateForm Select > SelectCurrent { background: $boost; color: $text; }
    CreateForm Select:focus > SelectCurrent { background: $primary 30%; }
    CreateForm .-field-error Select > SelectCurrent, CreateForm Select.-field-error > SelectCurrent {
        background: $error 30%;
    }
    CreateForm #hint { color: $text-muted; margin-top: 1; }
    CreateForm Label { margin-top: 0; }
    CreateForm Label.title { margin-top: 0; }
    """

    def __init__(self) -> None:
        super().__init__()
        # One key per values sent: a retry of the same values carries the same key, so a
        # server that honours it never creates twice; changed values are another create (the
        # old key with a new body would be refused as a conflict).
        self.idempotency_key = uuid.uuid4().hex
        self._sent_values: dict[str, str] | None = None
        self.submitting = False
        # Once an attempt may have been carried out, every retry looks before it sends.
        self.outcome_unknown = False
        # Whether the line under the fields sums up their errors (then it goes with them).
        self.form_error_is_of_fields = False
        # The fields' first values, where they differ from the specs' (an edit form's record).
        self.initial: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        # The frame is not a Tab stop: Tab goes from field to field only.
        with VerticalScroll(can_focus=False):
            yield Label(safe_text(self.TITLE_TEXT, TITLE_MAX_CHARS), classes="title")
            for spec in self.FIELDS:
                yield Label(spec.label)
                value = self.initial.get(spec.name, spec.value)
                yield self.field_widget(spec, value)
                if spec.hint:
                    yield Static(Text(spec.hint), classes="field-hint")
                error = Static("", classes="field-error", id=f"error-{spec.name}")
                error.display = False
                yield error
            yield from self.below_fields()
            yield Static("", id="form-error")
            yield Static(Text(self.HINT_TEXT), id="hint")

    def field_widget(self, spec: FieldSpec, value: str) -> Widget:
        """The widget a field is entered in (a line of text; the alert form chooses some)."""
        return Input(value, placeholder=spec.placeholder, id=f"field-{spec.name}")

    def below_fields(self) -> ComposeResult:
        """What a form shows under its fields (the alert form: a preview)."""
        yield from ()

    def on_mount(self) -> None:
        self.query(Input).first().focus()

    def values(self) -> dict[str, str]:
        """Each field's value as text (a choice's value in the API's spelling)."""
        return {
            spec.name: str(getattr(self.query_one(f"#field-{spec.name}"), "value", ""))
            for spec in self.FIELDS
        }

    def show_errors(self, errors: dict[str, str], form_error: str = "") -> None:
        for spec in self.FIELDS:
            message = errors.get(spec.name, "")
            error = self.query_one(f"#error-{spec.name}", Static)
            error.update(safe_text(message, multiline=True))
            error.display = bool(message)
            self.query_one(f"#field-{spec.name}").set_class(bool(message), "-field-error")
        unplaced = [
            f"{k}: {v}" for k, v in errors.items() if k not in {s.name for s in self.FIELDS}
        ]
        text = "\n".join(filter(None, [form_error, *unplaced]))
        self.query_one("#form-error", Static).update(safe_text(text, multiline=True))

    @on(Input.Changed)
    @on(Select.Changed)
    def _field_changed(self, event: Input.Changed | Select.Changed) -> None:
        """A field's error goes once the field is changed: what the server said was of the
        value it was sent, and the form's own checks are run again on the new one (an error
        that still holds is shown as it now reads)."""
        field = next(
            (w for w in event.control.ancestors_with_self if (w.id or "").startswith("field-")),
            None,
        )
        if field is None:
            return
        name = (field.id or "").removeprefix("field-")
        try:
            error = self.query_one(f"#error-{name}", Static)
        except NoMatches:
            return
        if not error.display:
            return  # errors appear on ctrl+s, not while typing
        message = self.check(self.values()).get(name, "")
        error.update(safe_text(message, multiline=True))
        error.display = bool(message)
        field.set_class(bool(message), "-field-error")
        if self.form_error_is_of_fields and not any(
            self.query_one(f"#error-{spec.name}", Static).display for spec in self.FIELDS
        ):
            # The server's summary of those fields' errors goes with the last of them.
            self.form_error_is_of_fields = False
            self.query_one("#form-error", Static).update("")

    def check(self, values: dict[str, str]) -> dict[str, str]:
        raise NotImplementedError

    async def create(self, client: TraceSource, values: dict[str, str]) -> Any:
        raise NotImplementedError

    async def find_earlier(self, client: TraceSource, values: dict[str, str]) -> Any:
        """The record an earlier attempt with these values created, or None."""
        raise NotImplementedError

    @on(Input.Submitted)
    def action_submit(self) -> None:
        if self.submitting:
            return  # never two POSTs for one press
        values = self.values()
        errors = self.check(values)
        self.show_errors(errors)
        if not errors:
            self.submit(values)

    def submit(self, values: dict[str, str]) -> None:
        self.submitting = True
        if self._sent_values is not None and values != self._sent_values:
            self.idempotency_key = uuid.uuid4().hex
        self._sent_values = values
        self.query_one("#form-error", Static).update(Text(self.BUSY_TEXT))
        look_first = self.outcome_unknown

        async def send(client: TraceSource) -> tuple[Any, bool]:
            earlier = await self.find_earlier(client, values) if look_first else None
            if earlier is not None:
                return earlier, True
            return await self.create(client, values), False

        self.call_api(send, self._created, group="form", failed=self._failed, quiet=True)

    def _created(self, outcome: tuple[Any, bool]) -> None:
        self.submitting = False
        created, was_earlier = outcome
        if was_earlier:
            self.notify("The earlier attempt had created it; nothing was sent again.")
        self.dismiss(created)

    def _failed(self, error: ApiError) -> bool:
        self.submitting = False
        if isinstance(error, ValidationFailed):
            self.show_errors(error.field_messages(), error.message)
            self.form_error_is_of_fields = bool(error.field_messages())
            return True  # beside its fields: there is nothing else to say
        if isinstance(error, Conflict):
            typed = {s.name for s in self.FIELDS}
            clashes = {k: v for k, v in error.field_messages().items() if k in typed}
            if clashes:
                # A value clashes with what exists (a name taken): the same ctrl+s would clash
                # again, so the form says what to change, not to retry.
                self.show_errors(clashes, f"{error.message} Change it and press ctrl+s.")
            else:  # the server's state refuses it (a project at its bound of alerts)
                self.show_errors({}, error.message)
            self.form_error_is_of_fields = bool(clashes)
            return True
        # Nothing typed is lost; a retry looks before it sends if this one may have worked.
        self.outcome_unknown = self.outcome_unknown or error.outcome_unknown
        retry = self.retry_text()
        self.show_errors({}, f"{error_line(error)} — {retry}")
        return False  # the app still learns of it: a rate limit, a connection down

    def retry_text(self) -> str:
        """What the form says after a failure that kept everything typed."""
        if self.outcome_unknown:
            return "It may have been created anyway: ctrl+s checks, and creates it only if not."
        return "Press ctrl+s to retry."

    def action_cancel(self) -> None:
        self.dismiss(None)


class ProjectForm(CreateForm):
    TITLE_TEXT = "New project"
    FIELDS = (
        FieldSpec("name", "Name (required)", "e.g. support-bot"),
        FieldSpec("description", "Description", "optional"),
        # No grey number as the placeholder: it would read as a value that an empty field has.
        FieldSpec("retention_days", "Retention in days (1 to 365)", "days, 1 to 365", "30"),
    )
    # Whether the retention may be left empty: not here (an empty field would be sent as "the
    # server's default", unseen); an edit form of a project without one keeps it empty.
    RETENTION_REQUIRED = True

    def check(self, values: dict[str, str]) -> dict[str, str]:
        errors = {}
        if not values["name"].strip():
            errors["name"] = "A name is required."
        elif len(values["name"]) > 200:
            errors["name"] = "At most 200 characters."
        days = values["retention_days"].strip()
        if not days and self.RETENTION_REQUIRED:
            errors["retention_days"] = "A whole number of days from 1 to 365 is required."
        elif days and (not days.isdigit() or not 1 <= int(days) <= 365):
            errors["retention_days"] = "A whole number of days from 1 to 365."
        return errors

    def fields(self, values: dict[str, str]) -> dict[str, Any]:
        days = values["retention_days"].strip()
        return {
            "name": values["name"].strip(),
            "description": values["description"].strip() or None,
            "retention_days": int(days) if days else None,
        }

    async def create(self, client: TraceSource, values: dict[str, str]) -> Project:
        return await client.create_project(
            **self.fields(values), idempotency_key=self.idempotency_key
        )

    async def find_earlier(self, client: TraceSource, values: dict[str, str]) -> Project | None:
        return await client.find_project(**self.fields(values))


class AlertForm(CreateForm):
    TITLE_TEXT = "New alert"
    FIELDS = (
        FieldSpec("name", "Name (required)", "e.g. Slow replies"),
        FieldSpec("metric", "Metric: what is measured, in which unit, over which period"),
        FieldSpec("condition", "Fires when the metric is", "", "gt"),
        FieldSpec("threshold", "Threshold (a number, in the metric's unit)", "e.g. 2500"),
        FieldSpec(
            "webhook_url",
            "Webhook URL (http or https)",
            "e.g. " + WEBHOOK_EXAMPLE,
            hint=WEBHOOK_HINT,
        ),
    )

    def __init__(
        self, project_id: str, project_name: str, collected: Collected | None = None
    ) -> None:
        super().__init__()
        self.project_id = project_id
        self.TITLE_TEXT = f"New alert for {notice(project_name)}"
        self.collected = collected  # traces the alerts screen paged in, if they will do

    def field_widget(self, spec: FieldSpec, value: str) -> Widget:
        # The metric and the condition are chosen: nothing to misspell, nothing refused late.
        if spec.name == "metric":
            return MetricPicker(value, id="field-metric")
        if spec.name == "condition":
            return ConditionPicker(value, id="field-condition")
        return super().field_widget(spec, value)

    def below_fields(self) -> ComposeResult:
        yield AlertPreview(id="preview")

    def on_mount(self) -> None:
        super().on_mount()
        self.load_preview()
        self._preview_fields_changed()

    def load_preview(self) -> None:
        """The last 24 h of traces and a day before them (the longest usual period)."""
        preview = self.query_one(AlertPreview)
        now = self.tui.now()
        start = now - PREVIEW_SPAN - PREVIEW_LOOKBACK
        collected = self.collected
        if collected is not None and collected.start <= start and now - collected.end < FRESH:
            preview.loaded(collected)
            return

        def failed(error: ApiError) -> bool:
            preview.unavailable(error.title)
            return True  # the form works without its preview

        self.call_api(
            lambda client: collect(client, self.project_id, start, now),
            preview.loaded,
            group="alert-preview",
            failed=failed,
            project_id=self.project_id,
        )

    @on(Input.Changed, "#field-threshold")
    @on(Select.Changed)
    def _preview_fields_changed(self) -> None:
        values = self.values()
        self.query_one(AlertPreview).wanted(
            values["metric"], values["condition"], values["threshold"]
        )

    def check(self, values: dict[str, str]) -> dict[str, str]:
        errors = {}
        if not values["name"].strip():
            errors["name"] = "A name is required."
        problem = metric_problem(values["metric"].strip())
        if problem is not None:
            errors["metric"] = problem
        if values["condition"].strip() not in CONDITIONS:
            errors["condition"] = "One of " + ", ".join(CONDITIONS) + "."
        try:
            threshold = float(values["threshold"].strip())
            if not math.isfinite(threshold):
                raise ValueError
        except ValueError:
            errors["threshold"] = "A number, e.g. 2500 or 0.05."
        problem = url_problem(values["webhook_url"].strip())
        if problem is not None:
            errors["webhook_url"] = problem
        return errors

    def draft(self, values: dict[str, str]) -> AlertDraft:
        """The checked values as the alert to create."""
        return AlertDraft(
            name=values["name"].strip(),
            metric=values["metric"].strip(),
            condition=values["condition"].strip(),
            threshold=float(values["threshold"]),
            webhook_url=values["webhook_url"].strip(),
        )

    async def create(self, client: TraceSource, values: dict[str, str]) -> Alert:
        return await client.create_alert(
            self.project_id, self.draft(values), idempotency_key=self.idempotency_key
        )

    async def find_earlier(self, client: TraceSource, values: dict[str, str]) -> Alert | None:
        return await client.find_alert(self.project_id, self.draft(values))
