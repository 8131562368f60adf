"""The alert form's metric and condition, chosen rather than typed: the metric as three choices
(what is measured, in which unit, over which period) that make `<measure>_<unit>_<period>`, and
the condition as one of four comparisons in words. Each has a `value` in the API's spelling
(`latency_ms_5m`, `gt`), read and set as the form's text fields are.

A metric outside this grammar (another server's vocabulary, on an alert being edited) is kept
as it came, offered as the first measure, until another measure is chosen.
"""

from __future__ import annotations

from rich.console import RenderableType
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Select

from tui.core.alert_rules import CONDITIONS, MEASURE_UNITS, split_metric
from tui.model.text import safe_text

MEASURE_LABELS = {
    "latency": "latency (p95)",
    "error_rate": "error rate",
    "cost": "cost",
    "prompt_drift": "prompt drift",
}
UNIT_LABELS = {
    "ms": "ms",
    "s": "seconds",
    "pct": "%",
    "ratio": "ratio 0-1",
    "usd": "US$",
    "score": "score 0-1",
}
PERIODS = ("1m", "5m", "10m", "15m", "30m", "1h", "6h", "12h", "24h", "7d")
CONDITION_LABELS = {
    "gt": "> above",
    "gte": "≥ at or above",
    "lt": "< below",
    "lte": "≤ at or below",
}
KEEP = "(as it is)"  # the measure option of a metric kept as it came


def _unit_options(measure: str) -> list[tuple[str, str]]:
    return [(UNIT_LABELS.get(unit, unit), unit) for unit in MEASURE_UNITS.get(measure, ())]


class MetricPicker(Horizontal):
    """Measure, unit and period: three choices side by side."""

    DEFAULT_CSS = """
    MetricPicker { height: auto; }
    MetricPicker #metric-measure { width: 2fr; margin-right: 1; }
    MetricPicker #metric-unit { width: 1fr; margin-right: 1; }
    MetricPicker #metric-period { width: 1fr; }
    """

    def __init__(self, value: str = "", **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._kept: str | None = None  # a metric outside the grammar, kept as it came
        parts = split_metric(value)
        measure, unit, period = parts if parts and parts[0] in MEASURE_UNITS else ("", "", "")
        if value and not measure:
            self._kept = value
        self._measure = measure or "latency"
        self._unit = (
            unit if unit in MEASURE_UNITS[self._measure] else MEASURE_UNITS[self._measure][0]
        )
        self._period = period or "5m"

    def compose(self) -> ComposeResult:
        measures: list[tuple[RenderableType, str]] = [
            (label, key) for key, label in MEASURE_LABELS.items()
        ]
        if self._kept is not None:
            measures.insert(0, (safe_text(f"{self._kept} {KEEP}", 40), KEEP))
        periods = list(PERIODS) if self._period in PERIODS else [self._period, *PERIODS]
        yield Select(
            measures,
            value=KEEP if self._kept is not None else self._measure,
            allow_blank=False,
            compact=True,
            id="metric-measure",
        )
        yield Select(
            _unit_options(self._measure),
            value=self._unit,
            allow_blank=False,
            compact=True,
            id="metric-unit",
        )
        yield Select(
            [(p, p) for p in periods],
            value=self._period,
            allow_blank=False,
            compact=True,
            id="metric-period",
        )

    @property
    def value(self) -> str:
        """The metric in the API's spelling."""
        if self._kept is not None:
            return self._kept
        return f"{self._measure}_{self._unit}_{self._period}"

    @value.setter
    def value(self, metric: str) -> None:
        parts = split_metric(metric)
        if parts is None or parts[0] not in MEASURE_UNITS:
            return  # only a metric of the grammar can be chosen
        self._kept = None
        self._measure, self._unit, self._period = parts
        if not self.is_mounted:
            return
        measure = self.query_one("#metric-measure", Select)
        measure.set_options([(label, key) for key, label in MEASURE_LABELS.items()])
        measure.value = self._measure
        unit = self.query_one("#metric-unit", Select)
        unit.set_options(_unit_options(self._measure))
        unit.value = self._unit
        period = self.query_one("#metric-period", Select)
        if self._period not in PERIODS:
            period.set_options([(p, p) for p in (self._period, *PERIODS)])
        period.value = self._period

    @on(Select.Changed, "#metric-measure")
    def _measure_chosen(self, event: Select.Changed) -> None:
        chosen = str(event.value)
        if chosen == KEEP or (chosen == self._measure and self._kept is None):
            return
        self._kept = None
        self._measure = chosen
        unit = self.query_one("#metric-unit", Select)
        if self._unit not in MEASURE_UNITS[chosen]:
            self._unit = MEASURE_UNITS[chosen][0]
        unit.set_options(_unit_options(chosen))
        unit.value = self._unit

    @on(Select.Changed, "#metric-unit")
    def _unit_chosen(self, event: Select.Changed) -> None:
        if event.value in MEASURE_UNITS.get(self._measure, ()):
            self._unit = str(event.value)

    @on(Select.Changed, "#metric-period")
    def _period_chosen(self, event: Select.Changed) -> None:
        self._period = str(event.value)


class ConditionPicker(Select[str]):
    """gt, gte, lt or lte, each with its sign and in words."""

    def __init__(self, value: str = "gt", **kwargs: object) -> None:
        options: list[tuple[RenderableType, str]] = [(CONDITION_LABELS[c], c) for c in CONDITIONS]
        if value not in CONDITIONS:  # another server's condition, kept as it came
            options.insert(0, (safe_text(f"{value} {KEEP}", 30), value))
        super().__init__(
            options,
            value=value or "gt",
            allow_blank=False,
            compact=True,
            **kwargs,  # type: ignore[arg-type]
        )
