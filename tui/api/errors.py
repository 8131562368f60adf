"""Typed API errors, and the one function that turns an HTTP response into one of them.

Each error carries a short title, a human message (taken from whichever common error body the
server sent) that always names the HTTP status, and for validation errors the field details.
Messages never contain an API key: the client redacts its keys from anything a server echoes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

MAX_MESSAGE = 300


@dataclass(frozen=True)
class FieldError:
    """One field's validation problem, as the server described it."""

    field: str
    message: str


class ApiError(Exception):
    """Base of every error a request raises. `status` is None when no response arrived.

    `outcome_unknown` is true for a failed create whose request may still have been carried out
    (a timeout after sending, a dropped connection, a 5xx, an unreadable success): whoever
    retries must first look whether the record exists, as servers need not honour
    Idempotency-Key."""

    title = "API error"

    def __init__(
        self, message: str, status: int | None = None, *, outcome_unknown: bool = False
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.outcome_unknown = outcome_unknown

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status!r}, message={self.message!r})"


class ConnectionFailed(ApiError):
    title = "Cannot reach the server"


class TimedOut(ApiError):
    title = "The server did not answer in time"


class Unauthorized(ApiError):
    title = "Not authenticated (401)"


class Forbidden(ApiError):
    title = "Not allowed (403)"


class NotFound(ApiError):
    title = "Not found (404)"


class ValidationFailed(ApiError):
    title = "Rejected by the server"

    def __init__(
        self, message: str, status: int | None = None, fields: tuple[FieldError, ...] = ()
    ) -> None:
        super().__init__(message, status)
        self.fields = fields

    def field_messages(self) -> dict[str, str]:
        """Field name -> message, the first message of each field."""
        messages: dict[str, str] = {}
        for error in self.fields:
            messages.setdefault(error.field, error.message)
        return messages


class Conflict(ApiError):
    """409: the request clashes with the server's state (for example an Idempotency-Key that
    was already used with another body, or a project name that is taken); `fields` names the
    fields that clash when the server says."""

    title = "Conflict (409)"

    def __init__(
        self, message: str, status: int | None = 409, fields: tuple[FieldError, ...] = ()
    ) -> None:
        super().__init__(message, status)
        self.fields = fields

    def field_messages(self) -> dict[str, str]:
        return {error.field: error.message for error in reversed(self.fields)}


class RateLimited(ApiError):
    title = "Rate limited (429)"

    def __init__(self, message: str, status: int | None = 429, retry_after: float = 1.0) -> None:
        super().__init__(message, status)
        self.retry_after = retry_after


class ServerError(ApiError):
    title = "Server error"


class BadResponse(ApiError):
    title = "Unreadable response"


class NotOffered(ApiError):
    """The server does not offer this action (its OpenAPI document does not list it): said in
    words, before any request is sent."""

    title = "Not offered by this server"


Redact = Callable[[str], str]


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def _text_of(value: Any) -> str | None:
    """A message out of a string, or of a dict holding message/detail/description/title."""
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, dict):
        for key in ("message", "detail", "description", "error_description", "title", "msg"):
            text = _text_of(value.get(key))
            if text:
                return text
        code = value.get("code") or value.get("type")
        if isinstance(code, str):
            return code
    if isinstance(value, list) and value:
        parts = [t for t in (_text_of(v) for v in value[:3]) if t]
        if parts:
            return "; ".join(parts)
    return None


def _field_name(item: dict[str, Any]) -> str:
    for key in ("field", "path", "param", "name", "pointer", "property", "attribute"):
        value = item.get(key)
        if isinstance(value, str) and value:
            return value.removeprefix("/").replace("/", ".")
        if isinstance(value, list) and value:
            return ".".join(str(v) for v in value)
    loc = item.get("loc")
    if isinstance(loc, list):
        parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
        return ".".join(parts) or "body"
    source = item.get("source")
    if isinstance(source, dict):
        return _field_name(source)
    return ""


def _field_errors(value: Any) -> list[FieldError]:
    """Field details in the shapes servers use: lists of dicts, or a dict of field -> messages."""
    if isinstance(value, dict):
        errors = []
        for field, messages in value.items():
            if isinstance(messages, list):
                text = "; ".join(str(m) for m in messages if isinstance(m, (str, int, float)))
            else:
                text = _text_of(messages) or str(messages)
            errors.append(FieldError(str(field), _clip(text)))
        return errors
    if isinstance(value, list):
        errors = []
        for item in value:
            if isinstance(item, dict):
                field = _field_name(item)
                text = _text_of(item) or item.get("reason") or ""
                if field:
                    errors.append(FieldError(field, _clip(str(text))))
        return errors
    return []


def parse_error_body(body: Any) -> tuple[str | None, list[FieldError]]:
    """(message, field errors) from the error bodies real APIs send."""
    if not isinstance(body, dict):
        return _text_of(body), _field_errors(body) if isinstance(body, list) else []
    error = body.get("error")
    fields: list[FieldError] = []
    for source in (
        error.get("details") if isinstance(error, dict) else None,
        error.get("fields") if isinstance(error, dict) else None,
        error.get("errors") if isinstance(error, dict) else None,
        body.get("errors"),
        body.get("detail") if isinstance(body.get("detail"), list) else None,
        body.get("invalid_params"),
        body.get("fields"),
    ):
        fields = _field_errors(source)
        if fields:
            break
    message = None
    for candidate in (
        error,
        body.get("message"),
        body.get("detail") if not isinstance(body.get("detail"), list) else None,
        body.get("error_description"),
        body.get("title"),
        body.get("errors"),
        body.get("detail"),
    ):
        message = _text_of(candidate)
        if message:
            break
    return message, fields


def retry_after_of(response: httpx.Response, cap: float) -> float:
    """Seconds to wait from Retry-After (seconds or an HTTP date), else X-RateLimit-Reset."""
    from tui.api.ratelimit import parse_retry_after, seconds_until_reset

    value = parse_retry_after(response.headers.get("retry-after"))
    if value is None:
        value = seconds_until_reset(response.headers)
    return min(cap, value if value is not None else 1.0)


def error_for_response(
    response: httpx.Response,
    redact: Redact,
    retry_after_cap: float = 60.0,
    *,
    outcome_unknown: bool = False,
) -> ApiError:
    """The typed error for a non-2xx response, its message read from any common error body.

    `outcome_unknown`: the request was a create, and a 5xx may have come after the record was
    made."""
    status = response.status_code
    text = response.text if response.content else ""
    try:
        body: Any = json.loads(text) if text else None
    except (ValueError, RecursionError):
        body = None
    message, fields = parse_error_body(body)
    if message is None and text and body is None:
        content_type = response.headers.get("content-type", "")
        message = "an HTML page" if "html" in content_type else text
    reason = response.reason_phrase or httpx.codes.get_reason_phrase(status) or "error"
    summary = redact(_clip(message)) if message else reason
    full = f"{summary} (HTTP {status})"
    fields_redacted = tuple(FieldError(_clip(redact(f.field)), redact(f.message)) for f in fields)
    if status == 401:
        return Unauthorized(full, status)
    if status == 403:
        return Forbidden(full, status)
    if status == 404:
        return NotFound(full, status)
    if status == 409:
        return Conflict(full, status, fields_redacted)
    if status in (400, 422):
        return ValidationFailed(full, status, fields_redacted)
    if status == 429:
        return RateLimited(full, status, retry_after_of(response, retry_after_cap))
    if status >= 500:
        return ServerError(full, status, outcome_unknown=outcome_unknown)
    return ApiError(full, status)
