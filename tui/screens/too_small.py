"""The notice shown while the terminal is smaller than the app needs."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from tui.app import MIN_HEIGHT, MIN_WIDTH
from tui.screens.base import AppModal


class TooSmallScreen(AppModal[None]):
    DEFAULT_CSS = "TooSmallScreen { align: center middle; } TooSmallScreen Static { width: auto; }"

    def compose(self) -> ComposeResult:
        yield Static(Text(f"Terminal too small: tracetui needs at least {MIN_WIDTH}x{MIN_HEIGHT}."))

    def on_resize(self) -> None:
        if self.app.size.width >= MIN_WIDTH and self.app.size.height >= MIN_HEIGHT:
            self.dismiss(None)
