"""The one safe way to turn untrusted strings (anything a server sent) into renderables.

Server strings are data, never markup: Textual parses markup in plain `str` labels, cells and
notifications, and markup can carry actions (`[@click=app.quit]`). ESC sequences would reach the
terminal and could clear it or write the clipboard. So every server string is built into a
`rich.text.Text` from its plain characters (no markup parsing), with control, bidi and zero-width
characters replaced by visible stand-ins, and optionally truncated with an ellipsis.
"""

from __future__ import annotations

import re

from rich.text import Text

ELLIPSIS = "…"

# C0 controls become their Unicode "control pictures" (U+2400 + code): ␛ for ESC, ␀ for NUL.
_C0 = {code: chr(0x2400 + code) for code in range(0x20)}
_VISIBLE = {
    **_C0,
    0x7F: "␡",
    # Bidi overrides/isolates and zero-width characters would reorder or hide text.
    **{code: f"<U+{code:04X}>" for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))},
    **{code: f"<U+{code:04X}>" for code in (0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0xFEFF)},
    0x2028: "<U+2028>",
    0x2029: "<U+2029>",
    # C1 controls (0x80-0x9F) include CSI (0x9B) and OSC (0x9D) on some terminals.
    **{code: f"<U+{code:04X}>" for code in range(0x80, 0xA0)},
    # Halves of UTF-16 pairs: JSON can escape one alone ("\ud800"); it cannot be encoded.
    **{code: f"<U+{code:04X}>" for code in range(0xD800, 0xE000)},
}
_TABLE = str.maketrans(_VISIBLE)
_MULTILINE_TABLE = str.maketrans({k: v for k, v in _VISIBLE.items() if k not in (0x0A, 0x09)})
_NEEDS_WORK = re.compile(
    "[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff\ud800-\udfff]"
)


def visible(value: object, multiline: bool = False) -> str:
    """The characters of `value` with every control, bidi and zero-width one made visible.

    `multiline` keeps newlines and tabs (for detail panels); otherwise they become ␊ and ␉.
    """
    text = "" if value is None else str(value)
    if not _NEEDS_WORK.search(text):
        return text
    return text.translate(_MULTILINE_TABLE if multiline else _TABLE)


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
