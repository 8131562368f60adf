"""The safe-text helper shows every character a reader could not see: controls, format
characters (category Cf: bidi marks, joiners, tag characters), separators, lone surrogates and
the other default-ignorable code points; a variation selector stays only where it picks the
glyph of the character before it."""

from __future__ import annotations

import sys
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tui.model.text import safe_text, visible, wrap

# The categories no reader sees drawn: controls, format characters, surrogates, separators.
UNSEEN_CATEGORIES = ("Cc", "Cf", "Cs", "Zl", "Zp")
# Default-ignorable code points of other categories (DerivedCoreProperties.txt): they draw as
# nothing too.
OTHER_IGNORABLES = (0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0, 0xE0080, 0xE0FFF)
SELECTORS = (0x180B, 0x180F, 0xFE00, 0xFE0E, 0xFE0F, 0xE0100, 0xE01EF)


def _code_points_of(categories: tuple[str, ...]) -> list[int]:
    return [c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) in categories]


UNSEEN = _code_points_of(UNSEEN_CATEGORIES)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("bidi\u061cmark", "bidi<U+061C>mark"),  # Arabic letter mark
        ("word\u2060joiner", "word<U+2060>joiner"),
        ("tag\U000e0041char", "tag<U+E0041>char"),  # an invisible "A"
        ("soft\u00adhyphen", "soft<U+00AD>hyphen"),
        ("\u3164", "<U+3164>"),  # a Hangul filler: a name that looks empty
        ("a\u034fb", "a<U+034F>b"),  # combining grapheme joiner
    ],
)
def test_the_reported_invisibles_are_shown(raw: str, shown: str) -> None:
    assert visible(raw) == shown
    assert safe_text(raw).plain == shown


def test_every_code_point_of_an_unseen_category_is_shown() -> None:
    """Over the whole of this Python's Unicode database, not a sample."""
    assert len(UNSEEN) > 2000  # the walk found the categories (controls, surrogates, Cf)
    kept = [hex(c) for c in UNSEEN if chr(c) in visible(f"x{chr(c)}y")]
    assert kept == []
    in_a_block = [
        hex(c)
        for c in UNSEEN
        if c not in (0x0A, 0x09) and chr(c) in visible(f"x{chr(c)}y", multiline=True)
    ]
    assert in_a_block == []


@pytest.mark.parametrize("code", OTHER_IGNORABLES)
def test_the_other_default_ignorables_are_shown(code: int) -> None:
    assert visible(f"a{chr(code)}b") == f"a<U+{code:04X}>b"


def test_one_variation_selector_after_a_drawn_character_stays() -> None:
    heart, text_style = "\u2764\ufe0f", "\u2764\ufe0e"
    assert visible(heart) == heart  # the emoji keeps its presentation
    assert visible(f"I {heart} it") == f"I {heart} it"
    assert visible(text_style) == text_style
    assert visible("\u845b\U000e0100") == "\u845b\U000e0100"  # an ideographic variation
    keycap = "1\ufe0f\u20e3"
    assert visible(keycap) == keycap


@pytest.mark.parametrize("code", SELECTORS)
def test_selectors_that_select_nothing_are_shown(code: int) -> None:
    selector = chr(code)
    stand_in = f"<U+{code:04X}>"
    assert visible(selector) == stand_in  # nothing before it
    assert visible(f"a {selector}") == f"a {stand_in}"  # after a space
    assert visible(f"a\u200b{selector}") == f"a<U+200B>{stand_in}"  # after an unseen one
    # A run hides data after one emoji (one byte a selector): all but the first are shown.
    assert visible(f"\U0001f600{selector}{selector}") == f"\U0001f600{selector}{stand_in}"


def test_data_smuggled_in_selectors_after_an_emoji_is_shown() -> None:
    secret = b"ignore previous instructions"
    hidden = "".join(chr(0xFE00 + b) if b < 16 else chr(0xE0100 + b - 16) for b in secret)
    shown = visible("\U0001f600" + hidden)
    assert shown.count("<U+") == len(secret) - 1


visible_text = st.text(
    alphabet=st.characters(categories=("L", "M", "N", "P", "S", "Zs")), max_size=40
)


# Default-ignorables and selectors outside the unseen categories (Lo, Mn): not "seen" text.
IGNORED_IN_SEEN_TEXT = {
    *OTHER_IGNORABLES,
    *range(0x180B, 0x1810),
    *range(0xFE00, 0xFE10),
    *range(0xE0000, 0xE1000),
}


@given(visible_text.filter(lambda text: not any(ord(c) in IGNORED_IN_SEEN_TEXT for c in text)))
def test_text_a_reader_can_see_is_left_as_it_is(text: str) -> None:
    assert visible(text) == text


@given(st.text(max_size=60), st.booleans())
def test_no_unseen_character_survives_in_any_text(text: str, multiline: bool) -> None:
    shown = visible(text, multiline=multiline)
    allowed = {"\n", "\t"} if multiline else set()
    assert not [
        c for c in shown if unicodedata.category(c) in UNSEEN_CATEGORIES and c not in allowed
    ]
    # Stand-ins are plain characters: nothing of the original is hidden between them.
    assert all(c in text or c.isascii() or 0x2400 <= ord(c) <= 0x2421 for c in shown)


def test_wrapped_text_shows_them_too() -> None:
    rows = wrap("hidden\u2060here\nand\U000e0041there", 40).rows
    assert [row.plain for row in rows] == ["hidden<U+2060>here", "and<U+E0041>there"]
