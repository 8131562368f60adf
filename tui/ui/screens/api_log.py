"""The API log: recent requests with status, timing, attempt and rate-limit headers (no keys).
Enter on a row shows its error and path whole (the table cuts them to the width)."""

from __future__ import annotations

import time

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static

from tui.core.urls import split_url
from tui.model.formatting import counted
from tui.model.text import safe_text
from tui.ui.screens.base import AppScreen
from tui.ui.widgets.key_footer import KeyFooter
from tui.ui.widgets.table import Column, Table

COLUMNS = (
    Column("time", least=8),
    Column("method", least=4),
    Column("status", least=6),
    Column("ms", least=5),
    Column("try", least=3),
    Column("rate left", least=5, most=9, share=1),
    Column("error / path", least=20, most=2000, share=8),
)


def shown_path(url: str, host: str) -> str:
    """A logged URL without the server's scheme and host (the header says which server)."""
    parts = split_url(url)
    if parts is None or parts.netloc != host:
        return url
    return parts.path + (f"?{parts.query}" if parts.query else "")


# In place of rows when there are none.
EMPTY = Text("No requests yet: press r to show those made since.")


class ApiLogScreen(AppScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="log.back"),
        Binding("r", "refresh", "Refresh", id="log.refresh"),
    ]
    DEFAULT_CSS = """
    ApiLogScreen #header { height: 1; background: $boost; padding: 0 1; }
    ApiLogScreen Table { height: 1fr; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.details: list[str] = []  # each row's error and path, whole

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        yield Table(COLUMNS)
        yield KeyFooter()

    def on_mount(self) -> None:
        self.action_refresh()
        self.query_one(Table).focus()

    def action_refresh(self) -> None:
        client = self.tui.client
        header = Text("API log · ", style="bold")
        header.append_text(safe_text(client.base_url, 60))
        header.append(f" · {counted(len(client.log), 'request')}, newest first", style="bold")
        self.query_one("#header", Static).update(header)
        rows = []
        self.details = []
        for entry in reversed(client.log):
            path = shown_path(entry.url, client.host)
            # The error first: on an 80-column terminal the path would push it out of sight.
            # An error in words, as everywhere: a transport failure's exception name says what
            # it means.
            detail = path if entry.error is None else f"{entry.error} — {path}"
            self.details.append(detail)
            rows.append(
                (
                    (
                        time.strftime("%H:%M:%S", time.localtime(entry.at)),
                        entry.method,
                        str(entry.status) if entry.status is not None else "—",
                        f"{entry.elapsed_ms:.0f}",
                        str(entry.attempt),
                        entry.rate_limit.get("x-ratelimit-remaining", ""),  # a header: untrusted
                        detail,
                    ),
                    entry,  # the row's key: a refresh keeps the cursor on its request
                )
            )
        table = self.query_one(Table)
        table.set_rows(rows)
        table.empty_text = EMPTY

    def action_back(self) -> None:
        self.dismiss()

    @on(DataTable.RowSelected)
    def _read_whole(self, event: DataTable.RowSelected) -> None:
        """Enter: the row's error and path, whole, in a dialog."""
        from tui.ui.screens.prompts import ReadWhole

        if 0 <= event.cursor_row < len(self.details):
            self.app.push_screen(ReadWhole("Request", self.details[event.cursor_row]))
