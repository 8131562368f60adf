"""MetricChart: a metric's series as a bar chart with the threshold row, drawn for the size the
widget gets (tui/model/charts.py), with a time axis below. Redrawn on resize only: the series is
computed once (tui/model/metrics.py) and handed in."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from rich.text import Text
from textual import events
from textual.widgets import Static

from tui.model import charts
from tui.model.formatting import local_time


class MetricChart(Static):
    """A bar chart of `values` between `start` and `end`; `label` writes a value with its unit."""

    DEFAULT_CSS = """
    MetricChart { height: 7; padding: 0 1; }
    """

    def __init__(self, note: str = "", **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
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
        rows = [*head, *rows, self._time_axis(width)]
        self.update(Text("\n", no_wrap=True).join(rows))

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
