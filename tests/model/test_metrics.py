"""tui/model/metrics.py: an alert's metric from trace list rows, by the service's definitions."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest

from tui.api import Trace
from tui.model import metrics

END = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)


def trace(
    minutes_ago: float, ms: float = 100, status: str = "ok", cost: float = 0.0, errors: int = 0
) -> Trace:
    return Trace.model_validate(
        {
            "id": f"t{minutes_ago}",
            "started_at": (END - timedelta(minutes=minutes_ago)).isoformat(),
            "duration_ms": ms,
            "status": status,
            "total_cost_usd": cost,
            "error_count": errors,
        }
    )


def test_the_window_is_half_open() -> None:
    start, end = metrics.window_of("latency_ms_5m", END) or (END, END)
    inside = [trace(5), trace(1), trace(0.001)]
    outside = [trace(0), trace(5.001)]
    assert [t.id for t in metrics.in_window(inside + outside, start, end)] == [t.id for t in inside]


def test_values_in_their_units() -> None:
    window = [
        trace(1, 500),
        trace(2, 800, "error"),
        trace(3, 1200, cost=0.5),
        trace(4, 3000, errors=1),
    ]
    assert metrics.value_of("latency_ms_5m", window) == pytest.approx(2730)
    assert metrics.value_of("latency_s_5m", window) == pytest.approx(2.73)
    assert metrics.value_of("error_rate_pct_5m", window) == 50.0
    assert metrics.value_of("error_rate_ratio_5m", window) == 0.5
    assert metrics.value_of("cost_usd_5m", window) == 0.5
    assert metrics.value_of("latency_ms_5m", []) is None  # an empty window: no value
    assert metrics.value_of("prompt_drift_score_24h", window) is None  # needs the prompts
    assert metrics.percentile([7.0]) == 7.0


def test_ranked_by_what_the_metric_measures() -> None:
    window = [trace(1, 500, cost=0.1), trace(2, 900, "error"), trace(3, 700, cost=0.9)]
    assert [t.duration_ms for t in metrics.ranked("latency_ms_5m", window)] == [900, 700, 500]
    assert metrics.ranked("error_rate_pct_5m", window)[0].status == "error"
    assert metrics.ranked("cost_usd_1h", window)[0].total_cost_usd == 0.9


@pytest.mark.parametrize(
    "metric",
    [
        "latency_ms_5m",  # windows apart
        "latency_s_24h",  # windows overlapping: fewer moments
        "error_rate_pct_1h",
        "cost_usd_3h",
    ],
)
def test_a_series_is_the_metric_at_each_moment(metric: str) -> None:
    import random

    rng = random.Random(7)
    traces = [
        trace(
            rng.uniform(0, 48 * 60),
            ms=rng.choice([rng.uniform(50, 900), rng.uniform(1000, 9000)]),
            status="error" if rng.random() < 0.1 else "ok",
            cost=rng.choice([0.0, rng.uniform(0, 0.2)]),
        )
        for _ in range(3000)
    ]
    traces += [trace(30, 100), trace(30 + 1e-3, 100)]  # on a moment and just before it
    got = metrics.series(metric, traces, END, points=96)
    count = len(got.values)  # fewer for long windows: no trace in more than 8 of them
    period_hours = (metrics.lookback(metric) or timedelta(0)) / timedelta(hours=1)
    assert count == min(96, math.ceil(8 * 24 / period_hours)) and got.moment(count - 1) == END
    expected = []
    for index in range(count):
        start, end = metrics.window_of(metric, got.moment(index)) or (END, END)
        expected.append(metrics.value_of(metric, metrics.in_window(traces, start, end)))
    assert got.values == pytest.approx(expected, rel=1e-9)
    assert any(v is not None for v in expected)


def test_an_empty_stretch_has_no_values_and_drift_none_at_all() -> None:
    got = metrics.series("latency_ms_5m", [trace(2)], END, points=96)  # 15 min moments
    assert [i for i, v in enumerate(got.values) if v is not None] == [95]
    assert metrics.series("prompt_drift_score_1h", [trace(10)], END).values == [None] * 96


def test_firings_count_each_move_into_breach() -> None:
    values = [1.0, 5.0, 6.0, None, 7.0, 2.0, 9.0]
    assert metrics.firings(values, "gt", 4) == 3  # 5, after no data 7, then 9
    assert metrics.firings(values, "lt", 4) == 2  # 1 at once, then 2
    assert metrics.firings([5.0, 5.0], "gte", 5) == 1
    assert metrics.firings([5.0, 5.0], "gt", 5) == 0
    assert metrics.firings([None, None], "gt", 0) == 0


def test_moments_whose_window_was_not_paged_in_have_no_value() -> None:
    traces = [trace(m) for m in range(0, 24 * 60, 7)]
    covered = (END - timedelta(hours=6), END)  # only the last 6 hours were paged in
    got = metrics.series("cost_usd_1h", traces, END, points=24, covered=covered)
    assert [v is not None for v in got.values] == [False] * 18 + [True] * 6  # from END - 5h
