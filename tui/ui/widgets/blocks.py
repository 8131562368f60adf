"""Document blocks (no Textual): what DocumentView shows, laid out only as far as it shows.

A document is a tree of blocks: each has a header row and/or a body of untrusted text wrapped
below it (through `tui.model.text.wrap`), and maybe children shown when it is expanded (a JSON
object, a message's parts). A long body folds to its first rows, counting the rest, so a
megabyte costs its first screen until it is unfolded. Search looks through every block, the
closed and the folded ones too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple

from rich.cells import cell_len, set_cell_size

from tui.model.formatting import counted
from tui.model.text import ELLIPSIS, Row, shown_line, visible, wrap

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
        self._lines: list[Line] | None = None
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

    def lines(self, width: int) -> list[Line]:
        """The rows of this block at `width` cells (the gutter excluded)."""
        if self._lines is not None and self._width == width:
            return self._lines
        self._width = width
        self._lines = self._layout(width)
        return self._lines

    def _layout(self, width: int) -> list[Line]:
        indent = self.indent
        lines: list[Line] = []
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
                lines.append(Line(tuple(pieces), indent, Row((), 0, 0, lead)))
                body = None
        if not lines and pieces:
            lines.append(Line(_header_row(pieces, self.tail, width - indent, self.rule), indent))
        if body is not None:
            lines += self._body_lines(width, indent + self.body_indent)
        if self.gap:
            lines.append(Line((), 0))
        return lines

    def _body_lines(self, width: int, indent: int) -> list[Line]:
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
                note = f"… {counted(more, 'more line')} · enter unfolds"
            else:
                rest = wrapped.more_chars + sum(len(r.plain) for r in hidden)
                note = f"… {counted(rest, 'more character')} · enter unfolds"
        elif clipped:
            note = (
                f"… {counted(len(text) - MAX_SHOWN_CHARS, 'more character')} not shown here: "
                "y copies all of it"
            )
        lines = [Line(row.pieces, indent, row) for row in rows]
        if note:
            lines.append(Line(((note, "note"),), indent))
        return lines


class Line(NamedTuple):
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


def all_blocks(roots: Sequence[Block], budget: int) -> list[Block]:
    """Every block in document order, children of collapsed ones included (made if needed)."""
    out: list[Block] = []
    stack = list(reversed(roots))
    while stack and len(out) < budget:
        block = stack.pop()
        out.append(block)
        if block.expandable:
            stack.extend(reversed(block.children()))
    return out


class Match(NamedTuple):
    block: Block
    line: int  # -1: the header
    start: int
    end: int


def find_match(
    roots: Sequence[Block],
    pattern: re.Pattern[str],
    after: tuple[Block | None, int, int],
    backwards: bool = False,
) -> Match | None:
    """The next (or previous) match of `pattern` after the position `after` (a block, a body
    line or -1 for its header, a column), in document order, wrapping around; closed and
    folded blocks included."""
    blocks = all_blocks(roots, MAX_SEARCH_BLOCKS)
    if not blocks:
        return None
    block, line, start = after
    index = blocks.index(block) if block in blocks else 0
    here = (line, start)
    order = [*range(index, len(blocks)), *range(index + 1)]
    if backwards:
        order = [*range(index, -1, -1), *range(len(blocks) - 1, index - 1, -1)]
    for step, i in enumerate(order):
        found_here = matches(blocks[i], pattern)
        candidates = reversed(list(found_here)) if backwards else found_here
        for found in candidates:
            position = (found.line, found.start)
            if step == 0 and (position >= here if backwards else position <= here):
                continue  # not past where the search starts
            last = step == len(order) - 1
            if last and (position < here if backwards else position > here):
                continue  # wrapped round: past where it started
            return found
    return None


# What a shown line may hold where the text has something else (a control's stand-in, a tab's
# spaces): a query holding one is looked for line by line, never ruled out on the raw text.
_STAND_INS = re.compile("[<\u2400-\u2426]|  ")


def matches(block: Block, pattern: re.Pattern[str]) -> Iterator[Match]:
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
