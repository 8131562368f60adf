"""What the alert screens' tests share: a project of the shared service holding traces of
given ages and durations, and a server that speaks only the spec's shapes."""

from __future__ import annotations

import uuid

import httpx

from tests.support.service import RunningService
from tui.server.store.rows import TraceRow, now_ms


def project_with_traces(service: RunningService, traces: list[tuple[float, float]]) -> str:
    """A new project of the shared service holding traces (minutes ago, duration in ms)."""
    project_id = f"proj_{uuid.uuid4().hex[:8]}"
    now = now_ms()
    rows = [
        TraceRow(
            uuid.uuid4().hex,
            project_id,
            "t",
            now - int(minutes * 60_000),
            ms,
            1,
            1,
            1,
            0.0,
            "ok",
            0,
            "{}",
        )
        for minutes, ms in traces
    ]
    with service.store.transaction() as db:
        service.store.insert_project(db, project_id, None, 30, project_id=project_id)
        service.store.insert_traces(db, rows)
    return project_id


def spec_server(
    alerts: list[dict[str, object]],
    traces: list[dict[str, object]],
    asked: list[httpx.QueryParams] | None = None,
) -> httpx.MockTransport:
    """A server with only the spec's shapes: one project, proj_x; its alerts without state;
    its traces on one page; no alert history (404). `asked` collects the trace list queries."""

    def answer(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path.endswith("/events"):
            return httpx.Response(404, json={"error": "not found"})
        if path.endswith("/alerts"):
            return httpx.Response(200, json={"data": alerts})
        if path.endswith("/projects"):
            return httpx.Response(200, json={"data": [{"id": "proj_x", "name": "x"}]})
        if asked is not None:
            asked.append(request.url.params)
        return httpx.Response(200, json={"data": traces, "next_cursor": None})

    return httpx.MockTransport(answer)
