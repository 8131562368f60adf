"""`?`: the keys of the screen in view, its own first, each with the id that remaps it."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from tui.ui.screens.base import AppModal

# Ids of the keys that move in any list: shown in a section of their own, after the screen's.
MOVING_PREFIXES = ("rows.", "table.")
EVERYWHERE_EXTRA = (("ctrl+p", "Command palette: open a trace, switch project, range…", ""),)


@dataclass
class KeyRow:
    """One action: the keys bound to it, what it does, and its binding id."""

    keys: list[str] = field(default_factory=list)
    does: Text = field(default_factory=Text)
    binding_id: str = ""


def _rows(screen: Screen[object]) -> tuple[list[KeyRow], list[KeyRow], list[KeyRow]]:
    """(this screen's keys, moving in its list, the app's keys): only bindings with an id (ours;
    Textual's generic ones repeat them), in the order declared, several keys for one action on
    one row."""
    own: dict[tuple[int, str], KeyRow] = {}
    moving: dict[tuple[int, str], KeyRow] = {}
    app_wide: dict[tuple[int, str], KeyRow] = {}
    # A widget's own key without an id (a table's enter) wins the key over the screen's binding
    # of it, which is what the key does there (enter opens the project): that one is listed.
    shadowed = [
        (screen, binding)
        for key, active in screen.active_bindings.items()
        if not active.binding.id
        for binding in screen._bindings.key_to_bindings.get(key, ())
        if binding.id and screen.check_action(binding.action, ()) is not False
    ]
    found = shadowed + [(a.node, a.binding) for a in screen.active_bindings.values()]
    for node, binding in found:
        if not binding.id:
            continue
        if node is screen.app:
            group = app_wide
        elif binding.id.startswith(MOVING_PREFIXES):
            group = moving
        else:
            group = own
        row = group.setdefault((id(node), binding.action), KeyRow())
        row.keys.append(screen.app.get_key_display(binding))
        if not row.binding_id:
            row.binding_id = binding.id
            row.does = Text(binding.description or binding.action)
            if binding.tooltip:
                row.does.append(f" — {binding.tooltip}", style="dim")
    # The screen's own bindings first, then those of the widget in focus.
    ordered = sorted(own.items(), key=lambda item: item[0][0] != id(screen))
    return [row for _, row in ordered], list(moving.values()), list(app_wide.values())


def keys_table(screen: Screen[object]) -> Table:
    table = Table(box=None, padding=(0, 1), show_header=True, header_style="bold", expand=True)
    table.add_column("key", style="bold cyan", no_wrap=True)
    table.add_column("does", ratio=1)
    table.add_column("id (remap)", style="dim", no_wrap=True)
    own, moving, app_wide = _rows(screen)
    for row in own:
        table.add_row(Text(" ".join(row.keys)), row.does, Text(row.binding_id))
    if moving:
        table.add_row(Text("moving", style="bold"), Text(""), Text(""))
        for row in moving:
            table.add_row(Text(" ".join(row.keys)), row.does, Text(row.binding_id))
    table.add_row(Text("everywhere", style="bold"), Text(""), Text(""))
    for row in app_wide:
        keys = " ".join(row.keys)
        if row.binding_id == "app.quit":
            keys += " ctrl+q"  # Textual's own quit key works too
        table.add_row(Text(keys), row.does, Text(row.binding_id))
    for keys, does, binding_id in EVERYWHERE_EXTRA:
        table.add_row(Text(keys), Text(does), Text(binding_id))
    return table


class HelpScreen(AppModal[None]):
    BINDINGS = [Binding("escape,question_mark,q", "close", "Close", id="help.close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90; max-width: 100%; height: auto; max-height: 100%; border: thick $primary; background: $surface; padding: 0 1; }
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
                    'Remap a key in the config file\'s [keymap] table by its id, e.g. "traces.filter" '
                    '= "f" (~/.config/tracetui/config.toml).',
                    style="dim",
                )
            )

    def action_close(self) -> None:
        self.dismiss(None)
