"""Keyset paging of the local service: the last page of 100,000 traces costs what the first does.

Pages through one project of 100,000 traces with limit 500 over real HTTP, several times, and
compares the median time of the last page with that of the first (the floor).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import httpx

from tests.perf.report import Row
from tests.support.builders import add_bulk_traces
from tests.support.service import local_service
from tui.server.store.rows import now_ms
from tui.server.store.sqlite.store import Store

TRACES = 100_000
LIMIT = 500
PASSES = 5
# What `make test` runs this module with (tests/bench/test_tiny_benches.py): every code path
# once, at a size that takes seconds; no figure of it means anything.
TINY = {"TRACES": 1_200, "PASSES": 1}


def run() -> list[Row]:
    store = Store(Path(tempfile.mkdtemp(prefix="tracetui-bench-")) / "paging.sqlite3")
    with store.transaction() as db:
        store.insert_project(db, "bench", None, 30, project_id="proj_bench")
    store.add_key("bench-key", None, "bench")
    add_bulk_traces(store, "proj_bench", TRACES, now_ms(), span=6 * 86_400_000)
    firsts, lasts = [], []
    with (
        local_service(store, rate_limit=10**9) as service,
        httpx.Client(
            base_url=service.base_url + "/", headers={"Authorization": "Bearer bench-key"}
        ) as client,
    ):
        params = {"project_id": "proj_bench", "limit": LIMIT, "from": "2000-01-01T00:00:00Z"}
        for _ in range(PASSES):
            cursor, times, seen = None, [], 0
            while True:
                start = time.perf_counter()
                body = client.get(
                    "traces", params={**params, **({"cursor": cursor} if cursor else {})}
                ).json()
                times.append(time.perf_counter() - start)
                seen += len(body["data"])
                cursor = body["next_cursor"]
                if cursor is None:
                    break
            assert seen == TRACES, seen
            firsts.append(times[0])
            lasts.append(times[-1])
    first, last = statistics.median(firsts) * 1000, statistics.median(lasts) * 1000
    print(
        f"paging: {TRACES} traces in {len(times)} pages of {LIMIT}; "
        f"first page {first:.1f} ms, last page {last:.1f} ms (medians of {PASSES} passes)"
    )
    return [
        Row(
            f"paging {TRACES // 1000}k traces: last page vs first",
            last,
            first,
            "ms",
            "ratio <= 2",
            last <= 2 * first,
        )
    ]
