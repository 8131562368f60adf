"""The notice shown while the terminal is smaller than the app needs. The app shows it and takes
it away (TraceTuiApp.check_size), keeping it on top of every screen opened meanwhile."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from tui.ui.screens.base import AppModal


class TooSmallScreen(AppModal[None]):
    DEFAULT_CSS = "TooSmallScreen { align: center middle; } TooSmallScreen Static { width: auto; }"

    def __init__(self, min_width: int, min_height: int) -> None:
        super().__init__()
        self.min_width, self.min_height = min_width, min_height

    def compose(self) -> ComposeResult:
        needed = f"{self.min_width}x{self.min_height}"
        yield Static(Text(f"Terminal too small: tracetui needs at least {needed}."))
