"""StatusBar: server host, profile, rate-limit budget, last refresh, and any problem with its key.

It draws the `Status` it is given; the app builds one and feeds every status bar on screen.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

from tui.text import safe_text


@dataclass(frozen=True)
class Status:
    """What the status line says."""

    server: str
    profile: str
    rate_remaining: int | None = None
    rate_limit: int | None = None
    refreshed_at: float | None = None  # unix seconds
    problem: Text | None = None


class StatusBar(Static):
    """One line; `show` replaces what it says."""

    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $text-muted; padding: 0 1; }
    StatusBar.-problem { background: $error 40%; color: $text; }
    """

    def show(self, status: Status) -> None:
        text = Text()
        self.set_class(status.problem is not None, "-problem")
        if status.problem is not None:
            text.append_text(status.problem)
            text.append(" │ ")
        text.append_text(safe_text(status.server, 30))
        text.append(" │ ")
        text.append_text(safe_text(status.profile, 30))
        if status.rate_remaining is not None:
            limit = status.rate_limit if status.rate_limit is not None else "?"
            text.append(f" │ rate {status.rate_remaining}/{limit}")
        if status.refreshed_at is not None:
            text.append(
                " │ refreshed " + time.strftime("%H:%M:%S", time.localtime(status.refreshed_at))
            )
        self.update(text)
