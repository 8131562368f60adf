"""The shapes of the service's answers, as pydantic models: what /v1/openapi.json documents.

The routes declare them (`response_model=`) and answer with the JSON that schemas.py builds,
as a Response: FastAPI does not validate an answer that is already a Response, so a listing of
500 traces or a trace of 50,000 spans is not validated and re-encoded on its way out. That the
answers keep to these shapes is what tests/service/test_openapi_fuzz.py checks. A field that is
sometimes absent (not null) has a default here, so that it is not required.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Timestamp = str  # ISO 8601 in UTC with milliseconds, e.g. 2026-11-21T09:30:00.000Z


class FieldError(BaseModel):
    field: str = Field(description="The field at fault (a dotted path), or `body`.")
    message: str


class ErrorDetail(BaseModel):
    status: int
    code: str = Field(description="Machine-readable, e.g. `not_found`, `invalid_cursor`.")
    message: str
    details: list[FieldError]


class ErrorBody(BaseModel):
    """Every answer that is not a success."""

    error: ErrorDetail


ERRORS: dict[int | str, dict[str, Any]] = {
    "default": {"model": ErrorBody, "description": "An error (every status but success)"}
}


class Project(BaseModel):
    id: str
    name: str
    description: str | None
    retention_days: int
    created_at: Timestamp


class ProjectList(BaseModel):
    data: list[Project]


class ProjectChanged(Project):
    """Extension: the project as changed (or, with dry_run, as it would be)."""

    traces_to_delete: int = Field(
        description="Stored traces outside a shortened retention, which the retention sweep"
        " deletes (0 when the retention is not shortened)."
    )


class ApiKey(BaseModel):
    """Extension: an API key's metadata; never the key."""

    id: str = Field(description="`key_` and 12 hex digits: what DELETE takes.")
    label: str
    prefix: str = Field(description="The key's first 10 characters, e.g. `tt_pk_ab12`.")
    project_id: str | None = Field(description="null for a workspace key.")
    created_at: Timestamp
    last_used_at: Timestamp | None = Field(description="Noted to the minute; null: never used.")


class NewApiKey(ApiKey):
    key: str = Field(description="The key itself: in this answer only, never again.")


class ApiKeyList(BaseModel):
    data: list[ApiKey]


class RotatedSecret(BaseModel):
    """Extension: an alert's new webhook signing secret, in this answer only."""

    secret: str
    previous_valid_until: Timestamp = Field(
        description="Until then every webhook carries signatures by the new and the previous"
        " secret (24 hours)."
    )


class ModelUsage(BaseModel):
    cost_usd: float
    tokens: int


class Trace(BaseModel):
    """A trace as listed: its totals, without its spans."""

    id: str
    project_id: str
    name: str
    started_at: Timestamp
    ended_at: Timestamp
    duration_ms: int
    status: str
    span_count: int
    error_count: int
    input_tokens: int
    output_tokens: int
    total_tokens: int
    total_cost_usd: float
    input_preview: str | None = Field(
        default=None, description="Extension: what the user asked, on one line (when known)."
    )
    models: dict[str, ModelUsage] | None = Field(
        default=None, description="Extension, with `include=models`: cost and tokens by model."
    )
    user_id: str | None = Field(
        default=None, description="Extension: the trace's user, as its spans name it."
    )
    session_id: str | None = Field(
        default=None, description="Extension: the trace's session (a conversation)."
    )
    tags: list[str] = Field(default=[], description="Extension: the tags of its spans.")
    output_preview: str | None = Field(
        default=None,
        description="Extension: the answer, on one line (the root's output, else the last"
        " LLM span's).",
    )
    unpriced_spans: int = Field(
        default=0,
        description="Extension: its spans whose model has no price (total_cost_usd leaves"
        " them out); 0 for traces stored before the count was kept.",
    )
    annotations: Annotations = Field(
        default={},
        description="Extension: its annotations and its spans', by name ({} for none).",
    )


class AnnotationSummary(BaseModel):
    """Extension: one name's annotations on a trace (its own and its spans') or a span."""

    label: str | None = Field(description="The latest annotation's label.")
    score: float | None = Field(description="The latest annotation's score.")
    count: int = Field(description="How many annotations of this name.")
    updated_at: Timestamp = Field(description="When the latest was written.")


Annotations = dict[str, AnnotationSummary]


class TraceList(BaseModel):
    data: list[Trace]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page.")
    has_more: bool


class Session(BaseModel):
    """Extension: a session (a conversation over several traces) of a project."""

    id: str = Field(description="The session id its traces carry.")
    user_id: str | None = Field(description="The user of its most recent trace.")
    first_seen: Timestamp = Field(description="The start of its first trace (as listed).")
    last_seen: Timestamp = Field(description="The start of its last trace (as listed).")
    trace_count: int
    total_tokens: int
    total_cost_usd: float | None
    error_count: int = Field(description="Its traces with an error.")


class SessionList(BaseModel):
    data: list[Session]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page.")
    has_more: bool


class User(BaseModel):
    """Extension: a user of a project, as its traces name it."""

    id: str
    first_seen: Timestamp
    last_seen: Timestamp
    trace_count: int
    session_count: int
    total_tokens: int
    total_cost_usd: float | None
    error_count: int


class UserList(BaseModel):
    data: list[User]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page.")
    has_more: bool


class Span(BaseModel):
    id: str
    trace_id: str
    parent_id: str | None
    name: str
    kind: str
    model: str | None
    started_at: Timestamp
    ended_at: Timestamp
    duration_ms: int
    status: str
    error_message: str | None
    input_tokens: int
    output_tokens: int
    cost_usd: float
    attributes: dict[str, Any]
    annotations: Annotations = Field(
        default={},
        description="Extension: the span's own annotations by name; absent when it has none"
        " (a big trace's spans stay in the spec's shape).",
    )


class TraceWithSpans(Trace):
    """One trace: its attributes and all its spans, by start time."""

    attributes: dict[str, Any]
    spans: list[Span]


class SpanList(BaseModel):
    data: list[Span]


class Alert(BaseModel):
    id: str
    project_id: str
    name: str
    metric: str
    condition: Literal["gt", "gte", "lt", "lte"]
    threshold: float
    webhook_url: str
    created_at: Timestamp
    state: Literal["ok", "firing", "no_data"]
    last_value: float | None
    last_evaluated_at: Timestamp | None
    firing_since: Timestamp | None
    webhook_secret: str | None = Field(
        default=None,
        description="The secret webhooks are signed with: in the answer to the creation only.",
    )
    paused: bool = Field(description="Extension: not evaluated while paused.")
    muted_until: Timestamp | None = Field(
        description="Extension: transitions are recorded but no webhook is sent before then."
    )


class AlertList(BaseModel):
    data: list[Alert]


class StateChange(BaseModel):
    id: str
    kind: Literal["state"]
    at: Timestamp
    from_: str | None = Field(alias="from")
    to: str | None
    value: float | None
    window_start: Timestamp | None
    window_end: Timestamp | None


class DeliveryAttempt(BaseModel):
    id: str
    kind: Literal["delivery"]
    at: Timestamp
    event_type: str | None
    webhook_id: str | None
    attempt: int | None
    status_code: int | None
    error: str | None
    duration_ms: int | None
    ok: bool


class AlertEventList(BaseModel):
    data: list[StateChange | DeliveryAttempt]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page.")
    has_more: bool


class AnnotationValues(BaseModel):
    label: str | None
    score: float | None
    explanation: str | None


class Annotation(BaseModel):
    """Extension: a score, label or note on a trace, a span or a session (Phoenix's record)."""

    id: str
    project_id: str
    trace_id: str | None = Field(description="The trace annotated, or whose span is.")
    span_id: str | None = Field(description="The span annotated (with its trace_id).")
    session_id: str | None = Field(description="The session annotated (alone).")
    name: str
    label: str | None
    score: float | None
    explanation: str | None = Field(description="A note's body for the name `note`.")
    annotator_kind: Literal["HUMAN", "LLM", "CODE"]
    identifier: str | None
    author: str = Field(description="The label of the key that wrote it last.")
    metadata: dict[str, Any]
    created_at: Timestamp
    updated_at: Timestamp
    result: AnnotationValues = Field(
        description="label, score and explanation, as Phoenix has them."
    )


class AnnotationsStored(BaseModel):
    """Extension: the batch's annotations as stored, in the order sent."""

    data: list[Annotation]


class AnnotationList(BaseModel):
    data: list[Annotation]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page.")
    has_more: bool


class QueuedWebhook(BaseModel):
    """The test event queued for delivery."""

    webhook_id: str


# OTLP's ExportTraceServiceResponse in JSON (OTLP names its fields in camelCase): written out,
# as the route documents a protobuf and a JSON body side by side.
EXPORT_RESPONSE_JSON: dict[str, Any] = {
    "title": "ExportTraceServiceResponse",
    "type": "object",
    "properties": {
        "partialSuccess": {
            "type": "object",
            "description": "Set when spans were refused: how many, and why.",
            "properties": {
                "rejectedSpans": {"type": "string", "description": "A count, as OTLP/JSON's"},
                "errorMessage": {"type": "string"},
            },
        }
    },
}
