"""AlertPreview: under the alert form, the last 24 h of the metric being typed, with the
threshold as the sparkline's midline, and how many times the alert would have fired.

Computed from the trace list (tui/model/metrics.py) the form pages in once, so it works against any
server; recomputed a moment after the user stops typing, not on every key."""

from __future__ import annotations

import math
from datetime import timedelta

from rich.text import Text
from textual.timer import Timer
from textual.widgets import Static

from tui.core.alert_rules import CONDITIONS, amount, no_value_text, parse_metric
from tui.model import charts, metrics
from tui.model import formatting as fmt
from tui.ui.trace_pages import Collected

SPAN = timedelta(hours=24)
POINTS = 288  # every 5 minutes: "would have fired" counts what a 5-minute check would see
SETTLE_SECONDS = 0.2  # after the last key, then the preview is computed


def threshold_of(text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


class AlertPreview(Static):
    DEFAULT_CSS = """
    AlertPreview { height: auto; margin-top: 1; color: $text; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(Text("Preview: loading the last 24 h of traces…", style="dim"), **kwargs)  # type: ignore[arg-type]
        self.collected: Collected | None = None
        self.failed = ""
        self.fired: int | None = None  # of the last preview drawn (tests read it)
        self._wanted: tuple[str, str, str] = ("", "", "")
        self._timer: Timer | None = None

    def wanted(self, metric: str, condition: str, threshold: str) -> None:
        """The fields changed: draw for them once typing settles."""
        self._wanted = (metric.strip(), condition.strip(), threshold)
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(SETTLE_SECONDS, self.draw)

    def loaded(self, collected: Collected) -> None:
        self.collected = collected
        self.draw()

    def unavailable(self, why: str) -> None:
        self.failed = why
        self.draw()

    def on_resize(self) -> None:
        self.draw()

    def draw(self) -> None:
        metric, condition, threshold_text = self._wanted
        self.fired = None
        if self.failed:
            return self.update(Text(f"Preview: {self.failed}", style="dim"))
        if self.collected is None:
            return self.update(Text("Preview: loading the last 24 h of traces…", style="dim"))
        parsed = parse_metric(metric)
        if parsed is None:
            return self.update(Text("Preview: type a metric, e.g. latency_ms_5m", style="dim"))
        if parsed.measure == "prompt_drift":
            return self.update(Text(f"Preview: {metrics.DRIFT_NOTE}", style="dim"))
        collected = self.collected
        series = metrics.series(
            metric, collected.traces, collected.end, SPAN, POINTS, covered=collected.covered
        )
        threshold = threshold_of(threshold_text)
        condition = condition if condition in CONDITIONS else "gt"
        width = max(10, self.content_size.width or 60)
        text = Text("Last 24 h  ", style="bold")
        text.append_text(charts.sparkline(series.values, width - 11, threshold, condition))
        text.append("\n")
        now = series.values[-1]
        if now is None:  # an empty window has no value: never "now > 5%", never 0%
            now_text = no_value_text(metric)
        elif threshold is None:
            now_text = amount(metric, now)
        else:
            now_text = metrics.compared_text(metric, condition, now, threshold)
        if threshold is None:
            text.append(f"now {now_text} · add a threshold to see how often it fires")
        else:
            self.fired = metrics.firings(series.values, condition, threshold)
            text.append(f"now {now_text} · ")
            text.append(
                f"would have fired {fmt.counted(self.fired, 'time')} in 24 h",
                style="bold" if self.fired else "",
            )
            legend = " (midline: the threshold)"
            if text.cell_len + len(legend) <= 2 * width:  # on the second line, if it fits
                text.append(legend, style="dim")
        if collected.capped:
            text.append(
                f"\nof the {fmt.counted(len(collected.traces), 'trace')} paged in only", style="dim"
            )
        self.update(text)
