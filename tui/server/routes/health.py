"""GET /v1/projects/health (extension): every project the key reads, at a glance, in one
request: its firing alerts, and its traces and errored traces per time bucket over a recent
window (the app's projects screen: which project is on fire).

The window ends now and is cut into `buckets` equal buckets (the window is rounded up to a
whole number of milliseconds per bucket). Traces count by their start, within the project's
retention (by their newest span, as every read of traces), read in one statement per
retention (store/health.py). A project key sees its own project only.
"""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

from tui.server.http.answers import ERRORS, Alert, Timestamp
from tui.server.http.deps import Auth, ClockDep, StoreDep, retention_start
from tui.server.http.errors import ServiceError
from tui.server.http.schemas import alert_json, iso_ms
from tui.server.store.rows import ProjectRow

MINUTE_MS = 60_000
WINDOW_UNITS = {"m": MINUTE_MS, "h": 60 * MINUTE_MS, "d": 1440 * MINUTE_MS}
WINDOW_RE = re.compile(r"^(\d{1,4})([mhd])$")
MIN_WINDOW_MS = 5 * MINUTE_MS
MAX_WINDOW_MS = 7 * 1440 * MINUTE_MS
MAX_BUCKETS = 60
WINDOW_HELP = "must be a duration from 5m to 7d, e.g. 1h, 90m, 24h or 7d"

router = APIRouter(responses=ERRORS)


class ProjectHealth(BaseModel):
    project_id: str
    name: str
    traces: int = Field(description="Traces started in the window.")
    errors: int = Field(description="... of them with an error.")
    trace_counts: list[int] = Field(description="Traces started in each bucket, oldest first.")
    error_counts: list[int] = Field(description="... of them with an error, per bucket.")
    alerts: int = Field(description="The project's alerts, paused ones included.")
    firing: list[Alert] = Field(
        description="Its alerts firing now (not paused), longest firing first."
    )


class HealthList(BaseModel):
    """Extension: every project the key reads, at a glance."""

    window: str = Field(description="The window, as asked (e.g. `1h`).")
    from_: Timestamp = Field(alias="from", description="The window's start (inclusive).")
    to: Timestamp = Field(description="The window's end (exclusive): now.")
    bucket_ms: int = Field(description="Each bucket's length; the first starts at `from`.")
    data: list[ProjectHealth]


def window_ms(window: str) -> int:
    """`1h` -> 3,600,000; 422 on `window` for anything outside 5m..7d."""
    found = WINDOW_RE.match(window)
    ms = int(found[1]) * WINDOW_UNITS[found[2]] if found else 0
    if not MIN_WINDOW_MS <= ms <= MAX_WINDOW_MS:
        raise ServiceError(
            422,
            "validation_error",
            f"window {WINDOW_HELP}.",
            [{"field": "window", "message": WINDOW_HELP}],
        )
    return ms


@router.get(
    "/projects/health",
    summary="Every project's firing alerts and recent traffic, at a glance",
    response_model=HealthList,
    response_model_by_alias=True,
)
def projects_health(
    scope: Auth,
    store: StoreDep,
    clock: ClockDep,
    window: Annotated[
        str, Query(description="How far back from now: 5m to 7d (e.g. 1h, 24h).")
    ] = "1h",
    buckets: Annotated[
        int, Query(ge=1, le=MAX_BUCKETS, description="How many equal buckets the window has.")
    ] = 12,
) -> Response:
    now = clock()
    bucket_ms = -(-window_ms(window) // buckets)  # rounded up: the buckets cover the window
    start = now - bucket_ms * buckets
    projects = store.list_projects(only=scope.project_id)
    traffic: dict[str, list[tuple[int, int, int]]] = {}
    # One statement per retention (projects mostly share one), each of its projects' traces
    # within it.
    by_retention: dict[int, list[ProjectRow]] = {}
    for project in projects:
        by_retention.setdefault(project.retention_days, []).append(project)
    for kept in by_retention.values():
        ids = [project.id for project in kept]
        traffic |= store.project_traffic(ids, start, now, bucket_ms, retention_start(kept[0], now))
    alerts = store.all_alerts()
    states = store.alert_states() if alerts else {}
    data = []
    for project in projects:
        counts, errors = [0] * buckets, [0] * buckets
        for bucket, traces, errored in traffic.get(project.id, []):
            if 0 <= bucket < buckets:
                counts[bucket] += traces
                errors[bucket] += errored
        mine = [alert for alert in alerts if alert.project_id == project.id]
        firing = [
            alert
            for alert in mine
            if not alert.paused and (state := states.get(alert.id)) and state.state == "firing"
        ]
        firing.sort(key=lambda alert: (states[alert.id].firing_since or now, alert.id))
        data.append(
            {
                "project_id": project.id,
                "name": project.name,
                "traces": sum(counts),
                "errors": sum(errors),
                "trace_counts": counts,
                "error_counts": errors,
                "alerts": len(mine),
                "firing": [alert_json(alert, states[alert.id]) for alert in firing],
            }
        )
    body = {
        "window": window,
        "from": iso_ms(start),
        "to": iso_ms(now),
        "bucket_ms": bucket_ms,
        "data": data,
    }
    return JSONResponse(body)
