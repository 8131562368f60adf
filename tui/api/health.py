"""Every project at a glance, from a server that offers it in one request (an extension of the
spec: the local service's GET /v1/projects/health, which `offers.project_health` says a server
has): each project's firing alerts and its traces and errored traces per time bucket over a
recent window. Read tolerantly, as every record: a bucket count that is not a number counts 0,
a firing alert that is not an object is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

from pydantic import AliasChoices, BeforeValidator, Field

from tui.api.errors import BadResponse
from tui.api.models import Alert, LInt, LStr, Record, aliases
from tui.core.lenient import to_datetime, to_int, to_str

MAX_BUCKETS = 1000  # more than any server is asked for: a longer list is cut


def _counts(value: Any) -> list[int]:
    if not isinstance(value, (list, tuple)):
        return []
    return [max(0, to_int(item) or 0) for item in value[:MAX_BUCKETS]]


def _alerts(value: Any) -> list[Alert]:
    if not isinstance(value, (list, tuple)):
        return []
    return [Alert.model_validate(item) for item in value if isinstance(item, dict)]


def listed(*names: str) -> Any:
    """A list field: empty when the server sent none."""
    return Field(default_factory=list, validation_alias=AliasChoices(*names))


LCounts = Annotated[list[int], BeforeValidator(_counts)]
LAlerts = Annotated[list[Alert], BeforeValidator(_alerts)]


class ProjectHealth(Record):
    """One project at a glance, as the server counted it."""

    project_id: LStr = aliases("project_id", "projectId", "id")
    name: LStr = aliases("name", "project_name")
    traces: LInt = aliases("traces", "trace_count")
    errors: LInt = aliases("errors", "error_count")
    trace_counts: LCounts = listed("trace_counts", "traceCounts")
    error_counts: LCounts = listed("error_counts", "errorCounts")
    alerts: LInt = aliases("alerts", "alert_count")
    firing: LAlerts = listed("firing", "firing_alerts")


@dataclass(frozen=True)
class HealthReport:
    """The server's answer: its window and each project's health."""

    window: str | None
    start: datetime | None
    end: datetime | None
    bucket_ms: int | None
    projects: list[ProjectHealth]


def read_health(body: Any, status: int = 200) -> HealthReport:
    """The report a GET /projects/health answer holds; BadResponse for one that holds none."""
    items = body.get("data") if isinstance(body, dict) else None
    if not isinstance(items, list):
        raise BadResponse(f"The server's answer is not a health report (HTTP {status})", status)
    return HealthReport(
        to_str(body.get("window")),
        to_datetime(body.get("from")),
        to_datetime(body.get("to")),
        to_int(body.get("bucket_ms")),
        [ProjectHealth.model_validate(item) for item in items if isinstance(item, dict)],
    )
