"""The first frame: drawn while the client (httpx, pydantic) loads, so the app is on screen in
the time a bare Textual app takes; the projects replace it once the client is ready. A client
that takes longer to make (the demo fills a database and starts a service first) says what it
is doing here, with the seconds it has taken so far."""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from tui.model.text import safe_text
from tui.ui.screens.base import AppScreen
from tui.ui.widgets.status_bar import StatusBar


class StartingScreen(AppScreen):
    DEFAULT_CSS = """
    StartingScreen #header { height: 1; background: $boost; padding: 0 1; }
    StartingScreen #loading { padding: 1 1 0 1; color: $text-muted; }
    StartingScreen #progress { padding: 0 1; }
    """

    def __init__(self, server: str) -> None:
        super().__init__()
        self.server = server
        self._steps: list[str] = []
        self._since = time.monotonic()

    def compose(self) -> ComposeResult:
        yield Static(Text("Projects · loading…", style="bold"), id="header")
        if self.server:
            loading = Text("Connecting to ")
            loading.append_text(safe_text(self.server, 60))
            loading.append("…")
        else:
            loading = Text("Starting…")
        yield Static(loading, id="loading")
        yield Static(id="progress")
        yield StatusBar()

    def say(self, step: str) -> None:
        """A step of start-up: the steps so far, the newest last, with the time taken."""
        self._steps.append(step)
        self._draw()
        if len(self._steps) == 1:
            self.set_interval(0.5, self._draw)  # the seconds keep counting during a long step

    def _draw(self) -> None:
        text = Text()
        for n, step in enumerate(self._steps):
            newest = n == len(self._steps) - 1
            text.append("› " if newest else "✓ ", style="bold" if newest else "green")
            text.append_text(safe_text(step, 200))
            text.append("\n")
        text.append(f"{time.monotonic() - self._since:.0f} s", style="dim")
        self.query_one("#progress", Static).update(text)
