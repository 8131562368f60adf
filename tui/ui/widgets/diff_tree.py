"""DiffTreeView: the two traces' spans aligned, one row a pair, drawing only the lines on screen.

Each row: a mark (= same, ~ changed, + only in B, − only in A: a sign, not colour alone), the
name indented by depth (▸/▾ for children, ✗ when it failed), then B's deltas against A:
duration, input and output tokens, cost (and, wider, the model before → after and what
changed). A folded row says how many rows it hides and how many of them differ. Server strings
are made visible by `fit` before they become segments.
"""

from __future__ import annotations

from functools import lru_cache

from rich.style import Style
from textual import events, on
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip

from tui.model import formatting as fmt
from tui.model.diff import ADDED, CHANGED, REMOVED, SAME, TraceDiff, numbers
from tui.model.diff.align import MISSING
from tui.model.diff.deltas import MODEL
from tui.model.diff.view import DiffView
from tui.ui.widgets.virtual_rows import VirtualRows

MARKS = {
    SAME: ("=", Style(dim=True)),
    CHANGED: ("~", Style(color="yellow", bold=True)),
    ADDED: ("+", Style(color="green", bold=True)),
    REMOVED: ("−", Style(color="red", bold=True)),
}
NAME_STYLES = {
    SAME: Style(dim=True),
    CHANGED: Style(),
    ADDED: Style(color="green"),
    REMOVED: Style(color="red"),
}
ERROR = Style(color="red", bold=True)
MORE = Style(color="red")
LESS = Style(color="green")
MAX_INDENT = 12


@lru_cache(maxsize=16)
def columns_for(width: int) -> dict[str, int]:
    """Column widths: the name takes what the deltas (and, wide, the model and the changes)
    leave."""
    cols = {"mark": 1, "dur": 8, "in": 7, "out": 7, "cost": 9}
    if width >= 90:
        cols["model"] = min(36, width // 5)
    if width >= 120:
        cols["what"] = min(28, width // 7)
    cols["name"] = max(12, width - sum(cols.values()) - len(cols))
    return cols


def header_line(width: int) -> str:
    c = columns_for(width)
    parts = [("", c["mark"], "<"), ("span (B against A)", c["name"], "<")]
    parts += [("Δ dur", c["dur"], ">"), ("Δ in", c["in"], ">"), ("Δ out", c["out"], ">")]
    parts.append(("Δ cost", c["cost"], ">"))
    if "model" in c:
        parts.append(("model", c["model"], "<"))
    if "what" in c:
        parts.append(("changed", c["what"], "<"))
    return " ".join(f"{title:{align}{size}}"[:size] for title, size, align in parts)


class DiffTreeView(VirtualRows):
    """The aligned rows; posts RowHighlighted as the cursor moves."""

    BINDINGS = [
        Binding("right,l", "unfold", "Unfold", show=False, id="difftree.unfold"),
        Binding("left,h", "fold", "Fold up", show=False, id="difftree.fold"),
        Binding(
            "space",
            "fold_or_unfold",
            "Fold",
            id="difftree.toggle",
            tooltip="Fold or unfold the row",
        ),
        Binding("plus,asterisk", "unfold_all", "Unfold all", show=False, id="difftree.unfold_all"),
        Binding("minus", "fold_all", "Fold all", show=False, id="difftree.fold_all"),
        Binding(
            "u",
            "fold_unchanged",
            "Fold same",
            show=False,
            id="difftree.fold_unchanged",
            tooltip="Fold every subtree with no difference (as the diff opens)",
        ),
        Binding(
            "n",
            "next_difference",
            "Next diff",
            id="difftree.next",
            tooltip="The next span that differs",
        ),
        Binding(
            "N",
            "previous_difference",
            "Prev diff",
            show=False,
            id="difftree.previous",
            tooltip="The previous span that differs",
        ),
    ]

    class RowHighlighted(Message):
        def __init__(self, row: int | None) -> None:
            super().__init__()
            self.row = row

    class Resized(Message):
        """The view has a new size: the column header redraws to it."""

    @on(events.Resize)
    def _tell_resized(self) -> None:
        self.post_message(self.Resized())

    def __init__(self, diff: TraceDiff, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.diff = diff
        self.view = DiffView.initial(diff)

    @property
    def row(self) -> int | None:
        """The diff row under the cursor."""
        rows = self.view.rows
        return rows[self.cursor] if 0 <= self.cursor < len(rows) else None

    def row_count(self) -> int:
        return len(self.view.rows)

    def row_key(self, line: int) -> object:
        return self.view.rows[line] if 0 <= line < len(self.view.rows) else None

    def on_mount(self) -> None:
        self.rows_changed()

    def on_virtual_rows_cursor_moved(self, event: VirtualRows.CursorMoved) -> None:
        event.stop()
        self.post_message(self.RowHighlighted(self.row))

    # -- drawing ---------------------------------------------------------------------------------

    def render_row(self, row: int, width: int, selected: bool) -> Strip:
        diff, r = self.diff, self.view.rows[row]
        c = columns_for(width)
        status = diff.status[r]
        mark, mark_style = MARKS[status]
        depth = diff.rows.depth[r]
        levels = min(depth, MAX_INDENT, c["name"] // 6)
        indent = "  " * levels if depth <= levels else f"{depth}‥".ljust(2 * levels)
        folded = self.view.is_folded(r)
        marker = ("▸ " if folded else "▾ ") if self.view.has_children(r) else "  "
        failed = diff.b_error(r) if status != REMOVED else diff.a_error(r)
        name = indent + marker + ("✗ " if failed else "") + diff.name(r)
        ordinal = diff.rows.ordinal[r]
        if ordinal > 1:
            name += f" #{ordinal}"
        badge = ""
        if folded:
            hidden = diff.rows.end[r] - r - 1
            differing = diff.sub_differences[r] - (status != SAME)
            badge = f" ({differing:,} of {hidden:,} differ)" if differing else f" ({hidden:,} same)"
        name_cell = fmt.fit(name + badge, c["name"])
        cells: list[tuple[str, Style | None]] = [
            (mark, mark_style),
            (name_cell, ERROR if failed else NAME_STYLES[status]),
        ]
        for column, key, signed in (
            ("durations", "dur", numbers.duration),
            ("inputs", "in", numbers.count),
            ("outputs", "out", numbers.count),
            ("costs", "cost", numbers.cost),
        ):
            delta = diff.delta(column, r)
            text = signed(delta) if delta else ""
            style = None if not delta else (MORE if delta > 0 else LESS)
            cells.append((fmt.fit_right(text, c[key]), style))
        if "model" in c:
            cells.append((fmt.fit(self._model(r), c["model"]), None))
        if "what" in c:
            cells.append((fmt.fit(", ".join(diff.changes[r]), c["what"]), Style(dim=True)))
        return self.cells_strip(cells, selected, sum(c.values()) + len(c) - 1)

    def _model(self, r: int) -> str:
        diff = self.diff
        i, j = diff.rows.a_pos[r], diff.rows.b_pos[r]
        before = diff.a.models[i] if i != MISSING else None
        after = diff.b.models[j] if j != MISSING else None
        if MODEL in diff.changes[r]:
            return f"{before or '–'} → {after or '–'}"
        return after or before or ""

    # -- actions ---------------------------------------------------------------------------------

    def _after_change(self, row: int | None) -> None:
        self.rows_changed()
        if row is not None:
            line = self.view.shown_at(row)
            if line is not None:
                self.move_to(line)

    def action_unfold(self) -> None:
        r = self.row
        if r is not None and self.view.is_folded(r):
            self.view.unfold(r)
            self._after_change(r)
        else:
            self.action_cursor_down()

    def action_fold(self) -> None:
        r = self.row
        if r is None:
            return
        if self.view.has_children(r) and not self.view.is_folded(r):
            self.view.fold(r)
            self._after_change(r)
        elif self.diff.rows.parent[r] != -1:
            self._after_change(self.diff.rows.parent[r])

    def action_fold_or_unfold(self) -> None:
        r = self.row
        if r is not None and self.view.has_children(r):
            self.view.toggle(r)
            self._after_change(r)

    def action_unfold_all(self) -> None:
        r = self.row
        self.view.unfold_all()
        self._after_change(r)

    def action_fold_all(self) -> None:
        r = self.row
        self.view.fold_all()
        while r is not None and self.diff.rows.parent[r] != -1:
            r = self.diff.rows.parent[r]
        self._after_change(r)

    def action_fold_unchanged(self) -> None:
        r = self.row
        self.view.fold_unchanged()
        if r is not None:
            self.go_to(r)

    def go_to(self, row: int) -> None:
        """Reveal and select a diff row."""
        self.view.reveal(row)
        self._after_change(row)

    def action_next_difference(self, backwards: bool = False) -> None:
        found = self.view.next_difference(self.row if self.row is not None else -1, backwards)
        if found is None:
            self.notify("No span differs: the two traces are alike.", timeout=3)
            return
        self.go_to(found)

    def action_previous_difference(self) -> None:
        self.action_next_difference(backwards=True)
