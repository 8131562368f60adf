"""VirtualRows: a focusable list of rows that renders only the lines on screen (Line API).

Textual's DataTable and Tree build every row up front; for 50,000 rows that takes seconds. Here a
subclass says how many rows there are and how to draw one, and only visible lines are drawn.
A cursor move repaints the two lines involved, which keeps the bytes sent over SSH small.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.events import Click
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.ui.widgets.empty_hint import EmptyHint


class Spot(NamedTuple):
    """Where the cursor is: its row's key (None: the row has none), its row, and its line on
    screen (rows from the top of the view)."""

    key: object
    row: int
    line: int


def nearest(keys: list[object], spot: Spot) -> int:
    """The row the cursor goes to once the rows are `keys`: the row with the spot's key (of
    several, the one nearest its old row), else the row nearest its old row."""
    if spot.key is not None:
        found = [row for row, key in enumerate(keys) if key == spot.key]
        if found:
            return min(found, key=lambda row: abs(row - spot.row))
    return max(0, min(spot.row, len(keys) - 1))


class VirtualRows(ScrollView, can_focus=True):
    """Subclasses implement `row_count` and `render_row`, and `row_key` for the cursor to
    follow its row when the rows are replaced (a refresh). `empty_text`, when set, is drawn
    where the rows would be while there are none: what to do next, in one dim line."""

    BINDINGS = [
        Binding("up,k", "cursor_up", "Up", show=False, id="rows.up"),
        Binding("down,j", "cursor_down", "Down", show=False, id="rows.down"),
        Binding("pageup,ctrl+b", "page_up", "Page up", show=False, id="rows.page_up"),
        Binding("pagedown,ctrl+f", "page_down", "Page down", show=False, id="rows.page_down"),
        Binding("home,g", "first", "First", show=False, id="rows.first"),
        Binding("end,G", "last", "Last", show=False, id="rows.last"),
    ]
    COMPONENT_CLASSES = {"virtual-rows--cursor"}
    DEFAULT_CSS = """
    VirtualRows { height: 1fr; overflow-x: hidden; scrollbar-gutter: stable; }
    VirtualRows > .virtual-rows--cursor { background: $block-cursor-background; color: $block-cursor-foreground; text-style: bold; }
    VirtualRows:blur > .virtual-rows--cursor { background: $block-cursor-blurred-background; text-style: none; }
    """

    cursor: reactive[int] = reactive(0, always_update=True, repaint=False)

    class CursorMoved(Message):
        """The cursor is on a new row."""

        def __init__(self, row: int) -> None:
            super().__init__()
            self.row = row

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._row_styles: dict[str, Style] = {}
        self._drawing_width: int | None = None  # set while Textual draws the visible lines
        self._empty = EmptyHint()

    @property
    def empty_text(self) -> Text | None:
        return self._empty.text

    @empty_text.setter
    def empty_text(self, text: Text | None) -> None:
        self._empty.set(text)
        self.refresh()

    # -- styles, looked up once per repaint: computing a widget's rich style walks its
    # ancestors' styles (a tenth of a millisecond), and a repaint draws dozens of rows.

    def row_style(self, name: str = "") -> Style:
        """The widget's style (""), or that of one of its component classes."""
        style = self._row_styles.get(name)
        if style is None:
            style = self.rich_style if not name else self.get_component_rich_style(name)
            self._row_styles[name] = style
        return style

    def refresh(
        self,
        *regions: Region,
        repaint: bool = True,
        layout: bool = False,
        recompose: bool = False,
    ) -> Any:
        if repaint:
            self._row_styles.clear()
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._row_styles.clear()
        self._empty.forget_lines()

    @property
    def content_width(self) -> int:
        """The width rows are drawn to: the widget less its scrollbar."""
        return self.scrollable_content_region.width or self.size.width

    def row_count(self) -> int:
        raise NotImplementedError

    def render_row(self, row: int, width: int, selected: bool) -> Strip:
        raise NotImplementedError

    def row_key(self, row: int) -> object:
        """What makes the row the same one after the rows are replaced (None: nothing)."""
        return None

    def spot(self) -> Spot:
        """Where the cursor is, to put it back with `follow` once the rows are replaced."""
        count = self.row_count()
        key = self.row_key(self.cursor) if 0 <= self.cursor < count else None
        return Spot(key, self.cursor, self.cursor - int(self.scroll_offset.y))

    def follow(self, spot: Spot) -> None:
        """After the rows were replaced: the cursor on the row it was on (by its key, else the
        nearest position), on the same line of the view, so nothing on screen jumps."""
        keys = [self.row_key(row) for row in range(self.row_count())]
        row = nearest(keys, spot)
        height = self.scrollable_content_region.height or self.size.height
        line = max(0, min(spot.line, height - 1)) if height else 0
        self.scroll_to(y=max(0, row - line), animate=False, immediate=True)
        self.cursor = row
        self.refresh()

    def rows_changed(self) -> None:
        """Call after the rows changed: resizes the scroll area and repaints."""
        self.virtual_size = Size(self.size.width, self.row_count())
        if self.cursor >= self.row_count():
            self.cursor = max(0, self.row_count() - 1)
        self.refresh()

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, self.row_count())
        self.call_after_refresh(self.keep_cursor_in_view)

    def keep_cursor_in_view(self) -> None:
        """After the view shrank (a pane given more room), scroll so the cursor still shows."""
        top = int(self.scroll_offset.y)
        height = self.scrollable_content_region.height or self.size.height
        if height and not top <= self.cursor < top + height:
            self.scroll_to(y=max(0, self.cursor - height // 2), animate=False, immediate=True)
            self.refresh()

    def render_lines(self, crop: Region) -> list[Strip]:
        # The width is worked out once for all the lines drawn, not once a line: it walks the
        # widget's region, gutter and scrollbars (a tenth of a millisecond each time).
        self._drawing_width = self.content_width
        try:
            return super().render_lines(crop)
        finally:
            self._drawing_width = None

    def render_line(self, y: int) -> Strip:
        row = int(self.scroll_offset.y) + y
        width = self._drawing_width or self.content_width
        if row >= self.row_count():
            if not self.row_count() and self._empty.text is not None:
                return self._empty.line(y, width, self.row_style(), self.app.console)
            return Strip.blank(width, self.row_style())
        return self.render_row(row, width, row == self.cursor).adjust_cell_length(
            width, self.row_style()
        )

    def watch_cursor(self, old: int, new: int) -> None:
        top = int(self.scroll_offset.y)
        height = self.scrollable_content_region.height or self.size.height
        if new < top:
            self.scroll_to(y=new, animate=False, immediate=True)
            self.refresh()
        elif height and new >= top + height:
            self.scroll_to(y=new - height + 1, animate=False, immediate=True)
            self.refresh()
        else:
            for row in (old, new):
                if top <= row < top + height:
                    self.refresh_line(row - top)
        self.post_message(self.CursorMoved(new))

    def cells_strip(
        self,
        cells: list[tuple[str, Style | None]],
        selected: bool,
        cell_length: int | None = None,
    ) -> Strip:
        """One row from cells of already-safe text, a space apart; empty cells are skipped.
        `cell_length`, when the caller knows it (cells cut to known widths), saves measuring.

        The cursor row takes the cursor style whole; other rows add each cell's style.
        """
        base = self.row_style("virtual-rows--cursor" if selected else "")
        segments: list[Segment] = []
        for text, style in cells:
            if not text:
                continue
            if segments:
                segments.append(Segment(" ", base))
            segments.append(Segment(text, base + style if style and not selected else base))
        return Strip(segments, cell_length)

    def move_to(self, row: int) -> None:
        self.cursor = max(0, min(row, self.row_count() - 1))

    def action_cursor_up(self) -> None:
        self.move_to(self.cursor - 1)

    def action_cursor_down(self) -> None:
        self.move_to(self.cursor + 1)

    def action_page_up(self) -> None:
        self.move_to(self.cursor - max(1, self.size.height - 1))

    def action_page_down(self) -> None:
        self.move_to(self.cursor + max(1, self.size.height - 1))

    def action_first(self) -> None:
        self.move_to(0)

    def action_last(self) -> None:
        self.move_to(self.row_count() - 1)

    def on_click(self, event: Click) -> None:
        self.move_to(int(self.scroll_offset.y) + event.y)
