"""The routes of the local service (FastAPI): /v1 projects, traces, spans and alerts.

Auth is `Authorization: Bearer <key>`: the workspace key reaches everything, a project key only
its own project (403 elsewhere). Every non-2xx answer has one JSON body:
`{"error": {"status", "code", "message", "details": [{"field", "message"}]}}`.
"""

import base64
import binascii
import hashlib
import json
import sqlite3
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, Path, Query, Request
from fastapi.responses import JSONResponse, Response

from tui.server.errors import ApiError, install_error_handlers
from tui.server.ratelimit import RateLimiter, RateLimitMiddleware
from tui.server.rows import ProjectRow, TraceRow
from tui.server.schemas import (
    AlertCreate,
    ProjectCreate,
    alert_json,
    parse_timestamp,
    project_json,
    spans_json_text,
    trace_json,
)
from tui.server.store import KeyScope, Store, TracePosition, now_ms

DEFAULT_WINDOW_MS = 24 * 3_600_000
MAX_LIMIT = 500
BaseModelLike = ProjectCreate | AlertCreate


# -- cursors --------------------------------------------------------------------------------


def encode_cursor(position: TracePosition, start: int, end: int) -> str:
    """Opaque to clients: the last row's position plus the time window of the first page."""
    raw = json.dumps({"t": position.started_at, "i": position.trace_id, "f": start, "u": end})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[TracePosition, int, int]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data = json.loads(raw)
        position = TracePosition(int(data["t"]), str(data["i"]))
        return position, int(data["f"]), int(data["u"])
    except (ValueError, KeyError, TypeError, binascii.Error) as exc:
        raise ApiError(
            400,
            "invalid_cursor",
            "The cursor is not one this service issued.",
            [{"field": "cursor", "message": "not a valid cursor"}],
        ) from exc


# -- the app --------------------------------------------------------------------------------


def create_app(store: Store, rate_limit: int = 1000, window_s: float = 60.0) -> FastAPI:
    """The service over `store`, limited to `rate_limit` requests per `window_s` per key."""
    app = FastAPI(
        title="tracetui local tracing service",
        version="1.0.0",
        openapi_url="/v1/openapi.json",
        docs_url="/docs",
        redoc_url=None,
    )
    app.state.store = store
    app.state.limiter = RateLimiter(rate_limit, window_s)
    app.add_middleware(RateLimitMiddleware, limiter=app.state.limiter)

    install_error_handlers(app)

    def scope_of(authorization: Annotated[str | None, Header()] = None) -> KeyScope:
        if not authorization:
            raise ApiError(
                401,
                "unauthorized",
                "Missing Authorization header; send 'Authorization: Bearer <API key>'.",
            )
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token or " " in token:
            raise ApiError(
                401,
                "unauthorized",
                "Malformed Authorization header; expected 'Bearer <API key>'.",
            )
        scope = store.key_scope(token)
        if scope is None:
            raise ApiError(401, "unauthorized", "Unknown API key.")
        return scope

    Auth = Annotated[KeyScope, Depends(scope_of)]

    def readable_project(scope: KeyScope, project_id: str) -> ProjectRow:
        # A project key learns nothing about other projects, not even whether they exist.
        if not scope.can_read(project_id):
            raise ApiError(403, "forbidden", "This API key is not valid for that project.")
        project = store.get_project(project_id)
        if project is None:
            raise ApiError(404, "not_found", f"No project with id {project_id!r}.")
        return project

    def readable_trace(scope: KeyScope, trace_id: str) -> TraceRow:
        trace = store.get_trace(trace_id)
        if trace is None:
            raise ApiError(404, "not_found", f"No trace with id {trace_id!r}.")
        if not scope.can_read(trace.project_id):
            raise ApiError(403, "forbidden", "This API key is not valid for that trace's project.")
        return trace

    def create_once(
        request: Request,
        scope: KeyScope,
        payload: BaseModelLike,
        create: Callable[[sqlite3.Connection], dict[str, Any]],
    ) -> JSONResponse:
        """Create a record; with an Idempotency-Key, a repeat returns the first answer instead."""
        idempotency_key = request.headers.get("idempotency-key")
        if idempotency_key is not None and not 1 <= len(idempotency_key) <= 255:
            raise ApiError(
                400,
                "invalid_idempotency_key",
                "Idempotency-Key must be 1 to 255 characters.",
                [{"field": "Idempotency-Key", "message": "must be 1 to 255 characters"}],
            )
        request_hash = hashlib.sha256(
            json.dumps(payload.model_dump(), sort_keys=True).encode()
        ).hexdigest()
        with store.transaction() as db:
            if idempotency_key:
                seen = store.remembered_response(db, scope.key_hash, idempotency_key)
                if seen is not None:
                    if seen.request_hash != request_hash:
                        raise ApiError(
                            409,
                            "idempotency_conflict",
                            "This Idempotency-Key was already used with a different body.",
                        )
                    return JSONResponse(
                        seen.body, status_code=seen.status, headers={"Idempotent-Replayed": "true"}
                    )
            body = create(db)
            if idempotency_key:
                store.remember_response(
                    db, scope.key_hash, idempotency_key, request_hash, 201, body
                )
        return JSONResponse(body, status_code=201)

    # -- projects ---------------------------------------------------------------------------

    @app.get("/v1/projects", summary="List projects")
    def list_projects(scope: Auth) -> dict[str, Any]:
        rows = store.list_projects(only=scope.project_id)
        return {"data": [project_json(r) for r in rows]}

    @app.post("/v1/projects", status_code=201, summary="Create a project")
    def create_project(request: Request, scope: Auth, payload: ProjectCreate) -> Response:
        if not scope.is_workspace:
            raise ApiError(403, "forbidden", "Only the workspace key can create projects.")
        return create_once(
            request,
            scope,
            payload,
            lambda db: project_json(
                store.insert_project(db, payload.name, payload.description, payload.retention_days)
            ),
        )

    # -- traces -----------------------------------------------------------------------------

    @app.get("/v1/traces", summary="List traces, newest first")
    def list_traces(
        scope: Auth,
        project_id: Annotated[str, Query(min_length=1)],
        from_: Annotated[str | None, Query(alias="from")] = None,
        to: Annotated[str | None, Query()] = None,
        limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 100,
        cursor: Annotated[str | None, Query()] = None,
    ) -> dict[str, Any]:
        readable_project(scope, project_id)
        after: TracePosition | None = None
        if cursor:
            # The window travels in the cursor, so "the last 24 hours" does not slide between
            # pages; from/to sent along with a cursor are ignored.
            after, start, end = decode_cursor(cursor)
        else:
            end = time_param("to", to, now_ms())
            start = time_param("from", from_, end - DEFAULT_WINDOW_MS)
            if start > end:
                raise ApiError(
                    422,
                    "validation_error",
                    "from must not be after to.",
                    [{"field": "from", "message": "must not be after to"}],
                )
        rows, more = store.list_traces(project_id, start, end, limit, after)
        next_cursor = None
        if more and rows:
            last = rows[-1]
            next_cursor = encode_cursor(TracePosition(last.started_at, last.id), start, end)
        return {"data": [trace_json(r) for r in rows], "next_cursor": next_cursor, "has_more": more}

    @app.get("/v1/traces/{trace_id}", summary="Get one trace with all its spans")
    def get_trace(scope: Auth, trace_id: Annotated[str, Path()]) -> Response:
        trace = readable_trace(scope, trace_id)
        head = json_text({**trace_json(trace), "spans": None})
        spans = spans_json_text(store.iter_spans(trace_id), trace_id)
        return Response(
            (head[: -len("null}")] + spans + "}").encode(), media_type="application/json"
        )

    @app.get("/v1/traces/{trace_id}/spans", summary="List a trace's spans by start time")
    def list_spans(scope: Auth, trace_id: Annotated[str, Path()]) -> Response:
        readable_trace(scope, trace_id)
        spans = spans_json_text(store.iter_spans(trace_id), trace_id)
        return Response(('{"data":' + spans + "}").encode(), media_type="application/json")

    # -- alerts -----------------------------------------------------------------------------

    @app.get("/v1/projects/{project_id}/alerts", summary="List a project's alerts")
    def list_alerts(scope: Auth, project_id: Annotated[str, Path()]) -> dict[str, Any]:
        readable_project(scope, project_id)
        return {"data": [alert_json(r) for r in store.list_alerts(project_id)]}

    @app.post("/v1/projects/{project_id}/alerts", status_code=201, summary="Create an alert")
    def create_alert(
        request: Request, scope: Auth, project_id: Annotated[str, Path()], payload: AlertCreate
    ) -> Response:
        readable_project(scope, project_id)
        return create_once(
            request,
            scope,
            payload,
            lambda db: alert_json(
                store.insert_alert(db, project_id=project_id, **payload.model_dump())
            ),
        )

    return app


def time_param(name: str, value: str | None, default: int) -> int:
    if value is None or value == "":
        return default
    try:
        return parse_timestamp(value)
    except (ValueError, OverflowError) as exc:
        raise ApiError(
            422,
            "validation_error",
            f"{name} is not an ISO 8601 timestamp.",
            [
                {
                    "field": name,
                    "message": "must be an ISO 8601 timestamp, e.g. 2026-11-21T09:30:00.000Z",
                }
            ],
        ) from exc


def json_text(body: Any) -> str:
    """Compact JSON without FastAPI's encoder pass: big traces are tens of megabytes."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
