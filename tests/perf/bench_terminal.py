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
from pathlib import Path

from tests.perf.report import Row
from tests.support.terminal import PYTHON, Terminal
from tui.demo.data import populate
from tui.server.run import LocalService
from tui.server.store.sqlite.store import Store

RUNS = 15  # the machine is shared: single runs of either vary by a third (0.8x-1.4x)
MOVES = 12
IDLE_SECONDS = 10.0
DEMO_SCALE = 1.0  # the demo's data, as `tracetui demo` makes it
BIG_TRACES = True
# What `make test` runs this module with (tests/bench/test_tiny_benches.py): every code path
# once, at a size that takes seconds; no figure of it means anything.
TINY = {"RUNS": 1, "MOVES": 2, "IDLE_SECONDS": 0.3, "DEMO_SCALE": 0.02, "BIG_TRACES": False}

FLOOR_APP = """
from textual.app import App
from textual.widgets import Label

class Floor(App):
    def compose(self):
        yield Label("floor-ready")

Floor().run()
"""
# The same minimal app on this stack, doing what the app must before its rows show: import the
# HTTP client and pydantic, GET the projects, parse them, show a label. The floor for the rows.
STACK_FLOOR_APP = """
import os
import httpx, anyio._backends._asyncio
from pydantic import BaseModel
from textual.app import App
from textual.widgets import Label

class Project(BaseModel):
    id: str
    name: str

class Floor(App):
    def compose(self):
        yield Label("starting")

    async def on_mount(self):
        url, key = os.environ["TRACETUI_BASE_URL"], os.environ["TRACETUI_API_KEY"]
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {key}"}) as client:
            answer = await client.get(url + "/projects")
        projects = [Project.model_validate(p) for p in answer.json()["data"]]
        self.query_one(Label).update("floor-ready " + projects[0].name)

Floor().run()
"""
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


def compile_the_app() -> None:
    """Write the app's bytecode (__pycache__) first, as `pip install` does for an installed
    package and as Textual, httpx and pydantic have in the venv: the minimal app reads theirs
    from .pyc, and tracetui's own modules (an editable install here; PYTHONDONTWRITEBYTECODE
    may be set in the shell) would otherwise be compiled from source in the first run (some
    60 ms of a 400 ms start)."""
    import compileall

    import tui

    compileall.compile_dir(Path(tui.__file__).parent, quiet=1)


def start_up(env: dict[str, str]) -> tuple[float, float, float, float]:
    """Median seconds: (the app's first frame, the app's project rows, the minimal app's label,
    the stack floor's label with the projects fetched), run alternately."""
    compile_the_app()
    first, ours, floor, stack = [], [], [], []
    for _ in range(RUNS):
        with Terminal([PYTHON, "-c", FLOOR_APP], env) as term:
            floor.append(term.wait_for(b"floor-ready"))
        with Terminal(APP, env) as term:
            first.append(term.wait_for(b"Projects"))  # the frame: header and status line
            ours.append(term.wait_for(b"support-chatbot"))
        with Terminal([PYTHON, "-c", STACK_FLOOR_APP], env) as term:
            stack.append(term.wait_for(b"floor-ready"))
    print(
        "start-up: first frame / minimal app run by run: "
        + ", ".join(f"{a / b:.2f}x" for a, b in zip(first, floor, strict=True))
    )
    print(
        "start-up: project rows / stack floor run by run: "
        + ", ".join(f"{a / b:.2f}x" for a, b in zip(ours, stack, strict=True))
    )
    return tuple(statistics.median(x) for x in (first, ours, floor, stack))  # type: ignore[return-value]


def trace_list_terminal(env: dict[str, str]) -> tuple[float, float]:
    """(median bytes written per cursor move, idle CPU as % of one core) on the trace list."""
    with Terminal([*APP, "--project", "proj_support"], env) as term:
        term.wait_for(b"Range")  # the trace list's footer (t Range), at 80 columns too
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
    store = Store(Path(tempfile.mkdtemp(prefix="tracetui-bench-terminal-")) / "demo.sqlite3")
    keys = populate(store, scale=DEMO_SCALE, big_traces=BIG_TRACES)
    with LocalService(store) as service:
        env = environment(service.base_url, keys.workspace)
        first, ours, floor, stack = start_up(env)
        move_bytes, idle = trace_list_terminal(env)
    return [
        Row(
            "start-up: first frame vs minimal app",
            first * 1000,
            floor * 1000,
            "ms",
            "ratio <= 1.15",
            first <= 1.15 * floor,
        ),
        Row(
            "start-up: project rows vs stack floor",
            ours * 1000,
            stack * 1000,
            "ms",
            "ratio <= 1.25",
            ours <= 1.25 * stack,
        ),
        Row(
            "  (stack floor: + httpx, pydantic, GET)",
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
