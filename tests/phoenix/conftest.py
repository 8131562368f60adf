"""A real Phoenix (tests/support/phoenix.py) holding traces sent as an application would send
them: the OpenTelemetry SDK with OpenInference's openai instrumentation, the openai SDK calling
a stub on loopback (the ingest tests' stub), one Phoenix per test process."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from typing import Any

import httpx
import openai
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode

from tests.support.openai_stub import StubOpenAI
from tests.support.otlp import PROTOBUF, new_span_id, new_trace_id, request, span
from tests.support.phoenix import RunningPhoenix, running_phoenix

PROJECT = "tracetui-phoenix"
FILLERS = 6
TRACE_COUNT = 3 + FILLERS
SPAN_COUNT = 2 + 1 + 1 + FILLERS
QUESTION = "Where is my order?"
ERROR_MESSAGE = "the order service broke"
INGEST_SECONDS = 60.0


@dataclass(frozen=True)
class SeededPhoenix:
    phoenix: RunningPhoenix
    project: str
    chat_trace_id: str
    tool_trace_id: str
    failing_trace_id: str

    @property
    def base_url(self) -> str:
        return self.phoenix.base_url


@pytest.fixture(scope="session")
def stub_llm() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), StubOpenAI)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def phoenix(tmp_path_factory: pytest.TempPathFactory, stub_llm: str) -> Iterator[SeededPhoenix]:
    with running_phoenix(tmp_path_factory.mktemp("phoenix")) as running:
        yield send_traces(running, stub_llm)


def send_traces(running: RunningPhoenix, stub_llm: str) -> SeededPhoenix:
    from openinference.instrumentation.openai import OpenAIInstrumentor

    provider = TracerProvider(resource=Resource({"openinference.project.name": PROJECT}))
    provider.add_span_processor(
        SimpleSpanProcessor(OTLPSpanExporter(endpoint=running.otlp_endpoint, timeout=10))
    )
    tracer = provider.get_tracer("tracetui-tests")
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    ids: dict[str, str] = {}
    try:
        with openai.OpenAI(base_url=stub_llm, api_key="sk-test", max_retries=0) as llm:
            for n in range(FILLERS):
                with tracer.start_as_current_span(f"filler-{n}") as span:
                    span.set_attribute("openinference.span.kind", "CHAIN")
            with tracer.start_as_current_span("failing-step") as span:
                span.set_attribute("openinference.span.kind", "TOOL")
                span.record_exception(RuntimeError(ERROR_MESSAGE))
                span.set_status(Status(StatusCode.ERROR, ERROR_MESSAGE))
                ids["failing"] = trace_id_of(span)
            messages: Any = [{"role": "user", "content": "Look up order 48213"}]
            tools: Any = [
                {
                    "type": "function",
                    "function": {
                        "name": "lookup_order",
                        "parameters": {
                            "type": "object",
                            "properties": {"order_id": {"type": "integer"}},
                        },
                    },
                }
            ]
            llm.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools)
            with tracer.start_as_current_span("answer-question") as span:
                span.set_attribute("openinference.span.kind", "CHAIN")
                span.set_attribute("input.value", QUESTION)
                ids["chat"] = trace_id_of(span)
                question: Any = [{"role": "user", "content": QUESTION}]
                llm.chat.completions.create(model="gpt-4o-mini", messages=question)
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    tool_trace = wait_for_ingest(running.base_url, ids)
    return SeededPhoenix(running, PROJECT, ids["chat"], tool_trace, ids["failing"])


# A second project: two users' sessions of a few turns each (one turn failing), and enough
# priced model calls that a page of the trace list needs more than one GraphQL query.
SESSIONS_PROJECT = "tracetui-phoenix-sessions"
SESSIONS = {"sess-alpha": ("user-a", 3), "sess-beta": ("user-b", 2)}
FAILING_TURN = ("sess-beta", 1)
PRICED_TRACES = 60


@dataclass(frozen=True)
class SessionsSeeded:
    base_url: str
    project: str
    turns: dict[str, list[str]]  # each session's trace ids, in the order they started


@pytest.fixture(scope="session")
def phoenix_sessions(phoenix: SeededPhoenix) -> SessionsSeeded:
    """The second project, sent as OTLP protobuf (OpenInference's session.id and user.id)."""
    start_ms = int(time.time() * 1000) - 600_000
    spans: list[Any] = []
    turns: dict[str, list[str]] = {}
    for n, (session_id, (user_id, count)) in enumerate(SESSIONS.items()):
        for turn in range(count):
            trace_id, root = new_trace_id(), new_span_id()
            turns.setdefault(session_id, []).append(trace_id.hex())
            at = start_ms + n * 60_000 + turn * 5_000
            failing = (session_id, turn) == FAILING_TURN
            attributes = {
                "openinference.span.kind": "CHAIN",
                "session.id": session_id,
                "user.id": user_id,
                "input.value": f"turn {turn}",
            }
            spans.append(
                span(
                    trace_id,
                    root,
                    name=f"{session_id}-turn-{turn}",
                    start_ms=at,
                    duration_ms=900,
                    attributes=attributes,
                    error="the turn failed" if failing else None,
                )
            )
            spans.append(priced_call(trace_id, root, at + 10))
    for n in range(PRICED_TRACES):
        trace_id = new_trace_id()
        spans.append(priced_call(trace_id, b"", start_ms + 300_000 + n * 100))
    message = request(*spans, resource={"openinference.project.name": SESSIONS_PROJECT})
    answer = httpx.post(
        phoenix.phoenix.otlp_endpoint,
        content=message.SerializeToString(),
        headers=PROTOBUF,
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    wait_for_spans(phoenix.base_url, SESSIONS_PROJECT, len(spans))
    return SessionsSeeded(phoenix.base_url, SESSIONS_PROJECT, turns)


def priced_call(trace_id: bytes, parent: bytes, start_ms: int) -> Any:
    attributes = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "gpt-4o-mini",
        "llm.token_count.prompt": 100,
        "llm.token_count.completion": 10,
    }
    return span(trace_id, new_span_id(), parent, "llm", start_ms, 500, attributes)


def wait_for_spans(base_url: str, project: str, count: int) -> None:
    deadline = time.monotonic() + INGEST_SECONDS
    held = 0
    while time.monotonic() < deadline:
        answer = httpx.get(
            f"{base_url}/v1/projects/{project}/spans", params={"limit": 1000}, timeout=10
        )
        held = len(answer.json().get("data", [])) if answer.status_code == 200 else 0
        if held >= count:
            return
        time.sleep(0.2)
    raise AssertionError(f"Phoenix holds {held} of {count} spans in {project}")


def trace_id_of(span: Any) -> str:
    return f"{span.get_span_context().trace_id:032x}"


def wait_for_ingest(base_url: str, ids: dict[str, str]) -> str:
    """Wait until Phoenix has every span (it inserts them in the background); the id of the
    trace the tool-offering call made (its own, as it ran outside any span)."""
    deadline = time.monotonic() + INGEST_SECONDS
    spans: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        answer = httpx.get(
            f"{base_url}/v1/projects/{PROJECT}/spans", params={"limit": 1000}, timeout=10
        )
        spans = answer.json().get("data", []) if answer.status_code == 200 else []
        if len(spans) >= SPAN_COUNT:
            break
        time.sleep(0.2)
    else:
        raise AssertionError(f"Phoenix holds {len(spans)} of {SPAN_COUNT} spans")
    known = set(ids.values())
    llm_traces = {s["context"]["trace_id"] for s in spans if s.get("span_kind") == "LLM"} - known
    assert len(llm_traces) == 1, llm_traces
    return llm_traces.pop()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The Phoenix tests share one xdist worker (`make test` runs --dist loadgroup): a second
    `phoenix serve` would cost another 10-30 s of start-up."""
    for item in items:
        if "tests/phoenix/" in item.nodeid.replace("\\", "/"):
            item.add_marker(pytest.mark.xdist_group("phoenix"))
