"""The trace diff on big data, in the app (Pilot, headless), over the local service:

- two 10,000-span agent runs (B: other words in every model call, 14 more steps): from both
  traces loaded (the client hands them over at once) to the aligned tree's last visible line
  painted; its floor is building the two traces' span trees, which any diff needs;
- two spans whose conversations are a megabyte each (40 messages; B: one word of the system
  prompt, one message edited, one added): from selecting the pair to its diff pane's last
  visible line painted, and the pair's diff alone (tui/model/diff: the conversations read and
  diffed word by word); the floor is json.loads of both spans' messages. A megabyte that
  differs wholly is a reference row.

Medians of RUNS; each conversation is read afresh (the trees' caches cleared) every run.
`python -m tests.perf bench_diff` runs it alone.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr
from textual.strip import Strip

from tests.perf.bench_conversation import big_chat_trace, megabyte_span
from tests.perf.report import Row
from tests.support.chat_traces import SpanSpec, add_trace, new_store
from tests.support.service import local_service
from tui.api import ApiClient, Trace
from tui.api.readers import read_trace_fast
from tui.model.diff import diff_trees, pair_detail
from tui.model.spans import build_tree
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.diff import DiffScreen
from tui.ui.widgets.diff_detail import DiffDocument
from tui.ui.widgets.diff_tree import DiffTreeView

RUNS = 7
BENCH_KEY = "tt_ws_benchmark_key_diff_0123456789"
PROJECT = "p"
STEPS_A = 527  # agent steps of A: 19 * 527 + 1 = 10,014 spans
STEPS_B = 541  # of B: 14 more (266 spans added)
MESSAGES = 40  # the megabyte conversation's messages
# Seconds at `make test`'s tiny size (tests/support/tiny_bench.py, once it runs every bench);
# the megabyte is bench_conversation's.
TINY = {"RUNS": 1, "STEPS_A": 5, "STEPS_B": 6, "bench_conversation.MESSAGES_BYTES": 20_000}


def edited(span: SpanSpec) -> SpanSpec:
    """The megabyte span as B has it: a word of the system prompt changed, the middle message
    edited in a few places, one more message at the end."""
    attributes = dict(span.attributes)
    attributes["gen_ai.system_instructions"] = attributes["gen_ai.system_instructions"].replace(
        "careful", "thorough"
    )
    history = json.loads(attributes["gen_ai.input.messages"])
    middle = history[len(history) // 2]["parts"][0]
    middle["content"] = middle["content"].replace("depot", "warehouse", 5)
    history.append({"role": "user", "parts": [{"type": "text", "content": "And the refund?"}]})
    attributes["gen_ai.input.messages"] = json.dumps(history)
    return SpanSpec(
        span.id,
        span.parent,
        span.name,
        span.kind,
        span.start,
        span.duration,
        span.model,
        span.tokens,
        span.cost,
        attributes,
    )


def make_store() -> tuple[Any, dict[str, SpanSpec]]:
    store = new_store(
        Path(tempfile.mkdtemp(prefix="tracetui-bench-diff-")) / "diff.sqlite3", BENCH_KEY
    )
    start = int(time.time() * 1000) - 600_000
    root = SpanSpec("root", None, "root", "agent", 0, 1000)
    add_trace(
        store,
        "a10k",
        big_chat_trace(random.Random(1), STEPS_A),
        project_id=PROJECT,
        name="run",
        started_ms=start,
    )
    add_trace(
        store,
        "b10k",
        big_chat_trace(random.Random(2), STEPS_B),
        project_id=PROJECT,
        name="run",
        started_ms=start + 1000,
    )
    mb_a = megabyte_span("chat", random.Random(3), MESSAGES)
    spans = {"a": mb_a, "b": edited(mb_a), "c": megabyte_span("chat", random.Random(4), MESSAGES)}
    for name, span in spans.items():
        add_trace(
            store,
            f"mb-{name}",
            [root, span],
            project_id=PROJECT,
            name="chat",
            started_ms=start + 2000,
        )
    return store, spans


class HandedOver(ApiClient):
    """The client with the traces already fetched: get_trace hands them over at once and
    notes when it did, so what is timed starts with both traces loaded."""

    traces: dict[str, Trace]
    handed: tuple[float, float] = (0.0, 0.0)  # when the last trace was handed over: wall, CPU

    async def get_trace(self, trace_id: str, project_id: str | None = None) -> Trace:
        self.handed = (time.perf_counter(), time.process_time())
        return self.traces[trace_id]


def painted_by(cls: type[Any], painted: list[tuple[float, float]]) -> Any:
    """Patch `cls.render_line` to note when its last visible line is drawn (wall clock and the
    process's CPU time: on a busy machine the second says what the work itself cost); the
    original."""
    original = cls.render_line

    def render_line(view: Any, y: int) -> Strip:
        strip = original(view, y)
        if y == view.size.height - 1:
            painted.append((time.perf_counter(), time.process_time()))
        return strip

    cls.render_line = render_line
    return original


async def wait(painted: list[tuple[float, float]]) -> tuple[float, float]:
    while not painted:  # noqa: ASYNC110 - waiting for the compositor
        await asyncio.sleep(0.0005)
    return painted[0]


async def big_traces(
    base_url: str, size: tuple[int, int]
) -> tuple[list[float], list[float], list[float]]:
    """(seconds from both 10,000-span traces loaded to the diff's tree painted; the process's
    CPU seconds meanwhile; seconds from the diff screen opened to it, the screen's own
    building included)."""
    painted: list[tuple[float, float]] = []
    times, cpu, opened = [], [], []
    async with HandedOver(base_url, SecretStr(BENCH_KEY)) as client:
        client.traces = {t: await ApiClient.get_trace(client, t, PROJECT) for t in ("a10k", "b10k")}
        app = TraceTuiApp(client, StartAt(project_id=PROJECT))
        original = painted_by(DiffTreeView, painted)
        try:
            async with app.run_test(size=size) as pilot:
                await pilot.pause(0.3)
                for _ in range(RUNS):
                    painted.clear()
                    started = time.perf_counter()
                    app.open_diff("b10k", PROJECT, "a10k")
                    done, done_cpu = await wait(painted)
                    times.append(done - client.handed[0])
                    cpu.append(done_cpu - client.handed[1])
                    opened.append(done - started)
                    assert isinstance(app.screen, DiffScreen) and app.screen.loaded is not None
                    assert app.screen.loaded.diff.size >= 19 * STEPS_B
                    await pilot.pause(0.1)
                    app.pop_screen()
                    await pilot.pause(0.2)
        finally:
            DiffTreeView.render_line = original  # type: ignore[method-assign]
    return times, cpu, opened


async def megabytes(
    base_url: str, b: str, size: tuple[int, int]
) -> tuple[list[float], list[float], list[float]]:
    """(seconds from selecting the megabyte pair to its diff pane painted; the process's CPU
    seconds meanwhile; seconds of the pair's diff alone), conversations read afresh each run."""
    painted: list[tuple[float, float]] = []
    screen_times, screen_cpu, model_times = [], [], []
    async with ApiClient(base_url, SecretStr(BENCH_KEY)) as client:
        app = TraceTuiApp(client, StartAt(project_id=PROJECT))
        async with app.run_test(size=size) as pilot:
            await pilot.pause(0.3)
            app.open_diff(f"mb-{b}", PROJECT, "mb-a")
            while not (isinstance(app.screen, DiffScreen) and app.screen.query(DiffTreeView)):
                await pilot.pause(0.01)
            await pilot.pause(0.3)
            view = app.screen.query_one(DiffTreeView)
            diff = view.diff
            chat = next(r for r in range(diff.size) if diff.name(r).startswith("chat"))
            original = painted_by(DiffDocument, painted)
            try:
                for _ in range(RUNS):
                    view.move_to(0)
                    await pilot.pause(0.1)
                    diff.a.tree.conversations.clear()
                    diff.b.tree.conversations.clear()
                    painted.clear()
                    started, started_cpu = time.perf_counter(), time.process_time()
                    view.move_to(view.view.shown_at(chat) or 0)
                    done, done_cpu = await wait(painted)
                    screen_times.append(done - started)
                    screen_cpu.append(done_cpu - started_cpu)
            finally:
                DiffDocument.render_line = original  # type: ignore[method-assign]
            assert "chat" in app.screen.query_one(DiffDocument).text_lines()[0]
            for _ in range(RUNS):
                diff.a.tree.conversations.clear()
                diff.b.tree.conversations.clear()
                started = time.perf_counter()
                pair_detail(diff, chat)
                model_times.append(time.perf_counter() - started)
    return screen_times, screen_cpu, model_times


def parse_floor(spans: dict[str, SpanSpec], b: str) -> float:
    strings = [
        v for span in (spans["a"], spans[b]) for v in span.attributes.values() if isinstance(v, str)
    ]
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        for value in strings:
            json.loads(value)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def run() -> list[Row]:
    store, spans = make_store()
    rows: list[Row] = []
    with local_service(store, rate_limit=10**9) as service:

        def body(trace_id: str) -> bytes:
            with httpx.Client(headers={"Authorization": f"Bearer {BENCH_KEY}"}, timeout=60) as c:
                params = {"project_id": PROJECT}
                return c.get(f"{service.base_url}/traces/{trace_id}", params=params).content

        traces = [read_trace_fast(body(t)) for t in ("a10k", "b10k")]
        floor_times = []
        for _ in range(RUNS):
            started = time.perf_counter()
            trees = [build_tree(t.spans) for t in traces if t is not None]
            floor_times.append(time.perf_counter() - started)
        floor = statistics.median(floor_times)
        diffed = diff_trees(*trees)
        for size in ((80, 24), (160, 48)):
            loaded, cpu, opened = asyncio.run(big_traces(service.base_url, size))
            ours = statistics.median(loaded)
            rows.append(
                Row(
                    f"diff 10k vs 10k spans: loaded to painted {size[0]}x{size[1]}",
                    ours * 1000,
                    floor * 1000,
                    "ms",
                    "<= 300 ms",
                    ours <= 0.300,
                )
            )
            rows.append(
                Row(
                    "  (CPU time of it)",
                    statistics.median(cpu) * 1000,
                    floor * 1000,
                    "ms",
                    "for reference",
                    True,
                )
            )
            rows.append(
                Row(
                    "  (from the screen opened)",
                    statistics.median(opened) * 1000,
                    floor * 1000,
                    "ms",
                    "for reference",
                    True,
                )
            )
        rows.append(
            Row(
                f"  ({diffed.size:,} rows, {diffed.counts['changed']:,} changed, "
                f"{diffed.counts['added']:,} added)",
                0.0,
                0.0,
                "",
                "for reference",
                True,
            )
        )
        for b, label, target in (
            ("b", "1 MB convs, edited", True),
            ("c", "1 MB convs, all new", False),
        ):
            floor = parse_floor(spans, b)
            for size in ((80, 24), (160, 48)):
                screen, screen_cpu, model = asyncio.run(megabytes(service.base_url, b, size))
                ours = statistics.median(screen)
                rows.append(
                    Row(
                        f"{label}: select to painted {size[0]}x{size[1]}",
                        ours * 1000,
                        floor * 1000,
                        "ms",
                        "<= 100 ms" if target else "for reference",
                        ours <= 0.100 or not target,
                    )
                )
                rows.append(
                    Row(
                        "  (CPU time of it)",
                        statistics.median(screen_cpu) * 1000,
                        floor * 1000,
                        "ms",
                        "for reference",
                        True,
                    )
                )
            pair = statistics.median(model)
            rows.append(
                Row(
                    f"{label}: the pair's diff alone",
                    pair * 1000,
                    floor * 1000,
                    "ms",
                    "<= 100 ms" if target else "for reference",
                    pair <= 0.100 or not target,
                )
            )
    return rows


def _main() -> Any:  # pragma: no cover - `python -m tests.perf bench_diff` runs it
    from tests.perf.report import print_table

    print_table(run())


if __name__ == "__main__":
    _main()
