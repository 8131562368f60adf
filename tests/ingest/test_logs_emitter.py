"""The OTel GenAI instrumentation of the `openai` SDK (opentelemetry-instrumentation-openai-v2)
with its log events and metrics exporters on, all three signals over OTLP/HTTP to the service:
the messages travel only as log events (one per message, or one operation-details event in the
latest conventions), the logs are flushed before their spans, and the span's conversation must
show them, with no exporter reporting an error."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import ThreadingHTTPServer
from typing import Any

import openai
import pytest
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from tests.support.openai_stub import MODEL, StubOpenAI
from tests.support.otlp import new_project, root_client
from tests.support.service import RunningService
from tui.model.chat import ToolCall, conversation, conversation_text


@pytest.fixture(scope="module")
def stub_openai() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), StubOpenAI)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()
    server.server_close()


def recorded(exporter: Any) -> list[str]:
    """The names of the results of `exporter`'s exports, as they happen (the SDK only logs a
    failed export)."""
    results: list[str] = []
    export: Callable[..., Any] = exporter.export

    def export_and_record(batch: Any, *args: Any, **kwargs: Any) -> Any:
        result = export(batch, *args, **kwargs)
        results.append(result.name)
        return result

    exporter.export = export_and_record
    return results


# With opentelemetry-util-genai 1.x the instrumentation always follows the latest GenAI
# conventions: the messages go in one gen_ai.client.inference.operation.details log event
# (the older one event per message, gen_ai.user.message and gen_ai.choice, only came with
# util-genai 0.x; tests/ingest/test_logs_and_metrics.py sends those as it sent them).
EVENTS_ONLY = {
    "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "event_only",
    "OTEL_INSTRUMENTATION_GENAI_EMIT_EVENT": "true",
}


def test_openai_v2_log_events_show_in_the_conversation(
    service: RunningService, stub_openai: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from opentelemetry.instrumentation._semconv import _OpenTelemetrySemanticConventionStability
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    for name, value in EVENTS_ONLY.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(_OpenTelemetrySemanticConventionStability, "_initialized", False)
    project_id, key = new_project(service)
    root = service.base_url.removesuffix("/v1")
    headers = {"Authorization": f"Bearer {key}"}
    resource = Resource({"service.name": "logs-emitter-test"})
    span_exporter = OTLPSpanExporter(endpoint=f"{root}/v1/traces", headers=headers, timeout=10)
    log_exporter = OTLPLogExporter(endpoint=f"{root}/v1/logs", headers=headers, timeout=10)
    metric_exporter = OTLPMetricExporter(endpoint=f"{root}/v1/metrics", headers=headers, timeout=10)
    results = {
        "spans": recorded(span_exporter),
        "logs": recorded(log_exporter),
        "metrics": recorded(metric_exporter),
    }
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(BatchLogRecordProcessor(log_exporter))
    # Exported when flushed, not on a timer: the interval is longer than any test.
    reader = PeriodicExportingMetricReader(metric_exporter, export_interval_millis=3_600_000)
    meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(
        tracer_provider=tracer_provider,
        logger_provider=logger_provider,
        meter_provider=meter_provider,
    )
    try:
        with openai.OpenAI(base_url=stub_openai, api_key="sk-test", max_retries=0) as client:
            messages: Any = [{"role": "user", "content": "Hello?"}]
            client.chat.completions.create(model="gpt-4o-mini", messages=messages)
            client.chat.completions.create(
                model="gpt-4o-mini",
                messages=messages,
                tools=[{"type": "function", "function": {"name": "lookup_order"}}],
            )
    finally:
        instrumentor.uninstrument()
        # The logs first: they wait for their spans, which come after.
        assert logger_provider.force_flush(10_000)
        assert tracer_provider.force_flush(10_000)
        assert meter_provider.force_flush(10_000)
        logger_provider.shutdown()
        tracer_provider.shutdown()
        meter_provider.shutdown()

    for signal, names in results.items():
        assert names and set(names) == {"SUCCESS"}, (signal, names)
    with root_client(service.base_url, key) as client:
        listing = client.get(
            "/v1/traces", params={"project_id": project_id, "from": "2000-01-01T00:00:00Z"}
        ).json()["data"]
        traces = [client.get(f"/v1/traces/{t['id']}").json() for t in listing]
    assert len(traces) == 2
    plain, tool_call = [t["spans"][0] for t in sorted(traces, key=lambda t: t["started_at"])]
    for found in (plain, tool_call):
        assert found["kind"] == "llm" and found["model"] == MODEL
        assert (found["input_tokens"], found["output_tokens"]) == (12, 5)
        assert found["attributes"]["tracetui.logs"], found["attributes"]
        # Nothing on the span itself: the messages came only as log events.
        assert "Hello?" not in str(
            {k: v for k, v in found["attributes"].items() if k != "tracetui.logs"}
        )
    said = conversation(plain["attributes"], {}, plain["kind"])
    assert said is not None and "OTel GenAI (log events)" in said.conventions
    assert [m.role for m in said.input] == ["user"] and [m.role for m in said.output] == [
        "assistant"
    ]
    text = conversation_text(said)
    assert text.count("Hello?") == 1 and text.count("Hi there") == 1
    asked = conversation(tool_call["attributes"], {}, tool_call["kind"])
    assert asked is not None
    (call,) = [p for m in asked.output for p in m.parts if isinstance(p, ToolCall)]
    assert call.name == "lookup_order" and call.arguments == {"order_id": 48213}
