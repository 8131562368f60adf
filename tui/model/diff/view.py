"""Pure (no Textual): which rows of a diff show, given the folded ones, and where the next
difference is.

A diff opens with every subtree that holds no difference folded (its row stays, marked as
folding so many same spans), so the differences and the path to each are what shows; folding
and unfolding splice the list of shown rows instead of rebuilding it, as the trace's tree does
(tui/model/spans.py Visibility).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field

from tui.model.diff.deltas import SAME, TraceDiff


@dataclass
class DiffView:
    diff: TraceDiff
    folded: set[int] = field(default_factory=set)
    rows: list[int] = field(default_factory=list)

    @classmethod
    def initial(cls, diff: TraceDiff) -> DiffView:
        """Subtrees with no difference folded; the rest open."""
        view = cls(diff)
        view.fold_unchanged()
        return view

    def has_children(self, row: int) -> bool:
        return self.diff.rows.end[row] > row + 1

    def rebuild(self) -> None:
        rows, end, folded = [], self.diff.rows.end, self.folded
        i, n = 0, self.diff.size
        while i < n:
            rows.append(i)
            i = end[i] if i in folded else i + 1
        self.rows = rows

    def fold_unchanged(self) -> None:
        """Fold every subtree that holds no difference (nothing but same spans below it)."""
        diff = self.diff
        self.folded = {
            row
            for row in range(diff.size)
            if self.has_children(row)
            and diff.sub_differences[row] - (diff.status[row] != SAME) == 0
        }
        self.rebuild()

    def shown_at(self, row: int) -> int | None:
        """The line showing diff row `row`, if it shows."""
        line = bisect_left(self.rows, row)
        return line if line < len(self.rows) and self.rows[line] == row else None

    def is_folded(self, row: int) -> bool:
        return row in self.folded

    def fold(self, row: int) -> None:
        line = self.shown_at(row)
        if line is None or not self.has_children(row) or row in self.folded:
            return
        self.folded.add(row)
        stop = bisect_left(self.rows, self.diff.rows.end[row], lo=line + 1)
        del self.rows[line + 1 : stop]

    def unfold(self, row: int) -> None:
        if row not in self.folded:
            return
        self.folded.discard(row)
        line = self.shown_at(row)
        if line is None:
            return
        shown, end, folded = [], self.diff.rows.end, self.folded
        i, stop = row + 1, end[row]
        while i < stop:
            shown.append(i)
            i = end[i] if i in folded else i + 1
        self.rows[line + 1 : line + 1] = shown

    def toggle(self, row: int) -> None:
        if row in self.folded:
            self.unfold(row)
        else:
            self.fold(row)

    def unfold_all(self) -> None:
        self.folded = set()
        self.rows = list(range(self.diff.size))

    def fold_all(self) -> None:
        rows = self.diff.rows
        self.folded = {r for r in range(rows.size) if self.has_children(r)}
        self.rows = [r for r in range(rows.size) if rows.depth[r] == 0]

    def reveal(self, row: int) -> int:
        """Unfold the rows above `row` so that it shows; the line it shows on."""
        chain, parent = [], self.diff.rows.parent[row]
        while parent != -1:
            chain.append(parent)
            parent = self.diff.rows.parent[parent]
        for above in reversed(chain):
            if above in self.folded:
                self.unfold(above)
        line = self.shown_at(row)
        assert line is not None
        return line

    def next_difference(self, after: int, backwards: bool = False) -> int | None:
        """The next row (wrapping) after `after` that is a difference of its own (not inside
        a subtree added or removed whole: its head is the difference); None if there is none."""
        n = self.diff.size
        step = -1 if backwards else 1
        for k in range(1, n + 1):
            row = (after + step * k) % n
            if self.diff.is_difference(row):
                return row
        return None
