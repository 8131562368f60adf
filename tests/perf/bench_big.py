"""Big traces built only where drawn, and memory while browsing: the service in its own process,
the app in another (tests/perf/big_app.py), so that each figure is the app's own.

- a 100,000-span trace: request to tree drawn, against its floor (the service's answer fetched
  with httpx + json.loads of the same body, in this process); the client side against
  json.loads; moves in its tree (handler and draw); resident memory with it open;
- 50,000 traces listed (100 pages) plus a 50,000-span trace open: resident memory, and again
  once the trace is closed, against what it was before it opened.
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from tests.perf.big_app import command as app_command
from tests.perf.report import Row
from tests.perf.service_process import Processes, service_command
from tests.support.builders import add_bulk_traces
from tui.demo.data import big_trace, trace_row
from tui.server.store.rows import now_ms
from tui.server.store.sqlite.store import Store

RUNS = 3
KEY = "tt_ws_big_benchmark_key_0123456789"
PROJECT = "big"
TRACE_100K = "big-100k"
TRACE_50K = "big-50k"
LISTED = 50_000
STEPS_100K = 5_000  # agent steps of the 100k-span trace (20 spans each)
STEPS_50K = 2_500
SETTLE_S = 1.0  # the app's pause before each memory reading (tests/perf/big_app.py)
# What `make test` runs this module with (tests/bench/test_tiny_benches.py): every code path
# once, at a size that takes seconds; no figure of it means anything.
TINY = {"RUNS": 1, "LISTED": 150, "STEPS_100K": 10, "STEPS_50K": 5, "SETTLE_S": 0.1}


def make_db() -> Path:
    path = Path(tempfile.mkdtemp(prefix="tracetui-bench-big-")) / "big.sqlite3"
    store = Store(path)
    store.add_key(KEY, None, "bench")
    now = now_ms()
    start = now - 7_200_000
    with store.transaction() as db:
        store.insert_project(db, "big", None, 30, project_id=PROJECT)
        for trace_id, steps in ((TRACE_100K, STEPS_100K), (TRACE_50K, STEPS_50K)):
            builder = big_trace(random.Random(9), start, steps=steps)
            builder.trace_id = trace_id
            builder.rows = [row._replace(trace_id=trace_id) for row in builder.rows]
            summary = trace_row(builder, PROJECT, trace_id, start, 1000, {})
            store.insert_traces(db, [summary], builder.rows)
    add_bulk_traces(store, PROJECT, LISTED - 2, now, span=3_600_000)
    return path


def floor(base_url: str, trace_id: str) -> tuple[float, float, int]:
    """(median seconds to fetch the trace with httpx, to json.loads it; its size in bytes)."""
    fetches, parses = [], []
    with httpx.Client(headers={"Authorization": f"Bearer {KEY}"}, timeout=120) as client:
        for _ in range(RUNS):
            started = time.perf_counter()
            body = client.get(f"{base_url}/traces/{trace_id}").content
            fetches.append(time.perf_counter() - started)
            started = time.perf_counter()
            json.loads(body)
            parses.append(time.perf_counter() - started)
    return statistics.median(fetches), statistics.median(parses), len(body)


def in_app(*args: str) -> dict[str, Any]:
    out = subprocess.run(app_command(*args), capture_output=True, text=True, check=True).stdout
    figures: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return figures


def run() -> list[Row]:
    db = make_db()
    with Processes() as processes:
        base_url = processes.start(service_command(db))
        opens = []
        fetch = parse = 0.0
        for _ in range(RUNS):  # the floor and ours alternately: the same moment's machine
            fetch_once, parse_once, size = floor(base_url, TRACE_100K)
            fetch, parse = fetch + fetch_once / RUNS, parse + parse_once / RUNS
            opens.append(in_app("open", base_url, KEY, TRACE_100K))
        browsing = in_app("browse", base_url, KEY, PROJECT, TRACE_50K, str(SETTLE_S))
    opened = statistics.median(o["open"] for o in opens)
    client = statistics.median(o["client"] for o in opens)
    rss = statistics.median(o["rss_mb"] for o in opens)
    moves = {name: statistics.median(o["moves"][name] for o in opens) for name in opens[0]["moves"]}
    print(
        f"big: 100k trace {size / 1e6:.1f} MB; open {[round(o['open'] * 1000) for o in opens]} ms,"
        f" client side {[round(o['client'] * 1000) for o in opens]} ms, fetch {fetch * 1000:.0f}"
        f" ms, json.loads {parse * 1000:.0f} ms; RSS {[round(o['rss_mb']) for o in opens]} MB; "
        f"browsing {browsing}"
    )
    rows = [
        Row(
            "open 100k-span trace: request to tree drawn",
            opened * 1000,
            (fetch + parse) * 1000,
            "ms",
            "ratio <= 1.5",
            opened <= 1.5 * (fetch + parse),
        ),
        Row(
            "open 100k: client side vs json.loads",
            client * 1000,
            parse * 1000,
            "ms",
            "for reference",
            True,
        ),
    ]
    for name, ms in moves.items():
        rows.append(Row(f"100k tree: {name} (+ draw)", ms, 0.0, "ms", "<= 10 ms", ms <= 10))
    rows.append(Row("100k trace open: resident memory", rss, 0.0, "MB", "<= 400 MB", rss <= 400))
    listed, open_mb, closed = browsing["listed_mb"], browsing["open_mb"], browsing["closed_mb"]
    rows += [
        Row(
            f"{browsing['traces']:,} traces listed + 50k trace open",
            open_mb,
            listed,
            "MB",
            "<= 300 MB",
            open_mb <= 300,
        ),
        Row(
            "  after closing it, vs before opening",
            closed,
            listed,
            "MB",
            "ratio <= 1.1",
            closed <= 1.1 * listed,
        ),
    ]
    return rows
