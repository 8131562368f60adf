"""Tolerant pydantic v2 models of what a tracing server sends: traces, spans, projects, alerts.

Real servers differ in field names (`parent_id`, `parent_span_id`, `parentObservationId`), time
formats (ISO with `Z` or an offset, epoch seconds, milli-, micro- or nanoseconds), and number
encodings (numbers or numeric strings). Every field is optional and lenient: a value that cannot
be read becomes None instead of failing the record, and unknown fields are kept in `extras`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Annotated, Any

from pydantic import (
    AliasChoices,
    AliasPath,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SkipValidation,
    model_validator,
)

from tui.api.trace_filter import SORT_ORDERS as SORT_ORDERS
from tui.api.trace_filter import SPAN_CONDITIONS as SPAN_CONDITIONS
from tui.api.trace_filter import TRACE_SORTS as TRACE_SORTS
from tui.api.trace_filter import ScoreBound as ScoreBound
from tui.api.trace_filter import TraceFilter as TraceFilter
from tui.core.lenient import finite_number, to_datetime, to_float, to_int, to_str
from tui.core.secret import Secret, SecretLike

LStr = Annotated[str | None, BeforeValidator(to_str)]
LInt = Annotated[int | None, BeforeValidator(to_int)]
LFloat = Annotated[float | None, BeforeValidator(to_float)]
LTime = Annotated[datetime | None, BeforeValidator(to_datetime)]


def _to_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if value in (0, 1, "true", "false"):
        return value in (1, "true")
    return None


def _to_secret(value: Any) -> SecretLike | None:
    """A key or signing secret a server sent, wrapped at once: reprs, tracebacks' locals and
    `extras` never hold it as plain text."""
    if isinstance(value, str) and value:
        return Secret(value)
    return None


LBool = Annotated[bool | None, BeforeValidator(_to_bool)]


def _to_str_list(value: Any) -> list[str]:
    """Tags as a list of non-empty strings: a list (its strings and numbers), else none."""
    if not isinstance(value, (list, tuple)):
        return []
    return [text for item in value if (text := to_str(item))]


LTags = Annotated[list[str], BeforeValidator(_to_str_list)]
SecretValue = Annotated[Any, BeforeValidator(_to_secret)]  # a SecretLike or None


def aliases(*names: str | AliasPath) -> Any:
    return Field(default=None, validation_alias=AliasChoices(*names))


INPUT_TOKEN_NAMES: tuple[str | AliasPath, ...] = (
    "input_tokens",
    "prompt_tokens",
    "inputTokens",
    "promptTokens",
    AliasPath("usage", "input_tokens"),
    AliasPath("usage", "prompt_tokens"),
    AliasPath("usage", "input"),
    AliasPath("usage", "promptTokens"),
)
OUTPUT_TOKEN_NAMES: tuple[str | AliasPath, ...] = (
    "output_tokens",
    "completion_tokens",
    "outputTokens",
    "completionTokens",
    AliasPath("usage", "output_tokens"),
    AliasPath("usage", "completion_tokens"),
    AliasPath("usage", "output"),
    AliasPath("usage", "completionTokens"),
)


class Record(BaseModel):
    """Base of the tolerant records: unknown fields are kept, nothing is required."""

    # defer_build: each model's validator is built when first used, not at import (start-up)
    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=False, defer_build=True)

    @property
    def extras(self) -> dict[str, Any]:
        """Fields the server sent that the app has no name for (shown as they came)."""
        return dict(self.model_extra or {})


def normal_status(status: str) -> str:
    """ "ERROR", "STATUS_CODE_ERROR", "failed"... -> "error"; anything else lower-cased."""
    lowered = status.strip().lower().removeprefix("status_code_")
    return "error" if lowered in ("error", "failed", "failure", "exception") else lowered


def _status_and_error(data: dict[str, Any]) -> dict[str, Any]:
    """Normalise status forms: "ERROR", {"code": "STATUS_CODE_ERROR", "message": ...}, level."""
    status = None
    for key in ("status", "status_code", "statusCode", "level"):
        if key in data:
            status = data.pop(key)  # read here; kept only in its normalised form
            break
    error = None
    if isinstance(status, dict):
        error = status.get("message") or status.get("description")
        status = status.get("code") or status.get("status")
    if isinstance(status, (int, float)) and not isinstance(status, bool):
        status = {0: "unset", 1: "ok", 2: "error"}.get(int(status), str(status))
    data["_status"] = normal_status(status) if isinstance(status, str) else None
    if error and not data.get("error_message"):
        data["error_message"] = error
    raw_error = data.get("error")
    if isinstance(raw_error, dict) and not data.get("error_message"):
        data["error_message"] = raw_error.get("message") or raw_error.get("type")
    elif isinstance(raw_error, str) and not data.get("error_message"):
        data["error_message"] = raw_error
    return data


def _normal_fields(data: Any, drop: Iterable[str] = ()) -> Any:
    """What spans and traces read alike before validation: status forms, errors, durations in
    other units; the keys in `drop` left out."""
    if not isinstance(data, dict):
        return data
    data = _status_and_error(dict(data))
    for key in drop:
        data.pop(key, None)
    return _duration_from_units(data)


def _duration_from_units(data: dict[str, Any]) -> dict[str, Any]:
    """duration_ms from a duration given in other units, when no millisecond one was sent."""
    if any(k in data for k in ("duration_ms", "durationMs")):
        return data
    # Langfuse's `latency` is in seconds.
    for key, scale in (
        ("duration_ns", 1e-6),
        ("durationNano", 1e-6),
        ("duration_us", 1e-3),
        ("duration_s", 1e3),
        ("latency", 1e3),
    ):
        number = finite_number(data.get(key))
        if number is not None:
            data["duration_ms"] = number * scale
            break
    return data


class Span(Record):
    id: LStr = aliases("id", "span_id", "spanId", "spanID", "observation_id")
    trace_id: LStr = aliases("trace_id", "traceId", "traceID")
    parent_id: LStr = aliases(
        "parent_id",
        "parent_span_id",
        "parentSpanId",
        "parentSpanID",
        "parentObservationId",
        "parent_observation_id",
        "parentId",
        "parent",
    )
    name: LStr = aliases("name", "operation_name", "operationName", "span_name", "spanName")
    kind: LStr = aliases("kind", "span_kind", "spanKind", "type", "observation_type")
    model: LStr = aliases("model", "model_name", "modelName", "llm_model")
    started_at: LTime = aliases(
        "started_at",
        "start_time",
        "startTime",
        "start",
        "started",
        "timestamp",
        "start_time_unix_nano",
        "startTimeUnixNano",
    )
    ended_at: LTime = aliases(
        "ended_at",
        "end_time",
        "endTime",
        "end",
        "ended",
        "end_time_unix_nano",
        "endTimeUnixNano",
    )
    duration_ms: LFloat = aliases(
        "duration_ms", "durationMs", "duration_millis", "latency_ms", "duration"
    )
    status: LStr = aliases("_status")
    error_message: LStr = aliases(
        "error_message", "errorMessage", "status_message", "statusMessage", "exception"
    )
    input_tokens: LInt = aliases(*INPUT_TOKEN_NAMES)
    output_tokens: LInt = aliases(*OUTPUT_TOKEN_NAMES)
    cost_usd: LFloat = aliases(
        "cost_usd",
        "costUsd",
        "cost",
        "total_cost",
        "totalCost",
        "calculatedTotalCost",
        "total_cost_usd",
    )
    attributes: Any = aliases("attributes", "attrs", "metadata", "tags")
    # Beyond the spec (a server that keeps annotations): the span's own annotations by name,
    # {name: {label, score, count, updated_at}}; read where it is used (tui/model/annotations.py).
    annotations: Any = aliases("annotations")

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        return _normal_fields(data)

    @model_validator(mode="after")
    def _derive(self) -> Span:
        self.fill_derived()
        return self

    def fill_derived(self) -> None:
        values = {key: getattr(self, key) for key in _DERIVED}
        for key, value in derive_span_fields(dict(values)).items():
            if value != values[key]:
                setattr(self, key, value)

    @property
    def is_error(self) -> bool:
        return self.status == "error"


_DERIVED = ("duration_ms", "started_at", "ended_at", "kind", "status", "error_message")


def derive_span_fields(values: dict[str, Any]) -> dict[str, Any]:
    """Duration from start and end (or end from start and duration), kind, error status."""
    started, ended, duration = values["started_at"], values["ended_at"], values["duration_ms"]
    if duration is None and started and ended:
        values["duration_ms"] = (ended - started).total_seconds() * 1000
    elif ended is None and started and duration is not None:
        with contextlib.suppress(OverflowError):
            values["ended_at"] = started + timedelta(milliseconds=duration)
    if values["kind"]:
        values["kind"] = values["kind"].lower().removeprefix("span_kind_")
    if values["error_message"] and values["status"] is None:
        values["status"] = "error"
    return values


# Where a trace's body may hold its spans (Langfuse calls them observations).
SPAN_LIST_KEYS = ("spans", "observations")


class Trace(Record):
    id: LStr = aliases("id", "trace_id", "traceId", "traceID")
    project_id: LStr = aliases("project_id", "projectId")
    name: LStr = aliases("name", "root_name", "rootName", "operation_name")
    started_at: LTime = aliases("started_at", "start_time", "startTime", "timestamp", "start")
    ended_at: LTime = aliases("ended_at", "end_time", "endTime", "end")
    duration_ms: LFloat = aliases("duration_ms", "durationMs", "latency_ms", "duration")
    status: LStr = aliases("_status")
    error_message: LStr = aliases("error_message", "errorMessage")
    span_count: LInt = aliases(
        "span_count", "spanCount", "spans_count", "num_spans", "observationCount"
    )
    error_count: LInt = aliases("error_count", "errorCount", "errors")
    input_tokens: LInt = aliases(*INPUT_TOKEN_NAMES)
    output_tokens: LInt = aliases(*OUTPUT_TOKEN_NAMES)
    total_tokens: LInt = aliases("total_tokens", "totalTokens", AliasPath("usage", "total_tokens"))
    total_cost_usd: LFloat = aliases(
        "total_cost_usd",
        "totalCostUsd",
        "total_cost",
        "totalCost",
        "cost_usd",
        "cost",
    )
    attributes: Any = aliases("attributes", "attrs", "metadata", "tags")
    # A short preview of the trace's input, when the server makes one for its list rows; the
    # app also derives one from an `input` field (tui/model/chat/ trace_preview).
    input_preview: LStr = aliases("input_preview", "inputPreview", "preview")
    # The final answer in one line (root's output, else the last LLM span's), when the server
    # makes one; who and which conversation the trace belongs to, and its tags.
    output_preview: LStr = aliases("output_preview", "outputPreview")
    user_id: LStr = aliases("user_id", "userId")
    session_id: LStr = aliases("session_id", "sessionId")
    tags: LTags = Field(default_factory=list, validation_alias=AliasChoices("tags"))
    # Beyond the spec (the local service): how many of its spans have a model without a price,
    # so its total_cost_usd leaves them out. None from a server that does not count them.
    unpriced_spans: LInt = aliases("unpriced_spans", "unpricedSpans")
    # Beyond the spec, when asked for (`include=models`): cost and tokens by model, as the
    # server sent it; read tolerantly where it is used (tui/model/overview_stats.py).
    models: Any = aliases("models")
    # Beyond the spec (a server that keeps annotations): the trace's and its spans' annotations
    # by name, {name: {label, score, count, updated_at}} ({} when none; None from a server that
    # says nothing of them); read where it is used (tui/model/annotations.py).
    annotations: Any = aliases("annotations")
    # Set by tui/api/readers.py, which reads spans the fast way where it can; never validated.
    spans: SkipValidation[Sequence[Span]] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        # The spans are read by readers.read_trace, not here.
        return _normal_fields(data, drop=SPAN_LIST_KEYS)

    @model_validator(mode="after")
    def _derive(self) -> Trace:
        if self.duration_ms is None and self.started_at and self.ended_at:
            self.duration_ms = (self.ended_at - self.started_at).total_seconds() * 1000
        if (
            self.total_tokens is None
            and self.input_tokens is not None
            and self.output_tokens is not None
        ):
            self.total_tokens = self.input_tokens + self.output_tokens
        if self.status is None and self.error_count:
            self.status = "error"
        return self

    @property
    def is_error(self) -> bool:
        return self.status == "error" or bool(self.error_count)


class Session(Record):
    """A conversation of many traces (an extension some servers offer): who, when, how much."""

    id: LStr = aliases("id", "session_id", "sessionId")
    user_id: LStr = aliases("user_id", "userId")
    first_seen: LTime = aliases("first_seen", "firstSeen", "started_at", "start_time")
    last_seen: LTime = aliases("last_seen", "lastSeen", "ended_at", "end_time")
    trace_count: LInt = aliases("trace_count", "traceCount", "traces", "count")
    total_tokens: LInt = aliases("total_tokens", "totalTokens")
    total_cost_usd: LFloat = aliases("total_cost_usd", "totalCostUsd", "total_cost", "cost")
    error_count: LInt = aliases("error_count", "errorCount", "errors")


class Project(Record):
    id: LStr = aliases("id", "project_id", "projectId", "uuid", "slug")
    name: LStr = aliases("name", "display_name", "displayName", "title")
    description: LStr = aliases("description", "desc")
    retention_days: LInt = aliases("retention_days", "retentionDays", "retention")
    created_at: LTime = aliases("created_at", "createdAt", "created")


class Alert(Record):
    id: LStr = aliases("id", "alert_id", "alertId", "uuid")
    project_id: LStr = aliases("project_id", "projectId")
    name: LStr = aliases("name", "title")
    metric: LStr = aliases("metric", "metric_name", "metricName")
    condition: LStr = aliases("condition", "operator", "comparator", "op")
    threshold: LFloat = aliases("threshold", "value", "threshold_value")
    webhook_url: LStr = aliases("webhook_url", "webhookUrl", "webhook", "url")
    created_at: LTime = aliases("created_at", "createdAt", "created")
    enabled: Any = aliases("enabled", "active", "is_enabled")
    # Beyond the spec: the state a server that evaluates alerts reports (None: it does not).
    state: LStr = aliases("state", "status")
    last_value: LFloat = aliases("last_value", "lastValue", "current_value", "value_now")
    last_evaluated_at: LTime = aliases("last_evaluated_at", "lastEvaluatedAt", "evaluated_at")
    firing_since: LTime = aliases("firing_since", "firingSince", "triggered_at")
    # Beyond the spec, where a server offers them (tui/api/offers.py): paused alerts are not
    # evaluated; a muted one records its transitions but sends no webhook before `muted_until`.
    paused: LBool = aliases("paused", "is_paused")
    muted_until: LTime = aliases("muted_until", "mutedUntil")
    # In a create's answer only, and never shown by a repr: see SecretValue.
    webhook_secret: SecretValue = aliases("webhook_secret", "secret", "signing_secret")


class AlertEvent(Record):
    """An entry of an alert's history, from servers that keep one (an extension of the spec):
    a state change (kind "state") or a webhook delivery attempt (kind "delivery")."""

    id: LStr = aliases("id", "event_id")
    kind: LStr = aliases("kind", "type")
    at: LTime = aliases("at", "time", "timestamp", "created_at")
    from_state: LStr = aliases("from", "from_state", "previous_state")
    to_state: LStr = aliases("to", "to_state", "state")
    value: LFloat = aliases("value")
    event_type: LStr = aliases("event_type", "eventType")
    attempt: LInt = aliases("attempt")
    status_code: LInt = aliases("status_code", "statusCode", "status")
    error: LStr = aliases("error", "message")
    duration_ms: LFloat = aliases("duration_ms", "durationMs")
    ok: Any = aliases("ok", "success", "delivered")


class KeyInfo(Record):
    """An API key as a server lists it: never the key itself, only the first characters."""

    id: LStr = aliases("id", "key_id")
    label: LStr = aliases("label", "name")
    prefix: LStr = aliases("prefix", "key_prefix")
    project_id: LStr = aliases("project_id", "projectId")
    created_at: LTime = aliases("created_at", "createdAt", "created")
    last_used_at: LTime = aliases("last_used_at", "lastUsedAt", "last_used")
    # In the answer to a create only: shown once, in one dialog.
    key: SecretValue = aliases("key", "api_key", "secret")


class RotatedSecret(Record):
    """A webhook's new signing secret, and until when the previous one still signs too."""

    secret: SecretValue = aliases("secret", "webhook_secret")
    previous_valid_until: LTime = aliases("previous_valid_until", "previousValidUntil")


class ProjectChange(Record):
    """A project as changed (or, for a dry run, as it would be), and how many stored traces a
    shortened retention takes away."""

    project: SkipValidation[Project] = Field(default_factory=Project)
    traces_to_delete: LInt = aliases("traces_to_delete", "tracesToDelete")

    @model_validator(mode="before")
    @classmethod
    def _project_of(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            data["project"] = Project.model_validate(
                {k: v for k, v in data.items() if k not in ("traces_to_delete", "project")}
            )
        return data
