"""The dialog that picks another A for a diff: B's earlier traces of its name that the search
for its last good one saw (newest first, failing ones marked), the trace marked on the trace
list, or any trace id typed in. Dismissed with the chosen trace's id, or None."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from tui.api import Trace
from tui.model import formatting as fmt
from tui.model.text import safe_text
from tui.ui.screens.base import AppModal


def candidate_line(trace: Trace, b: Trace | None) -> Text:
    """One earlier trace: how long before B, when, how long it took, ok or failed, its id."""
    line = Text()
    line.append("✗ " if trace.is_error else "✓ ", style="red" if trace.is_error else "green")
    if b is not None and b.started_at and trace.started_at:
        gap = (b.started_at - trace.started_at).total_seconds() * 1000
        line.append(f"{fmt.duration(gap)} before B · ")
    line.append(f"{fmt.local_time(trace.started_at, seconds=False)} · ")
    line.append(f"{fmt.duration(trace.duration_ms)} · ")
    line.append_text(safe_text(trace.id or "?", 16, style="dim"))
    return line


class PickDiffBase(AppModal[str | None]):
    """Choose A for a diff of B."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="diffpick.cancel")]
    DEFAULT_CSS = """
    PickDiffBase { align: center middle; }
    PickDiffBase > Vertical { width: 76; max-width: 100%; height: auto; max-height: 90%; border: thick $primary; background: $surface; padding: 0 1; }
    PickDiffBase OptionList { height: auto; max-height: 14; }
    """

    def __init__(
        self,
        b_id: str,
        b: Trace | None,
        candidates: list[Trace],
        marked: tuple[str, str] | None = None,
    ) -> None:
        super().__init__()
        self.b_id = b_id
        self.b = b
        self.candidates = [t for t in candidates if t.id and t.id != b_id]
        self.marked = marked  # (trace id, what it is) of the trace list's marked trace

    def compose(self) -> ComposeResult:
        options: list[Option] = []
        if self.marked is not None and self.marked[0] != self.b_id:
            label = Text("◆ marked on the trace list: ", style="bold")
            label.append_text(safe_text(self.marked[1], 60))
            options.append(Option(label, id=f"trace:{self.marked[0]}"))
        for trace in self.candidates:
            options.append(Option(candidate_line(trace, self.b), id=f"trace:{trace.id}"))
        with Vertical():
            yield Label(Text("Compare B with… (enter picks, esc cancels)", style="bold"))
            if options:
                yield OptionList(*options, id="choices")
            else:
                yield Label(
                    Text("No earlier trace of its name was seen: type a trace id.", style="dim")
                )
            yield Input(placeholder="or type a trace id and press enter", id="trace-id")

    def on_mount(self) -> None:
        if self.query("#choices"):
            self.query_one("#choices", OptionList).focus()
        else:
            self.query_one("#trace-id", Input).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        option_id = event.option.id or ""
        if option_id.startswith("trace:"):
            self.dismiss(option_id.removeprefix("trace:"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        if value:
            self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)
