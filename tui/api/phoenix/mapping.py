"""Phoenix's REST records in the app's own: its spans (`GET /v1/projects/{id}/spans`) and trace
rows (`GET /v1/projects/{id}/traces`) become the tolerant Span and Trace of tui/api/models.py,
so the tree, the conversation and the lists read them as they read the spec's.

Phoenix sends a span's attributes flattened in OpenInference form (`llm.input_messages.0.
message.content`) but takes `openinference.span.kind` out of them into `span_kind`: it is put
back, as the conversation's readers (tui/model/chat/openinference.py) look for it there. Its
ids are the OpenTelemetry ones (hex); its own GlobalIDs (`id`) are kept in `phoenix_id`.

A trace can hold 10,000 spans: each is read by the fast reader
(tui/api/readers.py: a strict schema, no aliases) once its fields are in the spec's spelling,
and by the tolerant model only when a value does not fit it (the same record either way).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tui.api.models import Span, Trace
from tui.api.readers import fast_span

KIND_ATTRIBUTE = "openinference.span.kind"
MODEL_ATTRIBUTES = ("llm.model_name", "embedding.model_name", "reranker.model_name")
PROMPT_TOKENS = "llm.token_count.prompt"
COMPLETION_TOKENS = "llm.token_count.completion"


def span_fields(item: Mapping[str, Any]) -> dict[str, Any]:
    """A Phoenix span as the fields of the app's Span (the values as Phoenix sent them: the
    model's lenient readers turn them into numbers, times and lower-case kinds)."""
    context = item.get("context")
    context = context if isinstance(context, Mapping) else {}
    attributes = item.get("attributes")
    # The item is the client's own, just parsed: its attributes are completed in place.
    attributes = attributes if isinstance(attributes, dict) else {}
    kind = item.get("span_kind")
    if isinstance(kind, str) and kind and KIND_ATTRIBUTE not in attributes:
        attributes[KIND_ATTRIBUTE] = kind
    fields: dict[str, Any] = {
        "id": context.get("span_id"),
        "trace_id": context.get("trace_id"),
        "parent_id": item.get("parent_id"),
        "name": item.get("name"),
        "kind": kind,
        "started_at": item.get("start_time"),
        "ended_at": item.get("end_time"),
        "status": item.get("status_code"),
        "model": next((attributes[a] for a in MODEL_ATTRIBUTES if attributes.get(a)), None),
        "input_tokens": attributes.get(PROMPT_TOKENS),
        "output_tokens": attributes.get(COMPLETION_TOKENS),
        "attributes": attributes,
        "phoenix_id": item.get("id"),
    }
    message = item.get("status_message") or _exception_message(item.get("events"))
    if message:
        fields["error_message"] = message
    return fields


def _exception_message(events: Any) -> str | None:
    """The message of a span's first `exception` event, if it has one."""
    for event in events if isinstance(events, list) else ():
        if isinstance(event, Mapping) and event.get("name") == "exception":
            attributes = event.get("attributes")
            if isinstance(attributes, Mapping):
                message = attributes.get("exception.message") or attributes.get("exception.type")
                if message:
                    return str(message)
    return None


def read_span(item: Any) -> Span | None:
    """A Phoenix span as the app's Span; None for an item that is not a span object."""
    if not isinstance(item, Mapping):
        return None
    fields = span_fields(item)
    phoenix_id = fields.pop("phoenix_id")
    span = fast_span(fields)
    if span is None:
        fields["phoenix_id"] = phoenix_id
        return Span.model_validate(fields)
    if phoenix_id is not None:
        # The strict schema keeps no unknown field: Phoenix's GlobalID is added as the tolerant
        # model keeps one (an extra, shown with the span's other fields).
        span.__pydantic_extra__ = {"phoenix_id": phoenix_id}
    return span


def trace_row_fields(item: Mapping[str, Any]) -> dict[str, Any]:
    """A row of Phoenix's trace list as the fields of the app's Trace. With `include_spans`,
    the row's span summaries give its name (the root span's), span and error counts."""
    fields: dict[str, Any] = {
        "id": item.get("trace_id"),
        "project_id": item.get("project_id"),
        "started_at": item.get("start_time"),
        "ended_at": item.get("end_time"),
        "input_tokens": item.get("token_count_prompt"),
        "output_tokens": item.get("token_count_completion"),
        "total_tokens": item.get("token_count_total"),
        "phoenix_id": item.get("id"),
    }
    spans = item.get("spans")
    if isinstance(spans, list):
        summaries = [span for span in spans if isinstance(span, Mapping)]
        root = next((span for span in summaries if not span.get("parent_id")), None)
        if root is not None:
            fields["name"] = root.get("name")
        fields["span_count"] = len(summaries)
        fields["error_count"] = sum(1 for span in summaries if _is_error(span.get("status_code")))
    return fields


def _is_error(status: Any) -> bool:
    return isinstance(status, str) and status.upper() == "ERROR"


def read_trace_row(item: Any) -> Trace | None:
    if not isinstance(item, Mapping):
        return None
    return Trace.model_validate(trace_row_fields(item))


def trace_from_spans(
    trace_id: str, project_id: str | None, spans: Iterable[Span], cost_usd: float | None
) -> Trace:
    """A whole trace made from its spans (Phoenix has no endpoint for one trace): the root's
    name, the earliest start and latest end, the LLM spans' tokens, and the cost Phoenix
    computed (GraphQL), when it has one."""
    spans = list(spans)
    root = next((s for s in spans if not s.parent_id), spans[0] if spans else None)
    starts = [s.started_at for s in spans if s.started_at is not None]
    ends = [s.ended_at for s in spans if s.ended_at is not None]
    llm = [s for s in spans if s.kind == "llm"]
    trace = Trace.model_validate(
        {
            "id": trace_id,
            "project_id": project_id,
            "name": root.name if root else None,
            "started_at": min(starts) if starts else None,
            "ended_at": max(ends) if ends else None,
            "span_count": len(spans),
            "error_count": sum(1 for s in spans if s.is_error),
            "input_tokens": _total(s.input_tokens for s in llm),
            "output_tokens": _total(s.output_tokens for s in llm),
            "total_cost_usd": cost_usd,
        }
    )
    trace.spans = spans
    return trace


def _total(values: Iterable[int | None]) -> int | None:
    known = [value for value in values if value is not None]
    return sum(known) if known else None
