"""Table: a DataTable whose columns share the window's width, and whose keys match the lists'.

The small tables (projects, alerts, the API log) lay their columns out again on every resize,
so a wider terminal shows more of each name; Home/End, g/G and PageUp/PageDown move the cursor
as they do in the trace list and the span tree. Cells are untrusted text: each is cut to its
column by the safe-text helper.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.widgets import DataTable

from tui.model.text import safe_text


@dataclass(frozen=True)
class Column:
    """A column's title and its width: as wide as its widest cell, at least `least` and at most
    `most` cells; when the window is too narrow for every column, those with a `share` give up
    width in proportion to it (0: a column that never shrinks below its content)."""

    title: str
    least: int
    most: int = 1000
    share: int = 0
    # Left out (width 0) when the others would not get their least with it at its least.
    optional: bool = False


GAP = 2  # DataTable pads every cell by one on each side


def widths_for(columns: Sequence[Column], wants: Sequence[int], width: int) -> list[int]:
    """Each column's width for a table `width` cells wide whose widest cells are `wants`; 0 for
    an optional column left out."""
    widths = [
        max(c.least, min(c.most, max(want, len(c.title))))
        for c, want in zip(columns, wants, strict=True)
    ]
    # What each column cannot give up: its least if it has a share, else all of it.
    floors = [c.least if c.share else w for c, w in zip(columns, widths, strict=True)]
    shown = [True] * len(columns)
    for i in reversed(range(len(columns))):
        if sum(f + GAP for f, on in zip(floors, shown, strict=True) if on) <= width:
            break
        if columns[i].optional:
            shown[i] = False
            widths[i] = 0
    over = sum(w + GAP for w, on in zip(widths, shown, strict=True) if on) - width
    while over > 0:
        room = [(widths[i] - c.least) * c.share * shown[i] for i, c in enumerate(columns)]
        total = sum(room)
        if not total:
            break
        cuts = [
            min(widths[i] - columns[i].least, over * r // total) if r else 0
            for i, r in enumerate(room)
        ]
        if not any(cuts):  # less than one cell each: from the column with the most room
            cuts[room.index(max(room))] = 1
        for i, cut in enumerate(cuts):
            widths[i] -= cut
        over -= sum(cuts)
    return widths


@dataclass(frozen=True)
class Drawn:
    """A cell drawn for the width its column gets (a sparkline), instead of cut to it."""

    draw: Callable[[int], Text]
    width: int  # the width it would like


Cell = str | Text | Drawn


class Table(DataTable[Cell]):
    """Rows of untrusted text in columns laid out for the window's width."""

    # The same keys as the trace list and span tree (tui/ui/widgets/virtual_rows.py).
    BINDINGS = [
        Binding("up,k", "cursor_up", "Up", show=False, id="table.up"),
        Binding("down,j", "cursor_down", "Down", show=False, id="table.down"),
        Binding("pageup,ctrl+b", "page_up", "Page up", show=False, id="table.page_up"),
        Binding("pagedown,ctrl+f", "page_down", "Page down", show=False, id="table.page_down"),
        Binding("home,g", "first", "First", show=False, id="table.first"),
        Binding("end,G", "last", "Last", show=False, id="table.last"),
    ]

    def __init__(self, columns: Sequence[Column], **kwargs: object) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)  # type: ignore[arg-type]
        self.layout_columns = tuple(columns)
        self._rows: list[tuple[Sequence[Cell], str | None]] = []
        self._laid_out_for = -1

    def on_mount(self) -> None:
        self._lay_out()

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._laid_out_for:
            self._lay_out()

    def set_rows(self, rows: Sequence[tuple[Sequence[Cell], str | None]]) -> None:
        """Replace the rows, each (cells, key), and lay the columns out for them; the cursor
        stays on its row number."""
        self._rows = list(rows)
        self._lay_out()

    def _lay_out(self) -> None:
        width = self.scrollable_content_region.width or self.app.size.width
        self._laid_out_for = self.size.width
        wants = [
            max((_cells_of(cells[i]) for cells, _ in self._rows), default=0)
            for i in range(len(self.layout_columns))
        ]
        widths = widths_for(self.layout_columns, wants, width)
        keep = self.cursor_row
        self.clear(columns=True)
        for column, size in zip(self.layout_columns, widths, strict=True):
            if size:
                self.add_column(column.title, width=size)
        for cells, key in self._rows:
            self.add_row(
                *(_cut(c, size) for c, size in zip(cells, widths, strict=True) if size), key=key
            )
        if self._rows:
            self.move_cursor(row=min(max(keep, 0), len(self._rows) - 1))

    def action_first(self) -> None:
        if self.row_count:
            self.move_cursor(row=0)

    def action_last(self) -> None:
        if self.row_count:
            self.move_cursor(row=self.row_count - 1)


def _cells_of(cell: Cell) -> int:
    """The cells a value takes on screen (a long one is cut long before it is measured)."""
    if isinstance(cell, Text):
        return cell.cell_len
    if isinstance(cell, Drawn):
        return cell.width
    return safe_text(cell, 1000).cell_len


def _cut(cell: Cell, width: int) -> Text:
    if isinstance(cell, Drawn):
        return cell.draw(width)
    if isinstance(cell, Text):
        if cell.cell_len <= width:
            return cell
        cut = cell.copy()
        cut.truncate(width, overflow="ellipsis")
        return cut
    return safe_text(cell, width)
