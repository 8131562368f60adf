"""`application/x-protobuf` bodies: ExportTraceServiceRequest (opentelemetry-proto) to groups.

protobuf's upb backend parses 512 spans in well under a millisecond; what costs is Python per
span, so this file keeps it to one pass over each span's attributes. Strings that are not UTF-8
are repaired before (text_repair.parse_protobuf), and NUL is replaced as each string is read.
"""

from __future__ import annotations

import base64
import math
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tui.server.ingest.bounds import check_protobuf
from tui.server.ingest.costs import PriceBook
from tui.server.ingest.spans import Rejected, dumps, non_finite, span_row
from tui.server.ingest.text_repair import parse_protobuf, without_nul
from tui.server.ingest.types import Decoded, Draft, Unreadable, project_hint


def value_of(value: AnyValue) -> Any:
    """An AnyValue as JSON-ready Python: kvlists become objects, bytes base64 text, and
    non-finite doubles the strings "NaN", "Infinity", "-Infinity" (JSON has no such numbers)."""
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return without_nul(value.string_value)
    if kind == "int_value":
        return value.int_value
    if kind == "double_value":
        number = value.double_value
        return number if math.isfinite(number) else non_finite(number)
    if kind == "bool_value":
        return value.bool_value
    if kind == "array_value":
        return [value_of(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return attributes_of(value.kvlist_value.values)
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    return None


# The kinds read as they are: most attributes are strings or ints, read here without a call.
PLAIN = frozenset(("string_value", "int_value", "bool_value"))


def attributes_of(pairs: Any) -> dict[str, Any]:
    out = {}
    for pair in pairs:
        value = pair.value
        kind = value.WhichOneof("value")
        item = getattr(value, kind) if kind in PLAIN else value_of(value)
        if kind == "string_value" and "\x00" in item:
            item = without_nul(item)
        key = pair.key
        out[without_nul(key) if "\x00" in key else key] = item
    return out


def _events(span: Any) -> list[dict[str, Any]]:
    return [
        {
            "name": without_nul(event.name),
            "time_unix_nano": event.time_unix_nano,
            "attributes": attributes_of(event.attributes),
        }
        for event in span.events
    ]


def _links(span: Any) -> list[dict[str, Any]]:
    return [
        {
            "trace_id": link.trace_id.hex(),
            "span_id": link.span_id.hex(),
            "attributes": attributes_of(link.attributes),
        }
        for link in span.links
    ]


def decode(body: bytes, prices: PriceBook, now_ms: int) -> Decoded:
    """Unreadable if `body` is not an ExportTraceServiceRequest, TooLarge if it holds too
    many spans or values (ingest.bounds); refused spans are counted."""
    check_protobuf(body, ExportTraceServiceRequest, Span.DESCRIPTOR, "spans")
    try:
        request = parse_protobuf(ExportTraceServiceRequest, body)
    except (DecodeError, RecursionError, ValueError) as error:
        raise Unreadable("The body is not a protobuf ExportTraceServiceRequest.") from error
    decoded = Decoded()
    for resource_spans in request.resource_spans:
        resource = attributes_of(resource_spans.resource.attributes)
        rows = []
        decoded_attributes = []  # each row's, for the trace's preview (ingest.summaries)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                parent = span.parent_span_id
                attributes = attributes_of(span.attributes)
                try:
                    rows.append(
                        span_row(
                            span.trace_id.hex(),
                            span.span_id.hex(),
                            parent.hex() if parent else None,
                            without_nul(span.name),
                            span.start_time_unix_nano,
                            span.end_time_unix_nano,
                            span.status.code,
                            without_nul(span.status.message),
                            attributes,
                            _events(span) if span.events else [],
                            _links(span) if span.links else [],
                            prices,
                            now_ms,
                        )
                    )
                except Rejected as why:
                    decoded.refuse(str(why))
                    continue
                decoded_attributes.append(attributes)
        if rows:
            draft = Draft(project_hint(resource), dumps(resource), rows, None, decoded_attributes)
            decoded.drafts.append(draft)
    return decoded
