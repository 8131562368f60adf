"""The word-level text diff: changed words marked, both texts recoverable from it, unchanged
runs folded, and a block too big for the word pass shown as whole lines."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tui.model.diff.words import ADDED, FOLD, REMOVED, SAME, Budget, diff_text

NO_FOLD = 10**9


def side(lines: object, keep: str) -> str:
    return "\n".join(line.text for line in lines if line.sign in (SAME, keep))  # type: ignore[attr-defined]


def test_one_changed_word_in_a_long_line_is_the_one_marked() -> None:
    before = "You are a helpful assistant. Answer with gpt-4o in two sentences."
    after = "You are a helpful assistant. Answer with gpt-4o-mini in two sentences."
    found = diff_text(before, after)
    removed, added = found.lines
    assert removed.sign == REMOVED and added.sign == ADDED
    assert [text for text, changed in removed.pieces if changed] == []
    assert [text for text, changed in added.pieces if changed] == ["-mini"]
    assert found.added_words == 2 and found.removed_words == 0  # "-" and "mini"
    assert removed.text == before and added.text == after


def test_unchanged_lines_fold_to_the_context_of_each_change() -> None:
    before = "\n".join(f"line {n}" for n in range(100))
    after = before.replace("line 50", "line fifty")
    found = diff_text(before, after, context=2)
    signs = [line.sign for line in found.lines]
    assert signs == [FOLD, SAME, SAME, REMOVED, ADDED, SAME, SAME, FOLD]
    assert found.lines[0].folded == 48 and found.lines[-1].folded == 47
    assert found.changed_lines == 2


def test_equal_texts_are_one_fold() -> None:
    found = diff_text("a\nb\nc", "a\nb\nc")
    assert not found.changed and [(x.sign, x.folded) for x in found.lines] == [(FOLD, 3)]
    assert diff_text("", "").lines == ()


def test_a_line_too_big_for_words_is_whole() -> None:
    before = " ".join(f"w{n}" for n in range(1000))
    after = " ".join(f"v{n}" for n in range(1000))
    found = diff_text(before, after)
    assert [line.sign for line in found.lines] == [REMOVED, ADDED]
    assert found.lines[0].pieces == ((before, True),)


def test_a_big_block_is_compared_line_by_line() -> None:
    before = "\n".join(f"line {n} of the long text, word {n}" for n in range(3000))
    after = "\n".join(f"line {n} of the long text, term {n}" for n in range(3000))
    found = diff_text(before, after)
    first, second = found.lines[0], found.lines[1]
    assert (first.sign, second.sign) == (REMOVED, ADDED)
    assert [t for t, changed in first.pieces if changed] == ["word"]
    assert [t for t, changed in second.pieces if changed] == ["term"]


def test_two_unlike_lines_are_whole() -> None:
    found = diff_text("the parcel left the depot", "an invoice was issued today")
    assert [line.pieces for line in found.lines] == [
        (("the parcel left the depot", True),),
        (("an invoice was issued today", True),),
    ]


def test_lines_only_one_side_has() -> None:
    found = diff_text("a\nc", "a\nb\nc")
    assert [(x.sign, x.text) for x in found.lines] == [(SAME, "a"), (ADDED, "b"), (SAME, "c")]
    assert diff_text("", "new").lines[0].pieces == (("new", True),)


texts = st.text(alphabet=st.sampled_from("ab \n.é"), max_size=60)


@settings(max_examples=300, deadline=None)
@given(before=texts, after=texts)
def test_both_texts_can_be_read_back_from_the_diff(before: str, after: str) -> None:
    found = diff_text(before, after, context=NO_FOLD)
    assert side(found.lines, REMOVED) == before or (before == after and not found.changed)
    if before != after:
        assert side(found.lines, ADDED) == after
        assert found.changed


def test_past_the_budget_changed_lines_are_whole() -> None:
    before, after = "keep this line\nthe parcel left", "keep this line\nthe parcel arrived"
    assert [t for t, c in diff_text(before, after).lines[-1].pieces if c] == ["arrived"]
    spent = diff_text(before, after, budget=Budget(left=0))
    assert [(x.sign, x.pieces) for x in spent.lines[-2:]] == [
        (REMOVED, (("the parcel left", True),)),
        (ADDED, (("the parcel arrived", True),)),
    ]
