"""SpanTreeView: the span tree of one trace, flattened, drawing only the lines on screen.

Each row: the name (indented by depth, ▸/▾ for children, ✎ when the span is annotated), kind,
model, input and output tokens, cost, duration and a waterfall bar of the span's place in the
trace. A collapsed node shows the
totals of its whole subtree, marked Σ, and a red ✗ count of the errors it hides. Server strings
are made visible by `fit` before they become segments: nothing they contain reaches the terminal
as markup or escape codes.
"""

from __future__ import annotations

from functools import lru_cache

from rich.cells import cell_len
from rich.style import Style
from textual import events, on
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip

from tui.model import formatting as fmt
from tui.model.annotations import NOTE_MARK
from tui.model.spans import TraceTree, Visibility, build_tree, find_next
from tui.ui.widgets.virtual_rows import VirtualRows

KIND_STYLES = {
    "llm": Style(color="magenta"),
    "retrieval": Style(color="cyan"),
    "tool": Style(color="yellow"),
    "agent": Style(color="green"),
    "chain": Style(color="blue"),
}
DEFAULT_KIND_STYLE = Style(color="white")
ERROR_NAME = Style(color="red", bold=True)
NO_MODEL = Style(dim=True)
TOTAL = Style(bold=True)
MAX_INDENT = 12  # deeper levels show their depth as a number instead of more indentation
WIDE_TREE = 82  # the tree's width from which its model and timing columns widen


@lru_cache(maxsize=16)
def columns_for(width: int) -> dict[str, int]:
    """Column widths for the tree's width: the model and the timing bar grow with it (model
    names run to 26 characters), the name takes what is left. From the pane a wide terminal
    gives the tree (82 columns and up) the model takes a name such as gpt-4o-mini whole, the
    name keeping some 25 cells; at 80 columns the name keeps its room."""
    cols = {
        "kind": 9 if width >= 120 else 5,
        "model": 9 if width < WIDE_TREE else 12 if width < 90 else max(12, min(28, width // 6)),
        "in": 6,
        "out": 6,
        "cost": 8,
        "dur": 7,
        "bar": 7 if width < WIDE_TREE else 8 if width < 90 else max(8, min(40, width // 8)),
    }
    cols["name"] = max(10, width - sum(cols.values()) - len(cols))
    return cols


def header_line(width: int) -> str:
    c = columns_for(width)
    parts = [
        ("span", c["name"], "<"),
        ("kind", c["kind"], "<"),
        ("model", c["model"], "<"),
        ("in", c["in"], ">"),
        ("out", c["out"], ">"),
        ("cost", c["cost"], ">"),
        ("dur", c["dur"], ">"),
        ("timing", c["bar"], "<"),
    ]
    return " ".join(f"{title:{align}{size}}"[:size] for title, size, align in parts)


def waterfall(offset: float, length: float, width: int) -> str:
    """A bar of `width` cells: blank up to the start, █ for the run (at least a ▏)."""
    start = min(width - 1, int(offset * width))
    cells = max(1, round(length * width))
    run = "█" * cells if length * width >= 1 else "▏"
    return (" " * start + run)[:width].ljust(width)


class SpanTreeView(VirtualRows):
    """The trace's spans; posts SpanHighlighted as the cursor moves."""

    BINDINGS = [
        Binding("right,l", "expand", "Expand", show=False, id="tree.expand"),
        Binding("left,h", "collapse", "Collapse", show=False, id="tree.collapse"),
        Binding("space", "fold", "Fold", id="tree.toggle", tooltip="Expand or collapse"),
        # Listed by `?`; the footer keeps its room for the keys of both panes (80 columns).
        Binding("plus,asterisk", "expand_all", "Expand all", show=False, id="tree.expand_all"),
        Binding("minus", "collapse_all", "Collapse all", show=False, id="tree.collapse_all"),
        Binding("n", "next_error", "Next error", id="tree.next_error"),
        Binding("N", "previous_error", "Prev error", show=False, id="tree.previous_error"),
    ]

    class SpanHighlighted(Message):
        def __init__(self, position: int | None) -> None:
            super().__init__()
            self.position = position

    class Resized(Message):
        """The view has a new size: what is drawn to its width (the column header) redraws."""

    @on(events.Resize)
    def _tell_resized(self) -> None:
        # The view's first size comes after the frame it was mounted in (later still on a busy
        # machine): a header worked out before then would keep the width of nothing.
        self.post_message(self.Resized())

    def __init__(self, tree: TraceTree, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.trace_tree = tree
        self.view = Visibility.initial(tree)
        # The positions of annotated spans (the screen keeps it current as it writes).
        self.marked: set[int] = set()

    @property
    def position(self) -> int | None:
        """The tree position under the cursor."""
        rows = self.view.rows
        return rows[self.cursor] if 0 <= self.cursor < len(rows) else None

    def row_count(self) -> int:
        return len(self.view.rows)

    def on_mount(self) -> None:
        self.rows_changed()

    def on_unmount(self) -> None:
        # A closed view may linger until the collector finds it; its spans need not.
        self.trace_tree = build_tree([])
        self.view = Visibility.initial(self.trace_tree)

    def on_virtual_rows_cursor_moved(self, event: VirtualRows.CursorMoved) -> None:
        event.stop()
        self.post_message(self.SpanHighlighted(self.position))

    # -- drawing ---------------------------------------------------------------------------------

    def render_row(self, row: int, width: int, selected: bool) -> Strip:
        tree, i = self.trace_tree, self.view.rows[row]
        span = tree.spans[i]
        c = columns_for(width)
        depth = tree.depth[i]
        # Indentation may take at most a third of the name column; deeper levels say their depth.
        levels = min(depth, MAX_INDENT, c["name"] // 6)
        indent = "  " * levels
        if depth > levels:  # the depth, in place of the indentation it would need
            indent = f"{depth}‥".ljust(2 * levels)
        collapsed = self.view.is_collapsed(i)
        marker = ("▸ " if collapsed else "▾ ") if tree.has_children(i) else "  "
        flag = "✗ " if span.is_error else ("⚠ " if tree.flags[i] else "")
        if i in self.marked:
            flag += NOTE_MARK + " "
        name = indent + marker + flag + (span.name or span.id or "?")
        name_style = ERROR_NAME if span.is_error else None
        hidden = tree.hidden_errors(i) if collapsed else 0
        if hidden:
            # A folded node says how many errors it hides, so none goes unseen under it. The
            # count is kept whole and the name cut, beside it, within the name column.
            badge = f"✗ {fmt.count(hidden)}"
            name_text = fmt.fit(name, c["name"] - len(badge) - 1).rstrip()
            name_cells = [
                (name_text, name_style),
                (badge.ljust(c["name"] - cell_len(name_text) - 1), ERROR_NAME),
            ]
        else:
            name_cells = [(fmt.fit(name, c["name"]), name_style)]
        inp: int | None
        out: int | None
        cost: float | None
        if collapsed:
            inp, out, cost = tree.sub_input[i], tree.sub_output[i], tree.sub_cost[i]
            sigma = "Σ"
        else:
            inp, out, cost = span.input_tokens, span.output_tokens, span.cost_usd
            sigma = ""
        offset, length = tree.offset_and_length(i)
        cells = [
            *name_cells,
            (fmt.fit(span.kind or "", c["kind"]), KIND_STYLES.get(span.kind or "")),
            (fmt.fit(span.model or "", c["model"]), NO_MODEL if not span.model else None),
            (fmt.fit_right(sigma + fmt.tokens(inp), c["in"]), None),
            (fmt.fit_right(sigma + fmt.tokens(out), c["out"]), None),
            (
                fmt.fit_right(
                    sigma + fmt.cost(cost, collapsed or not fmt.cost_is_unknown(span.attributes)),
                    c["cost"],
                ),
                TOTAL if collapsed else None,
            ),
            (fmt.fit_right(fmt.duration(span.duration_ms), c["dur"]), None),
            (
                waterfall(offset, length, c["bar"]),
                KIND_STYLES.get(span.kind or "", DEFAULT_KIND_STYLE),
            ),
        ]
        # Every cell is cut to its column's width: the row's length is known.
        return self.cells_strip(cells, selected, sum(c.values()) + len(c) - 1)

    # -- actions ---------------------------------------------------------------------------------

    def _after_change(self, position: int | None) -> None:
        self.rows_changed()
        if position is not None:
            row = self.view.row_of(position)
            if row is not None:
                self.move_to(row)

    def action_expand(self) -> None:
        position = self.position
        if position is not None and self.view.is_collapsed(position):
            self.view.expand(position)
            self._after_change(position)
        else:
            self.action_cursor_down()

    def action_collapse(self) -> None:
        position = self.position
        if position is None:
            return
        if self.trace_tree.has_children(position) and not self.view.is_collapsed(position):
            self.view.collapse(position)
            self._after_change(position)
        elif self.trace_tree.parent[position] != -1:
            self._after_change(self.trace_tree.parent[position])

    def action_fold(self) -> None:
        position = self.position
        if position is not None and self.trace_tree.has_children(position):
            self.view.toggle(position)
            self._after_change(position)

    def action_expand_all(self) -> None:
        position = self.position
        self.view.expand_all()
        self._after_change(position)

    def action_collapse_all(self) -> None:
        position = self.position
        self.view.collapse_all()
        root = position
        while root is not None and self.trace_tree.parent[root] != -1:
            root = self.trace_tree.parent[root]
        self._after_change(root)

    def go_to(self, position: int) -> None:
        """Reveal and select a tree position."""
        self.view.reveal(position)
        self._after_change(position)

    def action_next_error(self, backwards: bool = False) -> None:
        found = find_next(self.trace_tree, self.position or 0, self.trace_tree.errors, backwards)
        if found is None:
            self.notify("No span in this trace has an error.", timeout=3)
            return
        self.go_to(found)

    def action_previous_error(self) -> None:
        self.action_next_error(backwards=True)
