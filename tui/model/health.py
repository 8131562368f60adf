"""Each project's health at a glance, pure: its firing alerts, its error rate and its traffic over
the last hour in buckets (the projects screen), from the server's one answer (api/health.py) or,
for a server without it, counted from the project's first page of traces of the hour and its
alerts (then `capped` says when that page did not hold them all). And which projects are the
least healthy: `ordered` lists them first, `rank` says why.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from rich.text import Text

from tui.model.charts import BARS, resample
from tui.model.formatting import count, percent
from tui.model.text import safe_text

WINDOW = "1h"  # what the projects screen asks for, and says
WINDOW_SPAN = timedelta(hours=1)
BUCKETS = 12  # of 5 minutes
FIRING_STYLE = "bold red"
TRAFFIC_STYLE = "cyan"
ERRORED_STYLE = "red"


@dataclass(frozen=True)
class Firing:
    """An alert firing now: its id, name and since when (None: not said), and its record as
    the server sent it (an api Alert: what its detail screen opens on)."""

    id: str | None
    name: str
    since: datetime | None = None
    alert: Any = field(default=None, compare=False)


@dataclass(frozen=True)
class Health:
    """One project over the window."""

    firing: tuple[Firing, ...] = ()
    # The project's alerts (paused ones too); None: not known (the server has no alerts).
    alerts: int | None = None
    traces: int = 0
    errors: int = 0
    # Per bucket, oldest first; None: not known (before the first trace a capped page held).
    trace_counts: tuple[int | None, ...] = ()
    error_counts: tuple[int | None, ...] = ()
    # Counted from the first page of the window's traces only: the window held more.
    capped: bool = False

    @property
    def error_rate(self) -> float | None:
        """Errored traces in per cent of the window's (None: no traces)."""
        return 100 * self.errors / self.traces if self.traces else None

    @property
    def unhealthy(self) -> bool:
        return bool(self.firing) or self.errors > 0

    def rank(self) -> tuple[int, float, int]:
        """Sorts the least healthy first: most firing alerts, then highest error rate, then
        most errors."""
        return (-len(self.firing), -(self.error_rate or 0.0), -self.errors)


def firing_of(alerts: Sequence[Any]) -> tuple[Firing, ...]:
    """The alerts (api Alert records) firing now, not paused, longest firing first."""
    firing = [
        Firing(alert.id, alert.name or alert.id or "(no name)", alert.firing_since, alert)
        for alert in alerts
        if (alert.state or "").lower() == "firing" and not alert.paused
    ]
    return tuple(sorted(firing, key=lambda f: f.since.timestamp() if f.since else math.inf))


def from_report(projects: Sequence[Any]) -> dict[str, Health]:
    """Each project's Health from a server's answer (api ProjectHealth records), by id."""
    found: dict[str, Health] = {}
    for item in projects:
        if not item.project_id:
            continue
        counts = tuple(item.trace_counts)
        errors = tuple(item.error_counts)
        found[item.project_id] = Health(
            firing_of(item.firing),
            item.alerts,
            item.traces if item.traces is not None else sum(counts),
            item.errors if item.errors is not None else sum(errors),
            counts,
            errors,
        )
    return found


def from_rows(
    traces: Sequence[Any],
    alerts: Sequence[Any] | None,
    start: datetime,
    end: datetime,
    buckets: int = BUCKETS,
    capped: bool = False,
) -> Health:
    """A project's Health counted from its traces of [start, end) as listed (api Trace
    records) and its alerts (None: the server has none). `capped`: the listing had more, so
    the buckets before the earliest trace listed are not known (the spec lists newest first)."""
    size = (end - start) / buckets
    counts: list[int | None] = [0] * buckets
    errors: list[int | None] = [0] * buckets
    earliest = buckets
    for trace in traces:
        started = trace.started_at
        if started is None or not start <= started < end:
            continue
        bucket = min(buckets - 1, int((started - start) / size))
        earliest = min(earliest, bucket)
        counts[bucket] = (counts[bucket] or 0) + 1
        errors[bucket] = (errors[bucket] or 0) + bool(trace.is_error)
    if capped:
        for bucket in range(min(earliest, buckets)):
            counts[bucket] = errors[bucket] = None
    return Health(
        firing_of(alerts or ()),
        None if alerts is None else len(alerts),
        sum(c or 0 for c in counts),
        sum(e or 0 for e in errors),
        tuple(counts),
        tuple(errors),
        capped,
    )


def ordered(projects: Sequence[Any], health: dict[str, Health], unhealthy_first: bool) -> list[Any]:
    """The projects as listed, or the least healthy first (those not known yet last, each
    group in the order listed)."""
    if not unhealthy_first:
        return list(projects)
    unknown = (1, 0, 0.0, 0)

    def key(indexed: tuple[int, Any]) -> tuple[Any, ...]:
        position, project = indexed
        known = health.get(project.id)
        return (*((0, *known.rank()) if known else unknown), position)

    return [project for _, project in sorted(enumerate(projects), key=key)]


# -- what a row shows ------------------------------------------------------------------------------


def since_words(since: datetime | None, now: datetime) -> str:
    """How long an alert has fired: `12m`, `3h`, `2d` (empty when not said)."""
    if since is None:
        return ""
    try:
        seconds = max(0.0, (now - since).total_seconds())
    except (TypeError, OverflowError):
        return ""
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def alerts_cell(health: Health | None, now: datetime) -> Text:
    """The firing alerts (the longest firing named, with how long), else how many are ok."""
    if health is None:
        return Text("…", style="dim")
    if health.firing:
        first = health.firing[0]
        text = Text("▲ ", style=FIRING_STYLE)
        if len(health.firing) > 1:
            text.append(f"{len(health.firing)} firing: ", style=FIRING_STYLE)
        text.append_text(safe_text(first.name, 60, style=FIRING_STYLE))
        since = since_words(first.since, now)
        if since:
            text.append(f" {since}", style="red")
        return text
    if health.alerts is None:
        return Text("–", style="dim")
    if health.alerts == 0:
        return Text("no alerts", style="dim")
    return Text(f"✓ {health.alerts} ok", style="green")


def errors_cell(health: Health | None) -> Text:
    """The window's error rate (`12%`), red when any trace failed."""
    if health is None:
        return Text("…", style="dim")
    rate = health.error_rate
    if rate is None:
        return Text("no traces", style="dim")
    shown = percent(rate)
    if health.capped:
        shown = "~" + shown
    return Text(shown, style="bold red" if health.errors else "")


def traffic_width(health: Health | None) -> int:
    """The cells a traffic cell would like: a bar per bucket, a space and the count."""
    if health is None:
        return 1
    return len(health.trace_counts) + 1 + len(traffic_count(health))


def traffic_count(health: Health) -> str:
    return count(health.traces) + ("+" if health.capped else "")


def traffic_cell(health: Health | None, width: int) -> Text:
    """The window's traces per bucket as bars (a bucket where some failed in red) and how
    many in all, in `width` cells: the bars give way first."""
    if health is None:
        return Text("…", style="dim")
    total = traffic_count(health)
    # A cell a bucket at most, so that every row's bars line up, each bucket under the others.
    bars = min(width - len(total) - 1, len(health.trace_counts))
    text = Text(no_wrap=True, end="")
    if bars >= 3 and health.trace_counts:
        text.append_text(bars_of(health.trace_counts, health.error_counts, bars))
        text.append(" ")
    text.append(total, style="bold" if health.traces else "dim")
    return text


def bars_of(counts: Sequence[int | None], errors: Sequence[int | None], width: int) -> Text:
    """One row of bars from zero to the busiest bucket; a bucket with errors drawn red. A
    bucket without traces is `_` (none came); one not known is blank."""
    cells = resample([None if c is None else float(c) for c in counts], width)
    failed = resample(
        [None if e is None else float(e) for e in errors] or [None] * len(counts), width
    )
    top = max((c for c in cells if c is not None), default=0.0)
    text = Text(no_wrap=True, end="")
    for value, errored in zip(cells, failed, strict=True):
        if value is None:
            text.append(" ")
            continue
        if not value:
            text.append("_", style="dim")
            continue
        level = max(1, min(8, round(value / top * 8))) if top else 1
        text.append(BARS[level], style=ERRORED_STYLE if errored else TRAFFIC_STYLE)
    return text
