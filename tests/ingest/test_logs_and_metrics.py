"""POST /v1/logs and /v1/metrics: OTLP logs and metrics in protobuf and JSON, answered as OTLP
does. GenAI log events join their span whichever arrives first, on both stores, and the span's
conversation shows them; metrics are accepted and dropped; records that cannot be read are
refused and counted."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from tests.support.otlp import (
    JSON,
    PROTOBUF,
    any_value,
    kv,
    new_project,
    new_span_id,
    new_trace_id,
    post,
    request,
    root_client,
    span,
)
from tests.support.service import RunningService
from tui.model.chat import conversation, conversation_text


@pytest.fixture(scope="module")
def service(backend_service: RunningService) -> RunningService:
    return backend_service


def log_record(
    trace_id: bytes, span_id: bytes, name: str, body: dict[str, Any], at_ns: int
) -> LogRecord:
    record = LogRecord(trace_id=trace_id, span_id=span_id, event_name=name)
    record.time_unix_nano = at_ns
    record.body.CopyFrom(any_value(body))
    record.attributes.append(kv("gen_ai.system", "openai"))
    return record


def logs_request(*records: LogRecord) -> ExportLogsServiceRequest:
    message = ExportLogsServiceRequest()
    resource_logs = message.resource_logs.add()
    resource_logs.resource.attributes.append(kv("service.name", "tests"))
    resource_logs.scope_logs.add().log_records.extend(records)
    return message


def post_logs(client: httpx.Client, message: ExportLogsServiceRequest) -> tuple[int, str]:
    """(rejected_log_records, error_message) of the protobuf answer."""
    answer = client.post("/v1/logs", content=message.SerializeToString(), headers=PROTOBUF)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "application/x-protobuf"
    parsed = ExportLogsServiceResponse.FromString(answer.content)
    return parsed.partial_success.rejected_log_records, parsed.partial_success.error_message


def chat_span(trace_id: bytes, span_id: bytes) -> Any:
    return span(
        trace_id,
        span_id,
        name="chat gpt-4o-mini",
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.usage.input_tokens": 12,
            "gen_ai.usage.output_tokens": 5,
        },
    )


def chat_logs(trace_id: bytes, span_id: bytes) -> ExportLogsServiceRequest:
    return logs_request(
        log_record(trace_id, span_id, "gen_ai.user.message", {"content": "Where is my order?"}, 1),
        log_record(
            trace_id,
            span_id,
            "gen_ai.choice",
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": "It shipped yesterday."},
            },
            2,
        ),
        # Not a GenAI event: accepted, not kept.
        log_record(trace_id, span_id, "app.debug", {"content": "cache miss"}, 3),
    )


def the_span(client: httpx.Client, trace_id: bytes) -> dict[str, Any]:
    answer = client.get(f"/v1/traces/{trace_id.hex()}")
    assert answer.status_code == 200, answer.text
    (found,) = answer.json()["spans"]
    return dict(found)


def shown(found: dict[str, Any]) -> str:
    read = conversation(found["attributes"], {}, found["kind"])
    assert read is not None
    return conversation_text(read)


@pytest.mark.parametrize("logs_first", [True, False], ids=["logs-first", "span-first"])
def test_genai_log_events_join_their_span_in_either_order(
    service: RunningService, logs_first: bool
) -> None:
    _, key = new_project(service)
    trace_id, span_id = new_trace_id(), new_span_id()
    with root_client(service.base_url, key) as client:
        if logs_first:
            assert post_logs(client, chat_logs(trace_id, span_id)) == (0, "")
        assert post(client, request(chat_span(trace_id, span_id))).status_code == 200
        if not logs_first:
            assert post_logs(client, chat_logs(trace_id, span_id)) == (0, "")
        # The span sent again (an exporter's retry) keeps its logs, once each.
        assert post(client, request(chat_span(trace_id, span_id))).status_code == 200
        found = the_span(client, trace_id)
    logs = found["attributes"]["tracetui.logs"]
    assert [log["name"] for log in logs] == ["gen_ai.user.message", "gen_ai.choice"]
    assert logs[0]["body"] == {"content": "Where is my order?"}
    text = shown(found)
    assert text.count("Where is my order?") == 1 and text.count("It shipped yesterday.") == 1
    assert (found["input_tokens"], found["output_tokens"]) == (12, 5)


def test_logs_in_json_and_refused_records(service: RunningService) -> None:
    _, key = new_project(service)
    trace_id, span_id = new_trace_id(), new_span_id()
    document = {
        "resourceLogs": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "t"}}]
                },
                "scopeLogs": [
                    {
                        "logRecords": [
                            {
                                "timeUnixNano": "1700000000000000000",
                                "eventName": "gen_ai.user.message",
                                "traceId": trace_id.hex(),
                                "spanId": span_id.hex(),
                                "body": {
                                    "kvlistValue": {
                                        "values": [
                                            {"key": "content", "value": {"stringValue": "Hi?"}}
                                        ]
                                    }
                                },
                            },
                            {"eventName": "gen_ai.choice", "traceId": "xyz", "spanId": "abc"},
                        ]
                    }
                ],
            }
        ]
    }
    with root_client(service.base_url, key) as client:
        answer = client.post("/v1/logs", content=json.dumps(document), headers=JSON)
        assert answer.status_code == 200, answer.text
        partial = answer.json()["partialSuccess"]
        assert partial["rejectedLogRecords"] == "1" and "traceId" in partial["errorMessage"]
        assert post(client, request(chat_span(trace_id, span_id))).status_code == 200
        assert "Hi?" in shown(the_span(client, trace_id))
        unreadable = client.post("/v1/logs", content=b"\x00not protobuf", headers=PROTOBUF)
        assert unreadable.status_code == 400
        assert (
            client.post(
                "/v1/logs", content=b"{}", headers={"Content-Type": "text/plain"}
            ).status_code
            == 415
        )
    anonymous = httpx.post(
        service.base_url.removesuffix("/v1") + "/v1/logs", content=b"{}", headers=JSON
    )
    assert anonymous.status_code == 401


def test_metrics_are_accepted_and_dropped(service: RunningService) -> None:
    _, key = new_project(service)
    message = ExportMetricsServiceRequest()
    metric = message.resource_metrics.add().scope_metrics.add().metrics.add()
    metric.name = "gen_ai.client.token.usage"
    metric.histogram.data_points.add(count=1, sum=17.0)
    with root_client(service.base_url, key) as client:
        answer = client.post("/v1/metrics", content=message.SerializeToString(), headers=PROTOBUF)
        assert answer.status_code == 200, answer.text
        assert (
            ExportMetricsServiceResponse.FromString(
                answer.content
            ).partial_success.rejected_data_points
            == 0
        )
        as_json = client.post("/v1/metrics", content=b'{"resourceMetrics": []}', headers=JSON)
        assert (as_json.status_code, as_json.json()) == (200, {})
        broken = client.post("/v1/metrics", content=b'{"resourceMetrics": 7}', headers=JSON)
        assert broken.status_code == 400
