"""MetricChart: a metric's series as a bar chart with the threshold row, drawn for the size the
widget gets (tui/model/charts.py), with a time axis below. Redrawn on resize only: the series is
computed once (tui/model/metrics.py) and handed in.

A chart made `selectable` takes the focus and marks one of its values (▲ on the axis row under
its bar): ←/→ move the mark, enter posts `Chosen` with its index (the overview opens that
bucket's failing traces)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Static

from tui.model import charts
from tui.model.formatting import local_time


class MetricChart(Static):
    """A bar chart of `values` between `start` and `end`; `label` writes a value with its unit."""

    DEFAULT_CSS = """
    MetricChart { height: 7; padding: 0 1; }
    MetricChart:focus { background: $boost; }
    """
    BINDINGS = [
        Binding("left", "move(-1)", "Earlier", show=False, id="chart.earlier"),
        Binding("right", "move(1)", "Later", show=False, id="chart.later"),
        Binding("enter", "choose", "Open", id="chart.choose", tooltip="The marked bar's traces"),
    ]

    @dataclass
    class Chosen(Message):
        """Enter on a selectable chart: the index of the marked value."""

        chart: MetricChart
        index: int

        @property
        def control(self) -> MetricChart:  # for @on(..., "#selector")
            return self.chart

    @dataclass
    class Moved(Message):
        """The mark moved (←/→) to the value at `index`."""

        chart: MetricChart
        index: int

        @property
        def control(self) -> MetricChart:
            return self.chart

    def __init__(self, note: str = "", selectable: bool = False, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.can_focus = selectable
        self.marked: int | None = None  # the value marked, on a selectable chart
        self.values: list[float | None] = []
        self.threshold: float | None = None
        self.condition: str | None = None
        self.label: Callable[[float], str] = lambda value: f"{value:g}"
        self.start: datetime | None = None
        self.end: datetime | None = None
        self.note = note  # shown in place of the chart when there is nothing to draw
        self.title: Text | None = None  # a first line above the chart, if given

    def show(
        self,
        values: list[float | None],
        start: datetime,
        end: datetime,
        label: Callable[[float], str],
        threshold: float | None = None,
        condition: str | None = None,
        note: str = "",
        title: Text | None = None,
    ) -> None:
        self.title = title
        self.values, self.start, self.end = values, start, end
        self.label, self.threshold, self.condition = label, threshold, condition
        self.note = note
        self.redraw()

    def say(self, note: str) -> None:
        """Words instead of a chart (loading, not computable)."""
        self.values = []
        self.note = note
        self.redraw()

    def on_resize(self, event: events.Resize) -> None:
        self.redraw()

    def mark(self, index: int | None) -> None:
        """Mark the value at `index` (None: no mark)."""
        self.marked = None if index is None else max(0, min(index, len(self.values) - 1))
        self.redraw()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("move", "choose"):
            return self.can_focus and self.marked is not None
        return True

    def action_move(self, step: int) -> None:
        if self.marked is not None:
            self.mark(self.marked + step)
            self.post_message(self.Moved(self, self.marked))

    def action_choose(self) -> None:
        if self.marked is not None:
            self.post_message(self.Chosen(self, self.marked))

    def redraw(self) -> None:
        width, height = self.content_size.width, self.content_size.height
        if width <= 0 or height <= 0:
            return
        head = [self.title] if self.title is not None else []
        if not any(v is not None for v in self.values):
            empty = Text(self.note or "no data in this range", style="dim")
            self.update(Text("\n").join([*head, empty]))
            return
        rows = charts.bar_chart(
            self.values,
            width,
            max(1, height - 1 - len(head)),
            self.label,
            self.threshold,
            self.condition,
        )
        axis_row = self._time_axis(width)
        if self.marked is not None:
            axis_row = self._marker(width)
        rows = [*head, *rows, axis_row]
        self.update(Text("\n", no_wrap=True).join(rows))

    def _marker(self, width: int) -> Text:
        """The time axis with ▲ in it, under the marked value's bar."""
        assert self.marked is not None
        axis = charts.axis_width(self.values, self.label, self.threshold)
        plot = max(1, width - axis - 1)
        column = axis + 1 + charts.bar_column(self.marked, len(self.values), plot)
        times = self._time_axis(width).plain.ljust(width)
        line = Text(times[:column], no_wrap=True, end="", style="dim")
        line.append("▲", style="bold reverse" if self.has_focus else "bold")
        line.append(times[column + 1 :], style="dim")
        return line

    def watch_has_focus(self, has_focus: bool) -> None:
        # The mark is drawn reversed while focused. Here, not in on_focus/on_blur: those run
        # before Widget's own handlers have changed has_focus. Widget's own watcher keeps the
        # :focus styles current.
        super().watch_has_focus(has_focus)
        self.redraw()

    def _time_axis(self, width: int) -> Text:
        if self.start is None or self.end is None:
            return Text()
        left = local_time(self.start, seconds=False)
        right = local_time(self.end, seconds=False)
        note = f" {self.note} " if self.note else ""
        gap = max(1, width - len(left) - len(right) - len(note))
        line = Text(no_wrap=True, end="", style="dim")
        line.append(left + " " * (gap // 2) + note + " " * (gap - gap // 2) + right)
        return line
