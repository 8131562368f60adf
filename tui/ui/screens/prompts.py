"""Small prompts: a project's API key (masked, optionally saved 0600), a trace id to open, where
to export a trace, a long text read whole."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import SecretStr
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Checkbox, Input, Label, Static

from tui.model.text import safe_text
from tui.ui.screens.base import AppModal


class Tick(Checkbox):
    """A checkbox whose mark says its state without colour: ✓ when ticked, blank when not
    (Textual's draws the same X both ways, told apart by colour alone)."""

    BUTTON_INNER = " "

    def watch_value(self) -> None:
        self.BUTTON_INNER = "✓" if self.value else " "
        super().watch_value()


@dataclass(frozen=True)
class KeyAnswer:
    key: SecretStr
    save: bool


class PromptBase(AppModal[object]):
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="prompt.cancel")]
    DEFAULT_CSS = """
    PromptBase { align: center middle; }
    PromptBase > Vertical { width: 70; max-width: 100%; height: auto; border: thick $primary; background: $surface; padding: 0 1; }
    """

    def action_cancel(self) -> None:
        self.dismiss(None)


class KeyPrompt(PromptBase):
    """Asks for the key of one project after a 401/403; the key is never shown."""

    # Enter submits from the checkbox too (space ticks it), so ticking "save" cannot swallow it.
    BINDINGS = [Binding("enter", "submit", "Use key", priority=True, id="prompt.submit")]

    def __init__(self, project_id: str, reason: str, config_path: str) -> None:
        super().__init__()
        self.project_id = project_id
        self.reason = reason
        self.config_path = config_path

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(safe_text(self.reason, style="bold", multiline=True))
            yield Label(safe_text(f"API key for project {self.project_id} (hidden as you type):"))
            yield Input(password=True, id="key")
            yield Tick(f"Save it to {self.config_path} (mode 0600)", id="save")

    def on_mount(self) -> None:
        self.query_one("#key", Input).focus()

    def action_submit(self) -> None:
        value = self.query_one("#key", Input).value.strip()
        if value:
            self.dismiss(KeyAnswer(SecretStr(value), self.query_one(Tick).value))


class TraceIdPrompt(PromptBase):
    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Open a trace by id:")
            yield Input(placeholder="trace id", id="trace-id")

    @on(Input.Submitted)
    def _done(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.dismiss(event.value.strip())


class ExportPrompt(PromptBase):
    """Asks where to write an export, with a default path filled in (Enter takes it)."""

    def __init__(self, what: str, default: str) -> None:
        super().__init__()
        self.what, self.default = what, default

    def compose(self) -> ComposeResult:
        with Vertical():
            # Two lines: a trace's 32-digit id leaves no room for the keys on one at 80 columns.
            yield Label(safe_text(f"Export {self.what} as JSON to:"))
            yield Label("Enter writes, esc cancels (end goes to the end of the path).")
            yield Input(value=self.default, id="export-path")

    def on_mount(self) -> None:
        field = self.query_one("#export-path", Input)
        field.focus()
        # The path's start in view (where it goes), not its end.
        field.cursor_position = 0

    @on(Input.Submitted)
    def _done(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.dismiss(event.value.strip())


class ReadWhole(PromptBase):
    """A server's text (an error, a path) shown whole, wrapped and scrollable; esc closes."""

    DEFAULT_CSS = "ReadWhole VerticalScroll { height: auto; max-height: 20; }"

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text, self.text = title, text

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(safe_text(f"{self.title_text} (esc closes)", style="bold"))
            with VerticalScroll():
                yield Static(safe_text(self.text, 20_000, multiline=True), id="whole")
