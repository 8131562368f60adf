"""kill -9 during ingest, of an ingest worker or of the service itself, while exporters post as
fast as the service answers. Nothing acknowledged is lost: every body answered 200 is listed
whole afterwards, every other answer is 503 or 429 with Retry-After (which exporters retry).
A killed worker's pool is ended whole (no stray process) and replaced, and the service goes on
answering and ingesting; a killed service's workers exit by themselves."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from tests.support.exporter import (
    READ_EVERY_TRACE,
    Exporters,
    assert_acknowledged_stored,
    assert_answers_asked_for_retries,
    assert_kept,
    exporting,
    post_one,
    stored_spans,
    wait_for_progress,
)
from tests.support.otlp import root_client
from tests.support.procfs import alive, children_of, ignores, in_group, reading_a_pipe, workers_of
from tests.support.serve import Served, serving
from tests.support.service import wait_for

WORKERS = 2
FLAGS = ("--ingest-processes", str(WORKERS), "--alert-interval", "0", *READ_EVERY_TRACE)


def fresh_workers(served: Served, seen: set[int]) -> set[int]:
    """The service's pool once it is whole again: WORKERS workers, none of those `seen` before,
    all started (ignoring the group's signals)."""
    pid = served.process.pid

    def up() -> bool:
        workers = workers_of(pid)
        return (
            len(workers) == WORKERS
            and not workers & seen
            and all(ignores(w, signal.SIGINT) for w in workers)
        )

    wait_for(up, what="a whole pool of new workers")
    return workers_of(pid)


def kill_a_worker(served: Served, exporters: Exporters, seen: set[int]) -> None:
    """One round: once a new pool ingests, kill -9 the worker that is taking a body off the
    pool's queue (it holds the queue's lock: the worst moment), and wait for its pool to be
    ended whole."""
    workers = fresh_workers(served, seen)
    seen |= workers
    wait_for_progress(exporters)
    # The worst moment, if caught within a while; any worker otherwise (a loaded machine may
    # keep the queue full, and a worker never waits at it).
    deadline = time.monotonic() + 10
    while not (at_the_queue := [w for w in workers if reading_a_pipe(w)]):
        if time.monotonic() > deadline:
            break
        time.sleep(0.005)
    os.kill(at_the_queue[0] if at_the_queue else min(workers), signal.SIGKILL)
    # The other workers of the broken pool cannot go on without it: ended, not left behind.
    wait_for(lambda: not any(alive(w) for w in workers), 30, "the broken pool's workers to end")


def worker_lost(exporters: Exporters) -> bool:
    """Whether some body was answered 503: a worker died holding it."""
    return exporters.count(503) > 0


def run_kill_rounds(tmp_path: Path, least_rounds: int, most_rounds: int) -> None:
    with serving(tmp_path / "s.sqlite3", *FLAGS, new_session=True) as served:
        key = served.key
        assert key
        pid, seen = served.process.pid, set[int]()
        with exporting(served.base_url, key) as exporters:
            rounds = 0
            while rounds < least_rounds or (not worker_lost(exporters) and rounds < most_rounds):
                kill_a_worker(served, exporters, seen)
                rounds += 1
            # Replaced again, and ingesting through the new pool.
            fresh_workers(served, seen)
            wait_for_progress(exporters, 5)
        print(f"\n  {rounds} workers killed; answers: {status_counts(exporters)}")
        assert worker_lost(exporters), "no body was held by a killed worker: nothing tested"
        assert exporters.count(None) == 0, "the service did not answer some bodies"
        assert_answers_asked_for_retries(exporters.answers)
        # Nothing but the pool and multiprocessing's resource tracker is left of the service.
        wait_for(lambda: len(children_of(pid)) == WORKERS + 1, 30, "no stray process")
        with root_client(served.base_url, key) as client:
            assert_acknowledged_stored(client, exporters.answers)
            response, trace_id = post_one(client)
            assert response.status_code == 200
            assert stored_spans(client, trace_id) == 3


def status_counts(exporters: Exporters) -> dict[int | None, int]:
    counts: dict[int | None, int] = {}
    for answer in list(exporters.answers):
        counts[answer.status] = counts.get(answer.status, 0) + 1
    return counts


def test_a_worker_killed_during_ingest_costs_retries_never_an_acknowledged_span(
    tmp_path: Path,
) -> None:
    run_kill_rounds(tmp_path, least_rounds=2, most_rounds=10)


@pytest.mark.soak
def test_thirty_workers_killed_during_ingest(tmp_path: Path) -> None:
    run_kill_rounds(tmp_path, least_rounds=30, most_rounds=30)


def test_a_service_killed_during_ingest_keeps_every_body_it_acknowledged(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite3"
    with serving(db, *FLAGS, new_session=True) as served:
        key = served.key
        assert key
        pid = served.process.pid
        fresh_workers(served, set())
        with exporting(served.base_url, key) as exporters:
            wait_for_progress(exporters, 30)
            served.send(signal.SIGKILL)  # the service alone: its workers are left orphans
            assert served.wait() == -signal.SIGKILL
            # They notice and exit by themselves (and the resource tracker after them).
            wait_for(lambda: not in_group(pid), 30, "the service's workers to exit")
        print(f"\n  answers before the kill: {status_counts(exporters)}")
    assert_kept(db, key, exporters.answers)
