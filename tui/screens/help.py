"""`?`: every key of the current screen, with what it does."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from tui.screens.base import AppModal


def keys_table(screen: Screen[object]) -> Table:
    table = Table(box=None, padding=(0, 2), show_header=True, header_style="bold")
    table.add_column("key", style="bold cyan", no_wrap=True)
    table.add_column("does")
    seen: set[str] = set()
    for active in screen.active_bindings.values():
        binding = active.binding
        if binding.action in seen or binding.action.startswith("app.focus"):
            continue
        seen.add(binding.action)
        text = Text(binding.description or binding.action)
        if binding.tooltip:
            text.append(f" — {binding.tooltip}", style="dim")
        table.add_row(Text(screen.app.get_key_display(binding)), text)
    return table


class HelpScreen(AppModal[None]):
    BINDINGS = [Binding("escape,question_mark,q", "close", "Close", id="help.close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 76; max-width: 100%; height: auto; max-height: 100%; border: thick $primary; background: $surface; padding: 0 1; }
    """

    def __init__(self, screen: Screen[object]) -> None:
        super().__init__()
        self.target = screen

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text("Keys on this screen (esc closes)", style="bold"))
            yield Static(keys_table(self.target), id="keys")
            yield Static(
                Text(
                    "ctrl+p opens the command palette: open a trace by id, switch project, "
                    "set the time range, API log. Keys can be remapped in the config "
                    "file's [keymap] table by binding id.",
                    style="dim",
                )
            )

    def action_close(self) -> None:
        self.dismiss(None)
