"""`tracetui serve` stops within 10 s of SIGTERM whatever its ingest workers are doing (idle,
just killed, stopped, stopped in the middle of a write, ignoring the signal sent to the whole
group) and leaves no process behind: no worker, no resource tracker. The requests whose bodies
a worker held when it was ended answer 503 with Retry-After, never 200, and every body answered
200 is in the database when the service starts again.

Ten seconds is a correctness bound (docker stop's grace period), not a speed figure: the times
measured are printed (`pytest -s`)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.exporter import READ_EVERY_TRACE, assert_kept, exporting, wait_for_progress
from tests.support.procfs import (
    alive,
    ignores,
    in_group,
    reading_a_pipe,
    state,
    wait_channel,
    workers_of,
)
from tests.support.serve import Served, serving
from tests.support.service import wait_for

WORKERS = 2
FLAGS = ("--ingest-processes", str(WORKERS), "--alert-interval", "0", *READ_EVERY_TRACE)
STOP_BOUND_S = 10.0


@contextmanager
def started(db: Path) -> Iterator[Served]:
    """The service in a session of its own (so that the test can see its whole process group),
    once its workers are up: started, and ignoring the group's signals."""
    with serving(db, *FLAGS, new_session=True) as served:
        up_workers(served)
        yield served


def up_workers(served: Served) -> set[int]:
    """The service's workers, once they are all up and idle: each past its start (ignoring
    the group's signals), one waiting for a body on the pool's queue, the others for its lock."""
    pid = served.process.pid

    def up() -> bool:
        workers = workers_of(pid)
        at_the_queue = [w for w in workers if reading_a_pipe(w)]
        others = [wait_channel(w) for w in workers if w not in at_the_queue]
        return (
            len(workers) == WORKERS
            and all(ignores(w, signal.SIGINT) for w in workers)
            and len(at_the_queue) == 1
            and all("futex" in channel for channel in others)
        )

    wait_for(up, what="the ingest workers to be up")
    return workers_of(pid)


def stop_timed(served: Served, group: bool = False) -> float:
    """SIGTERM to the service (or its whole group, as systemd sends it): the seconds it took to
    exit, asserted within the bound, and nothing of it left running."""
    pid = served.process.pid
    began = time.monotonic()
    served.send(signal.SIGTERM, group=group)
    try:
        code = served.wait(3 * STOP_BOUND_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"serve still running {3 * STOP_BOUND_S:g} s after SIGTERM")
    took = time.monotonic() - began
    print(f"\n  serve exited {took:.2f} s after SIGTERM")  # the figure for the docs
    assert code == 0, served.stderr.text()
    assert took < STOP_BOUND_S
    # Its workers and resource tracker end with it (the tracker when its pipe closes).
    wait_for(lambda: not in_group(pid), 30, "every process of the service to end")
    assert "Traceback" not in served.errors()
    return took


def write_lock_held(db: Path) -> bool:
    """Whether another connection holds the database's write lock (asked without waiting)."""
    probe = sqlite3.connect(db, timeout=0, isolation_level=None)
    try:
        probe.execute("BEGIN IMMEDIATE")
        probe.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError as error:
        assert "locked" in str(error), error
        return True
    finally:
        probe.close()


def test_idle(tmp_path: Path) -> None:
    with started(tmp_path / "s.sqlite3") as served:
        stop_timed(served)


def test_just_after_a_worker_was_killed_during_ingest(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite3"
    with started(db) as served:
        key = served.key
        assert key
        with exporting(served.base_url, key) as exporters:
            wait_for_progress(exporters, 10)
            killed = min(workers_of(served.process.pid))
            os.kill(killed, signal.SIGKILL)
            wait_for(lambda: not alive(killed), what="the worker to die")
            stop_timed(served)
    assert_kept(db, key, exporters.answers)


def test_just_after_the_worker_holding_the_queue_was_killed(tmp_path: Path) -> None:
    # An idle worker waits for the next body holding the lock of the pool's call queue: killed
    # there, it never lets go of it, and its sibling cannot take the None that tells a worker
    # to exit. The pool's teardown then waits for that sibling for ever, SIGTERM being ignored.
    with started(tmp_path / "s.sqlite3") as served:
        wait_for(
            lambda: any(reading_a_pipe(w) for w in workers_of(served.process.pid)),
            what="an idle worker to wait for a body",
        )
        (holder,) = [w for w in workers_of(served.process.pid) if reading_a_pipe(w)]
        os.kill(holder, signal.SIGKILL)
        wait_for(lambda: not alive(holder), what="the worker to die")
        stop_timed(served)


def test_with_its_workers_stopped(tmp_path: Path) -> None:
    with started(tmp_path / "s.sqlite3") as served:
        for worker in workers_of(served.process.pid):
            os.kill(worker, signal.SIGSTOP)  # SIGKILL is the one signal they still obey
        stop_timed(served)


def test_with_its_workers_stopped_in_the_middle_of_a_write(tmp_path: Path) -> None:
    # Big bodies, so that a worker spends much of its time in a write transaction.
    db = tmp_path / "s.sqlite3"
    with started(db) as served:
        key = served.key
        assert key
        workers = workers_of(served.process.pid)
        with exporting(served.base_url, key, spans=300, filler_bytes=400) as exporters:
            deadline = time.monotonic() + 120
            while True:
                wait_for_progress(exporters)
                for worker in workers:
                    os.kill(worker, signal.SIGSTOP)
                wait_for(lambda: all(state(w) == "T" for w in workers), what="workers stopped")
                if write_lock_held(db):  # a worker stopped inside its transaction
                    break
                assert time.monotonic() < deadline, "never caught a worker in a write"
                for worker in workers:
                    os.kill(worker, signal.SIGCONT)
            stop_timed(served)
    lost = [a for a in exporters.answers if a.status == 503]
    assert lost, "the bodies the stopped workers held were answered 503"
    assert_kept(db, key, exporters.answers)


def test_when_the_whole_group_gets_sigterm_during_ingest(tmp_path: Path) -> None:
    # As systemd stops a service: its workers get the signal too, and ignore it.
    db = tmp_path / "s.sqlite3"
    with started(db) as served:
        key = served.key
        assert key
        with exporting(served.base_url, key) as exporters:
            wait_for_progress(exporters, 10)
            stop_timed(served, group=True)
    assert_kept(db, key, exporters.answers)
