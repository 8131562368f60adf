"""The API log: one entry per request sent, as the API log screen shows it. An entry keeps the
method, the URL with any key scrubbed out, the outcome and the rate-limit headers; never a
request header (the Authorization header is not kept anywhere)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from tui.api.errors import ApiError

log = logging.getLogger("tracetui.api")


@dataclass(frozen=True)
class LogEntry:
    """One request as the API log screen shows it (the Authorization header is never kept)."""

    at: float
    method: str
    url: str
    status: int | None
    elapsed_ms: float
    attempt: int
    rate_limit: dict[str, str] = field(default_factory=dict)
    error: str | None = None


def rate_limit_headers(response: httpx.Response | None) -> dict[str, str]:
    """The answer's X-RateLimit-* and Retry-After headers (what the log shows of the budget)."""
    if response is None:
        return {}
    return {
        k: v
        for k, v in response.headers.items()
        if k.lower().startswith("x-ratelimit") or k.lower() == "retry-after"
    }


def log_entry(
    method: str,
    url: str,
    started: float,
    attempt: int,
    redact: Callable[[str], str],
    response: httpx.Response | None = None,
    error: ApiError | None = None,
) -> LogEntry:
    """The entry of one attempt that began at `started` (time.monotonic()), also sent to the
    debug log; `redact` scrubs keys a URL might carry."""
    if response is not None:
        status: int | None = response.status_code
    else:
        status = error.status if error else None
    entry = LogEntry(
        at=time.time(),
        method=method,
        url=redact(url),
        status=status,
        elapsed_ms=(time.monotonic() - started) * 1000,
        attempt=attempt,
        rate_limit=rate_limit_headers(response),
        error=error.message if error else None,
    )
    log.debug("%s %s -> %s in %.0f ms", entry.method, entry.url, entry.status, entry.elapsed_ms)
    return entry
