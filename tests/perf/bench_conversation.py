"""The conversation pane on big data: selecting a span whose messages total a megabyte (in 40
messages, and in one), and moving the cursor through a 10,000-span trace of model calls and
tool calls with the conversation pane open. Medians of several runs; the floor of the first is
json.loads of the span's messages, measured in the same run (any reader must parse them).
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

from pydantic import SecretStr
from textual.strip import Strip

from tests.perf.report import Row
from tests.support.chat_traces import SpanSpec, add_trace, genai, new_store, text
from tests.support.service import local_service
from tui.api import ApiClient
from tui.server.store.rows import now_ms
from tui.server.store.sqlite.store import Store
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.widgets.document import DocumentView
from tui.ui.widgets.span_detail import SpanDetail
from tui.ui.widgets.span_tree import SpanTreeView

RUNS = 9
MOVES = 200
BENCH_KEY = "tt_ws_benchmark_key_conversation_01"
STEPS = 526  # agent steps of the chat trace: 19 * 526 + 1 = 9,995 spans
MESSAGES_BYTES = 1_000_000  # the big span's messages, all told
# What `make test` runs this module with (tests/bench/test_tiny_benches.py): every code path
# once, at a size that takes seconds; no figure of it means anything.
TINY = {"RUNS": 1, "MOVES": 4, "STEPS": 5, "MESSAGES_BYTES": 20_000}
WORDS = ["the", "parcel", "left", "the", "depot", "on", "monday", "and", "should", "arrive", "soon"]


def prose(rng: random.Random, chars: int) -> str:
    """Text of about `chars` characters in lines of 60-120, with a code block now and then."""
    lines, size = [], 0
    while size < chars:
        if rng.random() < 0.05:
            line = "```\nprint('order', 48213)\n```"
        else:
            line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(10, 20)))
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def megabyte_span(span_id: str, rng: random.Random, messages: int) -> SpanSpec:
    each = MESSAGES_BYTES // messages
    history = [
        genai("user" if n % 2 == 0 else "assistant", text(prose(rng, each)))
        for n in range(messages)
    ]
    attributes = {
        "gen_ai.system_instructions": json.dumps([text("You are a careful assistant.")]),
        "gen_ai.input.messages": json.dumps(history),
        "gen_ai.output.messages": json.dumps([genai("assistant", text("Done."), finish="stop")]),
    }
    return SpanSpec(
        span_id, "root", f"chat {messages}", "llm", 10, 900, "gpt-4o", (250_000, 5), 0, attributes
    )


def big_chat_trace(rng: random.Random, steps: int) -> list[SpanSpec]:
    """`steps` agent steps, each one model call (a multi-turn GenAI conversation with a tool
    call) and 18 tool calls: 19 * steps + 1 spans."""
    spans = [SpanSpec("root", None, "agent run", "agent", 0, steps * 100)]
    for n in range(steps):
        step = f"s{n}"
        history = [
            genai("user", text(prose(rng, 400))),
            genai(
                "assistant",
                {
                    "type": "tool_call",
                    "id": f"c{n}",
                    "name": "grep",
                    "arguments": {"pattern": f"TODO-{n}"},
                },
            ),
            genai("tool", {"type": "tool_call_response", "id": f"c{n}", "response": "3 matches"}),
        ]
        call = {
            "gen_ai.input.messages": json.dumps(history),
            "gen_ai.output.messages": json.dumps(
                [genai("assistant", text(prose(rng, 300)), finish="stop")]
            ),
        }
        spans.append(
            SpanSpec(
                step,
                "root",
                f"plan {n}",
                "llm",
                n * 100,
                50,
                "gpt-4o-mini",
                (900, 60),
                0.0002,
                call,
            )
        )
        for i in range(18):
            spans.append(
                SpanSpec(
                    f"{step}t{i}",
                    step,
                    f"grep.{i}",
                    "tool",
                    n * 100 + 50 + i,
                    1,
                    attributes={
                        "gen_ai.tool.name": "grep",
                        "gen_ai.tool.call.arguments": json.dumps({"pattern": f"TODO-{n}-{i}"}),
                        "gen_ai.tool.call.result": "3 matches",
                    },
                )
            )
    return spans


def make_store() -> tuple[Store, dict[str, SpanSpec]]:
    """The store with the two traces; the megabyte spans by id (for the floor)."""
    store = new_store(
        Path(tempfile.mkdtemp(prefix="tracetui-bench-chat-")) / "chat.sqlite3", BENCH_KEY
    )
    rng = random.Random(16)
    start = now_ms() - 600_000
    small = SpanSpec(
        "small",
        "root",
        "small",
        "llm",
        5,
        5,
        attributes={"llm.prompt": "hi", "llm.completion": "hello"},
    )
    big = {"mb40": megabyte_span("mb40", rng, 40), "mb1": megabyte_span("mb1", rng, 1)}
    add_trace(
        store,
        "megabyte",
        [SpanSpec("root", None, "root", "agent", 0, 1000), small, *big.values()],
        project_id="p",
        name="megabyte",
        started_ms=start,
    )
    add_trace(
        store, "chat10k", big_chat_trace(rng, STEPS), project_id="p", name="10k", started_ms=start
    )
    return store, big


async def first_screen(base_url: str, size: tuple[int, int]) -> dict[str, list[float]]:
    """Seconds from selecting each megabyte span (its conversation not read yet) to the detail
    pane's last visible line drawn by Textual; per span name."""
    painted: list[float] = []

    def render_line(view: DocumentView, y: int) -> Strip:
        strip = original(view, y)
        if y == view.size.height - 1:
            painted.append(time.perf_counter())
        return strip

    original = DocumentView.render_line
    DocumentView.render_line = render_line  # type: ignore[method-assign]
    figures: dict[str, list[float]] = {"chat 40": [], "chat 1": []}
    try:
        async with ApiClient(base_url, SecretStr(BENCH_KEY)) as client:
            app = TraceTuiApp(client, StartAt(trace_id="megabyte", project_id="p"))
            async with app.run_test(size=size) as pilot:
                while not app.screen.query(SpanTreeView):
                    await pilot.pause(0.01)
                await pilot.pause(0.2)
                view = app.screen.query_one(SpanTreeView)
                names = [view.trace_tree.spans[i].name for i in view.view.rows]
                for _ in range(RUNS):
                    for name in figures:
                        view.move_to(names.index("small"))
                        await pilot.pause(0.05)
                        view.trace_tree.conversations.clear()  # read afresh, as when first seen
                        painted.clear()
                        started = time.perf_counter()
                        view.move_to(names.index(name))
                        while not painted:  # noqa: ASYNC110 - waiting for the compositor
                            await asyncio.sleep(0.0005)
                        figures[name].append(painted[0] - started)
                        assert app.screen.query_one(SpanDetail).view == "chat"
    finally:
        DocumentView.render_line = original  # type: ignore[method-assign]
    return figures


def parse_floor(span: SpanSpec) -> float:
    """Median seconds of json.loads of a span's message attributes (what any reader parses)."""
    strings = [v for v in span.attributes.values() if isinstance(v, str)]
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        for value in strings:
            json.loads(value)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


async def cursor_moves(base_url: str, size: tuple[int, int]) -> tuple[list[float], list[float]]:
    """Per cursor move down the 10,000-span trace with the conversation pane open: (seconds
    from the move to Textual having drawn the pane's last visible line, the screen refreshed
    as a user sees it; seconds of our code alone: the tree's handler, the pane showing the new
    span, its conversation read for the first time, and every visible row of both drawn)."""
    painted: list[float] = []

    def render_line(view: DocumentView, y: int) -> Strip:
        strip = original(view, y)
        if y == view.size.height - 1:
            painted.append(time.perf_counter())
        return strip

    original = DocumentView.render_line
    try:
        async with ApiClient(base_url, SecretStr(BENCH_KEY)) as client:
            app = TraceTuiApp(client, StartAt(trace_id="chat10k", project_id="p"))
            async with app.run_test(size=size) as pilot:
                while not app.screen.query(SpanTreeView):
                    await pilot.pause(0.01)
                await pilot.pause(0.2)
                view = app.screen.query_one(SpanTreeView)
                detail = app.screen.query_one(SpanDetail)
                document = detail.document
                view.action_expand_all()
                await pilot.pause(0.1)
                tree = view.trace_tree

                def ours() -> float:
                    started = time.perf_counter()
                    view.action_cursor_down()
                    detail.show(tree, view.position)
                    for y in range(view.size.height):
                        view.render_line(y)
                    for y in range(document.size.height):
                        document.render_line(y)
                    return time.perf_counter() - started

                code = [ours() for _ in range(MOVES)]
                assert detail.view == "chat"
                DocumentView.render_line = render_line  # type: ignore[method-assign]
                screen = []
                for _ in range(MOVES // 2):
                    painted.clear()
                    started = time.perf_counter()
                    view.action_cursor_down()
                    while not painted:  # noqa: ASYNC110 - waiting for the compositor
                        await asyncio.sleep(0.0002)
                    screen.append(painted[0] - started)
                return screen, code
    finally:
        DocumentView.render_line = original  # type: ignore[method-assign]


def run() -> list[Row]:
    store, big = make_store()
    rows: list[Row] = []
    with local_service(store, rate_limit=10**9) as service:
        for size in ((80, 24), (160, 48)):
            figures = asyncio.run(first_screen(service.base_url, size))
            for name, label in (("chat 40", "40 msgs"), ("chat 1", "1 msg")):
                ours = statistics.median(figures[name])
                floor = parse_floor(big["mb40" if name == "chat 40" else "mb1"])
                rows.append(
                    Row(
                        f"1 MB in {label}: select to painted {size[0]}x{size[1]}",
                        ours * 1000,
                        floor * 1000,
                        "ms",
                        "<= 50 ms",
                        ours <= 0.050,
                    )
                )
        for size in ((80, 24), (160, 48)):
            screen, code = asyncio.run(cursor_moves(service.base_url, size))
            label = f"{size[0]}x{size[1]}"
            median = statistics.median(code)
            p95 = sorted(code)[int(len(code) * 0.95)]
            rows.append(
                Row(
                    f"10k chat: cursor down, pane open {label}",
                    median * 1000,
                    0.0,
                    "ms",
                    "<= 10 ms",
                    median <= 0.010,
                )
            )
            rows.append(
                Row(
                    f"  (95th percentile of {len(code)})",
                    p95 * 1000,
                    0.0,
                    "ms",
                    "<= 10 ms",
                    p95 <= 0.010,
                )
            )
            # What a user sees: the move until Textual has painted the pane, with its frame
            # timer and compositor (the tree scrolls: both panes are drawn whole).
            rows.append(
                Row(
                    f"  (to the pane painted, {label})",
                    statistics.median(screen) * 1000,
                    0.0,
                    "ms",
                    "for reference",
                    True,
                )
            )
    return rows


def _main() -> Any:  # pragma: no cover - `python -m tests.perf bench_conversation` runs it
    from tests.perf.report import print_table

    print_table(run())


if __name__ == "__main__":
    _main()
