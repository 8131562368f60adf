"""Pure (no Textual): an alert's metric computed from trace list rows, the way the local
service computes it (README, "Alerts that fire"), for servers that do not evaluate alerts.

The window is [end - period, end), half-open, on the traces' start. latency: the 95th
percentile of durations, linear between the closest ranks (rank = 0.95 (n - 1)); error_rate:
traces with an error status or count over all; cost: the sum of total_cost_usd. An empty window
has no value. Prompt drift needs the prompts, which trace lists do not carry: no value, and
`DRIFT_NOTE` says why.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from tui.alert_rules import parse_metric
from tui.api import Trace

DRIFT_NOTE = "Prompt drift needs the prompts themselves: only the server can compute it."


def has_error(trace: Trace) -> bool:
    return trace.status == "error" or (trace.error_count or 0) > 0


def percentile(values: Sequence[float], q: float = 0.95) -> float | None:
    ordered = sorted(values)
    if not ordered:
        return None
    rank = q * (len(ordered) - 1)
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def in_window(traces: Iterable[Trace], start: datetime, end: datetime) -> list[Trace]:
    return [t for t in traces if t.started_at is not None and start <= t.started_at < end]


def window_of(metric: str, end: datetime) -> tuple[datetime, datetime] | None:
    parsed = parse_metric(metric)
    return None if parsed is None else (end - parsed.window, end)


def value_of(metric: str, traces: Sequence[Trace]) -> float | None:
    """The metric's value, in its unit, over `traces` (already the window's); None if empty or
    not computable here (prompt drift, an unknown metric)."""
    parsed = parse_metric(metric)
    if parsed is None or not traces or parsed.measure == "prompt_drift":
        return None
    if parsed.measure == "latency":
        p95 = percentile([t.duration_ms or 0.0 for t in traces])
        return None if p95 is None else (p95 / 1000 if parsed.unit == "s" else p95)
    if parsed.measure == "error_rate":
        ratio = sum(has_error(t) for t in traces) / len(traces)
        return ratio * 100 if parsed.unit == "pct" else ratio
    return round(sum(t.total_cost_usd or 0.0 for t in traces), 9)


def ranked(metric: str, traces: Sequence[Trace]) -> list[Trace]:
    """The window's traces, what the metric measures first: slowest for latency, errored (then
    newest) for error rate, most expensive for cost; newest first otherwise."""
    parsed = parse_metric(metric)
    measure = parsed.measure if parsed else ""

    def start(t: Trace) -> float:
        return t.started_at.timestamp() if t.started_at else 0.0

    if measure == "latency":
        return sorted(traces, key=lambda t: -(t.duration_ms or 0))
    if measure == "error_rate":
        return sorted(traces, key=lambda t: (not has_error(t), -start(t)))
    if measure == "cost":
        return sorted(traces, key=lambda t: -(t.total_cost_usd or 0))
    return sorted(traces, key=lambda t: -start(t))


def lookback(metric: str) -> timedelta | None:
    parsed = parse_metric(metric)
    return None if parsed is None else parsed.window
