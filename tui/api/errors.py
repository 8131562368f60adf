"""Typed API errors, and the two functions that make them: `error_for_response` turns an HTTP
answer into one, `transport_error` a failure to talk to the server at all.

Each error carries a short title and a human message. An answer's message is taken from
whichever common error body the server sent (error_bodies.py) and always names the HTTP
status; a transport failure's says in words what happened (nothing listening, a name DNS does
not know, a TLS certificate refused, no answer in time), read from the exception's causes,
never its class name.
Validation errors carry the field details. Messages never contain an API key: the client
redacts its keys from anything a server echoes.
"""

from __future__ import annotations

import errno
import json
import socket
import ssl
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from tui.api.error_bodies import FieldError as FieldError  # the errors' own field details
from tui.api.error_bodies import clip, parse_error_body
from tui.core.urls import split_url


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


class ResponseTooLarge(ApiError):
    """The answer was larger than the client reads of one answer (`limit` bytes, after
    decompression): it stopped reading, and nothing of it is kept."""

    title = "The answer was too big"

    def __init__(
        self, message: str, status: int | None, *, limit: int, outcome_unknown: bool = False
    ) -> None:
        super().__init__(message, status, outcome_unknown=outcome_unknown)
        self.limit = limit


class DeadlinePassed(TimedOut):
    """The call did not finish within the client's deadline: connecting, every attempt, the
    answer's reading and the waits between them, all counted."""

    title = "The call took too long"


class NotOffered(ApiError):
    """The server does not offer this action (its OpenAPI document does not list it): said in
    words, before any request is sent."""

    title = "Not offered by this server"


Redact = Callable[[str], str]


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
    A redirect is one too: it is never followed (it could carry the key to another host).

    `outcome_unknown`: the request was a create, and a 5xx may have come after the record was
    made."""
    status = response.status_code
    if 300 <= status < 400:
        parts = split_url(response.headers.get("location", ""))
        target = (parts.netloc if parts else "") or "elsewhere"
        return BadResponse(
            redact(f"The server redirected to {target}; not followed (HTTP {status})"), status
        )
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
    summary = redact(clip(message)) if message else reason
    full = f"{summary} (HTTP {status})"
    fields_redacted = tuple(FieldError(clip(redact(f.field)), redact(f.message)) for f in fields)
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


# -- a failure to talk to the server, in words ---------------------------------------------------

# What httpx's exception classes mean when no cause in the chain says more.
_CLASS_SENTENCES: tuple[tuple[type[Exception], str], ...] = (
    (httpx.ConnectTimeout, "the connection was not accepted in time; is the address reachable?"),
    (httpx.ReadTimeout, "it took too long to answer"),
    (httpx.WriteTimeout, "the request could not be sent in time"),
    (httpx.PoolTimeout, "too many requests were already waiting"),
    (httpx.ProxyError, "the proxy refused the connection"),
    (httpx.UnsupportedProtocol, "the address does not start with http:// or https://"),
    (
        httpx.ConnectError,
        "nothing answered there; is the service running, and is the address right?",
    ),
    (httpx.ReadError, "the connection broke while the answer was read"),
    (httpx.WriteError, "the connection broke while the request was sent"),
    (httpx.RemoteProtocolError, "the server closed the connection without a full answer"),
    (httpx.LocalProtocolError, "the request could not be sent as HTTP"),
)
_UNREACHABLE = (errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ENETDOWN, errno.EHOSTDOWN)


def _causes(error: BaseException) -> Iterator[BaseException]:
    """`error` and what it was raised from, outermost first (bounded: a chain can loop)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen and len(seen) < 20:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _cause_sentence(cause: BaseException) -> str | None:
    """What an operating system's or TLS's own error means, or None for one that says no more
    than httpx's class."""
    if isinstance(cause, ssl.SSLCertVerificationError):
        why = clip(str(cause.verify_message or "")) or "not trusted"
        return f"its TLS certificate was refused ({why}); is it the right host?"
    if isinstance(cause, ssl.SSLError):
        why = cause.reason or "handshake failed"
        return f"the TLS handshake failed ({why}); does the server speak https:// there?"
    if isinstance(cause, socket.gaierror):
        return "the host name could not be found (DNS); is it spelt right?"
    if isinstance(cause, ConnectionRefusedError):
        return (
            "nothing answered there (connection refused); is the service running, and is the "
            "address right?"
        )
    if isinstance(cause, ConnectionResetError):
        return "the server reset the connection"
    if isinstance(cause, OSError) and cause.errno in _UNREACHABLE:
        return "no network route leads there; is the address reachable from here?"
    return None


def transport_sentence(error: BaseException) -> str:
    """What a failure to talk to a server means, as the end of a sentence a user reads: from the
    first cause in the exception's chain that says more than its class (connection refused, a
    name DNS does not know, a TLS certificate refused), else from httpx's class."""
    for cause in _causes(error):
        sentence = _cause_sentence(cause)
        if sentence is not None:
            return sentence
    for cls, sentence in _CLASS_SENTENCES:
        if isinstance(error, cls):
            return sentence
    return "the network connection failed"


def transport_error(error: Exception, host: str, *, is_get: bool) -> ApiError:
    """The typed error for a request that got no answer: ConnectionFailed (never reached the
    server, or broke mid-request), TimedOut, or BadResponse for a redirect whose address is
    not a URL. A create that may have reached the server is `outcome_unknown`."""
    sentence = transport_sentence(error)
    if isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout)):
        return ConnectionFailed(f"Cannot connect to {host}: {sentence}", None)
    if isinstance(error, httpx.TimeoutException):
        return TimedOut(
            f"{host} did not answer in time: {sentence}",
            outcome_unknown=not is_get and not isinstance(error, httpx.PoolTimeout),
        )
    if isinstance(error, httpx.InvalidURL):
        # httpx reads a redirect's Location even when it does not follow it, and one that is
        # not a URL raises: the server's answer is at fault, not the call.
        return BadResponse(
            f"{host} redirected to an address that is not a URL; not followed",
            None,
            outcome_unknown=not is_get,
        )
    return ConnectionFailed(
        f"The connection to {host} failed mid-request: {sentence}", outcome_unknown=not is_get
    )


def never_sent(error: Exception) -> bool:
    """Whether a transport failure happened before the request reached the server (so that
    sending it again cannot do anything twice)."""
    return isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout))
