"""The parts of searching a DocumentView that need no widget: styling the matches among a row's
pieces, and finding the row that shows a match once the blocks are laid out."""

from __future__ import annotations

import re

from tui.ui.widgets.blocks import Block, Line, Match, Piece


def highlighted(
    block: Block,
    line: Line,
    pieces: list[Piece],
    pattern: re.Pattern[str],
    current: Match | None,
) -> list[Piece]:
    """The pieces of `line` (a row of `block`) with the matches of `pattern` styled, the
    current match distinctly."""
    plain = "".join(text for text, _ in pieces)
    lead = line.source.lead if line.source is not None else 0
    spans = []
    for found in pattern.finditer(plain):
        if found.end() == found.start():
            continue
        style = "match"
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


def row_of(found: Match, blocks: list[Block], starts: list[int], width: int) -> int | None:
    """The row showing a match, among `blocks` laid out at `width` from rows `starts`; None
    when its block or its line does not show (closed above, or folded away)."""
    if found.block not in blocks:
        return None
    start = starts[blocks.index(found.block)]
    if found.line == -1:
        return start
    best = None
    for offset, line in enumerate(found.block.lines(width)):
        source = line.source
        if source is not None and source.line == found.line and source.start <= found.start:
            best = start + offset
    return best
