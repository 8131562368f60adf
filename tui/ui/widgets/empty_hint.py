"""What a list says where its rows would be while it has none (the next step to take), drawn
dim, wrapped and one cell in: shared by the two list widgets (table.Table, virtual_rows)."""

from __future__ import annotations

from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip


def hint_strips(text: Text, width: int, style: Style, console: Console) -> list[Strip]:
    """`text` as lines `width` cells wide: dim, wrapped, one cell in."""
    dim = text.copy()
    dim.stylize("dim")
    return [
        Strip([Segment(" ", style), *line.render(console)])
        .apply_style(style)
        .adjust_cell_length(width, style)
        for line in dim.wrap(console, max(1, width - 2))
    ]


class EmptyHint:
    """The text, and its lines for the last width drawn (wrapping is done once per width)."""

    def __init__(self) -> None:
        self.text: Text | None = None
        self._lines: tuple[int, list[Strip]] = (-1, [])

    def set(self, text: Text | None) -> None:
        self.text, self._lines = text, (-1, [])

    def forget_lines(self) -> None:
        """Drawn again next time (the theme's colours changed)."""
        self._lines = (-1, [])

    def line(self, y: int, width: int, style: Style, console: Console) -> Strip:
        """Line `y` of the hint (blank below it)."""
        if self._lines[0] != width and self.text is not None:
            self._lines = (width, hint_strips(self.text, width, style, console))
        strips = self._lines[1]
        return strips[y] if y < len(strips) else Strip.blank(width, style)
