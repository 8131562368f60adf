"""Tolerant pydantic v2 models of what a tracing server sends: traces, spans, projects, alerts.

Real servers differ in field names (`parent_id`, `parent_span_id`, `parentObservationId`), time
formats (ISO with `Z` or an offset, epoch seconds, milli-, micro- or nanoseconds), and number
encodings (numbers or numeric strings). Every field is optional and lenient: a value that cannot
be read becomes None instead of failing the record, and unknown fields are kept in `extras`.
"""

from __future__ import annotations

import contextlib
import math
import re
from datetime import datetime, timedelta, timezone
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

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_ISO = re.compile(
    r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[Tt ](\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?"
    r"\s*(Z|z|UTC|[+-]\d{2}(?::?\d{2})?)?\s*$"
)


# -- lenient scalar readers ----------------------------------------------------------------------


def _finite(value: Any) -> float | None:
    """A finite float from a number or numeric string; bools, NaN and junk give None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip().replace("_", ""))
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def to_float(value: Any) -> float | None:
    return _finite(value)


def to_int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    number = _finite(value)
    if number is None or abs(number) > 2**63:
        return None
    return int(number)


def to_str(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def _from_epoch(number: float) -> datetime | None:
    """Epoch seconds, ms, µs or ns, told apart by magnitude (any date from 1973 to 5138)."""
    magnitude = abs(number)
    if magnitude < 1e11:
        seconds = number
    elif magnitude < 1e14:
        seconds = number / 1e3
    elif magnitude < 1e17:
        seconds = number / 1e6
    else:
        seconds = number / 1e9
    try:
        return _EPOCH + timedelta(seconds=seconds)
    except OverflowError:
        return None


def _from_iso(text: str) -> datetime | None:
    match = _ISO.match(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    micros = int((fraction or "0")[:6].ljust(6, "0"))
    tz = timezone.utc
    if zone and zone not in ("Z", "z", "UTC"):
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        tz = timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0)))
    try:
        return datetime(
            int(year),
            int(month),
            int(day),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            micros,
            tzinfo=tz,
        ).astimezone(timezone.utc)
    except (ValueError, OverflowError):
        return None


def to_datetime(value: Any) -> datetime | None:
    """A UTC datetime from ISO 8601 text or an epoch number in s/ms/µs/ns; None if unreadable."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    number = _finite(value)
    if number is not None:
        return _from_epoch(number)
    if isinstance(value, str):
        return _from_iso(value)
    return None


LStr = Annotated[str | None, BeforeValidator(to_str)]
LInt = Annotated[int | None, BeforeValidator(to_int)]
LFloat = Annotated[float | None, BeforeValidator(to_float)]
LTime = Annotated[datetime | None, BeforeValidator(to_datetime)]


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
        number = _finite(data.get(key))
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

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = _status_and_error(dict(data))
        return _duration_from_units(data)

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


def _records(model: type[Record], value: Any) -> list[Any]:
    """Each dict of a list parsed on its own; anything else in the list is dropped."""
    if not isinstance(value, list):
        return []
    if model is Span:
        return [read_span(item) for item in value if isinstance(item, dict)]
    return [model.model_validate(item) for item in value if isinstance(item, dict)]


# -- the fast path for spans ---------------------------------------------------------------------
# A trace can hold 50,000 spans, and the tolerant validation costs about 20 µs a span (pydantic's
# model_construct is no cheaper: it walks every alias). Spans written exactly in the spec's
# spelling, with plain types, are read here directly; anything else takes the tolerant path.
# A property test checks that both paths give the same span.

_SPAN_STR = ("id", "trace_id", "parent_id", "name", "kind", "model", "status", "error_message")
_SPAN_INT = ("input_tokens", "output_tokens")
_SPAN_FLOAT = ("duration_ms", "cost_usd")
_SPAN_TIME = ("started_at", "ended_at")
_SPAN_KEYS = frozenset((*_SPAN_STR, *_SPAN_INT, *_SPAN_FLOAT, *_SPAN_TIME, "attributes"))
NOT_FAST = object()


def fast_time(value: Any) -> Any:
    """An ISO 8601 extended-form string as a UTC datetime; NOT_FAST if it needs the slow path."""
    if value is None:
        return None
    if type(value) is not str or len(value) < 19 or value[4] != "-" or value[10] not in "Tt ":
        return NOT_FAST
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return NOT_FAST
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc)


def _fast_span(item: dict[str, Any]) -> Span | None:
    if not _SPAN_KEYS.issuperset(item):
        return None
    values: dict[str, Any] = dict.fromkeys(_SPAN_FIELDS)
    for key in _SPAN_STR:
        value = item.get(key)
        if value is not None and type(value) is not str:
            return None
        values[key] = value
    for key in _SPAN_INT:
        value = item.get(key)
        if value is not None and type(value) is not int:
            return None
        values[key] = value
    for key in _SPAN_FLOAT:
        value = item.get(key)
        if value is not None:
            if type(value) not in (int, float) or not math.isfinite(value):
                return None
            value = float(value)
        values[key] = value
    for key in _SPAN_TIME:
        value = fast_time(item.get(key))
        if value is NOT_FAST:
            return None
        values[key] = value
    values["attributes"] = item.get("attributes")
    if values["status"] is not None:
        values["status"] = normal_status(values["status"])
    derive_span_fields(values)
    span = Span.__new__(Span)
    # What BaseModel.model_construct sets, without its walk over every field's aliases.
    object.__setattr__(span, "__dict__", values)
    object.__setattr__(span, "__pydantic_fields_set__", set(item))
    object.__setattr__(span, "__pydantic_extra__", {})
    object.__setattr__(span, "__pydantic_private__", None)
    return span


_SPAN_FIELDS = tuple(Span.model_fields)  # read once: the class property is not free


def read_span(item: dict[str, Any]) -> Span:
    """One span from a dict: directly when it is in the spec's spelling, else tolerantly."""
    return _fast_span(item) or Span.model_validate(item)


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
    # Built span by span in _normalise (read_span); there is nothing left to check.
    spans: SkipValidation[list[Span]] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = _status_and_error(dict(data))
        data["spans"] = _records(Span, data.get("spans", data.get("observations")))
        return _duration_from_units(data)

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


class Project(Record):
    id: LStr = aliases("id", "project_id", "projectId", "uuid", "slug")
    name: LStr = aliases("name", "display_name", "displayName", "title")
    description: LStr = aliases("description", "desc")
    retention_days: LInt = aliases("retention_days", "retentionDays", "retention")
    created_at: LTime = aliases("created_at", "createdAt", "created")


METRIC_FORM = re.compile(r"^(?P<measure>.+?)_(?P<unit>[a-z]+)_(?P<period>[0-9]*[a-z]+)$")
MEASURES = ("latency", "error_rate", "cost", "prompt_drift")


def split_metric(metric: str | None) -> tuple[str, str, str] | None:
    """`<measure>_<unit>_<period>` as its three parts, or None if it is not of that form."""
    if not metric:
        return None
    for measure in MEASURES:  # measures may contain underscores themselves
        if metric.startswith(measure + "_"):
            rest = metric[len(measure) + 1 :].split("_")
            if len(rest) == 2 and all(rest):
                return measure, rest[0], rest[1]
            return None
    match = METRIC_FORM.match(metric)
    return (match["measure"], match["unit"], match["period"]) if match else None


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


def parse_records(model: type[Record], items: list[Any]) -> tuple[list[Any], int]:
    """(parsed records, how many items were not objects and were dropped)."""
    records = _records(model, items)
    return records, len(items) - len(records)
