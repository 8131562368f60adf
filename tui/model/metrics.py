"""Pure (no Textual): an alert's metric computed from trace list rows, the way the local
service computes it (README, "Alerts that fire"), for servers that do not evaluate alerts.

The window is [end - period, end), half-open, on the traces' start. latency: the 95th
percentile of durations, linear between the closest ranks (rank = 0.95 (n - 1)); error_rate:
traces with an error status or count over all; cost: the sum of total_cost_usd. An empty window
has no value. Prompt drift needs the prompts, which trace lists do not carry: no value, and
`DRIFT_NOTE` says why.

`series` is the same metric at evenly spaced moments (each the end of its own window), for the
charts of the alerts screen, the alert detail and the alert form; `firings` counts how often
such a series would have fired.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import accumulate, pairwise
from operator import itemgetter

from tui.api import Alert, Trace
from tui.core.alert_rules import both_amounts, breach_text, parse_metric

DRIFT_NOTE = "Prompt drift needs the prompts themselves: only the server can compute it."
# What a state marked * means, in words, where the alerts list and an alert's detail show one:
# a server that does not evaluate alerts has none, so the app reads one from its traces.
COMPUTED_NOTE = "the state marked * is worked out by this app from the server's trace list"


# The state of an alert the server keeps states for and has not evaluated yet: its "no data"
# says nothing of the window.
EVALUATING = "… evaluating"


def awaits_evaluation(alert: Alert) -> bool:
    """Whether the server keeps alert states and has not evaluated this one yet."""
    return alert.state == "no_data" and alert.last_evaluated_at is None and not alert.paused


def has_error(trace: Trace) -> bool:
    return trace.status == "error" or (trace.error_count or 0) > 0


def percentile(values: Sequence[float], q: float = 0.95) -> float | None:
    return percentile_of_sorted(sorted(values), q)


def percentile_of_sorted(ordered: Sequence[float], q: float = 0.95) -> float | None:
    """`percentile` of values already in ascending order."""
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


# -- series ---------------------------------------------------------------------------------------

DAY = timedelta(hours=24)
MOST_OVERLAP = 8  # windows a trace may fall in, at most: what bounds a series' cost


@dataclass(frozen=True)
class Series:
    """A metric at `len(values)` moments: moment i is `start + (i + 1) * step`, and its value is
    the metric over the window [moment - period, moment) (None: no traces, or not computable)."""

    metric: str
    start: datetime
    step: timedelta
    values: list[float | None]

    def moment(self, index: int) -> datetime:
        return self.start + (index + 1) * self.step


def series(
    metric: str,
    traces: Iterable[Trace],
    end: datetime,
    span: timedelta = DAY,
    points: int = 96,
    covered: tuple[datetime, datetime] | None = None,
) -> Series:
    """The metric over the `span` before `end` at `points` moments, each value what `value_of`
    gives for that moment's window (fewer moments for long windows: see MOST_OVERLAP). Sorted
    once; sums by prefix; 50,000 traces take tens of milliseconds (tests/perf/bench_triage).

    `covered`: the stretch the traces stand for, when they are not all of it (paging stopped at
    a cap); a moment whose window reaches outside it has no value rather than a partial one."""
    start = end - span
    parsed = parse_metric(metric)
    if parsed is None or parsed.measure == "prompt_drift":
        return Series(metric, start, span / points, [None] * points)
    # A window longer than a few steps changes little from one moment to the next: fewer
    # moments, so that no trace is in more than MOST_OVERLAP windows (a 24 h metric over a
    # day: 8 moments, one every 3 h; the charts stretch them to their width).
    points = max(1, min(points, math.ceil(MOST_OVERLAP * span / parsed.window)))
    step = span / points
    # One pass over the traces for what the measure needs, then one sort by start.
    if parsed.measure == "latency":
        picked = [(t.started_at, t.duration_ms or 0.0) for t in traces if t.started_at is not None]
    elif parsed.measure == "error_rate":
        picked = [
            (
                t.started_at,
                float(t.status == "error" or (t.error_count or 0) > 0),
            )
            for t in traces
            if t.started_at is not None
        ]
    else:
        picked = [
            (t.started_at, t.total_cost_usd or 0.0) for t in traces if t.started_at is not None
        ]
    picked.sort(key=itemgetter(0))  # datetimes compare in C: no conversion per trace
    starts = [ms for ms, _ in picked]
    amounts = [amount for _, amount in picked]
    moments = [start + (i + 1) * step for i in range(points)]
    bounds = [(bisect_left(starts, m - parsed.window), bisect_left(starts, m)) for m in moments]
    if covered is not None:  # an empty window: no value
        bounds = [
            (lo, hi) if covered[0] <= m - parsed.window and m <= covered[1] + step else (0, 0)
            for (lo, hi), m in zip(bounds, moments, strict=True)
        ]
    if parsed.measure == "latency":
        values = _p95s(amounts, bounds)
        if parsed.unit == "s":
            values = [None if v is None else v / 1000 for v in values]
        return Series(metric, start, step, values)
    if parsed.measure == "error_rate":
        scale = 100 if parsed.unit == "pct" else 1
        errors = [0.0, *accumulate(amounts)]
        return Series(
            metric,
            start,
            step,
            [
                (errors[hi] - errors[lo]) / (hi - lo) * scale if hi > lo else None
                for lo, hi in bounds
            ],
        )
    costs = [0.0, *accumulate(amounts)]
    return Series(
        metric,
        start,
        step,
        [round(costs[hi] - costs[lo], 9) if hi > lo else None for lo, hi in bounds],
    )


def _p95s(durations: Sequence[float], bounds: list[tuple[int, int]]) -> list[float | None]:
    """The p95 of each window `durations[lo:hi]`. The stretches between the windows' edges
    are sorted once each; a window is then its stretches' sorted runs put end to end, which
    Python's sort merges rather than sorts (it finds runs already in order). With at most
    MOST_OVERLAP windows over any moment, sorting each window whole took 33 of a 24 h
    series' 84 ms over 50,000 traces."""
    edges = sorted({edge for window in bounds for edge in window})
    runs = {lo: sorted(durations[lo:hi]) for lo, hi in pairwise(edges)}
    values: list[float | None] = []
    for lo, hi in bounds:
        window: list[float] = []
        at = lo
        while at < hi:
            run = runs[at]
            window += run
            at += len(run)
        values.append(percentile_of_sorted(sorted(window)) if window else None)
    return values


def breaches(condition: str | None, value: float | None, threshold: float | None) -> bool:
    """Whether a value crosses the threshold by the condition (`gt` by default: the spec's
    example); no value, or no threshold, never does."""
    if value is None or threshold is None:
        return False
    if condition == "gte":
        return value >= threshold
    if condition == "lt":
        return value < threshold
    if condition == "lte":
        return value <= threshold
    return value > threshold


def firings(values: Sequence[float | None], condition: str | None, threshold: float | None) -> int:
    """How many times a series would have fired: each move into breach (a series that starts
    in breach fires at once), as the service fires on a state change to firing."""
    count, before = 0, False
    for value in values:
        now = breaches(condition, value, threshold)
        count += now and not before
        before = now
    return count


def breaching_since(
    series: Series, condition: str | None, threshold: float | None
) -> datetime | None:
    """The moment the series' last run of breaches began, if its last value breaches: for a
    server that keeps no state, "firing since" as near as the series' step."""
    since = None
    for index in range(len(series.values) - 1, -1, -1):
        if not breaches(condition, series.values[index], threshold):
            break
        since = series.moment(index)
    return since


def computable(metric: str | None) -> bool:
    """Whether trace list rows are enough for this metric (all but prompt drift)."""
    parsed = parse_metric(metric)
    return parsed is not None and parsed.measure != "prompt_drift"


# The sign that is true of a value that does not breach, by condition.
UNBREACHED = {"gt": "≤", "gte": "<", "lt": "≥", "lte": ">"}


def compared_text(
    metric: str | None, condition: str | None, value: float | None, threshold: float | None
) -> str:
    """The value beside the threshold with the sign that is true of them: `9120 ms > 8000 ms`
    while it breaches, `1956 ms ≤ 8000 ms` while it does not (never `1956 ms > 8000 ms` beside
    "ok"); `> 8000 ms` without a value."""
    if value is None or threshold is None or condition not in UNBREACHED:
        return breach_text(metric, condition, value, threshold)
    if breaches(condition, value, threshold):
        return breach_text(metric, condition, value, threshold)
    value_text, threshold_text = both_amounts(metric, value, threshold)
    return f"{value_text} {UNBREACHED[condition]} {threshold_text}"
