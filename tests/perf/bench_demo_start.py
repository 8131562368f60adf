"""`tracetui demo` in an 80x24 pty: the time to its first frame (the starting screen, drawn while
the demo's database is filled and its service started), against the floor of any Textual app
(start Python, import Textual, draw one label), and the time until the projects show."""

from __future__ import annotations

import statistics
import tempfile

from tests.perf.bench_terminal import FLOOR_APP, compile_the_app
from tests.perf.report import Row
from tests.support.terminal import PYTHON, Terminal

RUNS = 5  # each demo start fills a fresh database (several seconds)
# Within 1 s on an idle machine, where the floor is some 0.5 s; the ratio holds on a busy one.
FLOOR_RATIO = 1.25
# What `make test` runs this module with (tests/bench/test_tiny_benches.py): every code path
# once, at a size that takes seconds; no figure of it means anything.
TINY = {"RUNS": 1}


def environment() -> dict[str, str]:
    import os

    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": tempfile.mkdtemp(prefix="tracetui-bench-home-"),
        "XDG_CONFIG_HOME": tempfile.mkdtemp(prefix="tracetui-bench-config-"),
        "TZ": "UTC",
    }


def run() -> list[Row]:
    compile_the_app()
    env = environment()
    first, projects, floor = [], [], []
    for _ in range(RUNS):
        with Terminal([PYTHON, "-c", FLOOR_APP], env) as term:
            floor.append(term.wait_for(b"floor-ready"))
        with Terminal([PYTHON, "-m", "tui", "demo", "--no-feed"], env) as term:
            first.append(term.wait_for(b"Starting"))  # the starting screen
            projects.append(term.wait_for(b"support-chatbot", timeout=120.0))
    ours, base, rows = (statistics.median(x) for x in (first, floor, projects))
    return [
        Row(
            "demo: first frame vs minimal app",
            ours * 1000,
            base * 1000,
            "ms",
            "ratio <= 1.25",
            ours <= FLOOR_RATIO * base,
        ),
        Row(
            "  (demo: projects shown, data seeded)",
            rows * 1000,
            base * 1000,
            "ms",
            "for reference",
            True,
        ),
    ]
