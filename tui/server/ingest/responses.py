"""OTLP answers in the request's encoding: ExportTraceServiceResponse, or google.rpc.Status.

OTLP/HTTP wants the answer in the request's content type: a success is an
ExportTraceServiceResponse, whose partial_success says how many spans were refused and why
(left unset when none were); a failure is a google.rpc.Status. For JSON requests the failure is
the service's one error body (`{"error": {...}}`) with the Status fields `code` and `message`
beside it, so OTLP clients and this API's clients both read it.
"""

from __future__ import annotations

import json

from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from tui.server.http.errors import error_body
from tui.server.ingest.body import JSON, PROTOBUF

# HTTP status -> gRPC code, for google.rpc.Status.
GRPC_CODES = {
    400: 3,  # INVALID_ARGUMENT
    401: 16,  # UNAUTHENTICATED
    403: 7,  # PERMISSION_DENIED
    413: 8,  # RESOURCE_EXHAUSTED
    415: 3,
    429: 8,
    500: 13,  # INTERNAL
    503: 14,  # UNAVAILABLE
}


def success(media_type: str, rejected: int, reason: str | None) -> bytes:
    if media_type == JSON:
        if not rejected:
            return b"{}"
        partial = {"rejectedSpans": str(rejected), "errorMessage": reason or ""}
        return json.dumps({"partialSuccess": partial}).encode()
    response = ExportTraceServiceResponse()
    if rejected:
        response.partial_success.rejected_spans = rejected
        response.partial_success.error_message = reason or ""
    return response.SerializeToString()


def failure(media_type: str, status: int, code: str, message: str) -> bytes:
    grpc_code = GRPC_CODES.get(status, 2)  # 2: UNKNOWN
    if media_type == PROTOBUF:
        status_message: bytes = Status(code=grpc_code, message=message).SerializeToString()
        return status_message
    return json.dumps(
        {"code": grpc_code, "message": message, **error_body(status, code, message)}
    ).encode()


def answer_type(content_type: str | None) -> str:
    """The media type to answer in: protobuf for protobuf requests, else JSON (also for a
    content type this service refuses, so that the refusal is readable)."""
    kind = (content_type or "").split(";")[0].strip().lower()
    return PROTOBUF if kind in (PROTOBUF, "application/protobuf") else JSON
