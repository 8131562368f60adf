"""tui/ui/widgets/blocks.py: blocks laid out as far as they show, folded, cut, and searched."""

from __future__ import annotations

import re

from rich.cells import cell_len

from tui.ui.widgets.blocks import FOLD_ROWS, Block, find_match, piece


def plain(block: Block, width: int = 40) -> list[str]:
    return [" " * line.indent + "".join(t for t, _ in line.pieces) for line in block.lines(width)]


def test_a_long_body_folds_and_says_how_much_more() -> None:
    body = "\n".join(f"line {n}" for n in range(100))
    block = Block([("● ", "user"), ("user", "user")], body, rule=True)
    lines = plain(block)
    assert lines[0].startswith("● user ─") and cell_len(lines[0]) == 40
    assert lines[1:4] == ["line 0", "line 1", "line 2"] and len(lines) == 1 + FOLD_ROWS + 1
    assert lines[-1] == f"… {100 - FOLD_ROWS} more lines · enter unfolds"
    assert block.foldable
    block.folded = False
    block.invalidate()
    assert len(plain(block)) == 101 and plain(block)[-1] == "line 99"


def test_a_body_a_little_longer_than_the_fold_is_not_folded() -> None:
    block = Block((), "\n".join("x" * (FOLD_ROWS + 3)))
    assert len(plain(block)) == FOLD_ROWS + 3 and not block.foldable


def test_one_huge_line_folds_by_characters() -> None:
    block = Block((), "y" * 1_000_000)
    lines = plain(block)
    assert len(lines) == FOLD_ROWS + 1
    assert lines[-1].endswith("more characters · enter unfolds")


def test_an_inline_value_shares_its_keys_row_when_it_fits() -> None:
    short = Block([("key", "key"), (": ", "")], '"short"', inline="string", body_indent=2)
    assert plain(short) == ['key: "short"']
    long = Block(
        [("key", "key"), (": ", "")], '"' + "w " * 40 + '"', inline="string", body_indent=2
    )
    lines = plain(long)
    assert lines[0] == "key: " and all(line.startswith("  ") for line in lines[1:])


def test_a_header_and_its_tail_are_cut_to_the_width() -> None:
    block = Block(
        [piece("x" * 100, "key")], rule=True, tail=[("output · finish: " + "s" * 50, "dim")]
    )
    (line,) = plain(block, 40)
    assert cell_len(line) == 40 and "…" in line and "output" in line


def test_piece_makes_server_text_visible_and_short() -> None:
    text, style = piece("[@click=app.quit]\x1b[2J\u202e" + "z" * 1000, "key", 50)
    assert text.startswith("[@click=app.quit]␛[2J<U+202E>") and len(text) < 80 and style == "key"


def tree() -> list[Block]:
    closed = Block(
        [("closed", "key")], children=[Block([("inner", "")], "the needle inside")], expanded=False
    )
    return [
        Block([("first", "")], "a needle here\nand a needle there"),
        closed,
        Block([("last needle", "")], "\n".join(["filler"] * 50 + ["folded needle"])),
    ]


def test_find_goes_forward_and_wraps_through_closed_and_folded_blocks() -> None:
    roots = tree()
    pattern = re.compile("needle", re.IGNORECASE)
    found = find_match(roots, pattern, (None, -1, -1))
    assert found is not None and (found.block, found.line, found.start) == (roots[0], 0, 2)
    seen = []
    for _ in range(6):
        found = find_match(roots, pattern, (found.block, found.line, found.start))
        assert found is not None
        seen.append((found.line, found.start, found.block.header[0][0]))
    assert seen == [
        (1, 6, "first"),
        (0, 4, "inner"),  # inside a closed block
        (-1, 5, "last needle"),  # a header
        (50, 7, "last needle"),  # beyond the fold
        (0, 2, "first"),  # wrapped round
        (1, 6, "first"),
    ]


def test_find_backwards_and_nothing() -> None:
    roots = tree()
    pattern = re.compile("needle")
    found = find_match(roots, pattern, (roots[0], 0, 2), backwards=True)
    assert found is not None and found.line == 50  # wrapped round to the last match
    assert find_match(roots, re.compile("absent"), (None, -1, -1)) is None


def test_a_spans_facts_show_its_strings_visibly() -> None:
    from tui.api import Span
    from tui.ui.widgets.span_detail import facts

    span = Span.model_validate(
        {"id": "x", "kind": "llm\x1b[2J", "model": "[@click=app.quit]m", "status": "\x9bodd"}
    )
    shown = "".join(text for text, _ in facts(span))
    assert "llm␛[2j" in shown and "[@click=app.quit]m" in shown and "<U+009B>odd" in shown
    assert "\x1b" not in shown and "\x9b" not in shown
