"""TraceTable: the trace list, drawn line by line so 50,000 loaded traces stay instant."""

from __future__ import annotations

from datetime import datetime, timezone

from rich.style import Style
from textual.strip import Strip

from tui.api import Trace
from tui.model import formatting as fmt
from tui.model.annotations import mark_of, summary_of
from tui.ui.widgets.virtual_rows import VirtualRows

ERROR = Style(color="red", bold=True)
PREVIEW = Style(italic=True)
MARKED = Style(color="yellow", bold=True)
DIFF_MARKED = Style(color="black", bgcolor="yellow", bold=True)  # the trace `m` marked as A


def columns_for(width: int, previews: bool = False, marks: bool = False) -> dict[str, int]:
    """Column widths; with `previews` (the server gave some traces an input preview), the name
    shares its room with an input column; with `marks` (some trace is annotated), a column of
    one cell says which ones are."""
    cols = {"status": 1, "mark": 1 if marks else 0, "start": 14, "ago": 8, "dur": 7}
    cols |= {"spans": 5, "tokens": 7, "cost": 9}
    if width < 90:  # minutes are precise enough when space is short; the age stays
        cols["start"], cols["ago"], cols["cost"] = 11, 7, 8
    room = max(8, width - sum(cols.values()) - len([c for c in cols.values() if c]))
    cols["name"], cols["input"] = room, 0
    if previews and room >= 20:
        cols["name"] = max(10, min(32, room * 2 // 5))
        cols["input"] = room - cols["name"] - 1
    return cols


def header_line(width: int, previews: bool = False, marks: bool = False) -> str:
    c = columns_for(width, previews, marks)
    parts = [
        ("", c["status"], "<"),
        ("", c["mark"], "<"),
        ("start", c["start"], "<"),
        ("", c["ago"], "<"),
        ("name", c["name"], "<"),
        ("input", c["input"], "<"),
        ("dur", c["dur"], ">"),
        ("spans", c["spans"], ">"),
        ("tokens", c["tokens"], ">"),
        ("cost", c["cost"], ">"),
    ]
    return " ".join(f"{t:{a}{w}}"[:w] for t, w, a in parts if w)


class TraceTable(VirtualRows):
    """Shows `rows`; the screen replaces the list and calls rows_changed(). Its ages ("3m ago")
    keep counting while it is on screen: redrawn every AGE_TICK_S seconds from the app's clock."""

    AGE_TICK_S = 15.0

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.rows: list[Trace] = []
        self.now = datetime.now(timezone.utc)
        self.previews = False  # some trace has an input preview: the input column shows
        self.marks = False  # some trace is annotated: the column of marks shows
        self.diff_mark: str | None = None  # the id of the trace marked as A for a diff

    def on_mount(self) -> None:
        self.set_interval(self.AGE_TICK_S, self._tick_ages)

    def _tick_ages(self) -> None:
        clock = getattr(self.app, "now", None)  # the app's, which tests and screenshots fix
        self.now = clock() if callable(clock) else datetime.now(timezone.utc)
        self.refresh()

    def row_count(self) -> int:
        return len(self.rows)

    def row_key(self, row: int) -> object:
        return self.rows[row].id or None

    @property
    def selected(self) -> Trace | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    def render_row(self, row: int, width: int, selected: bool) -> Strip:
        trace = self.rows[row]
        c = columns_for(width, self.previews, self.marks)
        total = trace.total_tokens
        if total is None and trace.input_tokens is not None:
            total = trace.input_tokens + (trace.output_tokens or 0)
        status = ("✗", ERROR) if trace.is_error else ("✓", Style(color="green"))
        if trace.id is not None and trace.id == self.diff_mark:
            status = ("A", DIFF_MARKED)  # its name stays red if it failed
        cells: list[tuple[str, Style | None]] = [
            status,
            (fmt.fit(mark_of(summary_of(trace)), c["mark"]), MARKED),
            (fmt.fit(fmt.local_time(trace.started_at, seconds=c["start"] >= 14), c["start"]), None),
            (fmt.fit(fmt.ago(trace.started_at, self.now), c["ago"]), Style(dim=True)),
            (fmt.fit(trace.name or trace.id or "?", c["name"]), ERROR if trace.is_error else None),
            (fmt.fit(trace.input_preview or "", c["input"]), PREVIEW),
            (fmt.fit_right(fmt.duration(trace.duration_ms), c["dur"]), None),
            (
                fmt.fit_right(
                    trace.span_count if trace.span_count is not None else "–", c["spans"]
                ),
                None,
            ),
            (fmt.fit_right(fmt.tokens(total), c["tokens"]), None),
            (
                fmt.fit_right(
                    fmt.trace_cost(trace.total_cost_usd, trace.unpriced_spans), c["cost"]
                ),
                None,
            ),
        ]
        return self.cells_strip(cells, selected)
