"""The notice shown while the terminal is smaller than the app needs. The app shows it and takes
it away (TraceTuiApp.check_size), keeping it on top of every screen opened meanwhile.

It covers the whole window (nothing of the screen beneath shows through at the edges of a
shrunken layout), says the size there is and the size needed, and names the keys that still
work: the app's keys are held back while it shows (a help or a palette opened beneath it would
do nothing visible), so quitting is its own key, remapped with the app's (`app.quit`)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.geometry import Size
from textual.widgets import Static

from tui.ui.screens.base import AppModal

QUIT_ACTION = "app.quit"


class TooSmallScreen(AppModal[None]):
    BINDINGS = [
        Binding(
            "q",
            QUIT_ACTION,
            "Quit",
            id="app.quit",
            tooltip="Quit, also while the window is too small (the app's quit key)",
        ),
    ]
    DEFAULT_CSS = """
    TooSmallScreen { align: center middle; background: $background; }
    TooSmallScreen > Static { width: auto; max-width: 100%; padding: 0 1; text-align: center; }
    """

    def __init__(self, min_width: int, min_height: int) -> None:
        super().__init__()
        self.min_width, self.min_height = min_width, min_height
        self._window: Size | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="too-small")

    def on_mount(self) -> None:
        self._say(self._window or self.app.size)

    def show_size(self, size: Size) -> None:
        """Say the window's size now (the app calls this on every resize while it shows)."""
        self._window = size
        if self.is_mounted:
            self._say(size)

    def _say(self, size: Size) -> None:
        self.query_one("#too-small", Static).update(self.message(size))

    def quit_key(self) -> str:
        """The key that quits here, as remapped by the user's keymap."""
        for active in self.active_bindings.values():
            if active.binding.action == QUIT_ACTION:
                return self.app.get_key_display(active.binding)
        return "ctrl+q"

    def message(self, size: Size) -> Text:
        needed = f"{self.min_width}x{self.min_height}"
        key = self.quit_key()
        text = Text()
        text.append("Terminal too small", style="bold")
        text.append(f"\nThis window is {size.width}x{size.height}; tracetui needs {needed}.")
        text.append("\nMake it larger: every screen comes back as you left it.")
        text.append("\n")
        text.append(f" {key} ", style="reverse bold")
        text.append(" quits (ctrl+q too)" if key != "ctrl+q" else " quits")
        return text
