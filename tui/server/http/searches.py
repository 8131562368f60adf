"""Searches bounded, so that one key cannot take the service from the others: a filtered trace
list (GET /v1/traces with `q` or any filter or sort), a project's sessions and its users.

A text search costs time in proportion to the traces it reads and its words' length, and a
client chooses both: an outside review's 498-character word over traces of long "a" runs took
3.9 s per 500 traces on PostgreSQL, and ten of them from one key held the whole pool. So each
search:

- takes a place among the searches under way, at most `searches_per_key` for its key and
  `searches_per_project` for its project, all its keys together (else 429 `too_many_searches`:
  two keys of one project cannot fill the replica) and `searches` in all
  on this replica (else 503 `searches_busy`), both
  with Retry-After: 1, taken before it gets a thread, so a refused search holds nothing and
  other requests always find a thread and a connection;
- reads the store within a ReadGuard (store/reads.py) of `query_timeout_s`: past it the reads
  stop and the answer is 422 `query_timeout` (http/errors.stopped_read);
- is cancelled when its client leaves: a task waits on the request's receive channel for the
  server's `http.disconnect`, then cancels the guard (PostgreSQL: the backend's statement is
  cancelled; SQLite: the statement is interrupted), so an abandoned search ends at once.

The place is held until the store call has returned, so the bound is on reads that run, not on
answers sent. A word's length is bounded where filters are read (search.filters.MAX_TERM).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from tui.server.config import ServerConfig
from tui.server.http.errors import ServiceError
from tui.server.store.reads import QueryStopped, ReadGuard

T = TypeVar("T")
RETRY_AFTER_S = 1  # a search's places come free as searches end, within seconds


class SearchLimits:
    """The searches under way on this replica, by key, and what each may take."""

    def __init__(
        self, per_key: int, overall: int, budget_s: float, per_project: int | None = None
    ) -> None:
        self.per_key = per_key
        self.per_project = per_key if per_project is None else per_project
        self.overall = overall
        self.budget_s = budget_s
        self._lock = threading.Lock()
        self.running: dict[str, int] = {}  # by key hash; no entry for none
        self.by_project: dict[str, int] = {}  # by project id; no entry for none
        # Searches stopped so far: past their budget, and cancelled as their client left.
        self.timed_out = 0
        self.client_left = 0

    @classmethod
    def configured(cls, config: ServerConfig) -> SearchLimits:
        return cls(
            config.searches_per_key,
            config.searches,
            config.query_timeout_s,
            config.searches_per_project,
        )

    @property
    def total(self) -> int:
        return sum(self.running.values())

    def note(self, stopped: QueryStopped) -> None:
        with self._lock:
            if stopped.timed_out:
                self.timed_out += 1
            else:
                self.client_left += 1

    @contextmanager
    def place(self, key: str, project_id: str) -> Iterator[None]:
        """A place for one search of `key` in `project_id` while inside; 429 if the key or the
        project has all of its own, else 503 if all are taken."""
        with self._lock:
            for who, count, bound in (
                ("key", self.running.get(key, 0), self.per_key),
                ("project", self.by_project.get(project_id, 0), self.per_project),
            ):
                if count >= bound:
                    raise ServiceError(
                        429,
                        "too_many_searches",
                        f"This {who} has {bound} searches under way, as many as it may;"
                        " retry when one has ended.",
                        headers={"Retry-After": str(RETRY_AFTER_S)},
                    )
            if self.total >= self.overall:
                raise ServiceError(
                    503,
                    "searches_busy",
                    "The service is running as many searches as it takes at once; retry shortly.",
                    headers={"Retry-After": str(RETRY_AFTER_S)},
                )
            self.running[key] = self.running.get(key, 0) + 1
            self.by_project[project_id] = self.by_project.get(project_id, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                for counts, name in ((self.running, key), (self.by_project, project_id)):
                    left = counts[name] - 1
                    if left:
                        counts[name] = left
                    else:
                        del counts[name]


async def searched(
    request: Request, key: str, project_id: str, search: Callable[[ReadGuard], T]
) -> T:
    """`search(guard)` run in a thread, in a place of `key`'s in `project_id`, its reads within
    a new guard that is cancelled if the client leaves meanwhile."""
    limits: SearchLimits = request.app.state.searches
    with limits.place(key, project_id):
        guard = ReadGuard(limits.budget_s)
        watcher = asyncio.ensure_future(cancel_when_gone(request, guard))
        try:
            return await run_in_threadpool(search, guard)
        except QueryStopped as stopped:
            limits.note(stopped)
            raise
        finally:
            watcher.cancel()


async def cancel_when_gone(request: Request, guard: ReadGuard) -> None:
    """Cancel `guard` once the client has disconnected. A GET's body is empty and nobody else
    reads it: the receive channel's next message after it is the disconnection."""
    while (await request.receive())["type"] != "http.disconnect":
        pass
    await run_in_threadpool(guard.cancel)  # PostgreSQL's cancel request waits for its answer
