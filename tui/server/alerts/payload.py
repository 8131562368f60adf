"""The webhook event: `{"type", "timestamp", "data"}`, as the alerts contract and docs/api.md
document it. Its JSON text is made once, when the event is, and every attempt sends those
bytes: a retry is the same event, signed anew.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from tui.server.alerts.metrics import MetricParts, in_unit
from tui.server.http.schemas import iso_ms
from tui.server.store.alert_rows import AlertRow
from tui.server.store.rows import ProjectRow

FIRING = "alert.firing"
RESOLVED = "alert.resolved"
TEST = "alert.test"


class Evaluated(NamedTuple):
    """An alert's metric at one moment: its value (None: no data), over [start, end)."""

    value: float | None
    window_start: int
    window_end: int
    evaluated_at: int


def worst_json(
    metric: MetricParts, worst: Sequence[tuple[str, float]], project_id: str
) -> list[dict[str, Any]]:
    """The worst traces, each with its value (latency and cost in the metric's unit; error
    rate: the trace's error count; drift: the share of its prompt's words the baseline never
    had, as a score or pct) and the command that opens it (naming the project: a trace id is
    its project's, and another project may use the same one)."""
    return [
        {
            "id": trace_id,
            "value": value if metric.measure == "error_rate" else in_unit(*metric[:2], value),
            "open": f"tracetui --project {project_id} trace {trace_id}",
        }
        for trace_id, value in worst
    ]


def event_body(
    event_type: str,
    alert: AlertRow,
    project: ProjectRow | None,
    evaluated: Evaluated,
    state: str,
    worst: list[dict[str, Any]],
    timestamp: int,
) -> str:
    """The event's JSON text."""
    data = {
        "alert": {
            "id": alert.id,
            "name": alert.name,
            "metric": alert.metric,
            "condition": alert.condition,
            "threshold": alert.threshold,
        },
        "project": {"id": alert.project_id, "name": project.name if project else None},
        "state": state,
        "value": evaluated.value,
        "window_start": iso_ms(evaluated.window_start),
        "window_end": iso_ms(evaluated.window_end),
        "evaluated_at": iso_ms(evaluated.evaluated_at),
        "worst_traces": worst,
    }
    body = {"type": event_type, "timestamp": iso_ms(timestamp), "data": data}
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
