"""The app on big data in a process of its own, so that its resident memory is its own (the
benchmark's process holds the store it built): run by bench_big, prints one JSON line.

`python -m tests.perf.big_app open BASE_URL KEY TRACE_ID`: open the trace; the seconds from the
request to the tree drawn and from the body's arrival (the client side); each kind of move in
the tree (handler and draw, median ms); resident memory with the trace open.

`python -m tests.perf.big_app browse BASE_URL KEY PROJECT TRACE_ID`: list every trace of the
project (page after page), open a small trace and close it (the trace screen's code loaded),
then open the trace and close it; resident memory after each step.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr
from textual.strip import Strip

from tui.api import ApiClient
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.trace_detail import TraceDetailScreen
from tui.ui.screens.traces import TracesScreen
from tui.ui.widgets.span_tree import SpanTreeView

SIZE = (160, 48)


def memory_mb() -> dict[str, float]:
    """This process's resident memory now (VmRSS) and at its peak (VmHWM), in MB."""
    figures = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            figures[name] = int(value.split()[0]) / 1024
    return figures


async def until(condition: Callable[[], bool], seconds: float = 120) -> None:
    deadline = time.perf_counter() + seconds
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the app did not get there in time")
        await asyncio.sleep(0.002)


def median_ms(action: Callable[[], None], runs: int = 15) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def moves(view: SpanTreeView) -> dict[str, float]:
    """Median ms of each kind of move in the tree, its visible rows drawn."""

    def drawn(action: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            action()
            for y in range(view.size.height):
                view.render_line(y)

        return run

    figures = {"cursor down": median_ms(drawn(view.action_cursor_down))}
    figures["page down"] = median_ms(drawn(view.action_page_down))
    figures["cursor up"] = median_ms(drawn(view.action_cursor_up))
    view.action_last()
    figures["end to cursor up"] = median_ms(drawn(view.action_cursor_up))
    view.action_first()
    figures["expand all"] = median_ms(drawn(view.action_expand_all), runs=3)
    figures["down, all expanded"] = median_ms(drawn(view.action_cursor_down))
    return figures


async def open_trace(base_url: str, key: str, trace_id: str) -> dict[str, Any]:
    arrived: list[float] = []
    painted: list[float] = []

    class TimedClient(ApiClient):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            request = self.transport.request

            async def timed(*args: Any, **kwargs: Any) -> httpx.Response:
                response = await request(*args, **kwargs)
                arrived.append(time.perf_counter())  # the whole body has been read by now
                return response

            self.transport.request = timed  # type: ignore[method-assign]

    original = SpanTreeView.render_line

    def render_line(view: SpanTreeView, y: int) -> Strip:
        strip = original(view, y)
        if y == view.size.height - 1 and not painted:
            painted.append(time.perf_counter())
        return strip

    SpanTreeView.render_line = render_line  # type: ignore[method-assign]
    async with TimedClient(base_url, SecretStr(key)) as client:
        app = TraceTuiApp(client, StartAt())
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause(0.3)
            started = time.perf_counter()
            app.push_screen(TraceDetailScreen(trace_id))
            await until(lambda: bool(painted))
            SpanTreeView.render_line = original  # type: ignore[method-assign]
            await pilot.pause(0.5)
            memory = memory_mb()
            view = app.screen.query_one(SpanTreeView)
            return {
                "open": painted[0] - started,
                "client": painted[0] - arrived[-1],
                "moves": moves(view),
                "rss_mb": memory["VmRSS"],
                "hwm_mb": memory["VmHWM"],
            }


async def browse(
    base_url: str, key: str, project_id: str, trace_id: str, settle_s: str = "1.0"
) -> dict[str, Any]:
    async with ApiClient(base_url, SecretStr(key)) as client:
        app = TraceTuiApp(client, StartAt(project_id=project_id))
        async with app.run_test(size=SIZE) as pilot:
            await until(lambda: isinstance(app.screen, TracesScreen) and bool(app.screen.traces))
            screen = app.screen
            assert isinstance(screen, TracesScreen)
            while not screen.ended:
                await until(lambda: not screen.fetching)
                if not screen.ended:
                    screen.load_page()
                    await until(lambda: screen.fetching or screen.ended)
            # A small trace opened and closed first: what the trace screen's code and styles
            # take stays after the first, and is not what is measured here.
            small = screen.traces[-1].id or ""
            app.open_trace(small, project_id)
            await until(lambda: bool(app.screen.query(SpanTreeView)))
            await pilot.press("escape")
            await until(lambda: app.screen is screen)
            await pilot.pause(float(settle_s))
            listed = memory_mb()
            app.open_trace(trace_id, project_id)
            await until(lambda: bool(app.screen.query(SpanTreeView)), seconds=120)
            await pilot.pause(float(settle_s))  # drawn, and the detail pane with it
            opened = memory_mb()
            await pilot.press("escape")
            await until(lambda: app.screen is screen)
            await pilot.pause(float(settle_s))
            closed = memory_mb()
            return {
                "traces": len(screen.traces),
                "listed_mb": listed["VmRSS"],
                "open_mb": opened["VmRSS"],
                "closed_mb": closed["VmRSS"],
                "hwm_mb": closed["VmHWM"],
            }


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "tests.perf.big_app", *args]


if __name__ == "__main__":
    mode, *rest = sys.argv[1:]
    scenario = open_trace if mode == "open" else browse
    print(json.dumps(asyncio.run(scenario(*rest))))  # type: ignore[arg-type]
