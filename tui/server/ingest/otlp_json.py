"""`application/json` bodies: the OTLP JSON encoding of ExportTraceServiceRequest, to groups.

Read straight from the parsed document rather than through protobuf's json_format, which reads
ids as base64 where OTLP JSON has hex. The OTLP JSON rules: field names in lowerCamelCase (the
snake_case names are read too), trace and span ids as hex of any case (base64 of the right
length is read too, as some emitters send it), 64-bit integers as strings or numbers, enums as
integers or their names, AnyValue with arrayValue, kvlistValue and bytesValue (base64).

A body whose structure is wrong (not an object, resourceSpans not a list...) is unreadable (400);
a span with wrong fields is refused alone and counted. Lone surrogates and NUL in its strings
are repaired as the body is parsed (text_repair.load_json).
"""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any

from tui.server.ingest.bounds import check_json, check_json_items
from tui.server.ingest.costs import PriceBook
from tui.server.ingest.spans import Rejected, dumps, non_finite, span_row
from tui.server.ingest.text_repair import load_json
from tui.server.ingest.types import Decoded, Draft, Unreadable, project_hint

STATUS_CODES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}


def get(obj: dict[str, Any], camel: str, snake: str) -> Any:
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


def items(obj: dict[str, Any], camel: str, snake: str, where: str) -> list[Any]:
    """A repeated field: absent is empty; anything but a list makes the body unreadable."""
    value = get(obj, camel, snake)
    if value is None:
        return []
    if not isinstance(value, list):
        raise Unreadable(f"{where}.{camel} must be a list.")
    return value


def integer(value: Any, field: str) -> int:
    """An int64 / fixed64 as OTLP JSON sends it: a number or a decimal string."""
    if type(value) is int:
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    elif isinstance(value, float) and value.is_integer():
        return int(value)
    raise Rejected(f"{field} must be an integer or a decimal string")


def span_id_of(value: Any, size: int, field: str) -> str:
    """Hex of `size` bytes from hex (any case) or base64; empty string if absent."""
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        raise Rejected(f"{field} must be a hex string")
    if len(value) == 2 * size:
        try:
            return bytes.fromhex(value).hex()
        except ValueError:
            pass
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise Rejected(f"{field} must be {size} bytes of hex") from None
    if len(raw) != size:
        raise Rejected(f"{field} must be {size} bytes of hex")
    return raw.hex()


def value_of(value: Any) -> Any:
    """An OTLP JSON AnyValue as JSON-ready Python."""
    if not isinstance(value, dict):
        raise Rejected("an attribute value must be an AnyValue object")
    for key, item in value.items():
        if key in ("stringValue", "string_value"):
            if not isinstance(item, str):
                raise Rejected("stringValue must be a string")
            return item
        if key in ("intValue", "int_value"):
            return integer(item, "intValue")
        if key in ("doubleValue", "double_value"):
            if isinstance(item, bool) or not isinstance(item, (int, float, str)):
                raise Rejected("doubleValue must be a number")
            try:
                number = float(item)
            except ValueError:
                raise Rejected("doubleValue must be a number") from None
            return number if math.isfinite(number) else non_finite(number)
        if key in ("boolValue", "bool_value"):
            if not isinstance(item, bool):
                raise Rejected("boolValue must be true or false")
            return item
        if key in ("arrayValue", "array_value"):
            values = item.get("values") if isinstance(item, dict) else None
            if not isinstance(values, list):
                return [] if values is None and isinstance(item, dict) else _bad(key)
            return [value_of(v) for v in values]
        if key in ("kvlistValue", "kvlist_value"):
            values = item.get("values") if isinstance(item, dict) else None
            if not isinstance(values, list):
                return {} if values is None and isinstance(item, dict) else _bad(key)
            return attributes_of(values)
        if key in ("bytesValue", "bytes_value"):
            if not isinstance(item, str):
                raise Rejected("bytesValue must be base64 text")
            return item
    return None  # an empty AnyValue


def _bad(key: str) -> Any:
    raise Rejected(f"{key} must be an object with a list of values")


def attributes_of(pairs: Any) -> dict[str, Any]:
    if not isinstance(pairs, list):
        raise Rejected("attributes must be a list of key-value objects")
    out: dict[str, Any] = {}
    for pair in pairs:
        if not isinstance(pair, dict) or not isinstance(pair.get("key"), str):
            raise Rejected("each attribute must have a string key")
        out[pair["key"]] = value_of(pair.get("value"))
    return out


def _events(span: dict[str, Any]) -> list[dict[str, Any]]:
    events = []
    for event in items_or_reject(span, "events"):
        if not isinstance(event, dict):
            raise Rejected("events must be objects")
        name = event.get("name", "")
        events.append(
            {
                "name": name if isinstance(name, str) else "",
                "time_unix_nano": integer(
                    get(event, "timeUnixNano", "time_unix_nano") or 0, "timeUnixNano"
                ),
                "attributes": attributes_of(event.get("attributes") or []),
            }
        )
    return events


def _links(span: dict[str, Any]) -> list[dict[str, Any]]:
    links = []
    for link in items_or_reject(span, "links"):
        if not isinstance(link, dict):
            raise Rejected("links must be objects")
        links.append(
            {
                "trace_id": span_id_of(get(link, "traceId", "trace_id"), 16, "links.traceId"),
                "span_id": span_id_of(get(link, "spanId", "span_id"), 8, "links.spanId"),
                "attributes": attributes_of(link.get("attributes") or []),
            }
        )
    return links


def items_or_reject(obj: dict[str, Any], name: str) -> list[Any]:
    value = obj.get(name)
    if value is None:
        return []
    if not isinstance(value, list):
        raise Rejected(f"{name} must be a list")
    return value


def status_of(span: dict[str, Any]) -> tuple[int, str]:
    status = span.get("status")
    if status is None:
        return 0, ""
    if not isinstance(status, dict):
        raise Rejected("status must be an object")
    code = status.get("code", 0)
    if isinstance(code, str) and code in STATUS_CODES:
        code = STATUS_CODES[code]
    code = integer(code, "status.code")
    message = status.get("message") or ""
    if not isinstance(message, str):
        raise Rejected("status.message must be a string")
    return code, message


def one_span(span: Any, prices: PriceBook, now_ms: int) -> Any:
    if not isinstance(span, dict):
        raise Rejected("a span must be an object")
    name = span.get("name", "")
    if not isinstance(name, str):
        raise Rejected("name must be a string")
    parent = span_id_of(get(span, "parentSpanId", "parent_span_id"), 8, "parentSpanId")
    code, message = status_of(span)
    return span_row(
        span_id_of(get(span, "traceId", "trace_id"), 16, "traceId"),
        span_id_of(get(span, "spanId", "span_id"), 8, "spanId"),
        parent or None,
        name,
        integer(get(span, "startTimeUnixNano", "start_time_unix_nano") or 0, "startTimeUnixNano"),
        integer(get(span, "endTimeUnixNano", "end_time_unix_nano") or 0, "endTimeUnixNano"),
        code,
        message,
        attributes_of(span.get("attributes") or []),
        _events(span),
        _links(span),
        prices,
        now_ms,
    )


def decode(body: bytes, prices: PriceBook, now_ms: int) -> Decoded:
    """Unreadable if `body` is not an OTLP JSON trace export, TooLarge if it holds too many
    spans or values (ingest.bounds); refused spans are counted."""
    check_json(body)
    try:
        document = load_json(body)
    except (ValueError, RecursionError) as error:
        raise Unreadable("The body is not valid JSON.") from error
    if not isinstance(document, dict):
        raise Unreadable("The body must be a JSON object (an ExportTraceServiceRequest).")
    groups = get(document, "resourceSpans", "resource_spans")
    check_json_items(groups, ("scopeSpans", "scope_spans"), ("spans", "spans"), "spans")
    decoded = Decoded()
    for n, resource_spans in enumerate(
        items(document, "resourceSpans", "resource_spans", "request")
    ):
        where = f"resourceSpans[{n}]"
        if not isinstance(resource_spans, dict):
            raise Unreadable(f"{where} must be an object.")
        resource_obj = resource_spans.get("resource") or {}
        try:
            if not isinstance(resource_obj, dict):
                raise Rejected("resource must be an object")
            resource = attributes_of(resource_obj.get("attributes") or [])
        except (Rejected, RecursionError):
            raise Unreadable(f"{where}.resource has malformed attributes.") from None
        rows = []
        for m, scope_spans in enumerate(items(resource_spans, "scopeSpans", "scope_spans", where)):
            if not isinstance(scope_spans, dict):
                raise Unreadable(f"{where}.scopeSpans[{m}] must be an object.")
            for span in items(scope_spans, "spans", "spans", f"{where}.scopeSpans[{m}]"):
                try:
                    rows.append(one_span(span, prices, now_ms))
                except Rejected as why:
                    decoded.refuse(str(why))
                except RecursionError:
                    decoded.refuse("attribute values are nested too deeply")
        if rows:
            hint = project_hint(resource)
            decoded.drafts.append(Draft(hint, dumps(resource), rows))
    return decoded
