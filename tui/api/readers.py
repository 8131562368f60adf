"""Reading answers into records: the one fast span reader, and the tolerant models otherwise.

A trace can hold 100,000 spans: 4 MB of JSON for 10,000. The tolerant models cost about 20 µs a
span (aliases, validators), so spans written exactly in the spec's spelling with plain types are
read here by pydantic-core against a strict schema of exactly the spec's span fields (no aliases,
no validators); a little Python then does what the tolerant model does after validation (times
to UTC, status and kind normalised, duration or end derived). That schema serves one span's
dict (`read_span`) or bytes (`read_span_json`). A whole trace's bytes (`read_trace_fast`) are
checked against the same fields and types by msgspec (span_table.py), and its spans are made
into Span objects one by one, by `read_span_json`, only when asked for.

It is only ever a shortcut: whatever does not fit (another spelling, an unknown key, a number
where text belongs, a time that is not ISO 8601, NaN, invalid UTF-8, nesting deeper than the
parser allows, an envelope) is read by the tolerant models, so both paths must give the same
records. tests/client/test_fast_spans.py checks that they do.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, TypeVar

from pydantic_core import SchemaValidator, ValidationError, core_schema

from tui.api.deep_json import loads_with_depth_cut
from tui.api.models import (
    SPAN_LIST_KEYS,
    Record,
    Span,
    Trace,
    derive_span_fields,
    normal_status,
)

R = TypeVar("R", bound=Record)
NOT_FAST = object()


def _optional(schema: core_schema.CoreSchema) -> core_schema.ModelField:
    return core_schema.model_field(
        core_schema.with_default_schema(core_schema.nullable_schema(schema), default=None)
    )


_TEXT = core_schema.str_schema(strict=True)
_COUNT = core_schema.int_schema(strict=True)
_NUMBER = core_schema.float_schema(strict=True, allow_inf_nan=False)
_SPAN_SCHEMA = core_schema.model_schema(
    Span,
    core_schema.model_fields_schema(
        {
            "id": _optional(_TEXT),
            "trace_id": _optional(_TEXT),
            "parent_id": _optional(_TEXT),
            "name": _optional(_TEXT),
            "kind": _optional(_TEXT),
            "model": _optional(_TEXT),
            # Times stay text here and are read by `fast_time`, the same for both entry points.
            "started_at": _optional(_TEXT),
            "ended_at": _optional(_TEXT),
            "duration_ms": _optional(_NUMBER),
            "status": _optional(_TEXT),
            "error_message": _optional(_TEXT),
            "input_tokens": _optional(_COUNT),
            "output_tokens": _optional(_COUNT),
            "cost_usd": _optional(_NUMBER),
            "attributes": core_schema.model_field(
                core_schema.with_default_schema(core_schema.any_schema(), default=None)
            ),
            "annotations": core_schema.model_field(  # an extension: read where it is used
                core_schema.with_default_schema(core_schema.any_schema(), default=None)
            ),
        },
        extra_behavior="forbid",
    ),
)
_SPAN_VALIDATOR = SchemaValidator(_SPAN_SCHEMA)
# A trace of a list page, in the spec's spelling (the listing has no spans): a page is 500 of
# them, which the tolerant model reads in some 15 ms and this in about one.
_TRACE_VALIDATOR = SchemaValidator(
    core_schema.model_schema(
        Trace,
        core_schema.model_fields_schema(
            {
                "id": _optional(_TEXT),
                "project_id": _optional(_TEXT),
                "name": _optional(_TEXT),
                "started_at": _optional(_TEXT),
                "ended_at": _optional(_TEXT),
                "duration_ms": _optional(_NUMBER),
                "status": _optional(_TEXT),
                "error_message": _optional(_TEXT),
                "span_count": _optional(_COUNT),
                "error_count": _optional(_COUNT),
                "input_tokens": _optional(_COUNT),
                "output_tokens": _optional(_COUNT),
                "total_tokens": _optional(_COUNT),
                "total_cost_usd": _optional(_NUMBER),
                "attributes": core_schema.model_field(
                    core_schema.with_default_schema(core_schema.any_schema(), default=None)
                ),
                "input_preview": _optional(_TEXT),
                "output_preview": _optional(_TEXT),
                "user_id": _optional(_TEXT),
                "session_id": _optional(_TEXT),
                "tags": core_schema.model_field(
                    core_schema.with_default_schema(
                        core_schema.list_schema(_TEXT), default_factory=list
                    )
                ),
                "models": core_schema.model_field(  # an extension: read where it is used
                    core_schema.with_default_schema(core_schema.any_schema(), default=None)
                ),
                "unpriced_spans": _optional(_COUNT),  # an extension (the local service's)
                "annotations": core_schema.model_field(  # an extension: read where it is used
                    core_schema.with_default_schema(core_schema.any_schema(), default=None)
                ),
            },
            extra_behavior="forbid",
        ),
    )
)

_PLAIN_STATUS = frozenset(("ok", "error", "unset"))
# Kinds that derive_span_fields leaves as they are (it lower-cases and drops "span_kind_").
_PLAIN_KINDS = frozenset(
    [
        "llm",
        "tool",
        "agent",
        "chain",
        "retriever",
        "embedding",
        "span",
        "internal",
        "server",
        "client",
        "producer",
        "consumer",
        "generation",
        "event",
        "reranker",
        "guardrail",
    ]
)


def fast_time(value: Any) -> Any:
    """An ISO 8601 extended-form string as a UTC datetime; NOT_FAST if it needs the slow path."""
    if value is None:
        return None
    if type(value) is not str or len(value) < 19 or value[4] != "-" or value[10] not in "Tt ":
        return NOT_FAST
    try:
        parsed = datetime.fromisoformat(value)
        if parsed.tzinfo is None:
            return parsed.replace(tzinfo=timezone.utc)
        return parsed.astimezone(timezone.utc)
    except (ValueError, OverflowError):  # OverflowError: year 1 or 9999 moved to UTC
        return NOT_FAST


def _fast_times(values: dict[str, Any]) -> tuple[Any, Any] | None:
    """A record's started_at and ended_at read in place as UTC datetimes, and returned; None
    if one is not ISO 8601 (the tolerant model reads it)."""
    started, ended = values["started_at"], values["ended_at"]
    if started is not None:
        started = values["started_at"] = fast_time(started)
    if ended is not None:
        ended = values["ended_at"] = fast_time(ended)
    if started is NOT_FAST or ended is NOT_FAST:
        return None
    return started, ended


def _finish(span: Span) -> bool:
    """What the tolerant model does after validation, in place; False if a time is not ISO."""
    values = span.__dict__
    times = _fast_times(values)
    if times is None:
        return False
    ended = times[1]
    status, kind = values["status"], values["kind"]
    if status is not None and status not in _PLAIN_STATUS:
        status = values["status"] = normal_status(status)
    # derive_span_fields changes nothing for a span with an end, a duration, a lower-case kind
    # and a status: the common case, skipped because this runs for every span.
    if (
        ended is None
        or values["duration_ms"] is None
        or (kind and kind not in _PLAIN_KINDS)
        or (status is None and values["error_message"])
    ):
        derive_span_fields(values)
    return True


def fast_span(item: dict[str, Any]) -> Span | None:
    """One span in the spec's spelling, read directly; None if it needs the tolerant model."""
    try:
        span: Span = _SPAN_VALIDATOR.validate_python(item)
    except ValidationError:
        return None
    return span if _finish(span) else None


def fast_trace(item: dict[str, Any]) -> Trace | None:
    """One listed trace in the spec's spelling, read directly (what Trace's validators do after
    reading, done here); None if it needs the tolerant model."""
    try:
        trace: Trace = _TRACE_VALIDATOR.validate_python(item)
    except ValidationError:
        return None
    values = trace.__dict__
    values["spans"] = []
    times = _fast_times(values)
    if times is None:
        return None
    started, ended = times
    status = values["status"]
    if status is not None and status not in _PLAIN_STATUS:
        values["status"] = normal_status(status)
    # Trace._derive
    if values["duration_ms"] is None and started and ended:
        values["duration_ms"] = (ended - started).total_seconds() * 1000
    inputs, outputs = values["input_tokens"], values["output_tokens"]
    if values["total_tokens"] is None and inputs is not None and outputs is not None:
        values["total_tokens"] = inputs + outputs
    if values["status"] is None and values["error_count"]:
        values["status"] = "error"
    return trace


def read_span(item: dict[str, Any]) -> Span:
    """One span from a dict: directly when it is in the spec's spelling, else tolerantly."""
    return fast_span(item) or Span.model_validate(item)


def read_span_json(data: bytes) -> Span:
    """One span from its JSON, as the whole trace's reading would make it: directly when it is
    in the spec's spelling, else tolerantly (nesting too deep for json.loads is cut)."""
    try:
        span: Span = _SPAN_VALIDATOR.validate_json(data)
        if _finish(span):
            return span
    except ValueError:  # pydantic_core.ValidationError
        pass
    try:
        item = json.loads(data)
    except RecursionError:
        item = loads_with_depth_cut(data.decode("utf-8", "replace"))
    return read_span(item) if isinstance(item, dict) else Span()


def read_trace_fast(body: bytes) -> Trace | None:
    """The trace in `body` if it is written in the spec's spelling, else None. Its spans are a
    SpanTable: read for the tree's columns, made into Span objects only when asked for."""
    # Here, not at the top: msgspec and the decoders take 7 ms to load, which start-up (the
    # client loads before the project rows show) need not pay before a trace is opened.
    from tui.api.span_table import read_span_table

    read = read_span_table(body, read_span_json)
    if read is None:
        return None
    raw_fields, spans = read
    try:
        fields = {key: json.loads(bytes(raw)) for key, raw in raw_fields.items()}
    except RecursionError:
        return None
    if isinstance(fields.get("data"), dict) and "id" not in fields:
        return None  # an envelope ({"data": {...}}) is the tolerant path's business
    trace = Trace.model_validate(fields)
    trace.spans = spans
    return trace


def read_trace(body: dict[str, Any]) -> Trace:
    """A trace from a parsed body, with its spans (each dict on its own; anything else dropped)."""
    trace = Trace.model_validate(body)
    for key in SPAN_LIST_KEYS:
        if key in body:
            trace.spans = read_records(Span, body[key])[0]
            break
    return trace


def has_spans(body: dict[str, Any]) -> bool:
    """Whether a trace's body holds its spans (else they are fetched from /spans)."""
    return any(key in body for key in SPAN_LIST_KEYS)


def read_records(model: type[R], items: Any) -> tuple[list[R], int]:
    """(records, how many items were not objects and were dropped), each dict on its own."""
    if not isinstance(items, list):
        return [], 0
    if model is Span:
        records: list[Any] = [read_span(item) for item in items if isinstance(item, dict)]
    elif model is Trace:
        records = [
            fast_trace(item) or Trace.model_validate(item)
            for item in items
            if isinstance(item, dict)
        ]
    else:
        records = [model.model_validate(item) for item in items if isinstance(item, dict)]
    return records, len(items) - len(records)
