"""The alert metric grammar `<measure>_<unit>_<period>` read into parts, the 95th percentile,
unit scaling and conditions. Pure: no store, no clock.

The numbers are the ones the alerts contract fixes, so that the app, computing them from the
trace list when a server does not, gets the same: latency is the p95 of trace durations by
linear interpolation between closest ranks (numpy's default "linear" method), error rate the
share of errored traces, cost the sum of trace costs, over the half-open window
[at - period, at) on started_at.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from tui.server.http.schemas import METRIC_RE

MINUTE_MS = 60_000
UNIT_MS = {"m": MINUTE_MS, "h": 60 * MINUTE_MS, "d": 1440 * MINUTE_MS}
NAMED_PERIODS = {
    "minute": MINUTE_MS,
    "hour": 60 * MINUTE_MS,
    "day": 1440 * MINUTE_MS,
    "week": 7 * 1440 * MINUTE_MS,
}
COMPARISONS = {
    "gt": lambda value, threshold: value > threshold,
    "gte": lambda value, threshold: value >= threshold,
    "lt": lambda value, threshold: value < threshold,
    "lte": lambda value, threshold: value <= threshold,
}
P95 = 0.95


class MetricParts(NamedTuple):
    measure: str  # latency, error_rate, cost, prompt_drift
    unit: str  # ms, s, pct, ratio, usd, score
    period_ms: int


def parse_metric(text: str) -> MetricParts:
    """`latency_ms_5m` -> MetricParts("latency", "ms", 300000). The service validated the metric
    when the alert was made; ValueError for anything else."""
    match = METRIC_RE.match(text)
    if match is None:
        raise ValueError("not a metric")
    period = match["period"]
    if period in NAMED_PERIODS:
        period_ms = NAMED_PERIODS[period]
    else:
        period_ms = int(period[:-1]) * UNIT_MS[period[-1]]
    return MetricParts(match["measure"], match["unit"], period_ms)


def p95_ranks(count: int) -> tuple[int, int, float]:
    """For `count` sorted values, the two ranks (0-based, ascending) the p95 lies between and
    how far between: rank = 0.95 * (count - 1), as numpy's "linear" method has it."""
    rank = (count - 1) * P95
    low = math.floor(rank)
    return low, min(math.ceil(rank), count - 1), rank - low


def lerp(low: float, high: float, fraction: float) -> float:
    """low + (high - low) * fraction, computed as numpy's percentile does (from the nearer end
    when fraction >= 0.5), so both give the same float."""
    if fraction >= 0.5:
        return high - (high - low) * (1 - fraction)
    return low + (high - low) * fraction


def percentile_95(values: list[float]) -> float | None:
    """The p95 of `values` (any order); None for none. The service reads only the two ranks it
    needs from its index (see p95_ranks); this is the same rule over a list."""
    if not values:
        return None
    ordered = sorted(values)
    low, high, fraction = p95_ranks(len(ordered))
    return lerp(ordered[low], ordered[high], fraction)


def in_unit(measure: str, unit: str, raw: float) -> float:
    """A measure's raw value (latency in ms, error rate and drift as ratios, cost in usd) in
    the metric's unit."""
    if measure == "latency" and unit == "s":
        return raw / 1000
    if unit == "pct":
        return raw * 100
    return raw


def breaches(condition: str, value: float, threshold: float) -> bool:
    """True when `value` meets the alert's condition against `threshold` (gt, gte, lt, lte)."""
    return bool(COMPARISONS[condition](value, threshold))
