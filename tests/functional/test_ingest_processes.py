"""Ingest in worker processes (tui/server/ingest/processes.py), where it can go wrong: a worker
that dies costs the request in hand a 503 with Retry-After, which OTLP exporters retry, never a
span or a double count; the service goes on ingesting meanwhile and starts new workers; and the
workers end with the service, however the service ends (Ctrl-C, SIGTERM, SIGKILL)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.conftest import wait_for
from tests.otlp import new_span_id, new_trace_id, partial, post, request, root_client, span
from tests.procfs import alive, children_of
from tui.cli import build_parser
from tui.server.run import LocalService, default_ingest_processes
from tui.server.store import Store, new_api_key


def one_trace(client: httpx.Client) -> tuple[httpx.Response, str]:
    trace_id, root = new_trace_id(), new_span_id()
    message = request(
        span(trace_id, new_span_id(), root, "chat", attributes={"gen_ai.operation.name": "chat"}),
        span(trace_id, root, name="answer_question"),
    )
    return post(client, message), trace_id.hex()


def test_a_worker_that_dies_costs_a_retry_never_a_span(tmp_path: Path) -> None:
    store = Store(tmp_path / "pool.sqlite3")
    key = new_api_key("ws")
    store.add_key(key, None, "test")
    with LocalService(store, ingest_processes=1) as service:
        processes = service.app.state.ingest.processes
        wait_for(lambda: processes.ready, what="the worker")
        with root_client(service.base_url, key) as client:
            answer, first = one_trace(client)
            assert answer.status_code == 200 and partial(answer) == (0, "")
            assert processes.bodies == 1

            (worker,) = children_of(os.getpid()) & set(processes._pool._processes)
            os.kill(worker, signal.SIGKILL)
            wait_for(lambda: not alive(worker), what="the worker to die")

            # The body sent to the dead pool: refused in a way exporters retry, not stored.
            answer, lost = one_trace(client)
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

            for trace_id in (first, second, third):
                trace = client.get(f"/v1/traces/{trace_id}").json()
                assert trace["span_count"] == 2 and trace["name"] == "answer_question"
    assert not children_of(os.getpid()) & {worker}


def serve(tmp_path: Path) -> tuple[subprocess.Popen[str], str]:
    """`tracetui serve` with one ingest worker, once it answers; (process, its root URL)."""
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "tui", "serve", "--db", str(tmp_path / "s.sqlite3")),
            *("--port", "0", "--ingest-processes", "1", "--alert-interval", "0"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:
        if found := re.search(r"OTEL_EXPORTER_OTLP_ENDPOINT=(\S+)", line):
            return process, found[1]
    raise AssertionError("serve printed no endpoint")


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_the_workers_end_with_the_service_however_it_ends(
    tmp_path: Path, how: signal.Signals
) -> None:
    process, _ = serve(tmp_path)
    try:
        wait_for(lambda: len(children_of(process.pid)) >= 1, what="the worker to start")
        workers = children_of(process.pid)
        process.send_signal(how)
        code = process.wait(timeout=30)
        # SIGTERM stops it as Ctrl-C does (cleanly); SIGKILL leaves the workers orphans, which
        # notice and exit by themselves.
        assert code == (0 if how == signal.SIGTERM else -signal.SIGKILL)
        wait_for(lambda: not any(alive(w) for w in workers), 30, "the workers to exit")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("value", ["-1", "two", "1.5"])
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
