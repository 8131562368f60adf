"""The API log: recent requests with status, timing, attempt and rate-limit headers (no keys)."""

from __future__ import annotations

import time

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer

from tui.screens.base import AppScreen
from tui.text import safe_text


class ApiLogScreen(AppScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="log.back"),
        Binding("r", "refresh", "Refresh", id="log.refresh"),
    ]

    def compose(self) -> ComposeResult:
        yield DataTable(cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for column in ("time", "method", "status", "ms", "try", "rate left", "error / url"):
            table.add_column(column)
        self.action_refresh()
        table.focus()

    def action_refresh(self) -> None:
        table = self.query_one(DataTable)
        table.clear()
        for entry in reversed(self.tui.client.log):
            # The error first: on an 80-column terminal the URL would push it out of sight.
            detail = entry.url if entry.error is None else f"{entry.error} — {entry.url}"
            table.add_row(
                time.strftime("%H:%M:%S", time.localtime(entry.at)),
                entry.method,
                str(entry.status) if entry.status is not None else "—",
                f"{entry.elapsed_ms:.0f}",
                str(entry.attempt),
                safe_text(entry.rate_limit.get("x-ratelimit-remaining", ""), 9),  # a header
                safe_text(detail, 200),
            )

    def action_back(self) -> None:
        self.dismiss()
