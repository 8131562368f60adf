"""Request bodies the service accepts (validated field by field) and the JSON it answers with.

The wire shapes are documented in docs/api.md, and /v1/openapi.json says them (answers.py, the
response models of every route): keep the three in step.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterable
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tui.server.api_keys import KEY_ID_PREFIX
from tui.server.store.alert_rows import AlertEventRow, AlertRow, AlertState
from tui.server.store.rows import (
    DEFAULT_RETENTION_DAYS,
    KeyInfo,
    ProjectRow,
    SpanInTrace,
    TraceRow,
    TraceSummary,
)

MEASURE_UNITS = {
    "latency": ("ms", "s"),
    "error_rate": ("pct", "ratio"),
    "cost": ("usd",),
    "prompt_drift": ("score", "pct"),
}
PERIOD = r"(?:[1-9][0-9]{0,2}[mhd]|minute|hour|day|week)"
METRIC_RE = re.compile(
    rf"^(?P<measure>{'|'.join(MEASURE_UNITS)})_(?P<unit>[a-z]+)_(?P<period>{PERIOD})$"
)
METRIC_HELP = (
    "metric must look like <measure>_<unit>_<period>, e.g. latency_ms_5m, error_rate_pct_1h, "
    "cost_usd_1h or prompt_drift_score_24h (periods: 5m, 1h, 1d..., minute, hour, day, week)"
)


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value.strip()


class ProjectCreate(BaseModel):
    """POST /v1/projects. Unknown fields are rejected so that typos do not pass silently."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200, strict=True)
    description: str | None = Field(default=None, max_length=2000, strict=True)
    retention_days: int = Field(default=DEFAULT_RETENTION_DAYS, ge=1, le=365, strict=True)

    _name = field_validator("name")(_not_blank)


def _metric_form(value: str | None) -> str | None:
    if value is None:
        return value
    match = METRIC_RE.match(value)
    if match is None:
        raise ValueError(METRIC_HELP)
    units = MEASURE_UNITS[match["measure"]]
    if match["unit"] not in units:
        raise ValueError(f"unit of {match['measure']} must be one of: {', '.join(units)}")
    return value


def _finite(value: float | None) -> float | None:
    if value is not None and not math.isfinite(value):
        raise ValueError("threshold must be a finite number")
    return value


def _http_url(value: str | None) -> str | None:
    if value is None:
        return value
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("webhook_url must be an http:// or https:// URL with a host")
    return value.strip()


def _maybe_not_blank(value: str | None) -> str | None:
    return None if value is None else _not_blank(value)


def _timestamp(value: str | None) -> str | None:
    if value is None:
        return value
    try:
        parse_timestamp(value)
    except (ValueError, OverflowError, OSError):
        raise ValueError("must be an ISO 8601 time, e.g. 2026-11-21T09:30:00Z") from None
    return value


class AlertCreate(BaseModel):
    """POST /v1/projects/{project_id}/alerts. Every field is required."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200, strict=True)
    metric: str = Field(max_length=100, strict=True)
    condition: Literal["gt", "gte", "lt", "lte"]
    threshold: float = Field(strict=True)
    webhook_url: str = Field(max_length=2048, strict=True)

    _name = field_validator("name")(_not_blank)
    _metric = field_validator("metric")(_metric_form)
    _threshold = field_validator("threshold")(_finite)
    _url = field_validator("webhook_url")(_http_url)


class Patch(BaseModel):
    """A PATCH body: the fields given are changed, validated as at creation; null is refused
    for a field that cannot be null (NULLABLE names those that can)."""

    model_config = ConfigDict(extra="forbid")
    NULLABLE: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="after")
    def _no_null(self) -> Patch:
        for name in self.model_fields_set - self.NULLABLE:
            if getattr(self, name) is None:
                raise ValueError(f"{name} cannot be null")
        return self

    def changes(self) -> dict[str, Any]:
        """The fields the body gave, as given."""
        return {name: getattr(self, name) for name in self.model_fields_set}


class ProjectUpdate(Patch):
    """PATCH /v1/projects/{project_id}: any of the fields of ProjectCreate."""

    NULLABLE: ClassVar[frozenset[str]] = frozenset({"description"})

    name: str | None = Field(default=None, min_length=1, max_length=200, strict=True)
    description: str | None = Field(default=None, max_length=2000, strict=True)
    retention_days: int | None = Field(default=None, ge=1, le=365, strict=True)

    _name = field_validator("name")(_maybe_not_blank)


class AlertUpdate(Patch):
    """PATCH /v1/projects/{project_id}/alerts/{alert_id}: any field of AlertCreate, and
    `paused` and `muted_until` (an ISO 8601 time, or null to unmute)."""

    NULLABLE: ClassVar[frozenset[str]] = frozenset({"muted_until"})

    name: str | None = Field(default=None, min_length=1, max_length=200, strict=True)
    metric: str | None = Field(default=None, max_length=100, strict=True)
    condition: Literal["gt", "gte", "lt", "lte"] | None = None
    threshold: float | None = Field(default=None, strict=True)
    webhook_url: str | None = Field(default=None, max_length=2048, strict=True)
    paused: bool | None = Field(default=None, strict=True)
    muted_until: str | None = Field(default=None, max_length=64, strict=True)

    _name = field_validator("name")(_maybe_not_blank)
    _metric = field_validator("metric")(_metric_form)
    _threshold = field_validator("threshold")(_finite)
    _url = field_validator("webhook_url")(_http_url)
    _muted = field_validator("muted_until")(_timestamp)


class KeyCreate(BaseModel):
    """POST /v1/keys and /v1/projects/{project_id}/keys."""

    model_config = ConfigDict(extra="forbid")

    label: str = Field(min_length=1, max_length=100, strict=True)

    _label = field_validator("label")(_not_blank)


def parse_timestamp(value: str) -> int:
    """ISO 8601 to epoch ms; `Z` or an offset; a time without an offset is taken as UTC."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return int(parsed.timestamp() * 1000)


@lru_cache(maxsize=65536)
def _iso_second(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))


def iso_ms(ms: int) -> str:
    """Epoch ms as ISO 8601 with milliseconds and the UTC designator, as the spec shows."""
    seconds, millis = divmod(ms, 1000)
    return f"{_iso_second(seconds)}.{millis:03d}Z"


def project_json(row: ProjectRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "name": row.name,
        "description": row.description,
        "retention_days": row.retention_days,
        "created_at": iso_ms(row.created_at),
    }


def trace_json(row: TraceSummary | TraceRow) -> dict[str, Any]:
    """A trace; with its attributes when read one at a time (a TraceRow), not when listed."""
    body = {
        "id": row.id,
        "project_id": row.project_id,
        "name": row.name,
        "started_at": iso_ms(row.started_at),
        "ended_at": iso_ms(row.started_at + row.duration_ms),
        "duration_ms": row.duration_ms,
        "status": row.status,
        "span_count": row.span_count,
        "error_count": row.error_count,
        "input_tokens": row.input_tokens,
        "output_tokens": row.output_tokens,
        "total_tokens": row.input_tokens + row.output_tokens,
        "total_cost_usd": row.total_cost_usd,
    }
    if row.input_preview is not None:  # beyond the spec: the app shows it when given
        body["input_preview"] = row.input_preview
    # Beyond the spec, on every trace: read by ingest (ingest/associations.py, preview.py).
    body["user_id"] = row.user_id
    body["session_id"] = row.session_id
    body["tags"] = stored_tags(row.tags)
    body["output_preview"] = row.output_preview
    # Beyond the spec: spans whose model has no price, so total_cost_usd is a lower bound (0
    # for traces stored before the count was kept: migrations, version 10).
    body["unpriced_spans"] = row.unpriced_spans
    if isinstance(row, TraceRow):
        body["attributes"] = json.loads(row.attributes)
    return body


def stored_tags(stored: Any) -> list[str]:
    """A trace's tags as stored (a JSON list as text), as a list; [] for anything else."""
    if isinstance(stored, list):
        return [t for t in stored if isinstance(t, str)]
    try:
        found = json.loads(stored or "[]")
    except (TypeError, ValueError):
        return []
    return [t for t in found if isinstance(t, str)] if isinstance(found, list) else []


def spans_json_text(
    rows: Iterable[SpanInTrace], trace_id: str, annotations: dict[str, str] | None = None
) -> str:
    """A JSON array of spans, each span's stored attributes spliced in as they are.

    The same objects as span_json, without parsing and re-dumping every attributes document
    (stored as JSON text already): for a 50,000-span trace that is most of the work. Each span
    is encoded without its attributes, and its closing brace gives way to them. A span in
    `annotations` (span id -> its annotations' summary as JSON text) carries them before its
    attributes; the others carry none (the spec's span, unchanged).
    """
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode
    if annotations:
        parts = [
            dumps(span_fields(row, trace_id))[:-1]
            + (f',"annotations":{annotations[row[0]]}' if row[0] in annotations else "")
            + ',"attributes":'
            + row.attributes
            + "}"
            for row in rows
        ]
        return "[" + ",".join(parts) + "]"
    parts = [
        dumps(span_fields(row, trace_id))[:-1] + ',"attributes":' + row.attributes + "}"
        for row in rows
    ]
    return "[" + ",".join(parts) + "]"


def span_json(row: SpanInTrace, trace_id: str) -> dict[str, Any]:
    """One span, attributes parsed."""
    body = span_fields(row, trace_id)
    body["attributes"] = json.loads(row.attributes)
    return body


def span_fields(row: SpanInTrace, trace_id: str) -> dict[str, Any]:
    """Every field of a span's JSON but the last, its attributes. Unpacked, not read by name:
    this runs once per span of the biggest traces. What ingest keeps beyond the spec (where the
    cost came from, cache and reasoning tokens) travels in the attributes (`tracetui.*`), not
    as fields here: the span's JSON stays exactly the spec's, which the app reads fastest."""
    (
        span_id,
        parent_id,
        name,
        kind,
        model,
        started,
        duration,
        inp,
        out,
        cost,
        status,
        error,
        _attributes,
        _cost_source,
        _cache_read,
        _cache_write,
        _reasoning,
    ) = row
    return {
        "id": span_id,
        "trace_id": trace_id,
        "parent_id": parent_id,
        "name": name,
        "kind": kind,
        "model": model,
        "started_at": iso_ms(started),
        "ended_at": iso_ms(started + duration),
        "duration_ms": duration,
        "status": status,
        "error_message": error,
        "input_tokens": inp,
        "output_tokens": out,
        "cost_usd": cost,
    }


def alert_json(
    row: AlertRow, state: AlertState | None = None, webhook_secret: str | None = None
) -> dict[str, Any]:
    """An alert with where it stands (`state` None: never evaluated, so no_data); with its
    webhook secret only in the answer to its creation."""
    body = {
        "id": row.id,
        "project_id": row.project_id,
        "name": row.name,
        "metric": row.metric,
        "condition": row.condition,
        "threshold": row.threshold,
        "webhook_url": row.webhook_url,
        "created_at": iso_ms(row.created_at),
        "state": state.state if state else "no_data",
        "last_value": state.last_value if state else None,
        "last_evaluated_at": optional_iso(state.last_evaluated_at if state else None),
        "firing_since": optional_iso(state.firing_since if state else None),
        "paused": bool(row.paused),
        "muted_until": optional_iso(row.muted_until),
    }
    if webhook_secret is not None:
        body["webhook_secret"] = webhook_secret
    return body


def key_json(info: KeyInfo) -> dict[str, Any]:
    """An API key's public face: never the key, nor its hash beyond the id's 12 digits."""
    return {
        "id": KEY_ID_PREFIX + info.key_id,
        "label": info.label,
        "prefix": info.prefix,
        "project_id": info.project_id,
        "created_at": iso_ms(info.created_at),
        "last_used_at": optional_iso(info.last_used_at),
    }


def optional_iso(ms: int | None) -> str | None:
    return None if ms is None else iso_ms(ms)


def event_json(event: AlertEventRow) -> dict[str, Any]:
    """One entry of an alert's history: a state change or a delivery attempt."""
    if event.kind == "state":
        return {
            "id": event.id,
            "kind": "state",
            "at": iso_ms(event.at),
            "from": event.from_state,
            "to": event.to_state,
            "value": event.value,
            "window_start": optional_iso(event.window_start),
            "window_end": optional_iso(event.window_end),
        }
    return {
        "id": event.id,
        "kind": "delivery",
        "at": iso_ms(event.at),
        "event_type": event.event_type,
        "webhook_id": event.webhook_id,
        "attempt": event.attempt,
        "status_code": event.status_code,
        "error": event.error,
        "duration_ms": event.duration_ms,
        "ok": bool(event.ok),
    }


def json_text(body: Any) -> str:
    """Compact JSON without FastAPI's encoder pass: big traces are tens of megabytes."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
