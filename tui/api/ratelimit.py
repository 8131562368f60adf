"""Rate-limit awareness: the server's budget as last seen, Retry-After parsing, client pacing.

The spec allows 1000 requests per minute per key. The pacer keeps the client under that on its
own (a token bucket per key), and when the server says the budget is nearly spent it waits for
the window to reset rather than spending the last requests and then hitting 429s.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime


@dataclass(frozen=True)
class RateBudget:
    """X-RateLimit-* of the latest response: the limit, what is left, and when it resets."""

    limit: int | None
    remaining: int | None
    reset_at: float | None  # unix seconds

    def seconds_to_reset(self, now: float | None = None) -> float | None:
        if self.reset_at is None:
            return None
        return max(0.0, self.reset_at - (time.time() if now is None else now))


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def budget_from_headers(headers: Mapping[str, str], now: float | None = None) -> RateBudget | None:
    """The budget a response announced, or None if it sent no rate-limit headers."""
    limit = _number(headers.get("x-ratelimit-limit"))
    remaining = _number(headers.get("x-ratelimit-remaining"))
    reset = _number(headers.get("x-ratelimit-reset"))
    if limit is None and remaining is None and reset is None:
        return None
    now = time.time() if now is None else now
    # Some servers send the reset as seconds from now rather than a unix time.
    if reset is not None and reset < 1_000_000_000:
        reset = now + reset
    return RateBudget(
        limit=int(limit) if limit is not None else None,
        # Some servers count past zero (-1 once the limit is hit): nothing is left either way.
        remaining=max(0, int(remaining)) if remaining is not None else None,
        reset_at=reset,
    )


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Retry-After as seconds: a number of seconds, or an HTTP date. None if unreadable."""
    if value is None or not value.strip():
        return None
    seconds = _number(value)
    if seconds is not None:
        return max(0.0, seconds)
    try:
        when = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


def seconds_until_reset(headers: Mapping[str, str]) -> float | None:
    budget = budget_from_headers(headers)
    return None if budget is None else budget.seconds_to_reset()


class Pacer:
    """A token bucket per key: at most `per_minute` requests a minute, in bursts of `burst`.

    Also holds back when the server's budget for that key is down to `reserve` requests, until
    its window resets (bounded by `max_hold` seconds), so prefetching never trips a 429.
    """

    def __init__(
        self,
        per_minute: float = 1000,
        burst: int = 20,
        reserve: int = 5,
        max_hold: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.rate = per_minute / 60.0
        self.burst = burst
        self.reserve = reserve
        self.max_hold = max_hold
        self.clock = clock
        self.wall = wall
        self.sleep = sleep
        self._tokens: dict[str, float] = {}
        self._updated: dict[str, float] = {}
        self._budgets: dict[str, RateBudget] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def observe(self, key: str, budget: RateBudget) -> None:
        """Record what the server said about `key`'s budget."""
        self._budgets[key] = budget

    def wait_needed(self, key: str) -> float:
        """Seconds the next request for `key` must wait (without taking a token)."""
        tokens = self._tokens_now(key, self.clock())
        wait = 0.0 if tokens >= 1 else (1 - tokens) / self.rate
        budget = self._budgets.get(key)
        if budget is not None and budget.remaining is not None and budget.remaining <= self.reserve:
            to_reset = budget.seconds_to_reset(self.wall())
            if to_reset is not None:
                wait = max(wait, min(to_reset, self.max_hold))
        return wait

    async def acquire(self, key: str, on_wait: Callable[[float], None] | None = None) -> None:
        """Take a token for `key`, first waiting as long as needed (`on_wait` is told how long)."""
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            wait = self.wait_needed(key)
            if wait > 0:
                if on_wait is not None:
                    on_wait(wait)
                await self.sleep(wait)
                budget = self._budgets.get(key)
                if (
                    budget is not None
                    and budget.remaining is not None
                    and budget.remaining <= self.reserve
                ):
                    # The window has reset; the next response will tell the new budget.
                    self._budgets.pop(key, None)
            now = self.clock()
            self._tokens[key] = max(0.0, self._tokens_now(key, now) - 1)
            self._updated[key] = now

    def _tokens_now(self, key: str, now: float) -> float:
        """The bucket's tokens at `now`: what was left, refilled at `rate`, capped at `burst`."""
        refill = (now - self._updated.get(key, now)) * self.rate
        return min(float(self.burst), self._tokens.get(key, float(self.burst)) + refill)
