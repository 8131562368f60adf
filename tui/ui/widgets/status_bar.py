"""StatusBar: server host, profile, rate-limit budget, last refresh, and any problem with its key.

It draws the `Status` it is given; the app builds one and feeds every status bar on screen.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

from tui.model import formatting as fmt
from tui.model.text import safe_text


@dataclass(frozen=True)
class Status:
    """What the status line says."""

    server: str
    profile: str
    rate_remaining: int | None = None
    rate_limit: int | None = None
    refreshed_at: float | None = None  # unix seconds
    problem: Text | None = None


SEPARATOR = " │ "


class StatusBar(Static):
    """One line; `show` replaces what it says. When the line is too narrow for everything, the
    problem stays whole first, then the server, the rate budget, the refresh time, the profile."""

    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $text-muted; padding: 0 1; }
    StatusBar.-problem { background: $error 40%; color: $text; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.status: Status | None = None

    def show(self, status: Status) -> None:
        self.status = status
        self.set_class(status.problem is not None, "-problem")
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        if self.status is None:
            return
        width = self.content_region.width or self.app.size.width
        self.update(status_line(self.status, width))


def status_line(status: Status, width: int) -> Text:
    """The parts of `status` that fit in `width` cells, most important first, in their order."""
    parts: list[tuple[int, Text]] = []  # (place on the line, text), in order of importance
    if status.problem is not None:
        parts.append((0, status.problem))
    if status.server:  # none yet while the demo starts its service
        parts.append((1, safe_text(status.server, 30)))
    if status.rate_remaining is not None:
        # The spec's budget is per key and minute: what is left of it, with its unit.
        limit = fmt.count(status.rate_limit) if status.rate_limit is not None else "?"
        left = fmt.count(status.rate_remaining)
        parts.append((3, Text(f"{left}/{limit} req/min left")))
    if status.refreshed_at is not None:
        moment = time.strftime("%H:%M:%S", time.localtime(status.refreshed_at))
        parts.append((4, Text(f"refreshed {moment}")))
    parts.append((2, safe_text(status.profile, 30)))
    kept: list[tuple[int, Text]] = []
    used = 0
    for place, text in parts:
        need = text.cell_len + (len(SEPARATOR) if kept else 0)
        if used + need > width and kept:
            continue
        kept.append((place, text))
        used += need
    line = Text(SEPARATOR).join(text for _, text in sorted(kept, key=lambda part: part[0]))
    line.truncate(max(1, width), overflow="ellipsis")
    return line
