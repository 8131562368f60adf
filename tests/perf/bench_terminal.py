"""What a terminal sees of the app, run as its own process on an 80x24 pty against the local
service with demo data:
- start-up: process start to the project list showing its rows, against a minimal Textual app
  that shows one label (the floor for any Textual app), run alternately;
- bytes written for one cursor move in the trace list: what an SSH link carries per keypress;
- CPU used while idle on the trace list with live mode off.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time

from tests.perf.report import Row
from tests.terminal import PYTHON, Terminal
from tui.server.run import LocalService, open_demo_store

RUNS = 5
MOVES = 12
IDLE_SECONDS = 10.0

FLOOR_APP = """
from textual.app import App
from textual.widgets import Label

class Floor(App):
    def compose(self):
        yield Label("floor-ready")

Floor().run()
"""
# The same minimal app, first importing what any app on this stack must (the HTTP client with
# its asyncio backend, and pydantic's BaseModel): shows how much of start-up is the stack itself.
STACK_FLOOR_APP = (
    "import httpx, anyio._backends._asyncio\nfrom pydantic import BaseModel\n" + FLOOR_APP
)
APP = [PYTHON, "-m", "tui"]


def environment(base_url: str, key: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": tempfile.mkdtemp(prefix="tracetui-bench-home-"),
        "XDG_CONFIG_HOME": tempfile.mkdtemp(prefix="tracetui-bench-config-"),
        "TRACETUI_BASE_URL": base_url,
        "TRACETUI_API_KEY": key,
        "TZ": "UTC",
    }


def start_up(env: dict[str, str]) -> tuple[float, float, float]:
    """Median seconds to the first useful frame: (the app's project rows, the minimal app's
    label, the label of the minimal app with the stack imported), run alternately."""
    ours, floor, stack = [], [], []
    for _ in range(RUNS):
        with Terminal([PYTHON, "-c", FLOOR_APP], env) as term:
            floor.append(term.wait_for(b"floor-ready"))
        with Terminal(APP, env) as term:
            ours.append(term.wait_for(b"support-chatbot"))
        with Terminal([PYTHON, "-c", STACK_FLOOR_APP], env) as term:
            stack.append(term.wait_for(b"floor-ready"))
    return statistics.median(ours), statistics.median(floor), statistics.median(stack)


def trace_list_terminal(env: dict[str, str]) -> tuple[float, float]:
    """(median bytes written per cursor move, idle CPU as % of one core) on the trace list."""
    with Terminal([*APP, "--project", "proj_support"], env) as term:
        term.wait_for(b"Live")  # the trace list's footer
        term.drain(quiet=1.5)  # the first page arrives and is drawn
        sizes = []
        for _ in range(MOVES):
            term.send("j")
            sizes.append(term.drain(quiet=0.25))
        term.drain(quiet=1.0)
        cpu, start = term.cpu_seconds(), time.perf_counter()
        deadline = start + IDLE_SECONDS
        while time.perf_counter() < deadline:
            term.drain(quiet=deadline - time.perf_counter(), limit=IDLE_SECONDS)
        idle = (term.cpu_seconds() - cpu) / (time.perf_counter() - start) * 100
        return statistics.median(sizes), idle


def run() -> list[Row]:
    store, keys = open_demo_store()
    with LocalService(store) as service:
        env = environment(service.base_url, keys.workspace)
        ours, floor, stack = start_up(env)
        move_bytes, idle = trace_list_terminal(env)
    return [
        Row(
            "start-up to project rows vs minimal app",
            ours * 1000,
            floor * 1000,
            "ms",
            "ratio <= 1.6",
            ours <= 1.6 * floor,
        ),
        Row(
            "  (minimal app importing httpx + pydantic)",
            stack * 1000,
            floor * 1000,
            "ms",
            "for reference",
            True,
        ),
        Row(
            "trace list: bytes per cursor move (80x24)",
            move_bytes,
            0.0,
            "B",
            "<= 2048 B",
            move_bytes <= 2048,
        ),
        Row("trace list: idle CPU, live mode off", idle, 0.0, "%", "<= 1 %", idle <= 1.0),
    ]
