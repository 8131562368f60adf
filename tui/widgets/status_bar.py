"""StatusBar: server host, profile, rate-limit budget, last refresh, and any problem with its key."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from tui.text import safe_text

if TYPE_CHECKING:
    from tui.app import TraceTuiApp


class StatusBar(Static):
    """Reads the app's state; the app calls `refresh_all_status_bars` when it changes."""

    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $text-muted; padding: 0 1; }
    StatusBar.-problem { background: $error 40%; color: $text; }
    """

    def on_mount(self) -> None:
        self.update_status()

    def update_status(self) -> None:
        app: TraceTuiApp = self.app  # type: ignore[assignment]
        client = app.client
        text = Text()
        problem = app.problem_text()
        self.set_class(problem is not None, "-problem")
        if problem is not None:
            text.append_text(problem)
            text.append(" │ ")
        text.append_text(safe_text(app.server_label, 30))
        text.append(f" │ {app.profile}")
        budget = client.latest_budget
        if budget is not None and budget.remaining is not None:
            text.append(
                f" │ rate {budget.remaining}/{budget.limit if budget.limit is not None else '?'}"
            )
        if app.last_refresh is not None:
            text.append(
                " │ refreshed " + time.strftime("%H:%M:%S", time.localtime(app.last_refresh))
            )
        self.update(text)
