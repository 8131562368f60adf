"""Opening a 10,000-span trace from a real Phoenix: the app's reader against the raw REST floor.

A `phoenix serve` from the tests' cached virtualenv (tests/support/phoenix.py) is sent one
agent trace of 10,000 spans through its OTLP endpoint (protobuf, in batches, as an exporter
sends them): steps of a plan (an LLM call with OpenInference messages, model and tokens) and
tool calls. Then, in turns, several times:

- the floor: the same spans as plain REST requests, httpx paging
  `GET /v1/projects/{id}/spans?trace_id=...` (limit 1000, by Phoenix's cursor), each body
  parsed with json;
- ours: what the trace screen does, `PhoenixClient.get_trace` (every page of spans, the costs
  Phoenix computes from GraphQL, the trace made from its spans) and `build_tree`.

Target: ours <= 1.3x the floor (medians). Phoenix itself takes most of either.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from tests.perf.report import Row
from tests.support.otlp import PROTOBUF, kv, request
from tests.support.phoenix import RunningPhoenix, running_phoenix
from tui.api.phoenix.client import PhoenixClient
from tui.core.gcpause import gc_paused
from tui.model.spans import build_tree

PROJECT = "bench-phoenix"
SPANS = 10_000
TOOLS_PER_STEP = 8  # each step: itself, its LLM call and its tool calls
BATCH = 1000  # spans per OTLP request
RUNS = 5
TARGET = 1.3
INGEST_SECONDS = 300.0
POLL_S = 1.0  # between asks whether Phoenix has stored every span
# What `make test` runs this module with (tests/bench/test_tiny_benches.py): every code path
# once, at a size that takes seconds; no figure of it means anything.
TINY = {"SPANS": 50, "RUNS": 1, "POLL_S": 0.1}
# A Phoenix already running to use instead of starting one: the suite's, when `make test` runs
# this module at its tiny size (tests/phoenix/test_tiny_bench.py).
RUNNING: RunningPhoenix | None = None


def _span(
    trace_id: bytes,
    span_id: bytes,
    parent: bytes,
    name: str,
    start_ns: int,
    duration_ns: int,
    attributes: dict[str, Any],
) -> Any:
    from opentelemetry.proto.trace.v1.trace_pb2 import Span

    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent,
        name=name,
        kind=Span.SPAN_KIND_INTERNAL,
        start_time_unix_nano=start_ns,
        end_time_unix_nano=start_ns + duration_ns,
        attributes=[kv(k, v) for k, v in attributes.items()],
    )


def agent_trace(trace_id: bytes, start_ns: int) -> list[Any]:
    """SPANS spans of one agent run: a root, then steps of an LLM call and tool calls."""
    ids = iter(range(1, 10 * SPANS))

    def new_id() -> bytes:
        return next(ids).to_bytes(8, "big")

    root = new_id()
    spans: list[Any] = []
    t = start_ns + 1_000_000
    step = 0
    while len(spans) < SPANS - 1:
        step_id, step_start = new_id(), t
        call = {
            "openinference.span.kind": "LLM",
            "llm.model_name": "gpt-4o-mini",
            "llm.token_count.prompt": 900 + step % 400,
            "llm.token_count.completion": 20 + step % 60,
            "llm.token_count.total": 920 + step % 400 + step % 60,
            "llm.input_messages.0.message.role": "system",
            "llm.input_messages.0.message.content": "You migrate a monorepo one file at a time.",
            "llm.input_messages.1.message.role": "user",
            "llm.input_messages.1.message.content": f"What next after step {step}?",
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": f"grep for TODO-{step}",
        }
        spans.append(_span(trace_id, new_id(), step_id, "plan", t, 3_000_000, call))
        t += 3_000_000
        for i in range(TOOLS_PER_STEP):
            if len(spans) >= SPANS - 2:
                break
            tool = {
                "openinference.span.kind": "TOOL",
                "tool.name": "grep",
                "input.value": f'{{"pattern": "TODO-{step}-{i}"}}',
                "output.value": "3 matches",
            }
            spans.append(_span(trace_id, new_id(), step_id, f"grep.{i}", t, 1_000_000, tool))
            t += 1_000_000
        kind = {"openinference.span.kind": "AGENT"}
        spans.append(
            _span(trace_id, step_id, root, f"step {step + 1}", step_start, t - step_start, kind)
        )
        step += 1
    agent = {"openinference.span.kind": "AGENT", "input.value": "migrate the monorepo"}
    spans.append(_span(trace_id, root, b"", "migrate_monorepo", start_ns, t - start_ns, agent))
    return spans


def send(base_url: str, spans: list[Any]) -> None:
    """The spans to Phoenix's OTLP endpoint in batches (protobuf)."""
    resource = {"service.name": "bench", "openinference.project.name": PROJECT}
    with httpx.Client(timeout=120) as client:
        for i in range(0, len(spans), BATCH):
            message = request(*spans[i : i + BATCH], resource=resource)
            answer = client.post(
                f"{base_url}/v1/traces", content=message.SerializeToString(), headers=PROTOBUF
            )
            answer.raise_for_status()


def raw_spans(client: httpx.Client, base_url: str, trace_id: str) -> int:
    """The floor: every page of the trace's spans, plain httpx and json; the count read."""
    url = f"{base_url}/v1/projects/{PROJECT}/spans"
    params: dict[str, Any] = {"trace_id": trace_id, "limit": 1000}
    count = 0
    while True:
        body = client.get(url, params=params).json()
        count += len(body["data"])
        cursor = body.get("next_cursor")
        if not cursor:
            return count
        params["cursor"] = cursor


def wait_for_ingest(base_url: str, trace_id: str) -> None:
    """Phoenix inserts spans in the background: wait until it has them all (its own count of
    the trace's spans, asked of GraphQL, as reading them all each time slows the insertion)."""
    query = (
        "query($trace: ID!) { projects(first: 100) { edges { node { name "
        "trace(traceId: $trace) { numSpans } } } } }"
    )
    deadline = time.monotonic() + INGEST_SECONDS
    stored = 0
    with httpx.Client(timeout=120) as client:
        while time.monotonic() < deadline:
            try:
                answer = client.post(
                    f"{base_url}/graphql", json={"query": query, "variables": {"trace": trace_id}}
                ).json()
                edges = answer["data"]["projects"]["edges"]
                stored = max((e["node"]["trace"] or {}).get("numSpans", 0) for e in edges)
            except (httpx.HTTPError, KeyError, TypeError, ValueError):
                pass
            if stored >= SPANS:
                return
            time.sleep(POLL_S)
    raise RuntimeError(f"Phoenix holds {stored} of the {SPANS} spans after {INGEST_SECONDS:g} s")


async def open_trace(client: PhoenixClient, trace_id: str, project_id: str) -> int:
    """What the trace screen does to open a trace (TraceDetailScreen._read)."""
    with gc_paused():
        trace = await client.get_trace(trace_id, project_id)
        tree = build_tree(trace.spans)
    return tree.size


async def measure(base_url: str, trace_id: str) -> tuple[list[float], list[float]]:
    floors: list[float] = []
    ours: list[float] = []
    async with PhoenixClient(base_url) as client:
        project_id = next(p.id for p in await client.list_projects() if p.name == PROJECT)
        assert project_id is not None
        with httpx.Client(timeout=120) as raw:
            await open_trace(client, trace_id, project_id)  # one of each first: warm caches
            raw_spans(raw, base_url, trace_id)
            for _ in range(RUNS):
                start = time.perf_counter()
                assert raw_spans(raw, base_url, trace_id) == SPANS
                floors.append(time.perf_counter() - start)
                start = time.perf_counter()
                assert await open_trace(client, trace_id, project_id) == SPANS
                ours.append(time.perf_counter() - start)
    return floors, ours


def run() -> list[Row]:
    tmp = Path(tempfile.mkdtemp(prefix="tracetui-bench-phoenix-"))
    trace_id = os.urandom(16)
    phoenix_running = contextlib.nullcontext(RUNNING) if RUNNING else running_phoenix(tmp)
    with phoenix_running as phoenix:
        started = time.perf_counter()
        send(phoenix.base_url, agent_trace(trace_id, time.time_ns() - 3_600_000_000_000))
        wait_for_ingest(phoenix.base_url, trace_id.hex())
        loaded = time.perf_counter() - started
        floors, ours = asyncio.run(measure(phoenix.base_url, trace_id.hex()))
    floor, mine = statistics.median(floors), statistics.median(ours)
    print(
        f"phoenix {phoenix.version}: {SPANS} spans sent and stored in {loaded:.1f} s; "
        f"opening the trace {mine:.2f} s (runs {', '.join(f'{t:.2f}' for t in ours)}), "
        f"raw REST {floor:.2f} s (runs {', '.join(f'{t:.2f}' for t in floors)})"
    )
    return [
        Row(
            "phoenix: open a 10k-span trace vs raw REST",
            mine * 1000,
            floor * 1000,
            "ms",
            f"ratio <= {TARGET}",
            mine <= TARGET * floor,
        )
    ]
