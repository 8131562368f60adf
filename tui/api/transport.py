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
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict
from urllib.parse import urlsplit

import httpx

from tui.api.base_url import normalize_base_url
from tui.api.errors import (
    ApiError,
    ConnectionFailed,
    RateLimited,
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
MIN_PACING_SHOWN = 0.5  # the token bucket's short waits are not worth telling anyone about


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
    ) -> None:
        self.keys = keys
        self.base_url = normalize_base_url(base_url)
        self.scheme, self.host = urlsplit(self.base_url)[:2]
        self._on_loopback = is_loopback(urlsplit(self.base_url).hostname or "")
        self.max_retries = max_retries
        self.max_rate_limit_retries = max_rate_limit_retries
        self.retry_budget = retry_budget
        self.retry_after_cap = retry_after_cap
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
        """The answer (2xx) to one call, after the retries and waits it is allowed; else the
        typed error of its last attempt."""
        is_get = method == "GET"
        key_name = self.keys.name_for(project_id)
        auth = self.keys.auth_for(project_id)
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        deadline = time.monotonic() + self.retry_budget
        # `tries` counts every request sent (the API log shows it); `failures` only the failed
        # attempts that count against max_retries: waiting out a 429 is not one of them.
        tries = failures = rate_limited = 0
        while True:
            tries += 1
            await self.pacer.acquire(key_name, self._pacing_wait)
            started = time.monotonic()
            response: httpx.Response | None = None
            delay: float | None = None
            try:
                response = await self._http.request(
                    method, url, params=params, json=body, headers=headers, auth=auth
                )
            except (httpx.TransportError, httpx.InvalidURL) as exc:
                error: ApiError = transport_error(exc, self.host, is_get=is_get)
                log.debug("%s %s: %s", method, url, self.redact(repr(exc)))
                # One that never reached the server is safe to send again, even a POST.
                retryable = never_sent(exc) or (is_get and not isinstance(exc, httpx.InvalidURL))
            else:
                self._observe(key_name, response)
                if response.status_code < 300:
                    self._record(method, str(response.request.url), started, tries, response)
                    return response
                error = error_for_response(
                    response, self.redact, self.retry_after_cap, outcome_unknown=not is_get
                )
                retryable = is_get and response.status_code in (502, 503, 504)
                if isinstance(error, RateLimited):
                    rate_limited += 1
                    retryable = is_get and rate_limited <= self.max_rate_limit_retries
                    delay = error.retry_after
            where = str(response.request.url) if response else url
            self._record(method, where, started, tries, response, error)
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
                if time.monotonic() + delay > deadline:
                    raise error
            self._waiting(Waiting(reason, delay, error, tries + 1))
            await self._sleep(delay)

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
        self,
        method: str,
        url: str,
        started: float,
        attempt: int,
        response: httpx.Response | None = None,
        error: ApiError | None = None,
    ) -> None:
        self.log.append(log_entry(method, url, started, attempt, self.redact, response, error))

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
