"""`tracetui serve` ends after Ctrl-C whatever is stuck inside it: a store call that never
returns is abandoned, not waited for at the exit; anything else that would hold the exit (a job
the interpreter joins) is cut at the stop's deadline, its stacks written to stderr; and closing
a SQLite store does not wait for a checkpoint under way.

The faults come from tests/support/stuck/sitecustomize.py, loaded into the service's process
only. The deadline of Served.interrupt (30 s) is the check: before these fixes, each of these
services ran until killed."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.serve import Served, serving
from tui.server.run import STOP_DEADLINE_S
from tui.server.store.sqlite import store as sqlite_store
from tui.server.store.sqlite.store import Store

STUCK = Path(__file__).parent.parent / "support" / "stuck"
CONNECT = sqlite_store.connect  # the real one, which the stalled checkpoints wrap
DEADLINE = f"still stopping {STOP_DEADLINE_S:g} s after it was asked to"


def stuck(fault: str) -> dict[str, str]:
    """The environment of a service with `fault` (see sitecustomize.py)."""
    path = os.pathsep.join(p for p in (str(STUCK), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "TRACETUI_TEST_STUCK": fault}


def answering(served: Served) -> None:
    """Wait until the service answers a request: past its start, its lifespan running."""
    headers = {"Authorization": f"Bearer {served.key}"}
    assert httpx.get(f"{served.base_url}/projects", headers=headers).status_code == 200


def test_a_store_call_that_never_returns_does_not_hold_up_the_exit(fresh_database: str) -> None:
    """The webhook worker's release of its claims, which every stop makes, waits for ever: the
    stop gives up on it after its 2 s, and the exit does not wait for it either (it ran in the
    event loop's default executor, whose threads the interpreter joins at exit)."""
    with serving(fresh_database, env=stuck("store-call")) as served:
        answering(served)
        assert served.interrupt() == 0
        errors = served.errors()
        assert DEADLINE not in errors and "Traceback" not in errors, errors


def test_whatever_holds_the_exit_serve_ends_at_its_deadline_with_the_stacks(
    fresh_database: str,
) -> None:
    """A thread the interpreter joins at exit never ends: serve ends all the same, with exit
    code 1 and every thread's stack on stderr (the stuck one's among them)."""
    with serving(fresh_database, env=stuck("exit")) as served:
        answering(served)
        assert served.interrupt() == 1
        errors = served.errors()
        assert DEADLINE in errors and "(most recent call first)" in errors, errors
        assert "concurrent/futures/thread.py" in errors  # the stuck job's thread


class StalledCheckpoints:
    """SQLite connections whose checkpoints stall until `go` is set (a disk that takes its
    time to sync), as Store.checkpoint makes them."""

    def __init__(self) -> None:
        self.stalled = threading.Event()
        self.go = threading.Event()
        self.closed: list[sqlite3.Connection] = []

    def connect(self, path: str, *args: Any, **options: Any) -> Any:
        real = CONNECT(path, *args, **options)
        outer = self

        class Stalling:
            def execute(self, sql: str, *params: Any) -> sqlite3.Cursor:
                if sql.startswith("PRAGMA wal_checkpoint"):
                    outer.stalled.set()
                    outer.go.wait()
                return real.execute(sql, *params)

            def close(self) -> None:
                outer.closed.append(real)
                real.close()

        return Stalling()


def test_closing_a_sqlite_store_does_not_wait_for_a_checkpoint_under_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "close.sqlite3")
    stalls = StalledCheckpoints()
    monkeypatch.setattr(sqlite_store, "connect", stalls.connect)
    checkpoint = threading.Thread(target=store.checkpoint, daemon=True)
    checkpoint.start()
    assert stalls.stalled.wait(30), "the checkpoint did not start"
    closing = threading.Thread(target=store.close, daemon=True)
    closing.start()
    closing.join(30)
    try:
        assert not closing.is_alive(), "close() waited for the checkpoint under way"
    finally:
        stalls.go.set()
    checkpoint.join(30)
    assert not checkpoint.is_alive()
    # The checkpoint closed its connections (the database's, its text file's) as it ended.
    assert len(stalls.closed) == 2
    closing.join(30)
