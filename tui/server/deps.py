"""What the routes share: the store, the clock, the caller's key scope, readable projects and
traces (never one past its project's retention), and creating a record once per Idempotency-Key.

Routes reach the store through `StoreDep` (the app's state), never through a closure, and see
it as the TraceStore protocol. Dependencies that touch the store are plain `def`s: FastAPI runs
them in its thread pool, so a slow disk never holds up the event loop.
"""

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from fastapi import Depends, Header, Path, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from tui.server.alerts.service import Alerts
from tui.server.auth import MALFORMED, MISSING, UNKNOWN, Malformed, bearer_token
from tui.server.backend import TraceStore
from tui.server.errors import ServiceError
from tui.server.rows import (
    AlertRow,
    AlertSecretRow,
    DeliveryRow,
    KeyScope,
    Once,
    ProjectRow,
    TraceRow,
)


async def store_of(request: Request) -> TraceStore:
    """The store create_app put in the app's state (async: it only reads an attribute)."""
    store: TraceStore = request.app.state.store
    return store


StoreDep = Annotated[TraceStore, Depends(store_of)]

DAY_MS = 86_400_000


async def clock_of(request: Request) -> Callable[[], int]:
    """The service's clock (epoch ms): tests move it to check retention."""
    clock: Callable[[], int] = request.app.state.clock
    return clock


ClockDep = Annotated[Callable[[], int], Depends(clock_of)]


async def alerts_of(request: Request) -> Alerts:
    """The alert evaluator and webhook worker create_app put in the app's state."""
    alerts: Alerts = request.app.state.alerts
    return alerts


AlertsDep = Annotated[Alerts, Depends(alerts_of)]


def retention_start(project: ProjectRow, now: int) -> int:
    """The oldest listed_at still served: the retention sweep deletes what is older, and until
    it has, reads act as if it had."""
    return now - project.retention_days * DAY_MS


def scope_of(store: StoreDep, authorization: Annotated[str | None, Header()] = None) -> KeyScope:
    """What the `Authorization: Bearer <key>` header's key may reach; 401 without a known key."""
    try:
        token = bearer_token(authorization)
    except Malformed:
        raise ServiceError(401, "unauthorized", MALFORMED) from None
    if token is None:
        raise ServiceError(401, "unauthorized", MISSING)
    scope = store.key_scope(token)
    if scope is None:
        raise ServiceError(401, "unauthorized", UNKNOWN)
    return scope


Auth = Annotated[KeyScope, Depends(scope_of)]


def readable_project(store: TraceStore, scope: KeyScope, project_id: str) -> ProjectRow:
    """The project, if this key may read it: 403 for another project's key, else 404 if none."""
    # A project key learns nothing about other projects, not even whether they exist.
    if not scope.can_read(project_id):
        raise ServiceError(403, "forbidden", "This API key is not valid for that project.")
    project = store.get_project(project_id)
    if project is None:
        raise ServiceError(404, "not_found", f"No project with id {project_id!r}.")
    return project


def readable_trace(store: TraceStore, scope: KeyScope, trace_id: str, now: int) -> TraceRow:
    """The trace, if this key may read its project: 404 if none (or past its project's
    retention at `now`), 403 for another project's."""
    trace = store.get_trace(trace_id)
    missing = ServiceError(404, "not_found", f"No trace with id {trace_id!r}.")
    if trace is None:
        raise missing
    if not scope.can_read(trace.project_id):
        raise ServiceError(403, "forbidden", "This API key is not valid for that trace's project.")
    project = store.get_project(trace.project_id)
    listed_at = trace.listed_at if trace.listed_at is not None else trace.started_at
    if project is not None and listed_at < retention_start(project, now):
        raise missing
    return trace


# As dependencies, for the routes whose only input is the path: FastAPI solves dependencies
# before it validates a body, so a route with a body calls readable_project itself, after
# validation, to answer a bad body with 422 before 403/404 as it always has.


def project_in_path(store: StoreDep, scope: Auth, project_id: Annotated[str, Path()]) -> ProjectRow:
    return readable_project(store, scope, project_id)


def trace_in_path(
    store: StoreDep, scope: Auth, clock: ClockDep, trace_id: Annotated[str, Path()]
) -> TraceRow:
    return readable_trace(store, scope, trace_id, clock())


ReadableProject = Annotated[ProjectRow, Depends(project_in_path)]
ReadableTrace = Annotated[TraceRow, Depends(trace_in_path)]


def create_once(
    request: Request,
    store: TraceStore,
    scope: KeyScope,
    payload: BaseModel | dict[str, Any],
    row: ProjectRow | AlertRow | DeliveryRow,
    body: dict[str, Any],
    status: int = 201,
    also: Sequence[AlertSecretRow] = (),
) -> JSONResponse:
    """Insert `row` (and `also`) and answer `status` `body`; with an Idempotency-Key header, a
    repeat of the same request (`payload`: its body, or what identifies it) answers what the
    first did instead of creating again, and another request gets 409."""
    idempotency_key = request.headers.get("idempotency-key")
    if idempotency_key is not None and not 1 <= len(idempotency_key) <= 255:
        raise ServiceError(
            400,
            "invalid_idempotency_key",
            "Idempotency-Key must be 1 to 255 characters.",
            [{"field": "Idempotency-Key", "message": "must be 1 to 255 characters"}],
        )
    fields = payload.model_dump() if isinstance(payload, BaseModel) else payload
    request_hash = hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()
    once = Once(scope.key_hash, idempotency_key, request_hash) if idempotency_key else None
    seen = store.create_once(row, once, status, body, also)
    if seen is None:
        return JSONResponse(body, status_code=status)
    if seen.request_hash != request_hash:
        raise ServiceError(
            409,
            "idempotency_conflict",
            "This Idempotency-Key was already used with a different body.",
        )
    return JSONResponse(seen.body, status_code=seen.status, headers={"Idempotent-Replayed": "true"})
