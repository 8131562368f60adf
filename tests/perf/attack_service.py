"""What the repeated attacks of the outside review (issue 39) share: a store of either kind (a
SQLite file, or a database on the tests' wheel PostgreSQL), real `tracetui serve` processes on
loopback, keys made in the store, and a process's memory and the machine's load as figures.

Not a bench module: the attacks' scripts (tests/perf/*_attack.py) measure refusals, not speed.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

START_DEADLINE_S = 60.0


def uptime() -> str:
    """The machine's load averages, as `uptime` prints them (other work shares the machine)."""
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


@contextlib.contextmanager
def store_url(store: str) -> Iterator[str]:
    """A new empty store of kind `store` ("sqlite" or "postgres"), as serve's --db takes it."""
    if store == "sqlite":
        with tempfile.TemporaryDirectory(prefix="tracetui-attack-") as folder:
            yield str(Path(folder) / "attack.sqlite3")
        return
    from tests.support.postgres import start_postgres

    server = start_postgres()
    try:
        yield server.socket_url(server.create_database())
    finally:
        server.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Serve:
    """One `tracetui serve` process on 127.0.0.1 (alerts never evaluated), stopped on leaving."""

    def __init__(self, url: str, *options: str) -> None:
        port = free_port()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tui", "serve", "--db", url, "--port", str(port), *options],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "TRACETUI_ALERT_INTERVAL": "0"},
        )
        self.base = f"http://127.0.0.1:{port}/v1/"
        deadline = time.monotonic() + START_DEADLINE_S
        while True:
            try:
                httpx.get(self.base + "projects", timeout=1)
                return
            except httpx.HTTPError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.stop()
                    raise RuntimeError("serve did not start") from None
                time.sleep(0.2)

    @property
    def pid(self) -> int:
        return self.process.pid

    def children(self) -> list[int]:
        """The service's child processes (its ingest workers)."""
        found: list[int] = []
        for task in Path(f"/proc/{self.pid}/task").iterdir():
            with contextlib.suppress(OSError):
                found += [int(p) for p in (task / "children").read_text().split()]
        return found

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> Serve:
        return self

    def __exit__(self, *_: Any) -> None:
        self.stop()


def memory_kib(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (its peak) of a process, in KiB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0])
    return found


def add_project_key(url: str, project: str) -> str:
    """A project (id and name `project`) and a key of its own, made in the store."""
    from tui.server.api_keys import new_api_key
    from tui.server.store.opening import open_store

    store: Any = open_store(url)
    key = new_api_key("pk")
    try:
        with store.transaction() as db:
            store.insert_project(db, project, None, 30, project_id=project)
        store.add_key(key, project, project)
    finally:
        store.close()
    return key


def add_workspace_key(url: str) -> str:
    from tui.server.api_keys import new_api_key
    from tui.server.store.opening import open_store

    store: Any = open_store(url)
    key = new_api_key("ws")
    try:
        store.add_key(key, None, "attack")
    finally:
        store.close()
    return key
