"""One OTLP span, already unpacked from either encoding, to the row the store writes.

Rules for untrusted spans (each refused span is counted in the answer's partial success, with
the first reason): ids of the wrong length or all zeros, no start time, a start or end more than
a day ahead of the service's clock. An end before the start is a duration of 0. A name is cut
to 1,024 characters and a model to 256 (they are shown in every list); attributes are kept
whole and as sent, with span events and links under `tracetui.events` / `tracetui.links`.
A span naming itself as parent is kept as sent: the app shows it as a flagged root.

What the service adds to the attributes, under `tracetui.*` (the span's JSON keeps exactly the
spec's fields, which the app reads on its fast path): `tracetui.cost_source` ("reported",
"estimated" or "unknown_model") whenever a cost was reported or could be asked for, and
`tracetui.cache_read_tokens`, `tracetui.cache_write_tokens`, `tracetui.reasoning_tokens` when
the span reports them (under whichever convention's name). They are columns of the spans table
too, for queries.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec

from tui.server.ingest.conventions import display_name, facts
from tui.server.ingest.costs import PriceBook
from tui.server.store.rows import SpanRow

MAX_NAME = 1024
AHEAD_MS = 86_400_000  # clocks may be off; a day ahead is a bad clock or a forged time
STATUS_ERROR = 2
ZERO_TRACE = "0" * 32
ZERO_SPAN = "0" * 16

# Compact, and never NaN: attributes are spliced into answers as they are stored. msgspec's
# encoder writes the same compact UTF-8 JSON as json's with ensure_ascii=False, in a tenth of
# the time (a sixth of decoding a span went to json's); the decoders have turned non-finite
# numbers into strings already, and made every string sound UTF-8 (ingest/text_repair.py).
_encode = msgspec.json.Encoder().encode


def dumps(value: Any) -> str:
    return _encode(value).decode()


class Rejected(ValueError):
    """This span cannot be stored; the message says why (without quoting the span)."""


def non_finite(number: float) -> str:
    """NaN and the infinities as JavaScript spells them: JSON has no such numbers."""
    if math.isnan(number):
        return "NaN"
    return "Infinity" if number > 0 else "-Infinity"


def check_ids(trace_id: str, span_id: str, parent_id: str | None) -> None:
    if len(trace_id) != 32 or trace_id == ZERO_TRACE:
        raise Rejected("trace_id must be 16 bytes, not all zero")
    if len(span_id) != 16 or span_id == ZERO_SPAN:
        raise Rejected("span_id must be 8 bytes, not all zero")
    if parent_id is not None and len(parent_id) != 16:
        raise Rejected("parent_span_id must be empty or 8 bytes")


def exception_message(events: list[dict[str, Any]]) -> str | None:
    """`Type: message` of the first exception event, as OTel records exceptions."""
    for event in events:
        if event.get("name") == "exception":
            attributes = event.get("attributes") or {}
            kind = attributes.get("exception.type")
            message = attributes.get("exception.message")
            parts = [str(p) for p in (kind, message) if p not in (None, "")]
            if parts:
                return ": ".join(parts)
    return None


def span_row(
    trace_id: str,
    span_id: str,
    parent_id: str | None,
    name: str,
    start_ns: int,
    end_ns: int,
    status_code: int,
    status_message: str,
    attributes: dict[str, Any],
    events: list[dict[str, Any]],
    links: list[dict[str, Any]],
    prices: PriceBook,
    now_ms: int,
) -> SpanRow:
    """The stored span, from strings already made sound (ingest/text_repair.py)."""
    check_ids(trace_id, span_id, parent_id)
    if start_ns <= 0:
        raise Rejected("start_time_unix_nano is missing")
    start = start_ns // 1_000_000
    end = max(end_ns, start_ns) // 1_000_000
    if start > now_ms + AHEAD_MS or end > now_ms + AHEAD_MS:
        raise Rejected("start or end time is more than a day ahead of the service's clock")
    error: str | None = None
    status = "ok"
    if status_code == STATUS_ERROR:
        status = "error"
        error = status_message or exception_message(events) or None
    found = facts(attributes, prices)
    model = found.model
    if found.cost_source is not None:
        attributes["tracetui.cost_source"] = found.cost_source
    if found.cache_read_tokens:
        attributes["tracetui.cache_read_tokens"] = found.cache_read_tokens
    if found.cache_write_tokens:
        attributes["tracetui.cache_write_tokens"] = found.cache_write_tokens
    if found.reasoning_tokens:
        attributes["tracetui.reasoning_tokens"] = found.reasoning_tokens
    if events:
        attributes["tracetui.events"] = events
    if links:
        attributes["tracetui.links"] = links
    return SpanRow(
        trace_id,
        span_id,
        parent_id,
        display_name(name, attributes)[:MAX_NAME],
        found.kind,
        model,
        start,
        end - start,
        found.input_tokens,
        found.output_tokens,
        found.cost_usd,
        status,
        error,
        dumps(attributes),
        found.cost_source,
        found.cache_read_tokens,
        found.cache_write_tokens,
        found.reasoning_tokens,
    )
