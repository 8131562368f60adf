"""The one table every benchmark prints: scenario, our figure, the floor, the ratio, the target."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    scenario: str
    ours: float
    floor: float
    unit: str
    target: str
    met: bool

    @property
    def ratio(self) -> float:
        return self.ours / self.floor if self.floor else float("inf")


def median_time(fn: Callable[[], object], runs: int = 5) -> float:
    """Median wall time of `fn` in seconds over `runs` calls."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def p95_ms(fn: Callable[[], object], runs: int) -> float:
    """The 95th percentile of `fn`'s wall time in ms over `runs` calls, after one call to warm
    it (with one run, that run's time)."""
    fn()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.quantiles(times, n=20)[-1] * 1000 if runs > 1 else times[0] * 1000


def print_table(rows: list[Row]) -> None:
    header = f"{'scenario':<44} {'ours':>10} {'floor':>10} {'ratio':>7}  {'target':<18} ok"
    print(header)
    print("-" * len(header))
    for r in rows:
        digits = 0 if not r.unit else 2  # no unit: a count
        floor = f"{r.floor:>8.{digits}f}{r.unit:<2}" if r.floor else f"{'–':>10}"
        ratio = f"{r.ratio:>6.2f}x" if r.floor else f"{'–':>7}"
        print(
            f"{r.scenario:<44} {r.ours:>8.{digits}f}{r.unit:<2} {floor} "
            f"{ratio}  {r.target:<18} {'yes' if r.met else 'NO'}"
        )
