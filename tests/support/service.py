"""The local service on a free loopback port over a small demo database (a SQLite file, or a
PostgreSQL database given by its URL), and waiting on a condition."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx

from tui.demo.data import DemoKeys, populate
from tui.server.alerts.targets import Resolver, system_resolver
from tui.server.background import PeriodicTask
from tui.server.config import IN_PROCESS
from tui.server.run import LocalService
from tui.server.store.opening import open_store
from tui.server.store.rows import now_ms
from tui.server.store.sqlite.store import Store


@dataclass
class RunningService:
    service: LocalService
    store: Store
    keys: DemoKeys

    @property
    def base_url(self) -> str:
        return self.service.base_url

    def client(self, key: str | None = None) -> httpx.Client:
        """A plain httpx client with `key` (default: the workspace key) as its bearer token."""
        key = self.keys.workspace if key is None else key
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.base_url + "/", headers=headers, timeout=30)


def start_service(
    database: Path | str, rate_limit: int = 100_000, scale: float = 0.1, ingest_processes: int = 0
) -> RunningService:
    """The service, started, over a new demo database at `database`: a SQLite file's path or
    an empty PostgreSQL database's URL (`store` is then a PostgresStore, with the same
    methods)."""
    store: Any = open_store(str(database))
    keys = populate(store, seed=7, scale=scale, big_traces=False)
    config = replace(IN_PROCESS, rate_limit=rate_limit, ingest_processes=ingest_processes)
    service = LocalService(store, config)
    return RunningService(service.start(), store, keys)


def local_service(
    store: Store,
    *,
    tasks: Sequence[PeriodicTask] | None = None,
    clock: Callable[[], int] = now_ms,
    resolve: Resolver = system_resolver,
    **config: Any,
) -> LocalService:
    """A LocalService (not started) over `store`: `config` names the fields of ServerConfig that
    differ from IN_PROCESS, the other arguments are LocalService's own."""
    return LocalService(
        store, replace(IN_PROCESS, **config), tasks=tasks, clock=clock, resolve=resolve
    )


def wait_for(condition: Callable[[], bool], timeout: float = 60.0, what: str = "") -> None:
    """Poll `condition` every 20 ms until it holds; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what or condition}"
        time.sleep(0.02)
