"""The trace-list scenario of `make bench`, run as its own process by bench_app: pages of 500
traces appended until 50,000 are loaded, then the `/` filter; prints its figures as JSON.
`python -m tests.perf.trace_list BASE_URL KEY [PAGES]` (100 pages unless told)
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from pydantic import SecretStr

from tui.api import ApiClient, Trace
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.traces import TracesScreen
from tui.ui.widgets.trace_table import TraceTable


def peak_resident_mb() -> float:
    """This process's peak resident memory. Not getrusage's ru_maxrss: Linux carries that over
    exec from the parent, which here is the benchmark holding the service and the big traces."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


async def trace_list(base_url: str, key: str, pages: int = 100) -> tuple[list[float], float, float]:
    """Append `pages` pages of 500 traces; (append times s, filter time s, RSS MB at the end)."""
    async with ApiClient(base_url, SecretStr(key)) as client:
        app = TraceTuiApp(client, StartAt(project_id="p"))
        async with app.run_test(size=(160, 48)) as pilot:
            while not isinstance(app.screen, TracesScreen):
                await pilot.pause(0.01)
            screen = app.screen
            screen.workers.cancel_all()
            start = time.time() - 3600
            appends = []
            for page in range(pages):
                traces = [
                    Trace.model_validate(
                        {
                            "id": f"t{page}-{i}",
                            "name": f"request {page}-{i}",
                            "status": "ok",
                            "started_at": start - page * 500 - i,
                            "duration_ms": 1200 + i,
                            "span_count": 7,
                            "total_tokens": 2000 + i,
                            "total_cost_usd": 0.01,
                        }
                    )
                    for i in range(500)
                ]
                t = time.perf_counter()
                screen._add(traces, at_top=False)
                screen.query_one(TraceTable).render_line(0)
                appends.append(time.perf_counter() - t)
            t = time.perf_counter()
            screen.state = screen.state.submitted(f"request {pages * 77 // 100}-4")
            screen.apply_view(keep=None)
            filtered = time.perf_counter() - t
            rss = peak_resident_mb()
            return appends, filtered, rss


if __name__ == "__main__":
    pages = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    appends, filtered, rss = asyncio.run(trace_list(sys.argv[1], sys.argv[2], pages))
    print(json.dumps({"appends": appends, "filtered": filtered, "rss_mb": rss}))
