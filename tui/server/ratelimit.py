"""Per-key fixed-window rate limiting, as an ASGI middleware that also stamps the headers.

Every response, errors included, carries X-RateLimit-Limit, X-RateLimit-Remaining and
X-RateLimit-Reset (unix seconds). Past the limit the answer is 429 with Retry-After in seconds.
OTLP ingest (POST /v1/traces) counts against a budget of its own, larger and separate from the
API's: a busy application sends a batch every few seconds per process, and that must not eat
the budget a developer's app browses with. Its 429 is in the request's encoding (OTLP).
The middleware is also the service's last error boundary: an unexpected exception becomes a
plain JSON 500 (with the headers), never a stack trace on the wire.
"""

from __future__ import annotations

import hashlib
import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tui.server.errors import error_json
from tui.server.ingest.responses import answer_type, failure

log = logging.getLogger("tracetui.server")

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[Message], Any]
ASGIApp = Callable[[Scope, Receive, Send], Any]


@dataclass(frozen=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int
    reset_at: int  # unix seconds
    retry_after: int  # seconds; meaningful when not allowed


class RateLimiter:
    """Counts requests per bucket in fixed windows that start with a bucket's first request."""

    def __init__(
        self, limit: int, window_s: float = 60.0, clock: Callable[[], float] = time.time
    ) -> None:
        self.limit = limit
        self.window_s = window_s
        self.clock = clock
        self._windows: dict[str, tuple[float, int]] = {}
        self._lock = threading.Lock()

    def reset(self) -> None:
        """Forget every window (tests and screenshots start each scene with a full budget)."""
        with self._lock:
            self._windows.clear()

    def hit(self, bucket: str) -> Decision:
        now = self.clock()
        with self._lock:
            start, count = self._windows.get(bucket, (now, 0))
            if now >= start + self.window_s:
                start, count = now, 0
            count += 1
            self._windows[bucket] = (start, count)
            if len(self._windows) > 10_000:  # forget finished windows of long-gone callers
                self._windows = {
                    b: w for b, w in self._windows.items() if now < w[0] + self.window_s
                }
        reset = start + self.window_s
        return Decision(
            allowed=count <= self.limit,
            limit=self.limit,
            remaining=max(0, self.limit - count),
            reset_at=math.ceil(reset),
            retry_after=max(1, math.ceil(reset - now)),
        )


def per_window(window_s: float) -> str:
    """The window as the 429 message says it: "per minute", or "per 5 s" when it is not one."""
    return "per minute" if window_s == 60 else f"per {window_s:g} s"


def is_ingest(scope: Scope) -> bool:
    return scope.get("method") == "POST" and scope.get("path") == "/v1/traces"


def header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def bucket_for(scope: Scope) -> str:
    """A key's bucket is the hash of its bearer token; callers without one share their IP's."""
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            return "key:" + hashlib.sha256(value).hexdigest()
    client = scope.get("client") or ("unknown", 0)
    return f"ip:{client[0]}"


class RateLimitMiddleware:
    """Applies the limiter before the app runs, and adds the headers to whatever it answers."""

    def __init__(
        self, app: ASGIApp, limiter: RateLimiter, ingest_limiter: RateLimiter | None = None
    ) -> None:
        self.app = app
        self.limiter = limiter
        self.ingest_limiter = ingest_limiter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        ingest = self.ingest_limiter is not None and is_ingest(scope)
        limiter = self.ingest_limiter if ingest and self.ingest_limiter else self.limiter
        decision = limiter.hit(bucket_for(scope))
        headers = [
            (b"x-ratelimit-limit", str(decision.limit).encode()),
            (b"x-ratelimit-remaining", str(decision.remaining).encode()),
            (b"x-ratelimit-reset", str(decision.reset_at).encode()),
        ]
        if not decision.allowed:
            message = (
                f"Rate limit of {decision.limit} {'ingest ' if ingest else ''}requests "
                f"{per_window(limiter.window_s)} exceeded; retry in {decision.retry_after} s."
            )
            retry = [*headers, (b"retry-after", str(decision.retry_after).encode())]
            if ingest:
                answer = answer_type(header(scope, b"content-type"))
                body = failure(answer, 429, "rate_limited", message)
                await send_json(send, 429, body, retry, answer.encode())
            else:
                await send_json(send, 429, error_json(429, "rate_limited", message), retry)
            return

        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message["headers"] = [*message.get("headers", []), *headers]
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception:
            # Logged by type and place only: a local variable could hold a key.
            log.error("internal error on %s %s", scope.get("method"), scope.get("path"))
            if not started:
                body = error_json(500, "internal_error", "The service failed unexpectedly.")
                await send_json(send, 500, body, headers)


async def send_json(
    send: Send,
    status: int,
    body: bytes,
    headers: list[tuple[bytes, bytes]],
    content_type: bytes = b"application/json",
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
