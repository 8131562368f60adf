"""The fast path for a whole trace in the spec's spelling: JSON bytes straight to Span objects.

A 10,000-span trace is 4 MB of JSON. json.loads followed by reading each span in Python took
2.5x as long as json.loads alone; pydantic-core can parse the bytes and build the Span instances
in one pass in Rust, against a schema of exactly the spec's span fields with plain, strict types
(no aliases, no validators), in about the time json.loads takes. A little Python then does what
the tolerant model does after validation (times to UTC, status and kind normalised, duration or
end derived).

It is only ever a shortcut: a body that does not fit (another spelling, an unknown key, a number
where text belongs, a time that is not ISO 8601, NaN, invalid UTF-8, nesting deeper than the
parser allows, an envelope) gives None, and the caller reads it the tolerant way, so both paths
must give the same trace. tests/unit/test_fast_spans.py checks that they do.
"""

from __future__ import annotations

from typing import Any

from pydantic_core import SchemaValidator, core_schema

from tui.api.models import NOT_FAST, Span, Trace, derive_span_fields, fast_time, normal_status


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
            # Times stay text here and are read below exactly as the tolerant path's fast
            # reader does, so both paths agree on every odd form.
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
        },
        extra_behavior="forbid",
    ),
)
# The trace's own fields are few and are read by the tolerant Trace model; only "spans" is typed.
_TRACE_VALIDATOR = SchemaValidator(
    core_schema.typed_dict_schema(
        {"spans": core_schema.typed_dict_field(core_schema.list_schema(_SPAN_SCHEMA))},
        extra_behavior="allow",
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


def _finish(span: Span) -> bool:
    """What the tolerant model does after validation, in place; False if a time is not ISO."""
    values = span.__dict__
    started, ended = values["started_at"], values["ended_at"]
    if started is not None:
        started = values["started_at"] = fast_time(started)
        if started is NOT_FAST:
            return False
    if ended is not None:
        ended = values["ended_at"] = fast_time(ended)
        if ended is NOT_FAST:
            return False
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


def read_trace_fast(body: bytes) -> Trace | None:
    """The trace in `body` if it is written in the spec's spelling, else None."""
    try:
        parsed: dict[str, Any] = _TRACE_VALIDATOR.validate_json(body)
    except ValueError:  # pydantic_core.ValidationError: not the spec's shape (or not JSON)
        return None
    if isinstance(parsed.get("data"), dict) and "id" not in parsed:
        return None  # an envelope: {"data": {...}} is the tolerant path's business
    spans: list[Span] = parsed.pop("spans")
    for span in spans:
        if not _finish(span):
            return None
    trace = Trace.model_validate(parsed)
    trace.spans = spans
    return trace
