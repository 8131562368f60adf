"""The one safe way to turn untrusted strings (anything a server sent) into renderables.

Server strings are data, never markup: Textual parses markup in plain `str` labels, cells and
notifications, and markup can carry actions (`[@click=app.quit]`). ESC sequences would reach the
terminal and could clear it or write the clipboard. So every server string is built into a
`rich.text.Text` from its plain characters (no markup parsing), with every character a reader
cannot see replaced by a visible stand-in, and optionally truncated with an ellipsis.

What counts as unseen: controls (C0, DEL, C1), format characters (Unicode category Cf: bidi
marks and isolates, zero-width spaces and joiners, the word joiner, tag characters, the soft
hyphen), line and paragraph separators, lone UTF-16 halves, and the other default-ignorable
code points (Hangul fillers, the combining grapheme joiner, unassigned ignorables), which a
terminal draws as nothing and which can hide text or smuggle it past a reader. Variation
selectors are the exception that keeps emoji whole: one right after a drawn character picks
that character's glyph (the U+FE0F of "❤️") and stays; any other (a run of them, or one after
nothing drawn) is what hides data, and is shown.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from rich.cells import get_character_cell_size
from rich.text import Text

ELLIPSIS = "…"

# Code point ranges (inclusive) shown as <U+XXXX>, beside the C0 controls and DEL. Category Cf
# as of Unicode 16 (a newer Python's additions included), Zl and Zp, C1, the surrogates, and the
# default-ignorable code points of DerivedCoreProperties that are not Cf.
_UNSEEN_RANGES: tuple[tuple[int, int], ...] = (
    (0x0080, 0x009F),  # C1 controls: CSI (0x9B) and OSC (0x9D) on some terminals
    (0x00AD, 0x00AD),  # soft hyphen
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x0600, 0x0605),  # Arabic number signs (prepended marks)
    (0x061C, 0x061C),  # Arabic letter mark (bidi)
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x115F, 0x1160),  # Hangul choseong/jungseong fillers
    (0x17B4, 0x17B5),  # Khmer inherent vowels
    (0x180E, 0x180E),  # Mongolian vowel separator
    (0x200B, 0x200F),  # zero-width space, non-joiner, joiner; LRM, RLM
    (0x2028, 0x202E),  # line and paragraph separators; bidi embeddings and overrides
    (0x2060, 0x206F),  # word joiner, invisible operators, bidi isolates, deprecated formats
    (0x3164, 0x3164),  # Hangul filler
    (0xD800, 0xDFFF),  # halves of UTF-16 pairs: JSON can escape one alone ("\ud800")
    (0xFEFF, 0xFEFF),  # zero-width no-break space (BOM)
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xFFF0, 0xFFFB),  # unassigned ignorables; interlinear annotation marks
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),  # Egyptian hieroglyph format controls
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
    (0x1D173, 0x1D17A),  # musical symbol format controls
    (0xE0000, 0xE00FF),  # language tag and tag characters (U+E0041 is an invisible "A")
    (0xE01F0, 0xE0FFF),  # unassigned ignorables
)

# Variation selectors (Mongolian free variation selectors, VS1-16, VS17-256): one right after a
# drawn character stays (it picks the glyph), any other is shown.
_SELECTOR_RANGES: tuple[tuple[int, int], ...] = (
    (0x180B, 0x180D),
    (0x180F, 0x180F),
    (0xFE00, 0xFE0F),
    (0xE0100, 0xE01EF),
)


def _stand_in(code: int) -> str:
    return f"<U+{code:04X}>"


def _class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
        for a, b in ranges
    )


@cache
def _tables() -> tuple[dict[int, str], dict[int, str]]:
    """str.translate's tables (one line; multiline): some 8,000 entries, a few ms to build, so
    they are built for the first string that needs one, not on the way to the app's first
    frame."""
    table = {
        # C0 controls become their Unicode "control pictures" (U+2400 + code): ␛ for ESC.
        **{code: chr(0x2400 + code) for code in range(0x20)},
        0x7F: "␡",
        **{code: _stand_in(code) for a, b in _UNSEEN_RANGES for code in range(a, b + 1)},
    }
    return table, {k: v for k, v in table.items() if k not in (0x0A, 0x09)}


_UNSEEN_CLASS = "\x00-\x1f\x7f" + _class(_UNSEEN_RANGES)
_SELECTOR_CLASS = _class(_SELECTOR_RANGES)
_NEEDS_WORK = re.compile(f"[{_UNSEEN_CLASS}{_SELECTOR_CLASS}]")
_ASCII_NEEDS_WORK = re.compile("[\x00-\x1f\x7f]")  # the same for ASCII text, three times faster
_SELECTOR_RUN = re.compile(f"[{_SELECTOR_CLASS}]+")
# What a selector cannot pick a glyph of: a space, a control or another unseen character.
_UNDRAWN = re.compile(f"[\\s{_UNSEEN_CLASS}]")


def _show_selectors(text: str) -> str:
    """Variation selectors past the first after a drawn character, made visible."""

    def shown(found: re.Match[str]) -> str:
        run = found.group()
        start = found.start()
        keep = start > 0 and _UNDRAWN.match(text[start - 1]) is None
        return run[:1] * keep + "".join(_stand_in(ord(c)) for c in run[keep:])

    return _SELECTOR_RUN.sub(shown, text)


def visible(value: object, multiline: bool = False) -> str:
    """The characters of `value` with every control, format (bidi, zero-width, tag) and other
    unseen character made visible (see the module's docstring).

    `multiline` keeps newlines and tabs (for detail panels); otherwise they become ␊ and ␉.
    """
    text = "" if value is None else str(value)
    if not (_ASCII_NEEDS_WORK if text.isascii() else _NEEDS_WORK).search(text):
        return text
    one_line, multiline_table = _tables()
    return _show_selectors(text).translate(multiline_table if multiline else one_line)


def safe_text(
    value: object, max_length: int | None = None, style: str = "", multiline: bool = False
) -> Text:
    """A literal, inert Text of an untrusted value, cut to `max_length` cells with an ellipsis."""
    if max_length is not None and isinstance(value, str):
        value = value[: max_length + 1]  # a megabyte of text is not made visible to be cut
    text = visible(value, multiline=multiline)
    if max_length is not None and len(text) > max_length:
        text = text[: max(0, max_length - 1)] + ELLIPSIS
    return Text(text, style=style, no_wrap=not multiline, end="")


# A toast or a title shows at most this much of an untrusted value: a toast wrapping a megabyte
# froze the app.
NOTICE_MAX_CHARS = 500


def notice(value: object, max_length: int = NOTICE_MAX_CHARS) -> str:
    """An untrusted value for a toast or a title: plain text, made visible, cut with an ellipsis.

    Show it with markup off (the app's `notify` does): the characters are kept as they are."""
    return safe_text(value, max_length).plain


# -- wrapped multi-line text, for reading whole messages ---------------------------------------------
#
# `wrap` lays untrusted text out in rows of a given width: newlines kept, words wrapped, control
# characters made visible as above, tabs expanded. Light markdown structure is styled, never
# interpreted: headings, list items (their marker drawn as •), quotes, rules, `inline code`,
# **bold**, and code fences, whose lines become a code block with a │ gutter. Every character
# stays on screen as it came (nothing is hidden, no link is made), so what is searched is what
# is shown. Rows carry style *names*; the widget drawing them owns the actual styles.

CODE = "code"  # a line of a code block or of a JSON body
FENCE = "fence"  # a ``` line, and the gutter of code block lines
HEADING = "heading"
MARKER = "marker"  # a list item's bullet or number
QUOTE = "quote"
RULE = "rule"
BOLD = "bold"
INLINE_CODE = "inline-code"
GUTTER = "│ "

_HEADING = re.compile(r"#{1,6}\s")
_BULLET = re.compile(r"(\s*)([-*+])(\s+)")
_NUMBERED = re.compile(r"(\s*)(\d{1,9}[.)])(\s+)")
_RULE_LINE = re.compile(r"\s{0,3}([-*_])(\s*\1){2,}\s*")
_FENCE_LINE = re.compile(r"\s{0,3}(```|~~~)")
_INLINE = re.compile(r"`[^`\n]+`|\*\*[^*\n]+\*\*")
INLINE_MAX = 2000  # longer lines are not scanned for inline styles


@dataclass(frozen=True, slots=True)
class Row:
    """One display row: pieces of visible text with a style name each, and where the row comes
    from (its source line, and the offset in that shown line of its first character)."""

    pieces: tuple[tuple[str, str], ...]
    line: int
    start: int
    lead: int = 0  # characters before the source's (a code gutter, a list item's hanging indent)
    style: str = ""  # CODE for a row of code: its style runs to the end of the row

    @property
    def plain(self) -> str:
        return "".join(text for text, _ in self.pieces)


@dataclass
class Wrapped:
    rows: list[Row]
    more_lines: int = 0  # source lines not (wholly) laid out, when `limit` stopped the wrap
    more_chars: int = 0  # characters of the text not laid out


def shown_line(raw: str) -> str:
    """One source line as it is shown: a CR before the newline dropped, controls made visible,
    tabs expanded."""
    return visible(raw.removesuffix("\r"), multiline=True).expandtabs(4)


def _fit(line: str, pos: int, room: int) -> int:
    """The end of the characters from `pos` that fit in `room` cells (at least one)."""
    cells, i, n = 0, pos, len(line)
    while i < n:
        size = get_character_cell_size(line[i])
        if cells + size > room:
            break
        cells += size
        i += 1
    return max(i, pos + 1)


def _breaks(line: str, width: int, hang: int) -> Iterator[tuple[int, int]]:
    """Where `line` breaks into rows of `width` cells, continuation rows indented by `hang`:
    after a space when there is one, else where the width runs out. Lazily: a caller that
    needs the first rows of a megabyte line pays for those rows only."""
    n = len(line)
    if n == 0:
        yield 0, 0
        return
    simple = line.isascii()
    pos, first = 0, True
    while pos < n:
        room = max(1, width if first else width - hang)
        first = False
        end = min(n, pos + room) if simple else _fit(line, pos, room)
        if end < n:
            cut = line.rfind(" ", pos + 1, end + 1)
            if cut > pos:
                yield pos, cut
                pos = cut + 1
                continue
        yield pos, end
        pos = end


def _line_styles(line: str, in_fence: bool, code: bool) -> tuple[list[tuple[int, int, str]], int]:
    """Style spans over a shown line, and the hanging indent of its continuation rows."""
    n = len(line)
    if code or in_fence:
        return [(0, n, CODE)], len(line) - len(line.lstrip(" "))
    if _HEADING.match(line):
        return [(0, n, HEADING)], 0
    if _RULE_LINE.fullmatch(line):
        return [(0, n, RULE)], 0
    if line.lstrip().startswith(">"):
        return [(0, n, QUOTE)], 2
    spans: list[tuple[int, int, str]] = []
    hang = 0
    item = _BULLET.match(line) or _NUMBERED.match(line)
    if item:
        spans.append((item.start(2), item.end(2), MARKER))
        hang = item.end()
    if n <= INLINE_MAX and ("`" in line or "**" in line):
        for found in _INLINE.finditer(line, hang):
            spans.append(
                (found.start(), found.end(), INLINE_CODE if found.group()[0] == "`" else BOLD)
            )
    return spans, hang


def _pieces(
    line: str, start: int, end: int, spans: list[tuple[int, int, str]]
) -> list[tuple[str, str]]:
    pieces = []
    pos = start
    for s, e, style in spans:
        if e <= pos or s >= end:
            continue
        if s > pos:
            pieces.append((line[pos:s], ""))
        pieces.append((line[max(s, pos) : min(e, end)], style))
        pos = min(e, end)
    if pos < end:
        pieces.append((line[pos:end], ""))
    return pieces


def wrap(text: str, width: int, *, code: bool = False, limit: int | None = None) -> Wrapped:
    """Untrusted `text` as rows of at most `width` cells (see above). With `limit`, only that
    many rows are laid out and the rest is counted instead: a folded megabyte costs what its
    first rows cost."""
    width = max(width, 8)
    if text.endswith("\n"):
        text = text.rstrip("\n")
    rows: list[Row] = []
    in_fence = False
    pos, line_no, n = 0, 0, len(text)
    while True:
        end = text.find("\n", pos)
        if end == -1:
            end = n
        raw = text[pos:end]
        if limit is not None:
            # No shown character is narrower than a quarter of a cell on average (controls
            # become 1-8 characters, combining marks ride on others): this prefix fills the rows.
            raw = raw[: (limit - len(rows) + 1) * width * 4 + 64]
        line = shown_line(raw)
        fence = not code and _FENCE_LINE.match(line) is not None
        spans, hang = _line_styles(line, in_fence and not fence, code)
        if fence:
            spans = [(0, len(line), FENCE)]
        elif spans and spans[0][2] == MARKER and line[spans[0][0]] in "-*+":
            bullet = spans[0][0]
            line = line[:bullet] + "•" + line[bullet + 1 :]
        gutter = in_fence and not fence
        room = width - len(GUTTER) if gutter else width
        for a, b in _breaks(line, room, hang):
            if limit is not None and len(rows) >= limit:
                return Wrapped(rows, 1 + text.count("\n", end), max(1, n - pos - min(a, len(raw))))
            pieces = _pieces(line, a, b, spans)
            if a and hang:
                pieces.insert(0, (" " * hang, ""))
            if gutter:
                pieces.insert(0, (GUTTER, FENCE))
            lead = (hang if a and hang else 0) + (len(GUTTER) if gutter else 0)
            rows.append(Row(tuple(pieces), line_no, a, lead, CODE if code or gutter else ""))
        if fence:
            in_fence = not in_fence
        if end >= n:
            return Wrapped(rows)
        pos = end + 1
        line_no += 1
