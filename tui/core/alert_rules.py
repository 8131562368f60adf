"""The alert vocabulary on the app's side, in one place: the fields of an alert, the metric
grammar `<measure>_<unit>_<period>`, and the conditions, with how each reads on screen.

The spec names the form of a metric and the four kinds of alert but not their exact spelling;
this is the grammar the local service validates (tui/server keeps its own copy: the two share no
code), so the form refuses exactly what that service would refuse. Metrics of another server
that do not fit are still shown, as they came.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any

# Each measure with the units it may be given in; the first is the usual one.
MEASURE_UNITS: dict[str, tuple[str, ...]] = {
    "latency": ("ms", "s"),
    "error_rate": ("pct", "ratio"),
    "cost": ("usd",),
    "prompt_drift": ("score", "pct"),
}
NAMED_PERIODS = {
    "minute": timedelta(minutes=1),
    "hour": timedelta(hours=1),
    "day": timedelta(days=1),
    "week": timedelta(weeks=1),
}
_PERIOD_UNITS = {"m": "minutes", "h": "hours", "d": "days"}
_PERIOD = re.compile(r"^(?P<count>[1-9][0-9]{0,2})(?P<unit>[mhd])$")
# Any `<measure>_<unit>_<period>`, for showing the metrics of servers with another vocabulary.
_ANY_METRIC = re.compile(r"^(?P<measure>.+?)_(?P<unit>[a-z]+)_(?P<period>[0-9]*[a-z]+)$")
METRIC_EXAMPLES = ("latency_ms_5m", "error_rate_pct_15m", "cost_usd_1h", "prompt_drift_score_24h")
PERIOD_HELP = "1 to 999 followed by m, h or d (5m, 1h, 7d), or minute, hour, day, week"

# Condition -> the symbol it reads as.
CONDITIONS: dict[str, str] = {"gt": ">", "gte": "≥", "lt": "<", "lte": "≤"}


@dataclass(frozen=True)
class AlertDraft:
    """The fields an alert is created with: every one of them is required."""

    name: str
    metric: str
    condition: str
    threshold: float
    webhook_url: str

    def body(self) -> dict[str, Any]:
        """The JSON body of the create request."""
        return asdict(self)


@dataclass(frozen=True)
class Metric:
    """A metric read by the grammar: what it measures, in which unit, over which window."""

    measure: str
    unit: str
    period: str
    window: timedelta


def period_window(period: str) -> timedelta | None:
    """`5m` -> 5 minutes, `day` -> 1 day; None when it is not a period of the grammar."""
    if period in NAMED_PERIODS:
        return NAMED_PERIODS[period]
    match = _PERIOD.match(period)
    if match is None:
        return None
    return timedelta(**{_PERIOD_UNITS[match["unit"]]: int(match["count"])})


def _split(text: str) -> tuple[str, str, str] | None:
    for measure in MEASURE_UNITS:  # measures contain underscores themselves
        if text.startswith(measure + "_"):
            unit, _, period = text[len(measure) + 1 :].partition("_")
            return measure, unit, period
    return None


def metric_problem(text: str) -> str | None:
    """What is wrong with a metric as typed, in words; None when the grammar accepts it."""
    if not text:
        return "A metric is required, e.g. " + ", ".join(METRIC_EXAMPLES)
    parts = _split(text)
    if parts is None:
        return (
            "The form is <measure>_<unit>_<period>; the measure is one of "
            + ", ".join(MEASURE_UNITS)
            + " (e.g. latency_ms_5m)."
        )
    measure, unit, period = parts
    if unit not in MEASURE_UNITS[measure]:
        return f"The unit of {measure} is one of: {', '.join(MEASURE_UNITS[measure])}."
    if period_window(period) is None:
        return f"The period is {PERIOD_HELP}."
    return None


def parse_metric(text: str | None) -> Metric | None:
    """The metric if the grammar accepts it, else None."""
    if not text or metric_problem(text) is not None:
        return None
    parts = _split(text)
    assert parts is not None
    window = period_window(parts[2])
    assert window is not None
    return Metric(*parts, window=window)


def split_metric(text: str | None) -> tuple[str, str, str] | None:
    """Any `<measure>_<unit>_<period>` as its three parts (known measures first, as they hold
    underscores), whether or not this grammar accepts it; None if it is not of that form."""
    if not text:
        return None
    parts = _split(text)
    if parts is not None:
        return parts if all(parts) and "_" not in parts[2] else None
    match = _ANY_METRIC.match(text)
    return (match["measure"], match["unit"], match["period"]) if match else None


def metric_label(text: str | None, compact: bool = False) -> str:
    """How a metric reads in a table: `latency · ms · per 5m` (compact: `latency /5m`, the
    period kept whole and the unit left to the values beside it), or as it came."""
    parts = split_metric(text)
    if parts is None:
        return text or "–"
    measure, unit, period = parts
    if compact:
        return f"{measure.replace('_', ' ')} /{period}"
    return f"{measure.replace('_', ' ')} · {unit} · per {period}"


def condition_symbol(condition: str | None) -> str:
    """`gt` -> `>`; an unknown condition as it came."""
    if not condition:
        return "–"
    return CONDITIONS.get(condition, condition)


# An alert's state as the server reports it (an extension of the spec: servers without alert
# evaluation send none, which reads "unknown"). Words and a symbol each: never colour alone.
STATES: dict[str, tuple[str, str]] = {
    "firing": ("▲", "firing"),
    "ok": ("✓", "ok"),
    "no_data": ("·", "no data"),
}


def _nothing_in(metric: str | None) -> str:
    """What a window without a value lacks, by the metric's measure: the traces (latency, error
    rate, cost: a window with none has no value, an error rate included, never 0%), the prompts
    (drift); `data` for another server's metric."""
    parts = split_metric(metric)
    measure = parts[0] if parts else ""
    if measure == "prompt_drift":
        return "prompts"
    return "traces" if measure in MEASURE_UNITS else "data"


def state_label(state: str | None, metric: str | None = None) -> str:
    """`▲ firing`, `✓ ok`, and for a state without a value what the window lacks: `· no
    traces` (`· no prompts` for drift; `· no data` without a metric of this grammar); `?
    unknown` when the server says nothing (or other)."""
    if state == "no_data":
        return f"· no {_nothing_in(metric)}"
    symbol, words = STATES.get(state or "", ("?", "unknown"))
    return f"{symbol} {words}"


def no_value_text(metric: str | None) -> str:
    """A window without a value, in words: `no traces in the last 15m`."""
    parts = split_metric(metric)
    period = f" in the last {parts[2]}" if parts else ""
    return f"no {_nothing_in(metric)}{period}"


def amount(metric: str | None, value: float | None, exact: bool = False) -> str:
    """A metric's value (or threshold) with its unit: a latency as a duration (`850 ms`, `6.26
    s`, `1 min 53 s`), `$3.10`, `12.5%`, `0.42` (a score or ratio), thousands marked (`8,000`);
    `–` for none. `exact`: a latency in whole milliseconds (`8,001 ms`), for two values that
    would read the same rounded. Unknown units show the number as it came."""
    if value is None:
        return "–"
    parts = split_metric(metric)
    unit = parts[1] if parts else ""
    if unit == "usd":
        return f"${value:,.2f}" if abs(value) >= 0.01 or value == 0 else f"${value:.4g}"
    if unit == "pct":
        return f"{number(value)}%"
    if unit in ("ms", "s") and math.isfinite(value):
        ms = value * 1000 if unit == "s" else value
        return f"{ms:,.0f} ms" if exact else latency(ms)
    return number(value)


def latency(ms: float) -> str:
    """A duration at three significant digits: `850 ms`, `6.26 s`, `12.3 s`, `1 min 53 s`,
    `2 h 05 min`."""
    if abs(ms) < 999.5:  # what would round to 1,000 ms reads 1 s
        return f"{ms:,.0f} ms"
    seconds = ms / 1000
    if abs(seconds) < 59.95:
        return f"{seconds:.3g} s"
    if abs(seconds) < 3600:
        minutes, rest = divmod(round(seconds), 60)
        return f"{minutes} min {rest:02d} s" if rest else f"{minutes} min"
    hours, rest = divmod(round(seconds / 60), 60)
    return f"{hours:,} h {rest:02d} min" if rest else f"{hours:,} h"


def number(value: float) -> str:
    """Three significant digits, thousands marked, never an exponent for what an alert holds:
    8,000, 12.5, 0.0625."""
    if not math.isfinite(value):
        return str(value)
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}" if abs(value) >= 1e-4 or value == 0 else f"{value:.2e}"


def both_amounts(
    metric: str | None, value: float | None, threshold: float | None
) -> tuple[str, str]:
    """A value and a threshold as they read side by side: exact when they differ but would
    read the same rounded (`8,001 ms > 8,000 ms`, never `8 s > 8 s`)."""
    shown = amount(metric, value), amount(metric, threshold)
    if value is not None and threshold is not None and value != threshold and shown[0] == shown[1]:
        return amount(metric, value, exact=True), amount(metric, threshold, exact=True)
    return shown


def breach_text(
    metric: str | None, condition: str | None, value: float | None, threshold: float | None
) -> str:
    """`2730 ms > 1000 ms` (the value beside what it is compared with), or `> 1000 ms` when
    there is no value."""
    value_text, threshold_text = both_amounts(metric, value, threshold)
    compared = f"{condition_symbol(condition)} {threshold_text}"
    return compared if value is None else f"{value_text} {compared}"
