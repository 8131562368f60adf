"""Pure (no Textual): a word-level diff of two texts, folded to the changed lines.

Two texts are compared line by line first (difflib on whole lines, after the lines both start
and end with are set aside, which is most of a long conversation that changed in one place),
then word by word inside each block of lines that changed, so "gpt-4o" against "gpt-4o-mini"
in a line of 200 words marks the one word. A block too big for one word pass (a megabyte
rewritten) is compared line by line, and two lines too big or too unlike each other are shown
whole, removed and added: the cost stays bounded whatever the text.
Runs of unchanged lines longer than twice the context are folded to a line that counts them.

Nothing here is made visible or styled: the pieces are the texts as they came, with a flag for
the changed ones; the screen makes them visible (tui/model/text.py) and the command line too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from difflib import SequenceMatcher

SAME, REMOVED, ADDED, FOLD = " ", "-", "+", "…"
CONTEXT = 2  # unchanged lines kept on each side of a change
# Word by word costs up to the product of the two sides' words (difflib): a changed block
# beyond this is compared line by line, a pair of lines beyond it whole.
WORD_PAIRS_MAX = 250_000
SIMILAR = 0.5  # two lines sharing less than this share of their words are shown whole
# The word-by-word work of one pair's diffs (the sum of those products, over all its texts):
# some 100 ms of difflib. Past it, changed lines are shown whole.
WORK_MAX = 400_000
MIN_WORK = 1_000  # less left than this: the budget is spent


@dataclass
class Budget:
    """What is left of the word-by-word work one pair may do (shared by its texts)."""

    left: int = WORK_MAX

    def spend(self, work: int) -> bool:
        if work > self.left:
            return False
        self.left -= work
        return True


LINES_MAX = 4_000  # lines of one diff kept (the rest is counted in `cut`)

# A word, a run of white space (newlines apart: they split lines), or one other character.
_TOKENS = re.compile(r"\n|[^\S\n]+|\w+|[^\w\s]")

Piece = tuple[str, bool]  # (text as it came, changed)
NEWLINE = "\n"


@dataclass(frozen=True)
class Line:
    """One line of a diff: unchanged (SAME), only in A (REMOVED), only in B (ADDED), or FOLD,
    standing for `folded` unchanged lines left out."""

    sign: str
    pieces: tuple[Piece, ...] = ()
    folded: int = 0

    @property
    def text(self) -> str:
        return "".join(text for text, _ in self.pieces)


@dataclass(frozen=True)
class TextDiff:
    """The lines of a diff (folded), and how much changed."""

    lines: tuple[Line, ...] = ()
    removed_words: int = 0
    added_words: int = 0
    cut: int = 0  # lines left out past LINES_MAX
    changed_lines: int = field(default=0)

    @property
    def changed(self) -> bool:
        return self.changed_lines > 0


def tokens(text: str) -> list[str]:
    return _TOKENS.findall(text)


def _common_ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """How many items `a` and `b` start with in common, and end with (not overlapping)."""
    n = min(len(a), len(b))
    head = 0
    while head < n and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < n - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


class _Builder:
    """Collects the lines of a diff, counting what changed."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.lines: list[Line] = []
        self.removed = self.added = self.changed_lines = 0

    def same(self, lines: list[str]) -> None:
        self.lines += [Line(SAME, ((text, False),) if text else ()) for text in lines]

    def whole(self, sign: str, lines: list[str]) -> None:
        words = sum(len(text.split()) for text in lines)
        if sign == REMOVED:
            self.removed += words
        else:
            self.added += words
        self.changed_lines += len(lines)
        self.lines += [Line(sign, ((text, True),) if text else ()) for text in lines]

    def words(self, a_lines: list[str], b_lines: list[str], by_line: bool = True) -> None:
        """A block of lines that changed: word by word when that is cheap enough; else line
        by line (each pair of lines word by word), and lines that have little in common
        whole."""
        if self.budget.left < MIN_WORK:  # spent: not even tokenized
            self.whole(REMOVED, a_lines)
            self.whole(ADDED, b_lines)
            return
        a_tokens, b_tokens = tokens("\n".join(a_lines)), tokens("\n".join(b_lines))
        head, tail = _common_ends(a_tokens, b_tokens)
        a_middle = a_tokens[head : len(a_tokens) - tail]
        b_middle = b_tokens[head : len(b_tokens) - tail]
        work = len(a_middle) * len(b_middle)
        if work > WORD_PAIRS_MAX or not self.budget.spend(work):
            if by_line and len(a_lines) + len(b_lines) > 2:
                self._line_by_line(a_lines, b_lines)
            else:
                self.whole(REMOVED, a_lines)
                self.whole(ADDED, b_lines)
            return
        opcodes = SequenceMatcher(None, a_middle, b_middle, False).get_opcodes()
        if len(a_lines) == len(b_lines) == 1:
            alike = head + tail + sum(i2 - i1 for tag, i1, i2, _, _ in opcodes if tag == "equal")
            if 2 * alike < SIMILAR * (len(a_tokens) + len(b_tokens)):
                self.whole(REMOVED, a_lines)  # two lines with little in common: no word marks
                self.whole(ADDED, b_lines)
                return
        a_marks = [False] * len(a_tokens)
        b_marks = [False] * len(b_tokens)
        for tag, i1, i2, j1, j2 in opcodes:
            if tag == "equal":
                continue
            for i in range(head + i1, head + i2):
                a_marks[i] = True
            for j in range(head + j1, head + j2):
                b_marks[j] = True
        self.removed += sum(1 for t, m in zip(a_tokens, a_marks, strict=True) if m and _is_word(t))
        self.added += sum(1 for t, m in zip(b_tokens, b_marks, strict=True) if m and _is_word(t))
        removed = _lines_of(a_tokens, a_marks)
        added = _lines_of(b_tokens, b_marks)
        self.changed_lines += len(removed) + len(added)
        self.lines += [Line(REMOVED, pieces) for pieces in removed]
        self.lines += [Line(ADDED, pieces) for pieces in added]

    def _line_by_line(self, a_lines: list[str], b_lines: list[str]) -> None:
        """A big block: its lines paired in order, each pair word by word, the extras whole."""
        for a_line, b_line in zip(a_lines, b_lines, strict=False):
            self.words([a_line], [b_line], by_line=False)
        paired = min(len(a_lines), len(b_lines))
        if len(a_lines) > paired:
            self.whole(REMOVED, a_lines[paired:])
        if len(b_lines) > paired:
            self.whole(ADDED, b_lines[paired:])


def _is_word(token: str) -> bool:
    return not token.isspace()


def _lines_of(toks: list[str], marks: list[bool]) -> list[tuple[Piece, ...]]:
    """Tokens with their marks as lines of pieces, neighbours of the same mark joined."""
    lines: list[tuple[Piece, ...]] = []
    pieces: list[Piece] = []
    run: list[str] = []
    run_mark = False
    for piece, mark in zip(toks, marks, strict=True):
        if piece == NEWLINE:
            if run:
                pieces.append(("".join(run), run_mark))
            lines.append(tuple(pieces))
            pieces, run = [], []
            continue
        if run and mark != run_mark:
            pieces.append(("".join(run), run_mark))
            run = []
        if not run:
            run_mark = mark
        run.append(piece)
    if run:
        pieces.append(("".join(run), run_mark))
    lines.append(tuple(pieces))
    return lines


def diff_text(a: str, b: str, context: int = CONTEXT, budget: Budget | None = None) -> TextDiff:
    """The word-level diff of `a` (before) and `b` (after), unchanged runs folded; `budget`:
    the word-by-word work left to it (shared with the other texts of a pair)."""
    if a == b:
        count = a.count("\n") + 1 if a else 0
        return TextDiff((Line(FOLD, folded=count),) if count else ())
    a_lines, b_lines = a.split("\n"), b.split("\n")
    if not a:
        a_lines = []
    if not b:
        b_lines = []
    head, tail = _common_ends(a_lines, b_lines)
    built = _Builder(budget or Budget())
    built.same(a_lines[:head])
    middle_a = a_lines[head : len(a_lines) - tail]
    middle_b = b_lines[head : len(b_lines) - tail]
    matcher = SequenceMatcher(None, middle_a, middle_b)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            built.same(middle_a[i1:i2])
        elif tag == "delete":
            built.whole(REMOVED, middle_a[i1:i2])
        elif tag == "insert":
            built.whole(ADDED, middle_b[j1:j2])
        else:
            built.words(middle_a[i1:i2], middle_b[j1:j2])
    built.same(a_lines[len(a_lines) - tail :] if tail else [])
    lines, cut = fold(built.lines, context)
    return TextDiff(tuple(lines), built.removed, built.added, cut, built.changed_lines)


def fold(lines: list[Line], context: int = CONTEXT) -> tuple[list[Line], int]:
    """Runs of unchanged lines cut to `context` lines beside each change, the rest counted in
    one FOLD line; at most LINES_MAX lines kept, and how many more there were."""
    out: list[Line] = []
    n = len(lines)
    i = 0
    while i < n:
        if lines[i].sign != SAME:
            out.append(lines[i])
            i += 1
            continue
        j = i
        while j < n and lines[j].sign == SAME:
            j += 1
        keep_before = context if i > 0 else 0  # after a change
        keep_after = context if j < n else 0  # before a change
        if j - i > keep_before + keep_after + 1:
            out += lines[i : i + keep_before]
            out.append(Line(FOLD, folded=j - i - keep_before - keep_after))
            out += lines[j - keep_after : j]
        else:
            out += lines[i:j]
        i = j
    if len(out) > LINES_MAX:
        return out[:LINES_MAX], len(out) - LINES_MAX
    return out, 0


def one_line(value: object) -> str:
    """A value in one line of text, for "before → after" (models, statuses)."""
    return "" if value is None else " ".join(str(value).split())
