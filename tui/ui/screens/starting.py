"""The first frame: drawn while the client (httpx, pydantic) loads, so the app is on screen in
the time a bare Textual app takes; the projects replace it once the client is ready."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from tui.model.text import safe_text
from tui.ui.screens.base import AppScreen
from tui.ui.widgets.status_bar import StatusBar


class StartingScreen(AppScreen):
    DEFAULT_CSS = """
    StartingScreen #header { height: 1; background: $boost; padding: 0 1; }
    StartingScreen #loading { padding: 1 1; color: $text-muted; }
    """

    def __init__(self, server: str) -> None:
        super().__init__()
        self.server = server

    def compose(self) -> ComposeResult:
        yield Static(Text("Projects · loading…", style="bold"), id="header")
        loading = Text("Connecting to ")
        loading.append_text(safe_text(self.server, 60))
        loading.append("…")
        yield Static(loading, id="loading")
        yield StatusBar()
