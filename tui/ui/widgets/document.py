"""DocumentView: a long read drawn line by line (a conversation, a span's fields and attributes).

It shows a tree of blocks (tui/ui/widgets/blocks.py): only the rows on screen are drawn, and a
block is laid out only as far as it shows: a long body is folded to its first rows (`enter`
unfolds it), so a megabyte costs its first screen until asked for. Text comes through
`tui.model.text.wrap`: controls made visible, no markup, no links. `/` (through the screen) searches
it, `y` asks the screen to copy the block under the cursor.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from tui.ui.widgets.blocks import Block, Match, find_match
from tui.ui.widgets.document_search import highlighted, row_of
from tui.ui.widgets.virtual_rows import VirtualRows

# The styles that bring their own background; the others take the row's.
BASE, CURSOR = "-base", "-cursor"
_BACKGROUNDS = frozenset(["code", "inline-code", "match", "match-current", BASE, CURSOR])


class DocumentView(VirtualRows):
    """Shows a document; posts CopyRequested when `y` is pressed on a block."""

    BINDINGS = [
        Binding(
            "enter,space",
            "fold",
            "Fold",
            id="document.toggle",
            tooltip="Fold or unfold the message under the cursor; open or close an object",
        ),
        Binding(
            "right,l",
            "open",
            "Unfold",
            show=False,
            id="document.open",
            tooltip="Unfold the message, or open the object, under the cursor",
        ),
        Binding(
            "left,h",
            "close",
            "Fold up",
            show=False,
            id="document.close",
            tooltip="Fold the message or close the object under the cursor, else go to its parent",
        ),
        Binding(
            "right_square_bracket",
            "next_block",
            "Next message",
            show=False,
            id="document.next",
            tooltip="Jump to the next message (or field)",
        ),
        Binding(
            "left_square_bracket",
            "previous_block",
            "Previous message",
            show=False,
            id="document.previous",
            tooltip="Jump to the start of this message, or to the previous one",
        ),
        Binding(
            "n",
            "next_match",
            "Next match",
            id="document.next_match",
            tooltip="Go to the next match of the last search (/)",
        ),
        Binding(
            "N",
            "previous_match",
            "Prev match",
            show=False,
            id="document.previous_match",
            tooltip="Go to the previous match of the last search",
        ),
        Binding(
            "y",
            "copy",
            "Copy",
            id="document.copy",
            tooltip="Copy the message or value under the cursor (OSC 52)",
        ),
    ]
    COMPONENT_CLASSES = {
        "document--marker",
        "document--rule",
        "document--note",
        "document--code",
        "document--fence",
        "document--heading",
        "document--quote",
        "document--bold",
        "document--inline-code",
        "document--match",
        "document--match-current",
        "document--user",
        "document--assistant",
        "document--system",
        "document--tool",
        "document--dim",
        "document--key",
        "document--string",
        "document--number",
        "document--literal",
        "document--error",
        "document--label",
    }
    DEFAULT_CSS = """
    DocumentView { scrollbar-gutter: stable; }
    DocumentView > .document--marker { color: $text-muted; }
    DocumentView > .document--rule { color: $primary-darken-1; }
    DocumentView > .document--note { color: $text-muted; text-style: italic; }
    DocumentView > .document--code { background: $boost; color: $text; }
    DocumentView > .document--fence { color: $text-muted; }
    DocumentView > .document--heading { text-style: bold underline; }
    DocumentView > .document--quote { color: $text-muted; text-style: italic; }
    DocumentView > .document--bold { text-style: bold; }
    DocumentView > .document--inline-code { background: $boost; color: $text-accent; }
    DocumentView > .document--match { background: $warning-darken-2; color: $text; text-style: underline; }
    DocumentView > .document--match-current { background: $warning; color: $background; text-style: bold reverse; }
    DocumentView > .document--user { color: $text-success; text-style: bold; }
    DocumentView > .document--assistant { color: $text-accent; text-style: bold; }
    DocumentView > .document--system { color: $text-warning; text-style: bold; }
    DocumentView > .document--tool { color: $text-secondary; text-style: bold; }
    DocumentView > .document--dim { color: $text-muted; }
    DocumentView > .document--key { text-style: bold; }
    DocumentView > .document--string { color: $text-success; }
    DocumentView > .document--number { color: $text-accent; }
    DocumentView > .document--literal { color: $text-secondary; text-style: italic; }
    DocumentView > .document--error { color: $text-error; text-style: bold; }
    DocumentView > .document--label { text-style: bold; color: $text-muted; }
    DocumentView > .virtual-rows--cursor { background: $block-cursor-blurred-background; text-style: none; }
    """

    class CopyRequested(Message):
        """The user asked to copy the text under the cursor; the screen does it."""

        def __init__(self, text: str, what: str) -> None:
            super().__init__()
            self.text = text
            self.what = what

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.roots: list[Block] = []
        self._blocks: list[Block] = []  # the shown blocks, in order
        self._starts: list[int] = []  # the first row of each shown block
        self._total = 0
        self._width = -1
        self.search_text = ""
        self.pattern: re.Pattern[str] | None = None
        self.current: Match | None = None

    # -- content ---------------------------------------------------------------------------------

    def show(self, roots: Sequence[Block]) -> None:
        """Show a new document, from its top."""
        self.roots = list(roots)
        self.current = None
        self._relayout()
        self.cursor = 0
        self.scroll_to(y=0, animate=False, immediate=True)
        self.refresh()

    def _layout_width(self) -> int:
        return max(10, self.content_width - 1)  # one cell of gutter

    def _relayout(self, keep: Block | None = None) -> None:
        """Lay out the shown blocks again (after a change or a resize)."""
        blocks: list[Block] = []
        stack = list(reversed(self.roots))
        while stack:
            block = stack.pop()
            blocks.append(block)
            if block.expandable and block.expanded:
                stack.extend(reversed(block.children()))
        width = self._layout_width()
        if width != self._width:
            self._width = width
            for block in blocks:
                block.invalidate()
        starts, total = [], 0
        for block in blocks:
            starts.append(total)
            total += len(block.lines(width))
        self._blocks, self._starts, self._total = blocks, starts, total
        self.virtual_size = Size(self.size.width, total)
        if keep is not None and keep in blocks:
            self.cursor = self._starts[blocks.index(keep)]
        elif self.cursor >= total:
            self.cursor = max(0, total - 1)
        self.refresh()

    def on_resize(self) -> None:
        if self._layout_width() != self._width:  # the same block stays under the cursor
            block, offset = self.block_at(self.cursor)
            self._relayout()
            if block is not None and block in self._blocks:
                start = self._starts[self._blocks.index(block)]
                self.cursor = start + min(offset, len(block.lines(self._width)) - 1)
        super().on_resize()

    def row_count(self) -> int:
        return self._total

    def block_at(self, row: int) -> tuple[Block | None, int]:
        """The block showing `row`, and the row's place within it."""
        if not self._blocks or row < 0 or row >= self._total:
            return None, 0
        index = bisect_right(self._starts, row) - 1
        return self._blocks[index], row - self._starts[index]

    @property
    def cursor_block(self) -> Block | None:
        return self.block_at(self.cursor)[0]

    def text_lines(self) -> list[str]:
        """Every row as plain text (for tests and copying what is seen)."""
        width = self._layout_width()
        out = []
        for block in self._blocks:
            for line in block.lines(width):
                out.append(" " * line.indent + "".join(text for text, _ in line.pieces))
        return out

    # -- drawing ---------------------------------------------------------------------------------

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def _style(self, name: str) -> Style:
        """The rich style of a piece's style name, looked up once per repaint."""
        style = self._row_styles.get(name)
        if style is None:
            if name == BASE:
                style = self.rich_style
            elif name == CURSOR:
                style = self.get_component_rich_style("virtual-rows--cursor")
            else:
                try:
                    style = self.get_component_rich_style(f"document--{name}") if name else Style()
                except KeyError:
                    style = Style()
            if name not in _BACKGROUNDS:  # the row's background shows through (the cursor's)
                style = Style(
                    color=style.color,
                    bold=style.bold,
                    italic=style.italic,
                    underline=style.underline,
                    reverse=style.reverse,
                    strike=style.strike,
                )
            self._row_styles[name] = style
        return style

    def render_row(self, row: int, width: int, selected: bool) -> Strip:
        block, offset = self.block_at(row)
        selected = selected and self.has_focus  # the cursor shows where keys act: when focused
        base = self._style(CURSOR if selected else BASE)
        if block is None:
            return Strip.blank(width, base)
        line = block.lines(self._width)[offset]
        pieces = list(line.pieces)
        if self.pattern is not None and pieces:
            pieces = highlighted(block, line, pieces, self.pattern, self.current)
        segments = [Segment("▌" if selected else " ", base)]
        if line.indent:
            segments.append(Segment(" " * line.indent, base))
        for text, style in pieces:
            if text:
                segments.append(Segment(text, base + self._style(style) if style else base))
        strip = Strip(segments)
        if line.source is not None and line.source.style:  # a code block runs the row's width
            fill = base + self._style(line.source.style)
            strip = strip.adjust_cell_length(max(strip.cell_length, width - 1), fill)
        return strip.adjust_cell_length(width, base)

    # -- folding ---------------------------------------------------------------------------------

    def action_fold(self) -> None:
        block = self.cursor_block
        if block is None:
            return
        if block.expandable:
            block.expanded = not block.expanded
            block.invalidate()
            self._relayout(keep=block)
        elif block.foldable:
            self._set_folded(block, not block.folded)

    def _set_folded(self, block: Block, folded: bool) -> None:
        row = self.cursor
        block.folded = folded
        block.invalidate()
        self._relayout()
        if folded:
            self.cursor = self._starts[self._blocks.index(block)]
        else:
            self.cursor = row

    def action_open(self) -> None:
        block = self.cursor_block
        if block is not None and block.expandable and not block.expanded:
            self.action_fold()
        elif block is not None and block.foldable and block.folded:
            self._set_folded(block, False)
        else:
            self.action_cursor_down()

    def action_close(self) -> None:
        block = self.cursor_block
        if block is None:
            return
        if block.expandable and block.expanded:
            self.action_fold()
        elif block.foldable and not block.folded:
            self._set_folded(block, True)
        elif block.parent is not None and block.parent in self._blocks:
            self.cursor = self._starts[self._blocks.index(block.parent)]
        else:
            self.cursor = self._starts[self._blocks.index(block)]

    def action_next_block(self) -> None:
        block = self.cursor_block
        if block is None:
            return
        index = self._blocks.index(block)
        for later in range(index + 1, len(self._blocks)):
            if self._blocks[later].depth <= block.depth:
                self.cursor = self._starts[later]
                return
        self.cursor = self._total - 1

    def action_previous_block(self) -> None:
        block = self.cursor_block
        if block is None:
            return
        index = self._blocks.index(block)
        if self.cursor > self._starts[index]:
            self.cursor = self._starts[index]
            return
        for earlier in range(index - 1, -1, -1):
            if self._blocks[earlier].depth <= block.depth:
                self.cursor = self._starts[earlier]
                return
        self.cursor = 0

    def on_click(self, event: Click) -> None:
        """A click moves the cursor; on a fold's note (… more lines) it unfolds, on a ▸/▾ it
        opens or closes."""
        super().on_click(event)
        block, offset = self.block_at(self.cursor)
        if block is None:
            return
        line = block.lines(self._width)[offset]
        text = "".join(t for t, _ in line.pieces)
        on_marker = offset == 0 and block.expandable and event.x - 1 - line.indent in (0, 1)
        if on_marker or (line.source is None and text.endswith("enter unfolds")):
            self.action_fold()

    def action_copy(self) -> None:
        block = self.cursor_block
        if block is not None:
            self.post_message(self.CopyRequested(block.copy_text(), block.what))

    # -- search ----------------------------------------------------------------------------------

    def search(self, query: str, backwards: bool = False) -> bool:
        """Go to the next (or previous) match of `query`, case-insensitive, opening and
        unfolding what hides it; False if nothing matches."""
        if bool(query) != bool(self.search_text):
            self.refresh_bindings()
        self.search_text = query
        if not query:
            self.pattern, self.current = None, None
            self.refresh()
            return False
        self.pattern = re.compile(re.escape(query), re.IGNORECASE)
        found = self._find(self.pattern, backwards)
        self.current = found
        if found is None:
            self.refresh()
            return False
        self._reveal(found)
        return True

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # n and N show (and act) once there is a search to repeat: the footer has no room to
        # spare at 80 columns.
        if action in ("next_match", "previous_match"):
            return bool(self.search_text)
        return True

    def action_next_match(self, backwards: bool = False) -> None:
        if not self.search_text:
            self.notify("Search with / first.", timeout=3)
        elif not self.search(self.search_text, backwards):
            self.notify("No match.", timeout=3)

    def action_previous_match(self) -> None:
        self.action_next_match(backwards=True)

    def _position(self) -> tuple[Block | None, int, int]:
        """Where a search starts: the current match, else the cursor's row."""
        if self.current is not None and self.current.block in self._blocks:
            return self.current.block, self.current.line, self.current.start
        block, offset = self.block_at(self.cursor)
        if block is None:
            return None, -1, -1
        line = block.lines(self._width)[offset]
        if line.source is None:
            return block, -1 if offset == 0 else 1 << 62, -1
        return block, line.source.line, line.source.start - 1

    def _find(self, pattern: re.Pattern[str], backwards: bool) -> Match | None:
        block, line, start = self._position()
        return find_match(self.roots, pattern, (block, line, start), backwards)

    def _reveal(self, found: Match) -> None:
        """Open the blocks above a match, unfold its block if need be, and go to it."""
        parent = found.block.parent
        while parent is not None:
            parent.expanded = True
            parent.invalidate()
            parent = parent.parent
        self._relayout()
        block = found.block
        row = row_of(found, self._blocks, self._starts, self._width)
        if row is None and found.line >= 0:
            block.folded = False
            block.invalidate()
            self._relayout()
            row = row_of(found, self._blocks, self._starts, self._width)
        self.cursor = row if row is not None else self._starts[self._blocks.index(block)]
        self._center(self.cursor)

    def _center(self, row: int) -> None:
        height = self.scrollable_content_region.height or self.size.height
        self.scroll_to(y=max(0, row - height // 3), animate=False, immediate=True)
        self.refresh()
