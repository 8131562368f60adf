"""Ingest's workers shared fairly between keys: turns handed out round-robin, and a bound on the
bodies one key has in hand.

The worker pool takes bodies first come, first served. One key that sends many big exports at
once would queue them all ahead of everyone else's, and a project's 1-span export would wait
behind all of them (the review saw 25 s). So a body waits for a turn before it goes to the
pool, and only a few turns are out at once (two per worker: one decoding, one ready behind it,
so the workers never wait for the next body). When a turn ends, the next goes to the key that
has waited longest since its last turn: each key with bodies waiting gets one turn in each
round. Another key's export then waits for at most one body of each key ahead of it, and each
body is bounded (ingest.bounds).

`InFlight` bounds the bodies a key has in hand (being read, waiting or ingested): a key past its
share is answered 503 with Retry-After at once, and leaves room for the other keys' exports in
the service's overall bound. The event loop is the only user of both: no locks.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager


class FairTurns:
    """At most `slots()` turns out at once, given round-robin between keys."""

    def __init__(self, slots: Callable[[], int]) -> None:
        self.slots = slots
        self.busy = 0
        # Keys with bodies waiting, the key to serve next first (a dict keeps insertion order):
        # a key served goes to the back if it still has bodies waiting.
        self.waiting: dict[str, deque[asyncio.Future[None]]] = {}

    def waiting_for(self, key: str) -> int:
        """How many of `key`'s bodies wait for a turn."""
        return len(self.waiting.get(key, ()))

    @asynccontextmanager
    async def turn(self, key: str) -> AsyncIterator[None]:
        """Wait for `key`'s turn, and hold it for the block."""
        await self.acquire(key)
        try:
            yield
        finally:
            self.release()

    async def acquire(self, key: str) -> None:
        if self.busy < self.slots() and not self.waiting:
            self.busy += 1
            return
        given: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.setdefault(key, deque()).append(given)
        try:
            await given
        except asyncio.CancelledError:  # the client left while its body waited
            if given.done() and not given.cancelled():
                self.release()  # given its turn as it left: passed on
            else:
                self.forget(key, given)
            raise

    def release(self) -> None:
        self.busy -= 1
        self.hand_over()

    def hand_over(self) -> None:
        """Give free turns to the keys waiting, one body of each key in turn."""
        while self.waiting and self.busy < self.slots():
            key = next(iter(self.waiting))
            queue = self.waiting.pop(key)
            given = queue.popleft()
            if queue:
                self.waiting[key] = queue  # to the back of the round
            self.busy += 1
            given.set_result(None)

    def forget(self, key: str, given: asyncio.Future[None]) -> None:
        queue = self.waiting.get(key)
        if queue is None:
            return
        try:
            queue.remove(given)
        except ValueError:
            return
        if not queue:
            del self.waiting[key]


class InFlight:
    """Bodies in hand, at most `total` in all and `per_key` for any one key."""

    def __init__(self, total: int, per_key: int) -> None:
        self.total = total
        self.per_key = per_key
        self.count = 0
        self.by_key: dict[str, int] = {}

    def enter(self, key: str) -> bool:
        """Count one more body of `key`, if there is room (False: none; nothing counted)."""
        if self.count >= self.total or self.by_key.get(key, 0) >= self.per_key:
            return False
        self.count += 1
        self.by_key[key] = self.by_key.get(key, 0) + 1
        return True

    def leave(self, key: str) -> None:
        self.count -= 1
        left = self.by_key[key] - 1
        if left:
            self.by_key[key] = left
        else:
            del self.by_key[key]
