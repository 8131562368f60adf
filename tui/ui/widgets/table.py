"""Table: a DataTable whose columns share the window's width, and whose keys match the lists'.

The small tables (projects, alerts, the API log) lay their columns out again on every resize,
so a wider terminal shows more of each name; Home/End, g/G and PageUp/PageDown move the cursor
as they do in the trace list and the span tree. When the rows are replaced (a refresh), the
cursor stays on its row, found by the row's key, on the same line of the view. With no rows,
`empty_text` says what to do next. Cells are untrusted text: each is cut to its column by the
safe-text helper.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.strip import Strip
from textual.widgets import DataTable

from tui.model.text import safe_text
from tui.ui.widgets.empty_hint import EmptyHint
from tui.ui.widgets.virtual_rows import Spot, nearest


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
        self._rows: list[tuple[Sequence[Cell], object]] = []
        self._laid_out_for = -1
        self._empty = EmptyHint()
        # The cursor's line in the view, while the scroll that puts it back there is due.
        self._line_due: int | None = None

    @property
    def empty_text(self) -> Text | None:
        """What the table says in place of rows while it has none (None: nothing)."""
        return self._empty.text

    @empty_text.setter
    def empty_text(self, text: Text | None) -> None:
        self._empty.set(text)
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._empty.forget_lines()  # drawn in the old theme's colours

    def on_mount(self) -> None:
        self._lay_out(self.spot())

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._laid_out_for:
            self._lay_out(self.spot())

    def set_rows(self, rows: Sequence[tuple[Sequence[Cell], object]]) -> None:
        """Replace the rows, each (cells, key), and lay the columns out for them. The key says
        which row is the same one after a refresh (an id; None: none): the cursor stays on
        its row (of rows with the same key, the nearest), else on its row number."""
        spot = self.spot()
        self._rows = list(rows)
        self._lay_out(spot)

    def spot(self) -> Spot:
        """Where the cursor is: its row's key, its row, and its line in the view."""
        row = self.cursor_row
        key = self._rows[row][1] if 0 <= row < len(self._rows) else None
        line = row - int(self.scroll_y) if self._line_due is None else self._line_due
        return Spot(key, row, line)

    def _lay_out(self, spot: Spot) -> None:
        width = self.scrollable_content_region.width or self.app.size.width
        self._laid_out_for = self.size.width
        wants = [
            max((_cells_of(cells[i]) for cells, _ in self._rows), default=0)
            for i in range(len(self.layout_columns))
        ]
        widths = widths_for(self.layout_columns, wants, width)
        row = nearest([key for _, key in self._rows], spot)
        self.clear(columns=True)  # which scrolls to the top
        for column, size in zip(self.layout_columns, widths, strict=True):
            if size:
                self.add_column(column.title, width=size)
        for cells, _ in self._rows:
            # No DataTable key: ids need not be unique (two projects may share one).
            self.add_row(*(_cut(c, size) for c, size in zip(cells, widths, strict=True) if size))
        if self._rows:
            self.move_cursor(row=row)
            # Once the rows' height is known: the cursor back on its line of the view.
            self._line_due = spot.line
            self.call_after_refresh(self._scroll_to_line, row, spot.line)

    def _scroll_to_line(self, row: int, line: int) -> None:
        if self._require_update_dimensions:  # the rows' height is not known yet: next time
            self.call_after_refresh(self._scroll_to_line, row, line)
            return
        self._line_due = None
        if row != self.cursor_row:
            return  # the cursor has moved since: it is where the user put it
        rows_shown = self.scrollable_content_region.height - self.header_height
        if rows_shown <= 0:
            return
        line = max(0, min(line, rows_shown - 1))
        self.scroll_to(y=max(0, row - line), animate=False, immediate=True)

    def render_line(self, y: int) -> Strip:
        if not self._rows and self._empty.text is not None:
            first = self.header_height if self.show_header else 0
            if y >= first:
                return self._empty.line(
                    y - first, self.size.width, self.rich_style, self.app.console
                )
        return super().render_line(y)

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
