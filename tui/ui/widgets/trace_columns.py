"""The trace list's table with its optional columns: who and where (user, session and tags),
toggled by the screen; without them it is TraceTable as it is."""

from __future__ import annotations

from rich.style import Style
from textual.strip import Strip

from tui.model import formatting as fmt
from tui.model.annotations import mark_of, summary_of
from tui.ui.widgets.trace_table import ERROR, MARKED, TraceTable, columns_for, header_line

DIM = Style(dim=True)
WHO = ("user", "session", "tags")


def who_columns(width: int, marks: bool = False) -> dict[str, int]:
    """Column widths with user, session and tags: they and the name share the name's room (the
    input column gives its room up; under 120 columns, so do the start time and span count:
    the age says when)."""
    cols = columns_for(width, marks=marks)
    room = cols["name"]
    if width < 120:
        room += cols["start"] + cols["spans"] + 2
        cols["start"] = cols["spans"] = 0
    cols["input"] = 0
    name = max(8, room * 2 // 5)
    share = max(4, (room - name - 3) // 3)
    cols["name"] = max(4, room - 3 * (share + 1))
    for column in WHO:
        cols[column] = share
    return cols


def who_header(width: int, marks: bool = False) -> str:
    c = who_columns(width, marks)
    parts = [
        ("", c["status"], "<"),
        ("", c["mark"], "<"),
        ("start", c["start"], "<"),
        ("", c["ago"], "<"),
        ("name", c["name"], "<"),
        ("user", c["user"], "<"),
        ("session", c["session"], "<"),
        ("tags", c["tags"], "<"),
        ("dur", c["dur"], ">"),
        ("spans", c["spans"], ">"),
        ("tokens", c["tokens"], ">"),
        ("cost", c["cost"], ">"),
    ]
    return " ".join(f"{t:{a}{w}}"[:w] for t, w, a in parts if w)


class TraceListTable(TraceTable):
    """TraceTable, plus user, session and tags columns while `who` is on."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.who = False

    def header(self, width: int) -> str:
        if self.who:
            return who_header(width, self.marks)
        return header_line(width, self.previews, self.marks)

    def render_row(self, row: int, width: int, selected: bool) -> Strip:
        if not self.who:
            return super().render_row(row, width, selected)
        trace = self.rows[row]
        c = who_columns(width, self.marks)
        total = trace.total_tokens
        if total is None and trace.input_tokens is not None:
            total = trace.input_tokens + (trace.output_tokens or 0)
        cells: list[tuple[str, Style | None]] = [
            ("✗" if trace.is_error else "✓", ERROR if trace.is_error else Style(color="green")),
            (fmt.fit(mark_of(summary_of(trace)), c["mark"]), MARKED),
            (fmt.fit(fmt.local_time(trace.started_at, seconds=c["start"] >= 14), c["start"]), None),
            (fmt.fit(fmt.ago(trace.started_at, self.now), c["ago"]), DIM),
            (fmt.fit(trace.name or trace.id or "?", c["name"]), ERROR if trace.is_error else None),
            (fmt.fit(trace.user_id or "–", c["user"]), None),
            (fmt.fit(trace.session_id or "–", c["session"]), DIM),
            (fmt.fit(",".join(trace.tags) or "–", c["tags"]), DIM),
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
