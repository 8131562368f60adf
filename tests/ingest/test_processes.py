"""Ingest in worker processes (tui/server/ingest/processes.py), where it can go wrong: a worker
that dies costs the request in hand a 503 with Retry-After, which OTLP exporters retry, never a
span or a double count; the service goes on ingesting meanwhile and starts new workers; and the
workers end with the service, however the service ends (Ctrl-C, SIGTERM, SIGKILL)."""

from __future__ import annotations

import os
import signal
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.support.otlp import (
    new_project,
    new_span_id,
    new_trace_id,
    partial,
    post,
    request,
    root_client,
    span,
)
from tests.support.procfs import alive, children_of, ignores, workers_of
from tests.support.serve import serving
from tests.support.service import RunningService, local_service, wait_for
from tui.cli import build_parser
from tui.server.api_keys import new_api_key
from tui.server.background import checkpoint_log
from tui.server.config import default_ingest_processes
from tui.server.ingest.processes import IngestProcesses
from tui.server.store.sqlite.store import DEFAULT_CACHE_KIB, INGEST_CACHE_KIB, Store


def one_trace(client: httpx.Client) -> tuple[httpx.Response, str]:
    trace_id, root = new_trace_id(), new_span_id()
    message = request(
        span(trace_id, new_span_id(), root, "chat", attributes={"gen_ai.operation.name": "chat"}),
        span(trace_id, root, name="answer_question"),
    )
    return post(client, message), trace_id.hex()


def the_worker(processes: IngestProcesses) -> int:
    assert processes._pool is not None
    (worker,) = set(processes._pool._processes)
    return worker


def test_a_worker_that_dies_costs_a_retry_never_a_span(tmp_path: Path) -> None:
    store = Store(tmp_path / "pool.sqlite3")
    key = new_api_key("ws")
    store.add_key(key, None, "test")
    with local_service(store, ingest_processes=1) as service:
        processes = service.app.state.ingest.processes
        wait_for(lambda: processes.ready, what="the worker")
        with root_client(service.base_url, key) as client:
            answer, first = one_trace(client)
            assert answer.status_code == 200 and partial(answer) == (0, "")
            assert processes.bodies == 1

            # The worker dies holding a body: that request is refused in a way exporters
            # retry, and nothing of it is stored.
            worker = the_worker(processes)
            os.kill(worker, signal.SIGSTOP)
            with ThreadPoolExecutor(1) as sender:
                held = sender.submit(one_trace, client)
                wait_for(lambda: bool(processes._pool._pending_work_items), what="the body sent")
                os.kill(worker, signal.SIGKILL)
                answer, lost = held.result(timeout=30)
            assert answer.status_code == 503, answer.text
            assert answer.headers["retry-after"] == "1"
            assert client.get(f"/v1/traces/{lost}").status_code == 404

            # Retried at once: the service's own threads take it while a new worker starts.
            answer, second = one_trace(client)
            assert answer.status_code == 200 and partial(answer) == (0, "")
            wait_for(lambda: processes.ready, what="a new worker")
            answer, third = one_trace(client)
            assert answer.status_code == 200
            assert processes.bodies == 2  # the first and the third: a new worker wrote it

            # A worker that died idle costs nothing once the pool knows (a body sent before
            # that is refused as above): the next body goes to the threads.
            worker, pool = the_worker(processes), processes._pool
            os.kill(worker, signal.SIGKILL)
            wait_for(lambda: bool(pool._broken), what="the pool to see its worker gone")
            answer, fourth = one_trace(client)
            assert answer.status_code == 200 and processes.bodies == 2

            for trace_id in (first, second, third, fourth):
                trace = client.get(f"/v1/traces/{trace_id}").json()
                assert trace["span_count"] == 2 and trace["name"] == "answer_question"
            wait_for(lambda: processes.ready, what="another new worker")
            replacement = the_worker(processes)
    # The service stopped: the new pool's worker with it.
    wait_for(lambda: not alive(replacement), 30, "the worker to end")


@pytest.mark.parametrize(
    ("how", "group"),
    [
        (signal.SIGTERM, False),
        (signal.SIGKILL, False),
        (signal.SIGINT, True),
        (signal.SIGTERM, True),
    ],
    ids=["sigterm", "sigkill", "ctrl-c-in-a-terminal", "systemd-stop"],
)
def test_the_workers_end_with_the_service_however_it_ends(
    tmp_path: Path, how: signal.Signals, group: bool
) -> None:
    flags = ("--ingest-processes", "1", "--alert-interval", "0")
    with serving(tmp_path / "s.sqlite3", *flags, new_session=True) as served:
        service = served.process.pid
        wait_for(lambda: len(workers_of(service)) == 1, what="the worker to start")
        (worker,) = workers_of(service)
        # Started: past its imports, it ignores the group's signals. (A Ctrl-C in the second
        # before that ends a half-started worker with an import traceback on stderr.)
        wait_for(lambda: ignores(worker, signal.SIGINT), what="the worker to be up")
        workers = children_of(service)  # the worker and multiprocessing's resource tracker
        # To the service alone, or to it and its workers at once as a terminal or systemd does.
        served.send(how, group=group)
        code = served.wait()
        # SIGINT and SIGTERM stop it cleanly, the workers ignoring them until the service ends
        # them; SIGKILL leaves the workers orphans, which notice and exit by themselves.
        assert code == (-signal.SIGKILL if how == signal.SIGKILL else 0)
        wait_for(lambda: not any(alive(w) for w in workers), 30, "the workers to exit")
        assert "Traceback" not in served.errors()


@pytest.mark.parametrize("value", ["-1", "two", "1.5", "65"])
def test_a_bad_number_of_processes_is_refused_with_a_message(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["serve", "--ingest-processes", value])
    assert exit_.value.code == 2
    assert "--ingest-processes" in capsys.readouterr().err


def test_serve_has_a_worker_per_cpu_by_default_and_zero_means_none() -> None:
    assert build_parser().parse_args(["serve"]).ingest_processes is None  # serve decides
    assert 1 <= default_ingest_processes() <= 4
    assert build_parser().parse_args(["serve", "--ingest-processes", "0"]).ingest_processes == 0


def test_a_store_locked_too_long_is_a_503_exporters_retry(pooled_service: RunningService) -> None:
    # Through a worker, whose StoreBusy must cross back to the service (the writer thread's
    # path raises the same from the same Store.ingest). Waits out busy_timeout: 5 s.
    running = pooled_service
    _, key = new_project(running)
    locker = sqlite3.connect(running.store.path, isolation_level=None)
    with root_client(running.base_url, key) as client:
        locker.execute("BEGIN IMMEDIATE")  # another writer holds the store past busy_timeout
        try:
            answer, held = one_trace(client)
        finally:
            locker.execute("ROLLBACK")
            locker.close()
        assert answer.status_code == 503, answer.text
        assert answer.headers["retry-after"] == "1"
        assert client.get(f"/v1/traces/{held}").status_code == 404
        answer, later = one_trace(client)  # the exporter's retry, once the lock is gone
        assert answer.status_code == 200
        assert client.get(f"/v1/traces/{later}").json()["span_count"] == 2


def test_a_workers_store_has_an_ingest_writers_page_cache(tmp_path: Path) -> None:
    # A worker's inserts land at random places of the traces' and spans' indexes: a bigger
    # cache keeps what the last bodies read (INGEST_CACHE_KIB); the service's connections,
    # one per thread, keep SQLite's default.
    store = Store(tmp_path / "cache.sqlite3")
    worker = store.opener()()
    try:
        service_db, worker_db = store._connection(), worker._connection()
        assert service_db.execute("PRAGMA cache_size").fetchone()[0] == -DEFAULT_CACHE_KIB
        assert worker_db.execute("PRAGMA cache_size").fetchone()[0] == -INGEST_CACHE_KIB
        assert INGEST_CACHE_KIB > DEFAULT_CACHE_KIB
    finally:
        worker.close()
        store.close()


def test_workers_leave_checkpoints_to_the_service_which_truncates_a_big_log(
    tmp_path: Path,
) -> None:
    # Workers' commits do not copy the log into the database below 256 MiB (Store.opener): so
    # 36 MB posted back to back all stay in the log (a checkpoint at SQLite's usual 32 MiB
    # would have copied them), until the service's task (its round run here, not on its
    # timer) copies them and, the log being big and idle, truncates it.
    bodies, megabyte = 36, 1 << 20
    store = Store(tmp_path / "log.sqlite3")
    key = new_api_key("ws")
    store.add_key(key, None, "test")
    database, log = Path(store.path), Path(f"{store.path}-wal")
    with local_service(store, ingest_processes=1, tasks=[]) as service:
        processes = service.app.state.ingest.processes
        wait_for(lambda: processes.ready, what="the worker")
        with root_client(service.base_url, key) as client:
            for _ in range(bodies):
                trace_id = new_trace_id()
                filler = {"input.value": os.urandom(2048).hex()}  # 4 KB a span, 1 MB a body
                message = request(
                    *(span(trace_id, new_span_id(), attributes=filler) for _ in range(256))
                )
                assert post(client, message).status_code == 200
        assert processes.bodies == bodies  # all written by the worker
        assert log.stat().st_size > bodies * megabyte
        assert database.stat().st_size < 4 * megabyte  # the schema, none of the spans
        checkpoint_log(store).round()
        assert database.stat().st_size > bodies * megabyte
        assert log.stat().st_size == 0
    assert store.count("spans") == bodies * 256
