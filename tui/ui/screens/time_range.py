"""The time range picker: the presets, or a custom from/to typed in local time."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.events import Key
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from tui.model.timerange import PRESETS, TimeRange, parse_custom
from tui.ui.screens.base import AppModal


class TimeRangeScreen(AppModal[TimeRange | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="range.cancel")]
    DEFAULT_CSS = """
    TimeRangeScreen { align: center middle; }
    TimeRangeScreen > Vertical { width: 60; height: auto; border: thick $primary; background: $surface; padding: 0 1; }
    TimeRangeScreen OptionList { height: auto; max-height: 9; }
    TimeRangeScreen .error { color: $text-error; height: auto; }
    """

    def __init__(self, current: TimeRange) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Time range: pick one, or type a custom from/to below")
            yield OptionList(
                *[Option(f"{n}  last {key}", id=key) for n, key in enumerate(PRESETS, 1)],
                Option(f"{len(PRESETS) + 1}  custom…", id="custom"),
            )
            yield Input(placeholder="from: 2026-11-21 09:00 (local) or ...Z", id="from")
            yield Static("", classes="error", id="from-error")
            yield Input(placeholder="to: empty means now", id="to")
            yield Static("", classes="error", id="to-error")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.focus()
        self.call_after_refresh(self._highlight_current)

    def _highlight_current(self) -> None:
        keys = [*PRESETS, "custom"]
        self.query_one(OptionList).highlighted = keys.index(self.current.preset or "custom")

    def on_key(self, event: Key) -> None:
        """Digits pick an option directly: 1 is the first preset, 7 custom."""
        keys = [*PRESETS, "custom"]
        if event.character and event.character.isdigit() and isinstance(self.focused, OptionList):
            index = int(event.character) - 1
            if 0 <= index < len(keys):
                event.stop()
                if keys[index] == "custom":
                    self.query_one("#from", Input).focus()
                else:
                    self.dismiss(TimeRange(keys[index]))

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        if event.option.id == "custom":
            self.query_one("#from", Input).focus()
        else:
            self.dismiss(TimeRange(event.option.id))

    @on(Input.Submitted)
    def _custom(self) -> None:
        value, errors = parse_custom(
            self.query_one("#from", Input).value, self.query_one("#to", Input).value
        )
        self.query_one("#from-error", Static).update(errors.get("from", ""))
        self.query_one("#to-error", Static).update(errors.get("to", ""))
        if value is not None:
            self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)
