"""On-call triage: a metric's series over many traces, a chart redraw, and the app's frames
while the overview pages a big range in (issue 15).

- series: `tui.model.metrics.series` of one metric over 50,000 loaded traces (96 moments over 24 h),
  for a latency with windows apart, a latency whose 24 h windows all overlap (the sliding
  sorted list), and an error rate; the floor is sorting the 50,000 starts, which any series
  must do. Target: <= 100 ms each.
- redraw: the overview's whole draw (totals, five charts of 24 buckets, cost by model) with
  100,000 traces in it, at 160x48, and the alerts screen's 20 sparklines; the floor is making
  the same screenful of plain text rows. Target: <= 16 ms (a frame at 60 Hz).
- frames while paging: the local service in a process of its own holds 100,000 traces in the
  last 24 h; the app (headless, 160x48) opens the overview and a 60 Hz timer records how late
  each tick comes, while the range pages in and, for the floor, while the app sits idle.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from pydantic import SecretStr
from rich.text import Text

from tests.perf.report import Row, median_time
from tests.perf.service_process import Processes, service_command
from tests.support.builders import add_bulk_traces
from tui.api import ApiClient, Trace
from tui.model import charts, metrics
from tui.model.overview_stats import Overview
from tui.server.store.sqlite.store import Store
from tui.ui.app import StartAt, TraceTuiApp

LOADED = 50_000
PAGED = 100_000
KEY = "bench-triage-key"
TICK = 1 / 60
IDLE_S = 1.0  # the app idle on the trace list, for the floor of the ticks' lateness
# What `make test` runs this module with (tests/bench/test_tiny_benches.py): every code path
# once, at a size that takes seconds; no figure of it means anything.
TINY = {"LOADED": 500, "PAGED": 600, "IDLE_S": 0.1}


def made_traces(count: int, now: datetime) -> list[Trace]:
    rng = random.Random(15)
    return [
        Trace.model_validate(
            {
                "id": f"t{i}",
                "started_at": (now - timedelta(seconds=rng.uniform(0, 86_400))).isoformat(),
                "duration_ms": rng.lognormvariate(7, 0.8),
                "status": "error" if rng.random() < 0.03 else "ok",
                "total_cost_usd": rng.uniform(0, 0.02),
                "total_tokens": rng.randint(100, 5000),
            }
        )
        for i in range(count)
    ]


def series_rows(traces: list[Trace], now: datetime) -> list[Row]:
    floor = median_time(lambda: sorted(t.started_at for t in traces)) * 1000
    rows = []
    for metric in ("latency_ms_5m", "latency_s_24h", "error_rate_pct_15m"):
        ours = median_time(lambda metric=metric: metrics.series(metric, traces, now)) * 1000
        rows.append(
            Row(f"series of {metric}, 50k traces", ours, floor, "ms", "<= 100 ms", ours <= 100)
        )
    return rows


def plain_screen(width: int = 160, height: int = 48) -> None:
    """The floor of a redraw: a screenful of plain text rows made."""
    for _ in range(height):
        Text("x" * width, no_wrap=True, end="")


def redraw_rows(now: datetime) -> list[Row]:
    overview = Overview(now - timedelta(hours=24), now)
    overview.add(made_traces(PAGED // 4, now) * 4)
    width, height = 160, 48
    values_of = (
        overview.counts,
        overview.error_rates,
        lambda: overview.latency(0.95),
        overview.tokens,
        overview.costs,
    )

    def draw_overview() -> None:
        overview.totals()
        for values in values_of:
            charts.bar_chart(values(), width // 2 - 2, height // 3 - 2, str)

    series = [[random.random() * 100 for _ in range(96)] for _ in range(20)]

    def draw_sparklines() -> None:
        for values in series:
            charts.sparkline(values, 24, 50.0, "gt")

    floor = median_time(plain_screen, runs=20) * 1000
    overview_ms = median_time(draw_overview, runs=20) * 1000
    sparks_ms = median_time(draw_sparklines, runs=20) * 1000
    return [
        Row(
            "redraw: five charts and totals, 100k",
            overview_ms,
            floor,
            "ms",
            "<= 16 ms",
            overview_ms <= 16,
        ),
        Row("redraw: 20 alert sparklines", sparks_ms, floor, "ms", "<= 16 ms", sparks_ms <= 16),
    ]


async def frame_lateness(
    base_url: str, project_id: str
) -> tuple[list[float], list[float], float, float]:
    """(tick lateness idle, tick lateness while paging, seconds to page it all, the overview's
    draw with it all loaded in ms)."""
    async with ApiClient(base_url, SecretStr(KEY)) as client:
        app = TraceTuiApp(client, StartAt(project_id=project_id))
        async with app.run_test(size=(160, 48)) as pilot:
            from tui.ui.screens.overview import OverviewScreen

            late: list[float] = []
            expected = [time.perf_counter() + TICK]

            def tick() -> None:
                now = time.perf_counter()
                late.append(max(0.0, now - expected[0]) * 1000)
                expected[0] = now + TICK

            for _ in range(200):  # the trace list's first page
                await pilot.pause(0.05)
                if app.screen.__class__.__name__ == "TracesScreen" and app.screen.traces:
                    break
            timer = app.set_interval(TICK, tick)
            await pilot.pause(IDLE_S)
            idle = late[:]
            late.clear()
            started = time.perf_counter()
            await pilot.press("o")
            while not (isinstance(app.screen, OverviewScreen) and not app.screen.paging):
                await pilot.pause(0.02)
            took = time.perf_counter() - started
            paging = late[:]
            screen = app.screen
            assert isinstance(screen, OverviewScreen) and screen.overview is not None
            assert screen.overview.totals().traces == PAGED, screen.overview.totals()
            timer.stop()
            # A redraw as `p` or a resize makes it: every chart and the totals, drawn again.
            draw_ms = median_time(screen.draw, runs=20) * 1000
    return idle, paging, took, draw_ms


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[-1] if len(values) > 1 else 0.0


def frame_rows() -> list[Row]:
    folder = Path(tempfile.mkdtemp(prefix="tracetui-bench-triage-"))
    store = Store(folder / "triage.sqlite3")
    with store.transaction() as db:
        store.insert_project(db, "triage", None, 30, project_id="proj_triage")
    store.add_key(KEY, None, "triage")
    now_ms = round(time.time() * 1000)
    add_bulk_traces(store, "proj_triage", PAGED, now_ms, span=86_000_000)
    with Processes() as processes:
        base_url = processes.start(service_command(folder / "triage.sqlite3"))
        idle, paging, took, draw_ms = asyncio.run(frame_lateness(base_url, "proj_triage"))
    for path in folder.iterdir():  # a 100k-trace database is not left in /tmp
        path.unlink()
    folder.rmdir()
    print(
        f"triage: overview paged {PAGED:,} traces in {took:.1f} s; 60 Hz ticks late by "
        f"p95 {p95(paging):.1f} ms / max {max(paging, default=0):.1f} ms while paging "
        f"({len(paging)} ticks), p95 {p95(idle):.1f} ms idle"
    )
    floor = median_time(plain_screen, runs=20) * 1000
    return [
        Row(
            "redraw: the overview screen, 100k, 160x48",
            draw_ms,
            floor,
            "ms",
            "<= 16 ms",
            draw_ms <= 16,
        ),
        Row(
            "frames while the overview pages 100k: p95 late",
            p95(paging),
            max(p95(idle), 0.1),
            "ms",
            "<= 50 ms",
            p95(paging) <= 50,
        ),
    ]


def run() -> list[Row]:
    now = datetime.now(timezone.utc)
    traces = made_traces(LOADED, now)
    return [*series_rows(traces, now), *redraw_rows(now), *frame_rows()]
