"""The service's errors: ServiceError, the one error body, and the handlers that answer with it.

Every non-2xx answer has the same body:
`{"error": {"status", "code", "message", "details": [{"field", "message"}]}}`. Routes raise
ServiceError; FastAPI's validation errors and Starlette's 404/405 are mapped onto the same body by
the handlers installed with `install_error_handlers`. The rate limiter's 429 and the last-resort
500 (in `ratelimit`) use `error_json` from here too.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from tui.server.store.errors import StoreBusy, StoreUnavailable
from tui.server.store.reads import QueryStopped


class ServiceError(Exception):
    """An error answer: status, machine-readable code, human message and field details."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: list[dict[str, str]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details or []
        self.headers = headers  # Retry-After, for an answer worth retrying later


def error_body(
    status: int, code: str, message: str, details: list[Any] | None = None
) -> dict[str, Any]:
    """The one error body of the service."""
    return {"error": {"status": status, "code": code, "message": message, "details": details or []}}


def error_json(status: int, code: str, message: str, details: list[Any] | None = None) -> bytes:
    """The error body as bytes, for answers sent below FastAPI (the ASGI middleware)."""
    return json.dumps(error_body(status, code, message, details)).encode()


def error_response(error: ServiceError, headers: dict[str, str] | None = None) -> JSONResponse:
    body = error_body(error.status, error.code, error.message, error.details)
    return JSONResponse(body, status_code=error.status, headers=headers)


# What a misspelt field name looks like; keys and tokens have digits, capitals or length.
FIELD_LIKE = re.compile(r"[a-z][a-z_]{0,23}")


def field_name(loc: tuple[Any, ...]) -> str:
    """("body", "metric") -> "metric"; ("query", "limit") -> "limit"; ("body", "data", 3,
    "score") -> "data[3].score" (an item of a list by its position)."""
    name = ""
    for part in loc:
        if part in ("body", "query", "path", "header"):
            continue
        if isinstance(part, int):
            name += f"[{part}]"
        else:
            name += f".{part}" if name else str(part)
    return name or "body"


def validation_error(exc: RequestValidationError) -> ServiceError:
    """FastAPI's list of pydantic errors as one 422 with a detail per field (or a 400 for a body
    that is not JSON at all).

    Only pydantic's message is kept, never its `input`: nothing the client sent comes back (a
    key pasted into the wrong field would otherwise be repeated in the answer, and in whatever
    logs or shows it). For the same reason a field the body should not have is named only when
    it reads as a misspelt field name (`colour`, `retention_dayz`), never when it could be a
    key: its name is the client's text, not one of ours."""
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        return ServiceError(400, "invalid_json", "The request body is not valid JSON.")
    details = []
    for e in errors:
        message = str(e.get("msg", "invalid value")).removeprefix("Value error, ")
        field = field_name(tuple(e.get("loc", ())))
        if e.get("type") == "missing":
            message = "is required"
        elif e.get("type") == "extra_forbidden":
            # The last part of the path is the client's text; those before it are ours.
            message = "is not a known field"
            loc = tuple(e.get("loc", ()))
            if not (loc and isinstance(loc[-1], str) and FIELD_LIKE.fullmatch(loc[-1])):
                field = field_name(loc[:-1])
                message = "has a field this request does not take"
        details.append({"field": field, "message": message})
    fields = ", ".join(dict.fromkeys(d["field"] for d in details))
    return ServiceError(422, "validation_error", f"Invalid fields: {fields}.", details)


async def service_error_handler(_: Request, exc: ServiceError) -> Response:
    return error_response(exc, exc.headers)


async def validation_error_handler(_: Request, exc: RequestValidationError) -> Response:
    return error_response(validation_error(exc))


async def http_error_handler(_: Request, exc: StarletteHTTPException) -> Response:
    """Starlette's own errors (no route, wrong method) in the service's body."""
    codes = {404: "not_found", 405: "method_not_allowed"}
    message = {404: "No such endpoint.", 405: "Method not allowed."}.get(
        exc.status_code, str(exc.detail)
    )
    return error_response(
        ServiceError(exc.status_code, codes.get(exc.status_code, "error"), message)
    )


# How long a client waits before retrying a write the store refused for now.
BUSY_RETRY_AFTER_S = 1
UNAVAILABLE_RETRY_AFTER_S = 5


def refused_write(error: StoreBusy) -> tuple[str, str, int]:
    """The code, message and Retry-After (seconds) of a write the store refused for now."""
    if isinstance(error, StoreUnavailable):
        message = "The service cannot reach or write to its database right now; retry shortly."
        return "unavailable", message, UNAVAILABLE_RETRY_AFTER_S
    return "busy", "The service is busy writing; retry shortly.", BUSY_RETRY_AFTER_S


async def store_busy_handler(_: Request, exc: StoreBusy) -> Response:
    code, message, retry_after = refused_write(exc)
    error = ServiceError(503, code, message)
    return error_response(error, headers={"Retry-After": str(retry_after)})


def stopped_read(error: QueryStopped) -> ServiceError:
    """The answer to a search its guard stopped (http/searches.py): past its time budget, 422
    `query_timeout`, as trying it again as it is would take as long; its client gone, the same
    status with `query_cancelled` (nobody reads it)."""
    if not error.timed_out:
        return ServiceError(422, "query_cancelled", "The search was stopped: its client left.")
    return ServiceError(
        422,
        "query_timeout",
        f"The search took longer than {error.budget_s:g} s and was stopped: narrow it (a"
        " shorter time range, longer or fewer words, another filter).",
    )


async def query_stopped_handler(_: Request, exc: QueryStopped) -> Response:
    return error_response(stopped_read(exc))


def install_error_handlers(app: FastAPI) -> None:
    # The decorator form: add_exception_handler's type wants handlers of any Exception.
    app.exception_handler(ServiceError)(service_error_handler)
    app.exception_handler(StoreBusy)(store_busy_handler)
    app.exception_handler(QueryStopped)(query_stopped_handler)
    app.exception_handler(RequestValidationError)(validation_error_handler)
    app.exception_handler(StarletteHTTPException)(http_error_handler)
