"""Pure (no Textual): a project's figures over a range, per time bucket and in total, added to
page by page as the trace list arrives (nothing is recomputed from the start on a new page).

Per bucket: traces, errored traces, durations (for p50 / p95 / p99, the same linear-between-
closest-ranks percentile as tui/model/metrics.py, so the p95 of an hour is the latency alert's value
for that hour), tokens and cost; cost and tokens by model when the server's rows carry them
(`models`, an extension of the local service). Buckets are half-open [start + i * size,
start + (i + 1) * size) on the traces' start, as the alert windows are.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tui.api import Trace
from tui.model.metrics import has_error, percentile_of_sorted

# Bucket sizes to pick from: the smallest that leaves at most MAX_BUCKETS bars.
BUCKET_SIZES = tuple(timedelta(hours=h) for h in (1, 2, 3, 6, 12, 24, 48, 24 * 7, 24 * 14, 24 * 30))
MAX_BUCKETS = 48


def bucket_size(span: timedelta) -> timedelta:
    for size in BUCKET_SIZES:
        if span / size <= MAX_BUCKETS:
            return size
    return BUCKET_SIZES[-1]


@dataclass
class Bucket:
    traces: int = 0
    errors: int = 0
    durations: list[float] = field(default_factory=list)
    tokens: int = 0
    cost: float = 0.0
    # The durations in order, kept until the next trace arrives: a redraw sorts nothing again.
    _ordered: list[float] | None = None

    def ordered(self) -> list[float]:
        if self._ordered is None:
            self._ordered = sorted(self.durations)
        return self._ordered


@dataclass
class ModelShare:
    cost: float = 0.0
    tokens: int = 0
    traces: int = 0


@dataclass
class Totals:
    traces: int
    errors: int
    p50: float | None
    p95: float | None
    p99: float | None
    tokens: int
    cost: float

    @property
    def error_rate(self) -> float | None:
        """Errored traces over all, in percent; None with no traces."""
        return self.errors / self.traces * 100 if self.traces else None


class Overview:
    """Figures of [start, end) in buckets of `size` (see `bucket_size`)."""

    def __init__(self, start: datetime, end: datetime, size: timedelta | None = None) -> None:
        self.start, self.end = start, end
        self.size = size or bucket_size(end - start)
        count = max(1, -(-(end - start) // self.size))  # ceiling: the last bucket may be short
        self.buckets = [Bucket() for _ in range(count)]
        self.models: dict[str, ModelShare] = {}
        self.rows_with_models = 0  # rows whose server sent a `models` object
        self.added = 0
        self.outside = 0  # rows the server sent from outside the range (not counted)
        self._totals: Totals | None = None  # until the next page

    def add(self, traces: Iterable[Trace]) -> None:
        """One more page."""
        self._totals = None
        start, size, buckets = self.start, self.size, self.buckets
        for trace in traces:
            self.added += 1
            at = trace.started_at
            if at is None or not (start <= at < self.end):
                self.outside += 1
                continue
            bucket = buckets[(at - start) // size]
            bucket._ordered = None
            bucket.traces += 1
            bucket.errors += has_error(trace)
            bucket.durations.append(trace.duration_ms or 0.0)
            bucket.tokens += trace_tokens(trace)
            bucket.cost += trace.total_cost_usd or 0.0
            self._add_models(trace.models)

    def _add_models(self, models: Any) -> None:
        if not isinstance(models, dict):
            return
        self.rows_with_models += 1
        for name, share in models.items():
            if not isinstance(name, str) or not isinstance(share, dict):
                continue
            into = self.models.setdefault(name, ModelShare())
            into.cost += _number(share.get("cost_usd"))
            into.tokens += int(_number(share.get("tokens")))
            into.traces += 1

    # -- per bucket ----------------------------------------------------------------------------

    def moment(self, index: int) -> datetime:
        return self.start + index * self.size

    def window(self, index: int) -> tuple[datetime, datetime]:
        """The stretch of time a bucket covers: [its start, the next one's), the last cut at
        the end."""
        return self.moment(index), min(self.end, self.moment(index + 1))

    def spike(self) -> int | None:
        """The bucket with the most failed traces (the latest of equals): where a look at the
        failures starts; None when nothing failed."""
        errors = [b.errors for b in self.buckets]
        worst = max(errors, default=0)
        if worst == 0:
            return None
        return len(errors) - 1 - errors[::-1].index(worst)

    def counts(self) -> list[float | None]:
        return [float(b.traces) for b in self.buckets]

    def error_rates(self) -> list[float | None]:
        """Percent errored per bucket; None for a bucket without traces."""
        return [b.errors / b.traces * 100 if b.traces else None for b in self.buckets]

    def latency(self, q: float) -> list[float | None]:
        return [percentile_of_sorted(b.ordered(), q) for b in self.buckets]

    def tokens(self) -> list[float | None]:
        return [float(b.tokens) for b in self.buckets]

    def costs(self) -> list[float | None]:
        return [b.cost for b in self.buckets]

    def totals(self) -> Totals:
        if self._totals is None:
            # The buckets' sorted runs, joined: Timsort merges runs rather than sorting anew.
            ordered = sorted([d for b in self.buckets for d in b.ordered()])
            self._totals = Totals(
                traces=sum(b.traces for b in self.buckets),
                errors=sum(b.errors for b in self.buckets),
                p50=percentile_of_sorted(ordered, 0.5),
                p95=percentile_of_sorted(ordered, 0.95),
                p99=percentile_of_sorted(ordered, 0.99),
                tokens=sum(b.tokens for b in self.buckets),
                cost=sum(b.cost for b in self.buckets),
            )
        return self._totals

    def by_model(self) -> list[tuple[str, ModelShare]]:
        """Models by cost, the costliest first."""
        return sorted(self.models.items(), key=lambda item: (-item[1].cost, item[0]))


def trace_tokens(trace: Trace) -> int:
    if trace.total_tokens is not None:
        return trace.total_tokens
    return (trace.input_tokens or 0) + (trace.output_tokens or 0)


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return float(value) if value == value and abs(value) != float("inf") else 0.0


def shares(values: Sequence[float]) -> list[float]:
    """Each value's share of the total, 0..1."""
    total = sum(values)
    return [v / total if total > 0 else 0.0 for v in values]
