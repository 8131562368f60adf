"""Per-key fixed-window rate limiting, as an ASGI middleware that also stamps the headers.

A bucket is the verified key's identity (the hash of a key the store knows), read from the
header as the routes read it (auth.bearer_token): a key spelled `bearer K` or with extra spaces
is the same key, and a request without a known key counts against its client address, so a
flood of made-up keys gets one budget, not one each. The table of windows is bounded (least
recently used first out): no caller can grow it without end.

Requests with a JSON body are authenticated here, before their body is read: without a known
key the answer is 401 at once, and a body over MAX_API_BODY_BYTES is refused with 413 as it
arrives (OTLP ingest reads and limits its own body, after checking its key).

Every response, errors included, carries X-RateLimit-Limit, X-RateLimit-Remaining and
X-RateLimit-Reset (unix seconds). Past the limit the answer is 429 with Retry-After in seconds.
OTLP ingest (POST /v1/traces) counts against a budget of its own, larger and separate from the
API's: a busy application sends a batch every few seconds per process, and that must not eat
the budget a developer's app browses with. Its 429 is in the request's encoding (OTLP).
Replicas on one database share the count (SharedRateLimiter, chosen when the store is shared):
windows are fixed in time (they start at multiples of the window since the epoch, so every
replica counts in the same one, their clocks agreeing as NTP keeps them) and each request adds one to its bucket's row in the store
and reads back the total of every replica, one upsert (about 0.1 ms on PostgreSQL): the limit
holds across replicas as it does in one process. Given `identify_counted`, a key's look-up and
its count are one store call (one statement on PostgreSQL) instead of two round trips. Once a window is spent the replica refuses
its bucket's requests without asking the store, until the window ends, so a flood of refused
requests costs the database nothing. If the store cannot count (it is unreachable), the
replica counts in memory meanwhile: the limit holds per replica, and the routes answer 503.
A request whose key cannot be looked up (the database unreachable or busy) is answered 503
with Retry-After, as the routes answer a refused write, and counted against its address.
The middleware is also the service's last error boundary: an unexpected exception becomes a
plain JSON 500 (with the headers), never a stack trace on the wire.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from starlette.concurrency import run_in_threadpool

from tui.server.api_keys import hash_key
from tui.server.http.auth import MALFORMED, MISSING, UNKNOWN, Malformed, bearer_token
from tui.server.http.errors import error_json, refused_write
from tui.server.ingest.responses import answer_type, failure
from tui.server.store.errors import StoreBusy

log = logging.getLogger("tracetui.server")

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[Message], Any]
ASGIApp = Callable[[Scope, Receive, Send], Any]
# A key -> None if the store does not know it, else its identity (the key's hash) and what the
# check found (its scope), which the routes take from the request's state instead of asking
# the store again.
Identify = Callable[[str], "tuple[str, object] | None"]
VERIFIED = "verified_key"  # in the request's state: (the identity, what identify found); no key
# A key, the name of its bucket's row in the store and the bucket's window (its start, epoch
# ms) -> None if the store does not know the key (nothing counted), else what Identify gives
# and the window's total across replicas with this request: the look-up and the count in one
# store call.
IdentifyCounted = Callable[[str, str, int], "tuple[str, object, int] | None"]

STORE_BACKOFF_S = 5.0  # how long the shared limiter counts locally after the store failed
MAX_BUCKETS = 10_000  # windows kept; the least recently used goes first past this
MAX_API_BODY_BYTES = 1024 * 1024  # a JSON API body (projects, alerts); OTLP has its own limit
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


@dataclass(frozen=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int
    reset_at: int  # unix seconds
    retry_after: int  # seconds; meaningful when not allowed


class RateLimiter:
    """Counts requests per bucket in fixed windows that start with a bucket's first request,
    in this process's memory."""

    blocking = False

    def __init__(
        self,
        limit: int,
        window_s: float = 60.0,
        clock: Callable[[], float] = time.time,
        max_buckets: int = MAX_BUCKETS,
    ) -> None:
        self.limit = limit
        self.window_s = window_s
        self.clock = clock
        self.max_buckets = max_buckets
        self._windows: OrderedDict[str, tuple[float, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._windows)

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
            self._windows.move_to_end(bucket)
            if len(self._windows) > self.max_buckets:
                self._windows.popitem(last=False)
        reset = start + self.window_s
        return Decision(
            allowed=count <= self.limit,
            limit=self.limit,
            remaining=max(0, self.limit - count),
            reset_at=math.ceil(reset),
            retry_after=max(1, math.ceil(reset - now)),
        )


class Limiter(Protocol):
    """What the middleware needs of a limiter. `blocking`: `hit` may wait on a store (it is
    called in a worker thread, not on the event loop)."""

    limit: int
    window_s: float
    blocking: bool

    def hit(self, bucket: str) -> Decision: ...

    def reset(self) -> None: ...


# Adds hits to a bucket's window (its start in epoch ms) and returns the window's total.
CountRequests = Callable[[str, int, int], int]
ForgetCounts = Callable[[], object]


class SharedRateLimiter:
    """Counts requests per bucket in fixed windows, in a store that several replicas share
    (see the module's docstring). `name` keeps this limiter's buckets apart from another's
    (the API's and OTLP ingest's budgets)."""

    blocking = True

    def __init__(
        self,
        name: str,
        count: CountRequests,
        forget: ForgetCounts,
        limit: int,
        window_s: float = 60.0,
        clock: Callable[[], float] = time.time,
        max_buckets: int = MAX_BUCKETS,
    ) -> None:
        self.name = name
        self.count = count
        self.forget = forget
        self.limit = limit
        self.window_s = window_s
        self.clock = clock
        self.max_buckets = max_buckets
        # Buckets whose current window is spent, by the window's start: refused without
        # asking the store. Bounded as RateLimiter's table is.
        self._spent: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()
        self._local = RateLimiter(limit, window_s, clock, max_buckets)  # the store unreachable
        self._store_down_until = 0.0  # clock(): counted locally, the store not asked, until then

    def __len__(self) -> int:
        return len(self._spent)

    def reset(self) -> None:
        """Forget every window, this replica's and the store's."""
        with self._lock:
            self._spent.clear()
        self._local.reset()
        self.forget()

    def window_start(self, now: float) -> float:
        """The start of the window `now` is in (clock seconds)."""
        return now - now % self.window_s

    def row_of(self, bucket: str) -> str:
        """The name of `bucket`'s row in the store (this limiter's buckets apart)."""
        return f"{self.name}:{bucket}"

    def asks_store(self, bucket: str, now: float) -> bool:
        """Whether a hit on `bucket` at `now` is counted in the store: its window is not spent
        and the store has not failed lately."""
        with self._lock:
            spent = self._spent.get(bucket) == self.window_start(now)
        return not spent and now >= self._store_down_until

    def hit(self, bucket: str) -> Decision:
        now = self.clock()
        start = self.window_start(now)
        with self._lock:
            spent = self._spent.get(bucket) == start
        if spent:
            count = self.limit + 1
        elif now < self._store_down_until:
            return self._local.hit(bucket)
        else:
            try:
                count = self.count(self.row_of(bucket), int(start * 1000), 1)
            except Exception as error:
                # Counted in this replica's memory for a while: a store that cannot count
                # is not asked again by every request meanwhile.
                log.warning("shared rate limit not counted (%s)", type(error).__name__)
                self._store_down_until = now + STORE_BACKOFF_S
                return self._local.hit(bucket)
        return self.counted(bucket, count, now)

    def counted(self, bucket: str, count: int, now: float) -> Decision:
        """The decision on a hit at `now` that the store counted: `count` is its window's
        total with it (from `hit`, or from the key's look-up: IdentifyCounted)."""
        start = self.window_start(now)
        if count > self.limit:
            with self._lock:
                self._spent[bucket] = start
                self._spent.move_to_end(bucket)
                if len(self._spent) > self.max_buckets:
                    self._spent.popitem(last=False)
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


OTLP_PATHS = frozenset(("/v1/traces", "/v1/logs", "/v1/metrics"))  # ingest budget and body rules


def is_ingest(scope: Scope) -> bool:
    return scope.get("method") == "POST" and scope.get("path") in OTLP_PATHS


def header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def client_bucket(scope: Scope) -> str:
    client = scope.get("client") or ("unknown", 0)
    return f"ip:{client[0]}"


class RateLimitMiddleware:
    """Identifies the caller's key, applies the limiter before the app runs, authenticates
    requests with a JSON body before reading it, and adds the headers to whatever it answers.
    Without `identify`, every caller counts against its address and nothing is authenticated
    here (the routes still are). With `identify_counted` (replicas sharing a store), a known
    key's look-up also counts its request in the shared limiter's window, in one store call;
    `identify_counted` must name a key by the identity `identify` gives it (its hash)."""

    def __init__(
        self,
        app: ASGIApp,
        limiter: Limiter,
        ingest_limiter: Limiter | None = None,
        identify: Identify | None = None,
        max_api_body: int = MAX_API_BODY_BYTES,
        identify_counted: IdentifyCounted | None = None,
    ) -> None:
        self.app = app
        self.limiter = limiter
        self.ingest_limiter = ingest_limiter
        self.identify = identify
        self.max_api_body = max_api_body
        self.identify_counted = identify_counted

    async def caller(
        self, scope: Scope, limiter: Limiter
    ) -> tuple[str | None, str | None, Decision | None]:
        """The verified key's identity (None if there is no known key); when the key is
        missing, malformed or unknown, what a 401 would say; and the limiter's decision if the
        look-up counted the request already (IdentifyCounted), else None."""
        try:
            token = bearer_token(header(scope, b"authorization"))
        except Malformed:
            return None, MALFORMED, None
        if token is None:
            return None, MISSING, None
        if self.identify is None:
            return None, None, None
        decision = None
        counting = self.identify_counted
        now = limiter.clock() if isinstance(limiter, SharedRateLimiter) else 0.0
        bucket = f"key:{hash_key(token)}" if counting is not None else ""
        if (
            counting is not None
            and isinstance(limiter, SharedRateLimiter)
            and limiter.asks_store(bucket, now)
        ):
            window = int(limiter.window_start(now) * 1000)
            counted = await run_in_threadpool(counting, token, limiter.row_of(bucket), window)
            if counted is None:
                return None, UNKNOWN, None
            identity, verified, count = counted
            decision = limiter.counted(f"key:{identity}", count, now)
        else:
            # A spent window (or a store that failed to count) is decided without counting,
            # but the key is still looked up: a revoked key stops at once.
            found = await run_in_threadpool(self.identify, token)
            if found is None:
                return None, UNKNOWN, None
            identity, verified = found
        scope.setdefault("state", {})[VERIFIED] = (identity, verified)
        return identity, None, decision

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        ingest = self.ingest_limiter is not None and is_ingest(scope)
        limiter = (
            self.ingest_limiter if ingest and self.ingest_limiter is not None else self.limiter
        )
        try:
            identity, refusal, counted = await self.caller(scope, limiter)
        except StoreBusy as error:
            # The key could not be looked up (the database is unreachable or busy): 503 with
            # Retry-After, which clients and OTLP exporters retry, counted against the address.
            decision = await hit(limiter, client_bucket(scope))
            code, message, retry_after = refused_write(error)
            retry = [*rate_headers(decision), (b"retry-after", str(retry_after).encode())]
            if ingest:
                answer = answer_type(header(scope, b"content-type"))
                body = failure(answer, 503, code, message)
                await send_json(send, 503, body, retry, answer.encode())
            else:
                await send_json(send, 503, error_json(503, code, message), retry)
            return
        bucket = f"key:{identity}" if identity is not None else client_bucket(scope)
        decision = counted or await hit(limiter, bucket)
        headers = rate_headers(decision)
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
        if not ingest and scope.get("method") in BODY_METHODS and self.identify is not None:
            if refusal is not None:  # before a byte of the body is read
                await send_json(send, 401, error_json(401, "unauthorized", refusal), headers)
                return
            length = header(scope, b"content-length")
            payload = await read_limited(receive, length, self.max_api_body)
            if payload is None:
                limit = f"{self.max_api_body // 1024} KiB"
                message = f"The request body is over {limit}; send a smaller one."
                await send_json(send, 413, error_json(413, "payload_too_large", message), headers)
                return
            receive = given_again(payload, receive)

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
            # Logged by method and route template only: a local variable, or the path itself
            # (a key pasted into a URL), could hold a secret.
            route = getattr(scope.get("route"), "path", "an unrouted path")
            log.error("internal error on %s %s", scope.get("method"), route)
            if not started:
                body = error_json(500, "internal_error", "The service failed unexpectedly.")
                await send_json(send, 500, body, headers)


async def hit(limiter: Limiter, bucket: str) -> Decision:
    """One request counted against `bucket`, in a worker thread if the limiter may block."""
    if limiter.blocking:
        return await run_in_threadpool(limiter.hit, bucket)
    return limiter.hit(bucket)


def rate_headers(decision: Decision) -> list[tuple[bytes, bytes]]:
    return [
        (b"x-ratelimit-limit", str(decision.limit).encode()),
        (b"x-ratelimit-remaining", str(decision.remaining).encode()),
        (b"x-ratelimit-reset", str(decision.reset_at).encode()),
    ]


async def read_limited(receive: Receive, length: str | None, limit: int) -> bytes | None:
    """The whole request body, or None as soon as it is known to be over `limit` bytes (by its
    Content-Length, or as it arrives): never more than `limit` bytes are held."""
    if length is not None and (not length.strip().isdigit() or int(length) > limit):
        return None
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client went away: the app sees it too
            return bytes(body)
        body += message.get("body", b"")
        if len(body) > limit:
            return None
        if not message.get("more_body", False):
            return bytes(body)


def given_again(body: bytes, receive: Receive) -> Receive:
    """A receive that gives the app `body` once, then what the connection says next."""
    sent = False

    async def receive_again() -> Message:
        nonlocal sent
        if sent:
            return await receive()  # type: ignore[no-any-return]
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive_again


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
