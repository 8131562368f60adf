"""What the routes share: the store, the clock, the caller's key scope, readable projects and
traces (never one past its project's retention), and creating a record once per Idempotency-Key.

Routes reach the store through `StoreDep` (the app's state), never through a closure, and see
it as the TraceStore protocol. Dependencies that touch the store are plain `def`s: FastAPI runs
them in its thread pool, so a slow disk never holds up the event loop.
"""

import contextlib
import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from fastapi import Depends, Header, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel

from tui.server.alerts.service import Alerts
from tui.server.api_keys import hash_key
from tui.server.http.auth import MALFORMED, MISSING, UNKNOWN, Malformed, bearer_token
from tui.server.http.errors import ServiceError
from tui.server.http.ratelimit import VERIFIED
from tui.server.store.alert_rows import AlertRow, AlertSecretRow, DeliveryRow
from tui.server.store.errors import AlreadyAnswered
from tui.server.store.protocol import TraceStore
from tui.server.store.rows import (
    DAY_MS,
    ApiKeyRow,
    KeyScope,
    Once,
    ProjectRow,
    Remembered,
    Reply,
    TraceRow,
)


async def store_of(request: Request) -> TraceStore:
    """The store create_app put in the app's state (async: it only reads an attribute)."""
    store: TraceStore = request.app.state.store
    return store


StoreDep = Annotated[TraceStore, Depends(store_of)]


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
    """The oldest end of a trace's newest span still served: the retention sweep deletes the
    traces whose newest span ended before it, and until it has, reads act as if it had."""
    return now - project.retention_days * DAY_MS


def is_kept(trace: TraceRow, project: ProjectRow | None, now: int) -> bool:
    """Whether `trace` is within its project's retention at `now`: by its newest span (the
    latest end of its spans), never by its first."""
    if project is None:
        return True
    return trace.started_at + trace.duration_ms >= retention_start(project, now)


def key_scope_of(store: TraceStore, authorization: str | None) -> KeyScope:
    """What the `Authorization: Bearer <key>` header's key may reach; 401 without a known key.
    Blocks (the store): call from a thread."""
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


async def scope_of(
    request: Request, store: StoreDep, authorization: Annotated[str | None, Header()] = None
) -> KeyScope:
    """The caller's key scope: the one the rate limiter's middleware verified for this very
    request (no second look-up), else looked up here (in a thread); 401 without a known key."""
    verified = request.scope.get("state", {}).get(VERIFIED)
    if verified is not None:
        # The state holds the key's hash, never the key: it is compared with this header's.
        identity, scope = verified
        with contextlib.suppress(Malformed):
            token = bearer_token(authorization)
            if isinstance(scope, KeyScope) and token and hash_key(token) == identity:
                return scope
    return await run_in_threadpool(key_scope_of, store, authorization)


Auth = Annotated[KeyScope, Depends(scope_of)]


def may_read(scope: KeyScope, project_id: str) -> None:
    """403 unless this key may read the project (no read of the store: a key's own scope)."""
    # A project key learns nothing about other projects, not even whether they exist.
    if not scope.can_read(project_id):
        raise ServiceError(403, "forbidden", "This API key is not valid for that project.")


def readable_project(store: TraceStore, scope: KeyScope, project_id: str) -> ProjectRow:
    """The project, if this key may read it: 403 for another project's key, else 404 if none."""
    may_read(scope, project_id)
    project = store.get_project(project_id)
    if project is None:
        raise ServiceError(404, "not_found", "No project with this id.")
    return project


def readable_trace(
    store: TraceStore, scope: KeyScope, trace_id: str, project_id: str | None, now: int
) -> TraceRow:
    """The trace with this id that this key reads: a trace id is its project's, and two
    projects may each have one with the same id.

    A project key reads its own project's trace (`project_id`, if given, must be that
    project). The workspace key reads `project_id`'s trace; without one, the trace with this
    id if one project has it, and 409 if several do (the message says to add ?project_id=).
    Anything else is 404, the same answer whether the trace is missing, past its project's
    retention at `now`, or another project's: which ids exist elsewhere is never told.
    """
    missing = ServiceError(404, "not_found", "No trace with this id.")
    if scope.project_id is not None:
        if project_id is not None and project_id != scope.project_id:
            raise missing
        project_id = scope.project_id
    projects: dict[str, ProjectRow | None] = {}
    found = []
    for trace in store.find_traces(trace_id, project_id):
        if trace.project_id not in projects:
            projects[trace.project_id] = store.get_project(trace.project_id)
        if is_kept(trace, projects[trace.project_id], now):
            found.append(trace)
    if not found:
        raise missing
    if len(found) > 1:
        raise ServiceError(
            409,
            "ambiguous_trace_id",
            f"{len(found)} projects have a trace with this id: add ?project_id= to say whose.",
            [{"field": "project_id", "message": "required: several projects have this trace id"}],
        )
    return found[0]


# As dependencies, for the routes whose only input is the path: FastAPI solves dependencies
# before it validates a body, so a route with a body calls readable_project itself, after
# validation, to answer a bad body with 422 before 403/404 as it always has.


def project_in_path(store: StoreDep, scope: Auth, project_id: Annotated[str, Path()]) -> ProjectRow:
    return readable_project(store, scope, project_id)


def trace_in_path(
    store: StoreDep,
    scope: Auth,
    clock: ClockDep,
    trace_id: Annotated[str, Path()],
    project_id: Annotated[
        str | None,
        Query(
            min_length=1,
            description="Extension: the project whose trace this is. A trace id is its"
            " project's; a project key reads its own project's, and the workspace key needs"
            " this only when several projects have a trace with this id (409 otherwise).",
        ),
    ] = None,
) -> TraceRow:
    return readable_trace(store, scope, trace_id, project_id, clock())


ReadableProject = Annotated[ProjectRow, Depends(project_in_path)]
ReadableTrace = Annotated[TraceRow, Depends(trace_in_path)]


def create_once(
    request: Request,
    store: TraceStore,
    scope: KeyScope,
    payload: BaseModel | dict[str, Any],
    row: ProjectRow | AlertRow | DeliveryRow | ApiKeyRow,
    body: dict[str, Any],
    status: int = 201,
    also: Sequence[AlertSecretRow] = (),
    unstored: dict[str, Any] | None = None,
    alerts_at_most: int | None = None,
) -> Response:
    """Insert `row` (and `also`) and answer `status` `body`; with an Idempotency-Key header, a
    repeat of the same request (`payload`: its body, or what identifies it) answers what the
    first did instead of creating again, and another request gets 409.

    `unstored` (a new API key) joins the first answer only and is never remembered: a repeat
    of that request gets 409 instead, saying the key was made and is shown once.
    `alerts_at_most` bounds the alerts of a new alert's project (the store raises
    TooManyAlerts)."""
    once = once_of(request, scope, payload)
    seen = store.create_once(row, once, status, body, also, alerts_at_most)
    if seen is None:
        return JSONResponse({**body, **(unstored or {})}, status_code=status)
    if unstored is not None and once is not None and seen.request_hash == once.request_hash:
        raise ServiceError(
            409,
            "already_created",
            f"This Idempotency-Key already made {seen.body.get('id', 'it')}, whose secret is "
            "shown only once: revoke it and make another if it was lost.",
        )
    return replay(seen, once)


def once_of(request: Request, scope: KeyScope, payload: BaseModel | dict[str, Any]) -> Once | None:
    """The request's use of an Idempotency-Key (None without the header); 400 for a bad one."""
    idempotency_key = request.headers.get("idempotency-key")
    if idempotency_key is None:
        return None
    if not 1 <= len(idempotency_key) <= 255:
        raise ServiceError(
            400,
            "invalid_idempotency_key",
            "Idempotency-Key must be 1 to 255 characters.",
            [{"field": "Idempotency-Key", "message": "must be 1 to 255 characters"}],
        )
    fields = payload.model_dump() if isinstance(payload, BaseModel) else payload
    # The route's path is part of what a key identifies: one key on two alerts is a conflict.
    fields = {"path": request.url.path, "method": request.method, "body": fields}
    request_hash = hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()
    return Once(scope.key_hash, idempotency_key, request_hash)


def replay(seen: Remembered, once: Once | None) -> Response:
    """The remembered answer to a repeat of a request; 409 if the key came with another."""
    if once is None or seen.request_hash != once.request_hash:
        raise ServiceError(
            409,
            "idempotency_conflict",
            "This Idempotency-Key was already used with a different body.",
        )
    if seen.status == 204:
        return Response(status_code=204, headers={"Idempotent-Replayed": "true"})
    return JSONResponse(seen.body, status_code=seen.status, headers={"Idempotent-Replayed": "true"})


def apply_once(
    request: Request,
    store: TraceStore,
    scope: KeyScope,
    payload: BaseModel | dict[str, Any],
    act: Callable[[Once | None], tuple[int, dict[str, Any] | None]],
) -> Response:
    """Run `act` (a change: PATCH, DELETE, a rotation, a revocation), which is given the
    request's use of an Idempotency-Key (None without one), hands the store its answer with
    the change (`reply_to`), and returns the answer's status and body (None: no content).

    The store keeps that answer in the change's own transaction, under the key's lock: of
    repeats that race, one applies the change and the others get its answer (the store raises
    AlreadyAnswered), at any replica. A repeat that comes later is answered from what was
    remembered without running `act`; one whose change found its target gone (the first
    deleted it meanwhile) gets the first's answer too. The same key with another request:
    409."""
    once = once_of(request, scope, payload)
    if once is not None:
        seen = store.recall_response(once.key_hash, once.idempotency_key)
        if seen is not None:
            return replay(seen, once)
    try:
        status, body = act(once)
    except AlreadyAnswered as answered:
        return replay(answered.seen, once)
    except ServiceError:
        seen = None if once is None else store.recall_response(*once[:2])
        if seen is None:
            raise
        return replay(seen, once)
    if body is None:
        return Response(status_code=status)
    return JSONResponse(body, status_code=status)


def reply_to(once: Once | None, status: int, body: dict[str, Any] | None) -> Reply | None:
    """The answer a change hands the store to remember for its Idempotency-Key (apply_once)."""
    return None if once is None else Reply(once, status, body)
