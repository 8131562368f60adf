"""Building OTLP trace exports for tests: protobuf messages (opentelemetry-proto) and the OTLP
JSON encoding, and posting them to the local service."""

from __future__ import annotations

import json
import os
import time
import uuid
from typing import TYPE_CHECKING, Any

import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from tui.server.api_keys import new_api_key

if TYPE_CHECKING:
    from tests.support.service import RunningService

PROTOBUF = {"Content-Type": "application/x-protobuf"}
JSON = {"Content-Type": "application/json"}


def any_value(value: Any) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, bytes):
        return AnyValue(bytes_value=value)
    if isinstance(value, (list, tuple)):
        out = AnyValue()
        out.array_value.values.extend(any_value(v) for v in value)
        return out
    if isinstance(value, dict):
        out = AnyValue()
        out.kvlist_value.values.extend(kv(k, v) for k, v in value.items())
        return out
    return AnyValue(string_value=str(value))


def kv(key: str, value: Any) -> KeyValue:
    return KeyValue(key=key, value=any_value(value))


def new_trace_id() -> bytes:
    return os.urandom(16)


def new_span_id() -> bytes:
    return os.urandom(8)


def span(
    trace_id: bytes,
    span_id: bytes,
    parent: bytes = b"",
    name: str = "step",
    start_ms: int | None = None,
    duration_ms: int = 100,
    attributes: dict[str, Any] | None = None,
    error: str | None = None,
    events: list[tuple[str, dict[str, Any]]] = (),  # type: ignore[assignment]
) -> Span:
    start_ns = (start_ms if start_ms is not None else time.time_ns() // 1_000_000) * 1_000_000
    out = Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent,
        name=name,
        kind=Span.SPAN_KIND_CLIENT,
        start_time_unix_nano=start_ns,
        end_time_unix_nano=start_ns + duration_ms * 1_000_000,
        attributes=[kv(k, v) for k, v in (attributes or {}).items()],
    )
    if error is not None:
        out.status.CopyFrom(Status(code=Status.STATUS_CODE_ERROR, message=error))
    for event_name, event_attributes in events:
        event = out.events.add()
        event.name = event_name
        event.time_unix_nano = start_ns
        event.attributes.extend(kv(k, v) for k, v in event_attributes.items())
    return out


def request(*spans: Span, resource: dict[str, Any] | None = None) -> ExportTraceServiceRequest:
    message = ExportTraceServiceRequest()
    resource_spans = message.resource_spans.add()
    resource_spans.resource.attributes.extend(
        kv(k, v) for k, v in (resource or {"service.name": "tests"}).items()
    )
    scope_spans = resource_spans.scope_spans.add()
    scope_spans.scope.name = "tests"
    scope_spans.spans.extend(spans)
    return message


def post(
    client: httpx.Client, message: ExportTraceServiceRequest, **headers: str
) -> httpx.Response:
    return client.post(
        "/v1/traces", content=message.SerializeToString(), headers={**PROTOBUF, **headers}
    )


def post_json(client: httpx.Client, document: Any, **headers: str) -> httpx.Response:
    return client.post("/v1/traces", content=json.dumps(document), headers={**JSON, **headers})


def partial(response: httpx.Response) -> tuple[int, str]:
    """(rejected_spans, error_message) of a protobuf ExportTraceServiceResponse."""
    assert response.headers["content-type"] == "application/x-protobuf", response.text
    answer = ExportTraceServiceResponse.FromString(response.content)
    return answer.partial_success.rejected_spans, answer.partial_success.error_message


def root_client(base_url: str, key: str) -> httpx.Client:
    """A client at the service's root (OTLP's /v1/traces), with `key` as its bearer token."""
    return httpx.Client(
        base_url=base_url.removesuffix("/v1"),
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )


def new_project(service: RunningService, name: str | None = None) -> tuple[str, str]:
    """A fresh project and a key for it: tests that write never share a project."""
    project_id = f"proj_{uuid.uuid4().hex[:10]}"
    with service.store.transaction() as db:
        service.store.insert_project(db, name or project_id, None, 30, project_id=project_id)
    key = new_api_key("pk")
    service.store.add_key(key, project_id, "test")
    return project_id, key
