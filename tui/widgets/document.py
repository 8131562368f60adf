"""DocumentView: a long read drawn line by line (a conversation, a span's fields and attributes).

A document is a tree of blocks: each has a header row and/or a body of untrusted text wrapped
below it, and maybe children shown when it is expanded (a JSON object, a message's parts).
Only what is on screen is drawn, and a body is laid out only as far as it shows: a long body is
folded to its first rows (`enter` unfolds it), so a megabyte costs its first screen until asked
for. Text comes through `tui.text.wrap`: controls made visible, no markup, no links.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from tui.text import ELLIPSIS, Row, shown_line, visible, wrap
from tui.widgets.virtual_rows import VirtualRows

Piece = tuple[str, str]  # (visible text, style name)

FOLD_ROWS = 12  # a folded body shows this many rows...
FOLD_SLACK = 4  # ... and a body at most this many rows longer is not folded at all
MAX_SHOWN_CHARS = 2_000_000  # an unfolded body shows this much; y copies the whole of it
MAX_SEARCH_BLOCKS = 50_000  # blocks a search looks through (opening lazy JSON nodes)


def piece(value: object, style: str = "", limit: int = 400) -> Piece:
    """A server value for a header: made visible (no markup, controls shown), cut short."""
    text = value if isinstance(value, str) else str(value)
    if len(text) > limit:
        text = text[: limit - 1] + ELLIPSIS
    return visible(text), style


class Block:
    """One part of a document. `header` pieces must already be visible text (see `piece`)."""

    def __init__(
        self,
        header: Sequence[Piece] = (),
        body: str | None = None,
        *,
        code: bool = False,
        depth: int = 0,
        body_indent: int = 0,
        fold_rows: int | None = FOLD_ROWS,
        copy: str | Callable[[], str] | None = None,
        what: str = "text",
        children: Sequence[Block] | Callable[[], list[Block]] | None = None,
        expanded: bool = False,
        rule: bool = False,
        tail: Sequence[Piece] = (),
        gap: bool = False,
        indent: int | None = None,
        inline: str | None = None,
    ) -> None:
        self.header = tuple(header)
        self.body = body
        self.code = code
        self.depth = depth
        self.body_indent = body_indent
        self.fold_rows = fold_rows
        self.copy = copy
        self.what = what
        self._children = children
        self.expanded = expanded
        self.rule = rule
        self.tail = tuple(tail)
        self.gap = gap
        self.indent = 2 * depth if indent is None else indent
        self.inline = inline  # a one-line body that fits goes on the header row, in this style
        self.folded = True
        self.foldable = False  # known after layout: the body is longer than its fold
        self.parent: Block | None = None
        self._lines: list[_Line] | None = None
        self._width = -1

    @property
    def expandable(self) -> bool:
        return self._children is not None

    def children(self) -> list[Block]:
        """The child blocks, made on first use (a JSON node opens lazily)."""
        if self._children is None:
            return []
        if callable(self._children):
            self._children = self._children()
        for child in self._children:
            child.parent = self
        return list(self._children)

    def copy_text(self) -> str:
        if callable(self.copy):
            return self.copy()
        if self.copy is not None:
            return self.copy
        if self.body is not None:
            return self.body
        return "".join(text for text, _ in self.header)

    def invalidate(self) -> None:
        self._lines = None

    def lines(self, width: int) -> list[_Line]:
        """The rows of this block at `width` cells (the gutter excluded)."""
        if self._lines is not None and self._width == width:
            return self._lines
        self._width = width
        self._lines = self._layout(width)
        return self._lines

    def _layout(self, width: int) -> list[_Line]:
        indent = self.indent
        lines: list[_Line] = []
        pieces: list[Piece] = []
        if self.expandable:
            pieces.append(("▾ " if self.expanded else "▸ ", "marker"))
        pieces += self.header
        body = self.body
        if self.inline is not None and body is not None and len(body) <= width and "\n" not in body:
            value = shown_line(body)
            lead = sum(len(text) for text, _ in pieces)
            if sum(cell_len(text) for text, _ in pieces) + cell_len(value) <= width - indent:
                pieces.append((value, self.inline))
                lines.append(_Line(tuple(pieces), indent, Row((), 0, 0, lead)))
                body = None
        if not lines and pieces:
            lines.append(_Line(_header_row(pieces, self.tail, width - indent, self.rule), indent))
        if body is not None:
            lines += self._body_lines(width, indent + self.body_indent)
        if self.gap:
            lines.append(_Line((), 0))
        return lines

    def _body_lines(self, width: int, indent: int) -> list[_Line]:
        assert self.body is not None
        text = self.body
        room = max(8, width - indent)
        limit = None
        if self.fold_rows is not None and self.folded:
            limit = self.fold_rows + FOLD_SLACK
        clipped = len(text) > MAX_SHOWN_CHARS and limit is None
        wrapped = wrap(
            text[:MAX_SHOWN_CHARS] if clipped else text, room, code=self.code, limit=limit
        )
        rows = wrapped.rows
        note: str | None = None
        self.foldable = self.foldable or bool(wrapped.more_lines)
        if wrapped.more_lines and self.fold_rows is not None:
            hidden = rows[self.fold_rows :]
            rows = rows[: self.fold_rows]
            total = text.count("\n", 0, len(text.rstrip("\n"))) + 1
            first_hidden = hidden[0].line if hidden else total - wrapped.more_lines
            more = total - first_hidden
            if more > 1:
                note = f"… {more:,} more lines · enter unfolds"
            else:
                rest = wrapped.more_chars + sum(len(r.plain) for r in hidden)
                note = f"… {rest:,} more characters · enter unfolds"
        elif clipped:
            note = (
                f"… {len(text) - MAX_SHOWN_CHARS:,} more characters not shown here: "
                "y copies all of it"
            )
        lines = [_Line(row.pieces, indent, row) for row in rows]
        if note:
            lines.append(_Line(((note, "note"),), indent))
        return lines


class _Line(NamedTuple):
    pieces: tuple[Piece, ...]
    indent: int
    source: Row | None = None  # a body row: where in the body it comes from


def _cut(pieces: Sequence[Piece], width: int) -> tuple[list[Piece], int]:
    """Pieces cut to `width` cells (an ellipsis where cut), and the cells they take."""
    out: list[Piece] = []
    used = 0
    for text, style in pieces:
        size = cell_len(text)
        if used + size > width:
            room = width - used
            if room > 0:
                out.append((set_cell_size(text, room - 1) + ELLIPSIS, style))
            return out, width
        out.append((text, style))
        used += size
    return out, used


def _header_row(
    pieces: Sequence[Piece], tail: Sequence[Piece], width: int, rule: bool
) -> tuple[Piece, ...]:
    """A header: its pieces cut to fit, a rule to the right edge if asked, and the tail (an
    output's finish reason, say) right-aligned, itself cut when the row is short."""
    tail_cells = sum(cell_len(text) for text, _ in tail)
    head_room = width - min(tail_cells, max(10, width // 3)) - 3 if tail else width
    out, used = _cut(pieces, max(1, head_room))
    end: list[Piece] = []
    if tail and width - used - 3 >= 4:
        end, cells = _cut(tail, width - used - 3)
        end.insert(0, (" ", "rule"))
        used_end = cells + 1
    else:
        used_end = 0
    filler = width - used - used_end
    if (rule or end) and filler > 0:
        out.append(((" " + "─" * (filler - 1)) if rule else " " * filler, "rule"))
    return (*out, *end)


def _all_blocks(roots: Sequence[Block], budget: int) -> list[Block]:
    """Every block in document order, children of collapsed ones included (made if needed)."""
    out: list[Block] = []
    stack = list(reversed(roots))
    while stack and len(out) < budget:
        block = stack.pop()
        out.append(block)
        if block.expandable:
            stack.extend(reversed(block.children()))
    return out


# The styles that bring their own background; the others take the row's.
BASE, CURSOR = "-base", "-cursor"
_BACKGROUNDS = frozenset(["code", "inline-code", "match", "match-current", BASE, CURSOR])


class Match(NamedTuple):
    block: Block
    line: int  # -1: the header
    start: int
    end: int


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
            pieces = self._highlighted(block, line, pieces)
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

    def _highlighted(self, block: Block, line: _Line, pieces: list[Piece]) -> list[Piece]:
        """The pieces with this search's matches styled (the current one distinctly)."""
        assert self.pattern is not None
        plain = "".join(text for text, _ in pieces)
        lead = line.source.lead if line.source is not None else 0
        spans = []
        for found in self.pattern.finditer(plain):
            if found.end() == found.start():
                continue
            style = "match"
            current = self.current
            if current is not None and current.block is block:
                if line.source is None and current.line == -1:
                    style = "match-current"
                elif line.source is not None and current.line == line.source.line:
                    at = line.source.start + found.start() - lead
                    if at == current.start:
                        style = "match-current"
            spans.append((found.start(), found.end(), style))
        if not spans:
            return pieces
        out: list[Piece] = []
        pos = 0
        for text, style in pieces:
            end = pos + len(text)
            cut = pos
            for s, e, mark in spans:
                if e <= cut or s >= end:
                    continue
                if s > cut:
                    out.append((text[cut - pos : s - pos], style))
                out.append((text[max(s, cut) - pos : min(e, end) - pos], mark))
                cut = min(e, end)
            if cut < end:
                out.append((text[cut - pos :], style))
            pos = end
        return out

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
        blocks = _all_blocks(self.roots, MAX_SEARCH_BLOCKS)
        if not blocks:
            return None
        block, line, start = self._position()
        index = blocks.index(block) if block in blocks else 0
        here = (line, start)
        order = list(range(index, len(blocks))) + list(range(index + 1))
        if backwards:
            order = list(range(index, -1, -1)) + list(range(len(blocks) - 1, index - 1, -1))
        for step, i in enumerate(order):
            candidates = list(_matches(blocks[i], pattern))
            if backwards:
                candidates.reverse()
            for found in candidates:
                position = (found.line, found.start)
                if step == 0 and (position <= here if not backwards else position >= here):
                    continue
                last = step == len(order) - 1 and i == index
                if last and (position > here if not backwards else position < here):
                    continue
                return found
        return None

    def _reveal(self, found: Match) -> None:
        """Open the blocks above a match, unfold its block if need be, and go to it."""
        parent = found.block.parent
        while parent is not None:
            parent.expanded = True
            parent.invalidate()
            parent = parent.parent
        self._relayout()
        block = found.block
        row = self._row_of(found)
        if row is None and found.line >= 0:
            block.folded = False
            block.invalidate()
            self._relayout()
            row = self._row_of(found)
        self.cursor = row if row is not None else self._starts[self._blocks.index(block)]
        self._center(self.cursor)

    def _row_of(self, found: Match) -> int | None:
        if found.block not in self._blocks:
            return None
        start = self._starts[self._blocks.index(found.block)]
        if found.line == -1:
            return start
        best = None
        for offset, line in enumerate(found.block.lines(self._width)):
            source = line.source
            if source is not None and source.line == found.line and source.start <= found.start:
                best = start + offset
        return best

    def _center(self, row: int) -> None:
        height = self.scrollable_content_region.height or self.size.height
        self.scroll_to(y=max(0, row - height // 3), animate=False, immediate=True)
        self.refresh()


# What a shown line may hold where the text has something else (a control's stand-in, a tab's
# spaces): a query holding one is looked for line by line, never ruled out on the raw text.
_STAND_INS = re.compile("[<\u2400-\u2426]|  ")


def _matches(block: Block, pattern: re.Pattern[str]) -> Iterator[Match]:
    header = "".join(text for text, _ in block.header)
    for found in pattern.finditer(header):
        yield Match(block, -1, found.start(), found.end())
    body = block.body
    if not body:
        return
    if not _STAND_INS.search(pattern.pattern) and pattern.search(body) is None:
        return  # the raw text does not hold it, so neither does what is shown
    pos, line_no, n = 0, 0, len(body)
    while pos <= n:
        end = body.find("\n", pos)
        if end == -1:
            end = n
        line = shown_line(body[pos:end])
        for found in pattern.finditer(line):
            if found.end() > found.start():
                yield Match(block, line_no, found.start(), found.end())
        pos = end + 1
        line_no += 1
