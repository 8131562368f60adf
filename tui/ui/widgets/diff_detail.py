"""The selected pair of a trace diff, as a document: its fields before → after with their
deltas, then each text that differs (error, prompt, messages, tool arguments and results,
documents, attributes) as a word-level diff, `-` lines from A and `+` lines from B with the
changed words marked (bold, reversed: not by colour alone), long runs of unchanged lines folded.

A DocumentView (tui/ui/widgets/document.py) with the diff's styles: folding (enter), search
(/ through the screen), copy (y) and [ ] work as on a trace. Every string from a span is made
visible (tui/model/text.py) before it is laid out; nothing is markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.cells import get_character_cell_size
from rich.text import Text

from tui.api import Trace
from tui.model import formatting as fmt
from tui.model.diff import ADDED, CHANGED, REMOVED, Fact, PairDetail, Section, Sentence, TextDiff
from tui.model.diff.summary import ERROR, NAME
from tui.model.diff.words import FOLD
from tui.model.diff.words import Line as DiffLine
from tui.model.text import Row, safe_text, visible
from tui.ui.widgets.blocks import FOLD_SLACK, Block, Line, Piece, piece
from tui.ui.widgets.document import DocumentView

DIFF_FOLD_ROWS = 24  # rows of a text's diff shown before "enter unfolds"
GUTTER = 2  # "- ", "+ ", "  " before each line
LABEL = 11

STATUS_WORDS = {
    CHANGED: ("~ changed", "changed"),
    ADDED: ("+ only in B", "added"),
    REMOVED: ("- only in A", "removed"),
}
# (style of the line, style of its changed words) by sign
LINE_STYLES = {"-": ("removed", "removed-word"), "+": ("added", "added-word"), " ": ("", "")}


def shown(text: str) -> str:
    """A piece of a diff line as it is drawn: controls made visible, tabs as four spaces."""
    return visible(text, multiline=True).replace("\t", "    ")


def _split(text: str, room: int) -> int:
    """How many characters of `text` fit in `room` cells (at least one)."""
    if text.isascii():
        return max(1, min(len(text), room))
    cells = 0
    for n, char in enumerate(text):
        cells += get_character_cell_size(char)
        if cells > room:
            return max(1, n)
    return len(text)


def wrap_pieces(pieces: Sequence[Piece], width: int) -> list[list[tuple[Piece, int]]]:
    """Pieces of one line in rows of at most `width` cells, broken after a space when the row
    has one; each row's pieces with the offset in the line of its first character."""
    plain = "".join(text for text, _ in pieces)
    breaks: list[int] = []
    pos, n = 0, len(plain)
    while pos < n:
        end = pos + _split(plain[pos:], width)
        if end < n:
            cut = plain.rfind(" ", pos + 1, end)
            if cut > pos:
                end = cut + 1
        breaks.append(end)
        pos = end
    rows: list[list[tuple[Piece, int]]] = []
    start = 0
    for end in breaks or [0]:
        row: list[tuple[Piece, int]] = []
        offset = 0
        for text, style in pieces:
            lo, hi = max(start, offset), min(end, offset + len(text))
            if lo < hi:
                row.append(((text[lo - offset : hi - offset], style), lo))
            offset += len(text)
        rows.append(row)
        start = end
    return rows


class WrappedBlock(Block):
    """A header of pieces wrapped to the width (a sentence, a field's long values) instead of
    cut; continuation rows indented by `hang`."""

    def __init__(self, pieces: Sequence[Piece], hang: int = 2, **kwargs: Any) -> None:
        super().__init__(pieces, **kwargs)
        self.hang = hang

    def _layout(self, width: int) -> list[Line]:
        room = max(8, width - self.indent)
        rows = wrap_pieces(self.header, room)[:1]  # the first row has the whole width
        taken = sum(len(p[0]) for p, _ in rows[0]) if rows else 0
        rest = self._rest(taken)
        if rest:
            rows += wrap_pieces(rest, max(8, room - self.hang))
        lines = []
        for n, row in enumerate(rows):
            lead = (" " * self.hang, "") if n else ("", "")
            lines.append(Line((lead, *(p for p, _ in row)), self.indent))
        if self.gap:
            lines.append(Line((), 0))
        return lines

    def _rest(self, taken: int) -> list[Piece]:
        """The header's pieces after its first `taken` characters."""
        out: list[Piece] = []
        for text, style in self.header:
            if taken >= len(text):
                taken -= len(text)
                continue
            out.append((text[taken:], style))
            taken = 0
        return out


class DiffTextBlock(Block):
    """One text's diff: a title row, then its lines wrapped to the width, a sign before each;
    folded to its first DIFF_FOLD_ROWS rows (enter unfolds)."""

    def __init__(self, section: Section, depth: int = 0) -> None:
        self.section = section
        # Each line made visible when first laid out or searched: a megabyte rewritten is
        # thousands of lines, and a folded block shows 24 rows of them.
        self._shown: list[tuple[str, tuple[Piece, ...]] | None] = [None] * len(section.diff.lines)
        self._body: str | None = None
        title: list[Piece] = [piece(section.title, "key", 200)]
        word, style = STATUS_WORDS.get(section.status, ("", ""))
        counts = _word_counts(section.diff)
        title += [("  ", ""), (word, style)] + ([("  " + counts, "dim")] if counts else [])
        super().__init__(
            title,
            None,
            depth=depth,
            fold_rows=DIFF_FOLD_ROWS,
            copy=lambda: _copy_text(section.diff),
            what=section.title,
            gap=True,
        )

    def shown_line(self, number: int) -> tuple[str, tuple[Piece, ...]]:
        found = self._shown[number]
        if found is None:
            found = self._shown[number] = _shown_line(self.section.diff.lines[number])
        return found

    @property
    def body(self) -> str | None:
        """The lines as shown, one a line (what search looks through), joined when asked for."""
        if self._body is None and self._shown:
            self._body = "\n".join(
                "".join(text for text, _ in self.shown_line(n)[1]) for n in range(len(self._shown))
            )
        return self._body

    @body.setter
    def body(self, value: str | None) -> None:
        self._body = value

    def _layout(self, width: int) -> list[Line]:
        indent = self.indent
        lines = [Line(tuple(self.header), indent)]
        room = max(8, width - indent - GUTTER)
        limit = DIFF_FOLD_ROWS + FOLD_SLACK if self.folded else None
        rows: list[Line] = []
        total_lines = len(self._shown)
        stopped_at: int | None = None
        for number in range(total_lines):
            if limit is not None and len(rows) >= limit:
                stopped_at = number
                break
            sign, pieces = self.shown_line(number)
            gutter_style = LINE_STYLES.get(sign, ("", ""))[0] if sign != FOLD else "note"
            for k, row in enumerate(wrap_pieces(pieces, room)):
                lead = ((sign if sign != FOLD else " ") + " " if k == 0 else "  ", gutter_style)
                start = row[0][1] if row else 0
                rows.append(
                    Line((lead, *(p for p, _ in row)), indent, Row((), number, start, GUTTER))
                )
        self.foldable = self.foldable or stopped_at is not None
        if stopped_at is not None:
            rows = rows[:DIFF_FOLD_ROWS]
            more = total_lines - (rows[-1].source.line if rows[-1].source else 0) - 1
            rows.append(Line(((f"… {more:,} more lines · enter unfolds", "note"),), indent))
        if self.section.diff.cut:
            note = f"… {self.section.diff.cut:,} more lines not shown (y copies those shown)"
            rows.append(Line(((note, "note"),), indent))
        lines += rows
        if self.gap:
            lines.append(Line((), 0))
        return lines


def _shown_line(line: DiffLine) -> tuple[str, tuple[Piece, ...]]:
    """(sign, pieces made visible and styled) of one diff line."""
    if line.sign == FOLD:
        return FOLD, (
            (f"… {line.folded:,} unchanged line{'s' if line.folded != 1 else ''}", "note"),
        )
    plain_style, word_style = LINE_STYLES.get(line.sign, ("", ""))
    return line.sign, tuple(
        (shown(text), word_style if changed else plain_style) for text, changed in line.pieces
    )


def _word_counts(diff: TextDiff) -> str:
    parts = []
    if diff.removed_words:
        parts.append(f"−{diff.removed_words:,}")
    if diff.added_words:
        parts.append(f"+{diff.added_words:,}")
    total = diff.removed_words + diff.added_words
    return " ".join(parts) + (" word" if total == 1 else " words") if parts else ""


def _copy_text(diff: TextDiff) -> str:
    """The diff as unified text (what `y` copies)."""
    out = []
    for line in diff.lines:
        if line.sign == FOLD:
            out.append(f"… {line.folded:,} unchanged lines")
        else:
            out.append(f"{line.sign} {line.text}")
    return "\n".join(out)


def fact_block(fact: Fact) -> Block:
    """A field that differs: `model      claude-3-5-sonnet → gpt-4o-mini`, and its delta."""
    header: list[Piece] = [(f"{fact.label:<{LABEL}}", "label")]
    header += [piece(fact.before, "removed", 200), (" → ", "dim"), piece(fact.after, "added", 200)]
    if fact.delta:
        header += [("  ", ""), (fact.delta, "key")]
    copy = f"{fact.label}: {fact.before} → {fact.after}"
    return WrappedBlock(header, hang=LABEL, copy=copy, what=fact.label)


def detail_blocks(detail: PairDetail) -> list[Block]:
    """The blocks of one pair: its status and name, the fields that differ (the others in one
    dim line), each text that differs, and what is alike."""
    word, style = STATUS_WORDS.get(detail.status, ("= same", "dim"))
    blocks = [Block([(word, style), ("  ", ""), piece(detail.name, "key", 200)], gap=False)]
    changed = [f for f in detail.facts if f.changed]
    blocks += [fact_block(f) for f in changed]
    alike = [f for f in detail.facts if not f.changed and f.before != "–"]
    if alike:
        text = " · ".join(f"{f.label} {f.after}" for f in alike)
        blocks.append(WrappedBlock([piece(f"same: {text}", "dim", 1000)], gap=True))
    elif changed:
        blocks[-1].gap = True
    blocks += [DiffTextBlock(section) for section in detail.sections]
    if detail.unchanged:
        names = ", ".join(detail.unchanged)
        blocks.append(WrappedBlock([piece(f"alike in both: {names}", "dim", 2000)]))
    if detail.volatile:
        blocks.append(Block([(f"{detail.volatile:,} ids and times differ (not compared)", "dim")]))
    if detail.status == "same" and not detail.sections:
        blocks.append(Block([("Nothing differs in this span (durations within noise).", "note")]))
    return blocks


def sentence_text(sentence: Sentence) -> Text:
    """A summary sentence: names bold, errors red, all of it made visible (never markup)."""
    text = Text()
    for part, kind in sentence:
        style = "bold" if kind == NAME else "red" if kind == ERROR else ""
        text.append_text(safe_text(part, 400, style=style))
    return text


def trace_line(label: str, trace: Trace) -> Text:
    """One of the two traces, for the diff's header: B in reverse video."""
    line = Text(f"{label} ", style="bold reverse" if label == "B" else "bold")
    line.append(" ")
    line.append_text(safe_text(trace.id or "?", 16, style="dim"))
    line.append(" ")
    line.append_text(safe_text(trace.name or "", 40, style="bold"))
    line.append(f"  {fmt.local_time(trace.started_at)} · {fmt.duration(trace.duration_ms)} · ")
    if trace.is_error:
        line.append("✗ error", style="bold red")
    else:
        line.append("✓ ok", style="green")
    return line


class DiffDocument(DocumentView):
    """A DocumentView with the diff's styles."""

    COMPONENT_CLASSES = {
        "document--added",
        "document--removed",
        "document--added-word",
        "document--removed-word",
        "document--changed",
    }
    DEFAULT_CSS = """
    DiffDocument > .document--added { color: $text-success; }
    DiffDocument > .document--removed { color: $text-error; }
    DiffDocument > .document--added-word { color: $text-success; text-style: bold reverse; }
    DiffDocument > .document--removed-word { color: $text-error; text-style: bold reverse; }
    DiffDocument > .document--changed { color: $text-warning; text-style: bold; }
    """

    def show_detail(self, detail: PairDetail | None, note: str = "") -> None:
        if detail is None:
            self.show([Block([(note or "No span selected.", "note")])])
            return
        self.show(detail_blocks(detail))
