"""Ingest from emitters nobody here wrote: the OpenTelemetry SDK's OTLP/HTTP exporter, and the
real `openai` SDK instrumented by OpenInference and by OpenTelemetry's openai-v2, calling a stub
OpenAI-compatible endpoint on loopback. Each call must arrive as one span with the right kind,
model, tokens, cost and messages."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from typing import Any

import openai
import pytest
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Status, StatusCode

from tests.support.openai_stub import MODEL, StubOpenAI
from tests.support.otlp import new_project, root_client
from tests.support.service import RunningService

INPUT_PRICE, CACHED_PRICE, OUTPUT_PRICE = 0.15e-6, 0.075e-6, 0.6e-6  # gpt-4o-mini, per token


@pytest.fixture(scope="module")
def stub_openai() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), StubOpenAI)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()
    server.server_close()


class Emitter:
    """An OTel SDK tracer provider exporting to the service with a fresh project's key."""

    def __init__(self, service: RunningService, **exporter: Any) -> None:
        self.project_id, self.key = new_project(service)
        self.service = service
        self.provider = TracerProvider(resource=Resource({"service.name": "emitter-test"}))
        if "endpoint" not in exporter and not exporter.pop("from_environment", False):
            exporter["endpoint"] = service.base_url.removesuffix("/v1") + "/v1/traces"
            exporter["headers"] = {"Authorization": f"Bearer {self.key}"}
        self.exporter = OTLPSpanExporter(timeout=10, **exporter)
        self.provider.add_span_processor(
            BatchSpanProcessor(self.exporter, schedule_delay_millis=50)
        )

    def flush(self) -> None:
        assert self.provider.force_flush(10_000)

    def traces(self) -> list[dict[str, Any]]:
        """Every trace of the project, each with its spans."""
        with root_client(self.service.base_url, self.key) as client:
            listing = client.get(
                "/v1/traces",
                params={"project_id": self.project_id, "from": "2000-01-01T00:00:00Z"},
            ).json()["data"]
            return [client.get(f"/v1/traces/{t['id']}").json() for t in listing]

    def close(self) -> None:
        self.provider.shutdown()


@pytest.fixture(params=["threads", "processes"])
def emitter(request: pytest.FixtureRequest) -> Iterator[Emitter]:
    """An emitter to the service ingesting in its own threads, and to one ingesting in a worker
    process (as `tracetui serve` does): every span must arrive the same either way."""
    service: RunningService = request.getfixturevalue(
        "service" if request.param == "threads" else "pooled_service"
    )
    processes = service.service.app.state.ingest.processes
    before = processes.bodies
    made = Emitter(service)
    yield made
    made.close()
    # Which way the bodies went: through the worker (for "processes"), or never (for "threads").
    assert (processes.bodies > before) == (request.param == "processes")


def test_the_otel_sdk_exporter_nested_spans_older_genai_names_and_an_exception(
    emitter: Emitter,
) -> None:
    tracer = emitter.provider.get_tracer("app")
    with tracer.start_as_current_span("handle_ticket") as root:
        root.set_attribute("openinference.span.kind", "AGENT")
        with tracer.start_as_current_span("chat claude") as call:
            call.set_attributes(
                {
                    "gen_ai.system": "anthropic",
                    "gen_ai.request.model": "claude-3-5-sonnet-20241022",
                    "gen_ai.usage.prompt_tokens": 1000,
                    "gen_ai.usage.completion_tokens": 100,
                    "gen_ai.usage.cache_read.input_tokens": 400,
                    "gen_ai.prompt.0.role": "user",
                    "gen_ai.prompt.0.content": "Where is my order?",
                    "gen_ai.completion.0.content": "It shipped.",
                }
            )
        with tracer.start_as_current_span("lookup_order") as tool:
            tool.set_attribute("gen_ai.tool.name", "lookup_order")
            try:
                raise TimeoutError("inventory-service timed out")
            except TimeoutError as error:
                tool.record_exception(error)
                tool.set_status(Status(StatusCode.ERROR))
    emitter.flush()

    [trace] = emitter.traces()
    assert trace["name"] == "handle_ticket" and trace["span_count"] == 3
    assert trace["status"] == "error" and trace["error_count"] == 1
    assert trace["attributes"]["service.name"] == "emitter-test"
    spans = {s["name"]: s for s in trace["spans"]}
    assert spans["handle_ticket"]["kind"] == "agent" and spans["handle_ticket"]["parent_id"] is None
    call = spans["chat claude"]
    assert call["kind"] == "llm" and call["model"] == "claude-3-5-sonnet-20241022"
    assert (call["input_tokens"], call["output_tokens"]) == (1000, 100)
    assert (
        call["attributes"]["tracetui.cache_read_tokens"] == 400
        and call["attributes"]["tracetui.cost_source"] == "estimated"
    )
    # Anthropic: $3/M input, $0.30/M cache read, $15/M output.
    assert call["cost_usd"] == pytest.approx(600 * 3e-6 + 400 * 0.3e-6 + 100 * 15e-6)
    assert call["attributes"]["gen_ai.prompt.0.content"] == "Where is my order?"  # flat, as sent
    tool = spans["lookup_order"]
    assert tool["kind"] == "tool" and tool["status"] == "error"
    assert tool["error_message"] == "TimeoutError: inventory-service timed out"
    assert trace["total_cost_usd"] == pytest.approx(call["cost_usd"])


def test_the_exporter_configured_by_the_lines_serve_prints_with_gzip(
    service: RunningService, monkeypatch: pytest.MonkeyPatch
) -> None:
    project_id, key = new_project(service)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", service.base_url.removesuffix("/v1"))
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"Authorization=Bearer {key}")
    made = Emitter(service, from_environment=True, compression=Compression.Gzip)
    made.project_id, made.key = project_id, key
    try:
        with made.provider.get_tracer("app").start_as_current_span("from the environment"):
            pass
        made.flush()
        assert [t["name"] for t in made.traces()] == ["from the environment"]
    finally:
        made.close()


@pytest.fixture
def openai_client(stub_openai: str) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=stub_openai, api_key="sk-test", max_retries=0) as client:
        yield client


def call_openai(client: openai.OpenAI) -> None:
    """A plain chat call, one offering a tool (answered by a tool call), and a stream."""
    messages: Any = [{"role": "user", "content": "Hello?"}]
    client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    client.chat.completions.create(
        model="gpt-4o-mini",
        messages=messages,
        tools=[
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
        ],
    )
    stream = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=messages,
        stream=True,
        stream_options={"include_usage": True},
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "Hi there"


def llm_spans(emitter: Emitter) -> list[dict[str, Any]]:
    traces = emitter.traces()
    assert len(traces) == 3, [t["name"] for t in traces]  # one trace per call
    spans = [s for t in sorted(traces, key=lambda t: t["started_at"]) for s in t["spans"]]
    assert len(spans) == 3
    return spans


def test_openai_instrumented_by_openinference(
    emitter: Emitter, openai_client: openai.OpenAI
) -> None:
    from openinference.instrumentation.openai import OpenAIInstrumentor

    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=emitter.provider)
    try:
        call_openai(openai_client)
    finally:
        instrumentor.uninstrument()
    emitter.flush()

    plain, tool_call, streamed = llm_spans(emitter)
    for span in (plain, tool_call, streamed):
        assert span["kind"] == "llm" and span["model"] == MODEL, span
        assert (span["input_tokens"], span["output_tokens"]) == (12, 5)
        assert span["attributes"]["tracetui.cost_source"] == "estimated"
        assert span["attributes"]["openinference.span.kind"] == "LLM"
        assert span["attributes"]["llm.input_messages.0.message.content"] == "Hello?"
    # OpenInference reports the cached prompt tokens, priced at the cache-read rate.
    assert (
        plain["attributes"]["tracetui.cache_read_tokens"] == 4
        and plain["attributes"]["tracetui.reasoning_tokens"] == 2
    )
    assert plain["cost_usd"] == pytest.approx(8 * INPUT_PRICE + 4 * CACHED_PRICE + 5 * OUTPUT_PRICE)
    assert plain["attributes"]["llm.output_messages.0.message.content"] == "Hi there"
    prefix = "llm.output_messages.0.message.tool_calls.0.tool_call.function"
    assert tool_call["attributes"][f"{prefix}.name"] == "lookup_order"
    assert "Hi there" in json.dumps(streamed["attributes"])


def test_openai_instrumented_by_opentelemetry_openai_v2(
    emitter: Emitter, openai_client: openai.OpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    from opentelemetry.instrumentation._semconv import _OpenTelemetrySemanticConventionStability
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    # The latest GenAI conventions put the messages on the span (gen_ai.input.messages).
    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "span_only")
    monkeypatch.setattr(_OpenTelemetrySemanticConventionStability, "_initialized", False)
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=emitter.provider)
    try:
        call_openai(openai_client)
    finally:
        instrumentor.uninstrument()
    emitter.flush()

    plain, tool_call, streamed = llm_spans(emitter)
    for span in (plain, tool_call, streamed):
        assert span["kind"] == "llm" and span["model"] == MODEL, span
        assert (span["input_tokens"], span["output_tokens"]) == (12, 5)
        assert span["attributes"]["gen_ai.operation.name"] == "chat"
        assert span["attributes"]["tracetui.cost_source"] == "estimated"
        assert span["cost_usd"] == pytest.approx(
            12 * INPUT_PRICE
            + 5 * OUTPUT_PRICE
            - span["attributes"].get("tracetui.cache_read_tokens", 0) * (INPUT_PRICE - CACHED_PRICE)
        )
        inputs = json.loads(span["attributes"]["gen_ai.input.messages"])
        assert inputs[0]["parts"][0]["content"] == "Hello?"
    outputs = json.loads(plain["attributes"]["gen_ai.output.messages"])
    assert outputs[0]["parts"][0]["content"] == "Hi there"
    tool_output = json.loads(tool_call["attributes"]["gen_ai.output.messages"])
    assert tool_output[0]["parts"][0]["name"] == "lookup_order"
    assert "Hi there" in streamed["attributes"]["gen_ai.output.messages"].replace('"', "")
