"""OTLP logs and metrics bodies (`POST /v1/logs`, `/v1/metrics`), in protobuf or JSON.

Logs: the GenAI instrumentations may record a call's messages as log events rather than on its
span: `gen_ai.system.message`, `gen_ai.user.message`, `gen_ai.assistant.message`,
`gen_ai.tool.message` and `gen_ai.choice` (one per message, its content in the body), or one
`gen_ai.client.inference.operation.details` (the messages in its attributes). Each such record
that names its span (trace_id and span_id) becomes a SpanLog, stored beside the span and shown
in its conversation (store/logs.py joins them, whichever arrives first). Records of
other names, and GenAI records that name no span, are accepted and dropped: they belong to no
span this service shows. A record with a malformed id or attribute is refused and counted, as
a span is.

The event kept for a record is a span event's shape plus its body:
`{"name", "time_unix_nano", "attributes", "body"}`; the event name is the record's `event_name`,
else its `event.name` attribute (as SDKs before event_name sent it).

Metrics: read to check the body is an ExportMetricsServiceRequest (400 otherwise), then
dropped: the service keeps spans, not metric series.

Bad characters (lone surrogates, NUL) are repaired as in spans (ingest/text_repair.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from tui.server.ingest import otlp_json, otlp_proto
from tui.server.ingest.body import JSON
from tui.server.ingest.bounds import check_json, check_json_items, check_protobuf
from tui.server.ingest.spans import ZERO_SPAN, ZERO_TRACE, Rejected, dumps
from tui.server.ingest.text_repair import load_json, parse_protobuf, without_nul
from tui.server.ingest.types import Unreadable, project_hint
from tui.server.store.rows import LogGroup, SpanLog

GENAI_EVENT_PREFIX = "gen_ai."


@dataclass
class DecodedLogs:
    groups: list[LogGroup] = field(default_factory=list)
    rejected: int = 0
    first_reason: str | None = None

    def refuse(self, reason: str) -> None:
        self.rejected += 1
        if self.first_reason is None:
            self.first_reason = reason


def event_name_of(name: str, attributes: dict[str, Any]) -> str:
    if name:
        return name
    legacy = attributes.get("event.name")
    return legacy if isinstance(legacy, str) else ""


def span_log(
    trace_id: str,
    span_id: str,
    name: str,
    time_unix_nano: int,
    attributes: dict[str, Any],
    body: Any,
) -> SpanLog | None:
    """The SpanLog a record makes, or None when it is no GenAI event of a span."""
    name = event_name_of(name, attributes)
    if not name.startswith(GENAI_EVENT_PREFIX):
        return None
    if not trace_id or not span_id or trace_id == ZERO_TRACE or span_id == ZERO_SPAN:
        return None
    if len(trace_id) != 32 or len(span_id) != 16:
        raise Rejected("trace_id must be 16 bytes and span_id 8 bytes")
    event = {
        "name": name,
        "time_unix_nano": time_unix_nano,
        "attributes": attributes,
        "body": body,
    }
    return SpanLog(trace_id, span_id, time_unix_nano, dumps(event))


def decode_logs(media: str, body: bytes) -> DecodedLogs:
    """The GenAI span logs of an ExportLogsServiceRequest; Unreadable if it is none."""
    return _logs_from_json(body) if media == JSON else _logs_from_protobuf(body)


def _logs_from_protobuf(body: bytes) -> DecodedLogs:
    check_protobuf(body, ExportLogsServiceRequest, LogRecord.DESCRIPTOR, "log records")
    try:
        request = parse_protobuf(ExportLogsServiceRequest, body)
    except (DecodeError, RecursionError, ValueError) as error:
        raise Unreadable("The body is not an OTLP ExportLogsServiceRequest.") from error
    decoded = DecodedLogs()
    for resource_logs in request.resource_logs:
        resource = otlp_proto.attributes_of(resource_logs.resource.attributes)
        logs = []
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                try:
                    found = span_log(
                        record.trace_id.hex(),
                        record.span_id.hex(),
                        without_nul(record.event_name),
                        record.time_unix_nano or record.observed_time_unix_nano,
                        otlp_proto.attributes_of(record.attributes),
                        otlp_proto.value_of(record.body) if record.HasField("body") else None,
                    )
                except Rejected as why:
                    decoded.refuse(str(why))
                    continue
                if found is not None:
                    logs.append(found)
        if logs:
            decoded.groups.append(LogGroup(project_hint(resource), logs))
    return decoded


def _logs_from_json(body: bytes) -> DecodedLogs:
    document = _document(body, "ExportLogsServiceRequest")
    groups = otlp_json.get(document, "resourceLogs", "resource_logs")
    check_json_items(
        groups, ("scopeLogs", "scope_logs"), ("logRecords", "log_records"), "log records"
    )
    decoded = DecodedLogs()
    for n, resource_logs in enumerate(
        otlp_json.items(document, "resourceLogs", "resource_logs", "request")
    ):
        where = f"resourceLogs[{n}]"
        if not isinstance(resource_logs, dict):
            raise Unreadable(f"{where} must be an object.")
        resource_obj = resource_logs.get("resource") or {}
        try:
            if not isinstance(resource_obj, dict):
                raise Rejected("resource must be an object")
            resource = otlp_json.attributes_of(resource_obj.get("attributes") or [])
        except (Rejected, RecursionError):
            raise Unreadable(f"{where}.resource has malformed attributes.") from None
        logs = []
        for m, scope_logs in enumerate(
            otlp_json.items(resource_logs, "scopeLogs", "scope_logs", where)
        ):
            if not isinstance(scope_logs, dict):
                raise Unreadable(f"{where}.scopeLogs[{m}] must be an object.")
            records = otlp_json.items(scope_logs, "logRecords", "log_records", f"{where}.[{m}]")
            for record in records:
                try:
                    found = _json_record(record)
                except Rejected as why:
                    decoded.refuse(str(why))
                    continue
                except RecursionError:
                    decoded.refuse("attribute values are nested too deeply")
                    continue
                if found is not None:
                    logs.append(found)
        if logs:
            hint = project_hint(resource)
            decoded.groups.append(LogGroup(hint, logs))
    return decoded


def _json_record(record: Any) -> SpanLog | None:
    if not isinstance(record, dict):
        raise Rejected("a log record must be an object")
    get = otlp_json.get
    name = get(record, "eventName", "event_name") or ""
    if not isinstance(name, str):
        raise Rejected("eventName must be a string")
    time = get(record, "timeUnixNano", "time_unix_nano") or get(
        record, "observedTimeUnixNano", "observed_time_unix_nano"
    )
    body = record.get("body")
    return span_log(
        otlp_json.span_id_of(get(record, "traceId", "trace_id"), 16, "traceId"),
        otlp_json.span_id_of(get(record, "spanId", "span_id"), 8, "spanId"),
        name,
        otlp_json.integer(time or 0, "timeUnixNano"),
        otlp_json.attributes_of(record.get("attributes") or []),
        otlp_json.value_of(body) if body is not None else None,
    )


def check_metrics(media: str, body: bytes) -> None:
    """Unreadable unless `body` is an ExportMetricsServiceRequest (its data is not kept)."""
    if media == JSON:
        document = _document(body, "ExportMetricsServiceRequest")
        otlp_json.items(document, "resourceMetrics", "resource_metrics", "request")
        return
    check_protobuf(body, ExportMetricsServiceRequest, None, "metrics")
    try:
        parse_protobuf(ExportMetricsServiceRequest, body)
    except (DecodeError, RecursionError, ValueError) as error:
        raise Unreadable("The body is not an OTLP ExportMetricsServiceRequest.") from error


def _document(body: bytes, message: str) -> dict[str, Any]:
    check_json(body)
    try:
        document = load_json(body)
    except (ValueError, RecursionError) as error:
        raise Unreadable("The body is not valid JSON.") from error
    if not isinstance(document, dict):
        raise Unreadable(f"The body must be a JSON object (an {message}).")
    return document


def logs_answer(media: str, rejected: int, reason: str | None) -> bytes:
    """ExportLogsServiceResponse in the request's encoding (partial_success when refused)."""
    if media == JSON:
        if not rejected:
            return b"{}"
        partial = {"rejectedLogRecords": str(rejected), "errorMessage": reason or ""}
        return json.dumps({"partialSuccess": partial}).encode()
    response = ExportLogsServiceResponse()
    if rejected:
        response.partial_success.rejected_log_records = rejected
        response.partial_success.error_message = reason or ""
    return response.SerializeToString()


def metrics_answer(media: str) -> bytes:
    """ExportMetricsServiceResponse in the request's encoding: nothing refused."""
    return b"{}" if media == JSON else ExportMetricsServiceResponse().SerializeToString()
