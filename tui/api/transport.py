"""The transport every source talks through: one httpx.AsyncClient per base URL, the keys, and
the request loop, apart from the resources (projects, traces, alerts...) that the sources ask.

- Each request carries the key of its project, else the default key (keys.py), put on as it is
  sent; anything a server echoes is redacted.
- GETs are retried with exponential backoff and jitter on connection errors, timeouts, 502, 503
  and 504, within one time budget; after a 429 the client waits its Retry-After (capped), a few
  times. A POST is retried only when the connection was never made.
- Requests are paced per key (ratelimit.py), and each wait longer than a moment is told to
  `on_wait` (the app counts it down).
- Every attempt goes to the API log (request_log.py); redirects are never followed, and a next
  page on another host is never asked with the key.
- An answer's status becomes a typed error in one place (errors.error_for_response), and a
  failure to talk to the server in another (errors.transport_error).
- Each call is bounded: an answer is read as it streams and dropped past `max_body_bytes`
  (ResponseTooLarge), and the whole call (pacing, connecting, every attempt, reading, the waits
  between attempts) must end within `deadline` seconds (DeadlinePassed); httpx's own timeout
  bounds only each read.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, TypedDict, TypeVar
from urllib.parse import urlsplit

import httpx

from tui.api.base_url import normalize_base_url
from tui.api.errors import (
    ApiError,
    ConnectionFailed,
    DeadlinePassed,
    RateLimited,
    ResponseTooLarge,
    error_for_response,
    never_sent,
    transport_error,
)
from tui.api.keys import Keys
from tui.api.pagination import NextPage, cursor_from_url
from tui.api.ratelimit import Pacer, RateBudget, budget_from_headers
from tui.api.request_log import LogEntry, log_entry
from tui.core.urls import is_loopback, join_url, split_url

log = logging.getLogger("tracetui.api")
T = TypeVar("T")
MIN_PACING_SHOWN = 0.5  # the token bucket's short waits are not worth telling anyone about
# The most of one answer read, after decompression. The demo's 100,000-span trace is 54 MB
# (540 bytes a span): this is five times that, 2.7 KB a span at 100,000 spans, and keeps what
# one answer costs the app (about twice the body while it is read) under a gigabyte.
MAX_BODY_BYTES = 256 * 1024 * 1024
# The longest one call may take, its retries and waits included. That 100,000-span trace takes
# 2 s on loopback, and its 54 MB under a minute over a link of 1 MB/s; one Retry-After wait
# (at most 60 s) fits beside a short call.
DEADLINE_SECONDS = 120.0


@dataclass(frozen=True)
class Waiting:
    """The client is about to wait before sending a request again, or at all: `reason` is
    "retry" (after `error`, with backoff), "rate_limit" (a 429's Retry-After) or "pacing" (the
    server's budget is nearly spent). A screen can count the wait down instead of hanging."""

    reason: str
    seconds: float
    error: ApiError | None = None
    next_try: int = 1


class TransportOptions(TypedDict, total=False):
    """How a source's transport behaves; every one has a default (Transport's)."""

    timeout: float  # seconds for one read (connect: at most 10)
    transport: httpx.AsyncBaseTransport | None  # tests' httpx.MockTransport
    max_retries: int  # failed attempts retried, 429 waits apart
    max_rate_limit_retries: int  # 429s waited out
    retry_budget: float  # seconds that a call's transient failures may take in all
    retry_after_cap: float  # the longest Retry-After waited
    pacer: Pacer | None
    sleep: Callable[[float], Awaitable[None]]
    log_size: int  # entries the API log keeps
    on_wait: Callable[[Waiting], None] | None
    max_body_bytes: int  # the most of one answer read (MAX_BODY_BYTES)
    deadline: float  # seconds one call may take in all (DEADLINE_SECONDS)


@dataclass
class _Attempt:
    """One attempt as far as it got: when it was sent (after pacing), its answer's head."""

    started: float | None = None
    response: httpx.Response | None = None


class Transport:
    """Requests to one server, relative to its base URL (or absolute on the same origin)."""

    def __init__(
        self,
        base_url: str,
        keys: Keys,
        *,
        timeout: float = 20.0,
        transport: httpx.AsyncBaseTransport | None = None,
        max_retries: int = 4,
        max_rate_limit_retries: int = 3,
        retry_budget: float = 30.0,
        retry_after_cap: float = 60.0,
        pacer: Pacer | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        log_size: int = 500,
        on_wait: Callable[[Waiting], None] | None = None,
        max_body_bytes: int = MAX_BODY_BYTES,
        deadline: float = DEADLINE_SECONDS,
    ) -> None:
        self.keys = keys
        self.base_url = normalize_base_url(base_url)
        self.scheme, self.host = urlsplit(self.base_url)[:2]
        self._on_loopback = is_loopback(urlsplit(self.base_url).hostname or "")
        self.max_retries = max_retries
        self.max_rate_limit_retries = max_rate_limit_retries
        self.retry_budget = retry_budget
        self.retry_after_cap = retry_after_cap
        self.max_body_bytes = max_body_bytes
        self.deadline = deadline
        self.pacer = pacer or Pacer()
        self._sleep = sleep
        # Told of every wait longer than a moment (the app counts it down on screen).
        self.on_wait = on_wait
        self.log: deque[LogEntry] = deque(maxlen=log_size)
        self.budgets: dict[str, RateBudget] = {}
        self.latest_budget: RateBudget | None = None
        self._http = httpx.AsyncClient(
            base_url=self.base_url + "/",
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            transport=transport,
            follow_redirects=False,  # a redirect could carry the key to another host
            # Plain HTTP needs no TLS context, and building one (CA bundle) costs 30 ms of
            # start-up. Only base_url's scheme and host are ever requested (next_page_target).
            verify=self.scheme != "http",
            headers={"Accept": "application/json", "User-Agent": "tracetui"},
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    @property
    def is_closed(self) -> bool:
        return self._http.is_closed

    def redact(self, text: str) -> str:
        """`text` with every key this transport holds replaced (servers sometimes echo them)."""
        return self.keys.redact(text)

    async def request(
        self,
        method: str,
        url: str,
        *,
        project_id: str | None = None,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        idempotency_key: str | None = None,
    ) -> httpx.Response:
        """The answer (2xx) to one call, its body read, after the retries and waits it is
        allowed; else the typed error of its last attempt."""
        is_get = method == "GET"
        key_name = self.keys.name_for(project_id)
        auth = self.keys.auth_for(project_id)
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        request = partial(
            self._http.build_request, method, url, params=params, json=body, headers=headers
        )
        now = time.monotonic()
        deadline, retry_deadline = now + self.deadline, now + self.retry_budget
        # `tries` counts every request sent (the API log shows it); `failures` only the failed
        # attempts that count against max_retries: waiting out a 429 is not one of them.
        tries = failures = rate_limited = 0
        while True:
            tries += 1
            attempt = _Attempt()
            delay: float | None = None
            try:
                sending = self._send(attempt, request(), auth, key_name, not is_get)
                response = await _within(deadline, sending)
            except asyncio.TimeoutError:
                error: ApiError = DeadlinePassed(
                    f"{self.host} had not finished answering after {self.deadline:g} s, the "
                    "longest tracetui waits for one call: it stopped waiting",
                    outcome_unknown=not is_get and attempt.started is not None,
                )
                retryable = False
            except ResponseTooLarge as too_large:
                error, retryable = too_large, False
            except (httpx.TransportError, httpx.InvalidURL) as exc:
                error = transport_error(exc, self.host, is_get=is_get)
                log.debug("%s %s: %s", method, url, self.redact(repr(exc)))
                # One that never reached the server is safe to send again, even a POST.
                retryable = never_sent(exc) or (is_get and not isinstance(exc, httpx.InvalidURL))
            else:
                if response.status_code < 300:
                    self._record(method, attempt, url, tries)
                    return response
                error = error_for_response(
                    response, self.redact, self.retry_after_cap, outcome_unknown=not is_get
                )
                retryable = is_get and response.status_code in (502, 503, 504)
                if isinstance(error, RateLimited):
                    rate_limited += 1
                    retryable = is_get and rate_limited <= self.max_rate_limit_retries
                    delay = error.retry_after
            self._record(method, attempt, url, tries, error)
            if delay is None:
                failures += 1
            if isinstance(error, ConnectionFailed) and self._on_loopback and failures > 1:
                # Nothing listens on this machine's port: no point in trying for long.
                retryable = False
            if not retryable or failures > self.max_retries:
                raise error
            reason = "rate_limit" if delay is not None else "retry"
            if delay is None:  # transient failures share one time budget; 429 waits are capped
                delay = self._backoff(failures)
                if time.monotonic() + delay > retry_deadline:
                    raise error
            if time.monotonic() + delay > deadline:  # the call would end past its deadline
                raise error
            self._waiting(Waiting(reason, delay, error, tries + 1))
            await self._sleep(delay)

    async def _send(
        self,
        attempt: _Attempt,
        request: httpx.Request,
        auth: httpx.Auth,
        key_name: str,
        outcome_unknown: bool,
    ) -> httpx.Response:
        """One attempt: paced, sent, its answer's head observed and its body read (bounded)."""
        await self.pacer.acquire(key_name, self._pacing_wait)
        attempt.started = time.monotonic()
        response = attempt.response = await self._http.send(request, auth=auth, stream=True)
        try:
            self._observe(key_name, response)
            await self._read_body(response, outcome_unknown)
        finally:
            await response.aclose()
        return response

    async def _read_body(self, response: httpx.Response, outcome_unknown: bool) -> None:
        """The answer's body read as it streams (decompressed), kept as its content; past
        max_body_bytes, ResponseTooLarge, and what was read is let go. A Content-Length over
        it is refused before anything is read."""
        limit = self.max_body_bytes
        declared = response.headers.get("content-length", "")
        chunks: list[bytes] = []
        size = int(declared) if declared.isdigit() else 0
        if size <= limit:
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > limit:
                    break
                chunks.append(chunk)
        if size > limit:
            chunks.clear()
            raise ResponseTooLarge(
                f"{self.host}'s answer is over {_bytes(limit)}, more than tracetui reads of one "
                f"answer: it stopped reading (HTTP {response.status_code})",
                response.status_code,
                limit=limit,
                outcome_unknown=outcome_unknown,
            )
        # What Response.aread keeps, so that .content, .text and .json() read it.
        response._content = b"".join(chunks)

    def next_page_target(
        self, url: str, params: dict[str, Any], page: NextPage | None
    ) -> tuple[str, dict[str, Any]] | None:
        """(url, params) of the page after `page` of the list at `url`; None when it cannot be
        followed safely (a next-page link to another host without a cursor to take from it)."""
        if page is None:
            return url, params
        if page.cursor is not None:
            return url, {**params, "cursor": page.cursor}
        assert page.url is not None
        absolute = join_url(self.base_url + "/", page.url) or ""
        parts = split_url(absolute)
        if parts is not None and (parts.scheme, parts.netloc) == (self.scheme, self.host):
            return absolute, {}
        cursor = cursor_from_url(page.url)
        if cursor is not None:  # another host: take its cursor, never send our key there
            return url, {**params, "cursor": cursor}
        log.warning("not following a next-page link to another host")
        return None

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with full jitter: about 0.25, 0.5, 1, 2... seconds, at most 8."""
        return float(min(8.0, 0.25 * 2 ** (attempt - 1)) * random.uniform(0.5, 1.5))

    def _record(
        self, method: str, attempt: _Attempt, url: str, tries: int, error: ApiError | None = None
    ) -> None:
        response = attempt.response
        where = str(response.request.url) if response is not None else url
        started = attempt.started if attempt.started is not None else time.monotonic()
        entry = log_entry(method, where, started, tries, self.redact, response, error)
        self.log.append(entry)

    def _pacing_wait(self, seconds: float) -> None:
        if seconds >= MIN_PACING_SHOWN:
            self._waiting(Waiting("pacing", seconds))

    def _waiting(self, waiting: Waiting) -> None:
        if self.on_wait is not None:
            self.on_wait(waiting)

    def _observe(self, key_name: str, response: httpx.Response) -> None:
        budget = budget_from_headers(response.headers)
        if budget is None:
            return
        # Concurrent responses can arrive out of order: within one window, the lowest count
        # left is the true one.
        known = self.budgets.get(key_name)
        if (
            known is not None
            and known.reset_at == budget.reset_at
            and known.remaining is not None
            and budget.remaining is not None
            and known.remaining < budget.remaining
        ):
            budget = known
        self.budgets[key_name] = budget
        self.latest_budget = budget
        self.pacer.observe(key_name, budget)


async def _within(deadline: float, call: Coroutine[Any, Any, T]) -> T:
    """`call`'s result, or asyncio.TimeoutError once the monotonic clock passes `deadline`."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        call.close()
        raise asyncio.TimeoutError
    return await asyncio.wait_for(call, remaining)


def _bytes(count: int) -> str:
    """A size as people read it: 256 MiB, 64 KiB, 900 bytes."""
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size:
            return f"{count / size:.3g} {unit}"
    return f"{count} bytes"
