"""tui/model/text.py wrap: untrusted text laid out whole in rows, newlines kept, light markdown
styled (never interpreted), controls made visible; only as many rows as asked for."""

from __future__ import annotations

import pytest
from rich.cells import cell_len

from tui.model.text import BOLD, CODE, FENCE, GUTTER, HEADING, INLINE_CODE, MARKER, QUOTE, wrap

HOSTILE = "[@click=app.quit]Q[/] \x1b[2J\x1b]52;c;cHduZWQ=\x07 \x1b]8;;https://evil/\x1b\\L \u202eevil \x9b31m"


def plain(text: str, width: int, **kwargs: object) -> list[str]:
    return [row.plain for row in wrap(text, width, **kwargs).rows]  # type: ignore[arg-type]


def test_newlines_are_kept_and_words_wrap() -> None:
    text = "first line\n\nthird line is longer than twenty cells"
    assert plain(text, 20) == ["first line", "", "third line is longer", "than twenty cells"]


def test_no_row_is_wider_than_asked() -> None:
    text = "漢字テスト" * 30 + " " + "x" * 100 + " 🙂🙂🙂 word " * 20
    for row in wrap(text, 17).rows:
        assert cell_len(row.plain) <= 17


def test_a_word_longer_than_the_row_breaks_where_the_width_ends() -> None:
    assert plain("a" * 25, 10) == ["a" * 10, "a" * 10, "a" * 5]


def test_untrusted_text_stays_literal_and_controls_show() -> None:
    (row,) = wrap(HOSTILE, 500).rows
    assert "[@click=app.quit]Q[/]" in row.plain  # no markup parsed
    assert "\x1b" not in row.plain and "␛[2J" in row.plain and "␛]52;" in row.plain
    assert "<U+202E>evil" in row.plain and "<U+009B>31m" in row.plain
    assert all(style in ("", INLINE_CODE, BOLD) for _, style in row.pieces)


def test_tabs_and_crlf() -> None:
    assert plain("a\tb\r\nc\rd", 40) == ["a   b", "c␍d"]


def test_markdown_structure_is_styled_not_hidden() -> None:
    text = "# Title\n- item\n* other\n2. second\n> quoted\nsay `x` and **y**\n---"
    rows = wrap(text, 40).rows
    assert [r.plain for r in rows] == [
        "# Title",
        "• item",
        "• other",
        "2. second",
        "> quoted",
        "say `x` and **y**",
        "---",
    ]
    assert rows[0].pieces == (("# Title", HEADING),)
    assert rows[1].pieces[0] == ("•", MARKER) and rows[3].pieces[0] == ("2.", MARKER)
    assert rows[4].pieces == (("> quoted", QUOTE),)
    assert ("`x`", INLINE_CODE) in rows[5].pieces and ("**y**", BOLD) in rows[5].pieces


def test_a_list_item_wraps_under_its_text() -> None:
    rows = wrap("- a list item that wraps onto the next row", 20).rows
    assert [r.plain for r in rows] == ["• a list item that", "  wraps onto the", "  next row"]
    assert rows[1].lead == 2 and rows[1].start == 19


def test_code_fences_become_a_code_block() -> None:
    rows = wrap("before\n```python\nx = [1]  # [@click=app.quit]\n```\nafter", 40).rows
    assert [r.plain for r in rows] == [
        "before",
        "```python",
        GUTTER + "x = [1]  # [@click=app.quit]",
        "```",
        "after",
    ]
    assert rows[1].pieces == (("```python", FENCE),)
    assert rows[2].pieces == ((GUTTER, FENCE), ("x = [1]  # [@click=app.quit]", CODE))
    assert rows[2].style == CODE and rows[4].style == ""


def test_a_code_body_is_code_throughout_and_keeps_its_indentation_on_wrap() -> None:
    rows = wrap('{\n  "key": "a value long enough to wrap"\n}', 24, code=True).rows
    assert all(r.style == CODE for r in rows)
    assert rows[1].plain == '  "key": "a value long'
    assert rows[2].plain.startswith("  ") and "# " not in rows[0].plain


@pytest.mark.parametrize(
    ("text", "more_lines"),
    [
        ("line\n" * 100, 88),  # 12 rows of 100 lines
        ("x" * 1_000_000, 1),  # one megabyte line: its first rows, the rest counted
        ("\n" * 1_000_000 + "end", 999_989),
    ],
)
def test_a_limit_lays_out_only_what_is_asked(text: str, more_lines: int) -> None:
    wrapped = wrap(text, 40, limit=12)
    assert len(wrapped.rows) == 12 and wrapped.more_lines == more_lines
    assert wrapped.more_chars > 0


def test_without_a_limit_nothing_is_left_out() -> None:
    text = "word " * 1000
    wrapped = wrap(text, 30)
    assert (
        wrapped.more_lines == 0 and " ".join(r.plain for r in wrapped.rows).split() == text.split()
    )


def test_rows_know_where_they_come_from() -> None:
    rows = wrap("abc def ghi\nsecond line", 8).rows
    assert [r.plain for r in rows] == ["abc def", "ghi", "second", "line"]
    assert [(r.line, r.start) for r in rows] == [(0, 0), (0, 8), (1, 0), (1, 7)]
