"""A far-away server: the app against the local service (in its own process) through a proxy on
loopback that adds 100 ms each way (tests/perf/delay_proxy.py), as over a VPN or from an SSH box
far away. Three scenarios, each also run straight to the service (loopback) in the same run:

- projects -> a project's first rows: enter on the project until its trace rows are drawn;
  target one round trip + the server's time for that page (asked directly) + 50 ms;
- holding page-down (30 key events a second, some 600 rows a second at 80x24) from the first
  row to row 5,000 of 6,000: the longest time the cursor sat at the end of what was loaded
  while more was to come (a stall); target at most one round trip, at most once;
- opening a 10,000-span trace from the trace list: target the loopback figure + one round trip,
  taken as what the proxy adds to a plain httpx fetch of the same trace (measured in the same
  run: the round trip and some 30 ms of copying 4 MB through it on this machine).

Every request the client sends is counted (its log): each scenario's must be what it needs, no
page asked twice. Medians of RUNS runs.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr
from textual.strip import Strip

from tests.perf.delay_proxy import start_command as proxy_command
from tests.perf.report import Row
from tests.perf.service_process import Processes, service_command
from tests.support.builders import add_bulk_traces
from tui.api import ApiClient
from tui.demo.data import big_trace, trace_row
from tui.server.store.rows import now_ms
from tui.server.store.sqlite.store import Store
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.trace_detail import TraceDetailScreen
from tui.ui.screens.trace_loading import PAGE_SIZE, PREFETCH_ROWS
from tui.ui.screens.traces import TracesScreen
from tui.ui.widgets.span_tree import SpanTreeView
from tui.ui.widgets.trace_table import TraceTable
from tui.ui.widgets.virtual_rows import VirtualRows

DELAY = 0.1  # each way
ROUND_TRIP = 2 * DELAY
RUNS = 3
TRACES = 6_000
SCROLL_TO = 5_000
PRESSES_PER_SECOND = 30  # a held key's repeat rate
KEY = "tt_ws_far_benchmark_key_0123456789"
PROJECT = "far"
BIG = "far-10k"
SIZE = (80, 24)
BIG_STEPS = 500  # agent steps of the 10k-span trace
SETTLE_S = 0.3  # before a scenario: what the app drew last is drawn, its connection idle
# What `make test` runs this module with (tests/bench/test_tiny_benches.py): every code path
# once, at a size that takes seconds; no figure of it means anything.
TINY = {
    **{"DELAY": 0.02, "ROUND_TRIP": 0.04, "RUNS": 1, "TRACES": 1_200, "SCROLL_TO": 900},
    **{"BIG_STEPS": 5, "SETTLE_S": 0.05},
}


def make_db() -> Path:
    path = Path(tempfile.mkdtemp(prefix="tracetui-bench-far-")) / "far.sqlite3"
    store = Store(path)
    store.add_key(KEY, None, "bench")
    now = now_ms()
    with store.transaction() as db:
        store.insert_project(db, "far away", None, 30, project_id=PROJECT)
        builder = big_trace(random.Random(5), now - 7_200_000, steps=BIG_STEPS)
        builder.trace_id = BIG
        builder.rows = [row._replace(trace_id=BIG) for row in builder.rows]
        store.insert_traces(
            db, [trace_row(builder, PROJECT, "10k", now - 7_200_000, 1000, {})], builder.rows
        )
    add_bulk_traces(store, PROJECT, TRACES, now, span=3_600_000)
    return path


@contextmanager
def painted(widget: type[VirtualRows], ready: Callable[[Any], bool]) -> Iterator[list[float]]:
    """The moments Textual drew the last visible line of a `widget` for which `ready` holds."""
    moments: list[float] = []
    original = widget.render_line

    def render_line(view: Any, y: int) -> Strip:
        strip = original(view, y)
        if y == view.size.height - 1 and ready(view):
            moments.append(time.perf_counter())
        return strip

    widget.render_line = render_line  # type: ignore[method-assign]
    try:
        yield moments
    finally:
        widget.render_line = original  # type: ignore[method-assign]


async def until(condition: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.perf_counter() + seconds
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the app did not get there in time")
        await asyncio.sleep(0.001)


async def in_app(
    base_url: str, start: StartAt | None, scenario: Callable[[TraceTuiApp, Any], Awaitable[Any]]
) -> Any:
    async with ApiClient(base_url, SecretStr(KEY)) as client:
        app = TraceTuiApp(client, start)
        async with app.run_test(size=SIZE) as pilot:
            return await scenario(app, pilot)


async def requests_since(app: TraceTuiApp, pilot: Any, mark: int) -> list[str]:
    """The requests sent since the log held `mark` entries, once any still on their way have
    come back (the log has a request when it is answered)."""
    await pilot.pause(2 * ROUND_TRIP + SETTLE_S)
    return [f"{entry.method} {entry.url}" for entry in list(app.client.log)[mark:]]


async def first_rows(app: TraceTuiApp, pilot: Any) -> tuple[float, list[str]]:
    """Seconds from enter on the project to its first trace rows drawn; the requests sent."""
    await until(lambda: isinstance(app.screen, ProjectsScreen) and bool(app.screen.projects))
    await pilot.pause(SETTLE_S)  # the projects drawn, the connection idle (and kept)
    mark = len(app.client.log)
    with painted(TraceTable, lambda table: table.row_count() > 0) as moments:
        started = time.perf_counter()
        await pilot.press("enter")
        await until(lambda: bool(moments))
    return moments[0] - started, await requests_since(app, pilot, mark)


async def traces_loaded(app: TraceTuiApp) -> TracesScreen:
    await until(lambda: isinstance(app.screen, TracesScreen) and len(app.screen.traces) >= 500)
    screen = app.screen
    assert isinstance(screen, TracesScreen)
    return screen


async def scroll(app: TraceTuiApp, pilot: Any) -> tuple[list[float], list[str], int, float]:
    """Hold page-down to row SCROLL_TO (a key event every 1/PRESSES_PER_SECOND s, whether the
    app has caught up or not, as a held key sends them): (each stall in seconds, the requests
    sent, how many pages the list needed (those down to the row it stopped on, and the one
    beyond that it asks for ahead), rows a second). A stall: the cursor at the last row loaded
    while more are to come, watched every millisecond the app leaves free."""
    screen = await traces_loaded(app)
    await pilot.pause(SETTLE_S)
    table = screen.query_one(TraceTable)
    mark = len(app.client.log)
    stalls: list[float] = []
    scrolling = True

    async def watch() -> None:
        stalled_since: float | None = None
        while scrolling:
            now = time.perf_counter()
            waiting = table.cursor >= table.row_count() - 1 and not screen.ended
            if waiting and stalled_since is None:
                stalled_since = now
            elif not waiting and stalled_since is not None:
                stalls.append(now - stalled_since)
                stalled_since = None
            await asyncio.sleep(0.001)

    watcher = asyncio.create_task(watch())
    started = next_press = time.perf_counter()
    while table.cursor < SCROLL_TO - 1 and time.perf_counter() < started + 120:
        app.simulate_key("pagedown")
        next_press += 1 / PRESSES_PER_SECOND
        await asyncio.sleep(max(0.0, next_press - time.perf_counter()))
    took = time.perf_counter() - started
    scrolling = False
    await watcher
    if table.cursor < SCROLL_TO - 1:
        raise TimeoutError(f"the scroll stopped at row {table.cursor + 1}")
    needed = -(-(table.cursor + 1 + PREFETCH_ROWS) // PAGE_SIZE) - 1  # the first was there
    return stalls, await requests_since(app, pilot, mark), needed, table.cursor / took


async def open_trace(app: TraceTuiApp, pilot: Any) -> tuple[float, list[str]]:
    """Seconds from asking for the 10k trace (the trace list loaded) to its tree drawn."""
    await traces_loaded(app)
    await pilot.pause(SETTLE_S)
    mark = len(app.client.log)
    with painted(SpanTreeView, lambda view: True) as moments:
        started = time.perf_counter()
        app.open_trace(BIG, PROJECT)
        await until(lambda: bool(moments) and isinstance(app.screen, TraceDetailScreen))
    return moments[0] - started, await requests_since(app, pilot, mark)


def server_time(base_url: str) -> float:
    """Median seconds for the service to answer the first page of the trace list, directly."""
    times = []
    with httpx.Client(headers={"Authorization": f"Bearer {KEY}"}, timeout=30) as client:
        for _ in range(5):
            started = time.perf_counter()
            client.get(f"{base_url}/traces", params={"project_id": PROJECT, "limit": 500})
            times.append(time.perf_counter() - started)
    return statistics.median(times[1:])


def fetch_time(base_url: str, path: str) -> float:
    """Median seconds for a plain httpx fetch of `path` (on a connection already open)."""
    times = []
    with httpx.Client(headers={"Authorization": f"Bearer {KEY}"}, timeout=60) as client:
        client.get(f"{base_url}/projects")
        for _ in range(5):
            started = time.perf_counter()
            client.get(f"{base_url}/{path}")
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def duplicates(requests: list[str]) -> int:
    return len(requests) - len(set(requests))


def run() -> list[Row]:
    db = make_db()
    with Processes() as processes:
        direct = processes.start(service_command(db))
        port = int(direct.rsplit(":", 1)[1].split("/")[0])
        proxy_port = processes.start(proxy_command(port, DELAY))
        far = direct.replace(f":{port}/", f":{proxy_port}/")
        served = server_time(direct)
        # What the proxy itself adds to fetching the 10k trace's 4 MB: the round trip, and the
        # time it takes to copy the bytes through (on this machine, beside the app and the
        # service). The far figure of opening it is held to the loopback one plus this.
        network = fetch_time(far, f"traces/{BIG}") - fetch_time(direct, f"traces/{BIG}")
        rows_far, rows_near, opens_far, opens_near = [], [], [], []
        row_requests: list[str] = []
        open_requests: list[str] = []
        for _ in range(RUNS):
            seconds, row_requests = asyncio.run(in_app(far, None, first_rows))
            rows_far.append(seconds)
            rows_near.append(asyncio.run(in_app(direct, None, first_rows))[0])
            seconds, open_requests = asyncio.run(
                in_app(far, StartAt(project_id=PROJECT), open_trace)
            )
            opens_far.append(seconds)
            opens_near.append(
                asyncio.run(in_app(direct, StartAt(project_id=PROJECT), open_trace))[0]
            )
        stalls, scroll_requests, pages, speed = asyncio.run(
            in_app(far, StartAt(project_id=PROJECT), scroll)
        )
    first, near = statistics.median(rows_far), statistics.median(rows_near)
    opened, opened_near = statistics.median(opens_far), statistics.median(opens_near)
    longest = max(stalls, default=0.0)
    print(
        f"far: {RUNS} runs; first rows {[round(s * 1000) for s in rows_far]} ms "
        f"(loopback {[round(s * 1000) for s in rows_near]}), server {served * 1000:.1f} ms; "
        f"open {[round(s * 1000) for s in opens_far]} ms (loopback "
        f"{[round(s * 1000) for s in opens_near]}); stalls {[round(s * 1000) for s in stalls]} ms;"
        f" the proxy adds {network * 1000:.0f} ms to a plain fetch of that trace; scrolled"
        f" {speed:.0f} rows a second"
    )
    print(
        f"far: requests: rows {row_requests}; open {open_requests}; scroll {len(scroll_requests)}"
    )
    return [
        Row(
            "far: projects -> first rows (+100ms each way)",
            first * 1000,
            (ROUND_TRIP + served) * 1000,
            "ms",
            "<= floor + 50 ms",
            first <= ROUND_TRIP + served + 0.05,
        ),
        Row(
            "  (the same on loopback)",
            near * 1000,
            served * 1000,
            "ms",
            "for reference",
            True,
        ),
        Row(
            "far: requests for first rows, none twice",
            len(row_requests),
            1,
            "",
            "1 GET",
            len(row_requests) == 1 and duplicates(row_requests) == 0,
        ),
        Row(
            f"far: hold page-down to row {SCROLL_TO:,}: longest stall",
            longest * 1000,
            ROUND_TRIP * 1000,
            "ms",
            "<= 1 round trip",
            longest <= ROUND_TRIP,
        ),
        Row(
            "  stalls in that scroll",
            len(stalls),
            0.0,
            "",
            "<= 1",
            len(stalls) <= 1,
        ),
        Row(
            "far: requests for that scroll, none twice",
            len(scroll_requests),
            pages,
            "",
            "each page once",
            len(scroll_requests) == pages and duplicates(scroll_requests) == 0,
        ),
        Row(
            "far: open 10k-span trace vs loopback + proxy",
            opened * 1000,
            (opened_near + network) * 1000,
            "ms",
            "ratio <= 1",
            opened <= opened_near + network,
        ),
        Row(
            "  (loopback + 1 round trip, nominal)",
            opened * 1000,
            (opened_near + ROUND_TRIP) * 1000,
            "ms",
            "for reference",
            True,
        ),
        Row(
            "far: requests to open a trace, none twice",
            len(open_requests),
            1,
            "",
            "1 GET",
            len(open_requests) == 1,
        ),
    ]
