"""OTLP exporters posting to a service as fast as it answers, in threads, for the reliability
tests: every body is one trace of a known number of spans, and every answer is kept (status,
Retry-After, or the connection error that took its place), so that a test can check afterwards
that each body acknowledged (200) is stored whole and that nothing else was acknowledged."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.support.otlp import new_span_id, new_trace_id, post, request, root_client, span
from tests.support.serve import serving
from tests.support.service import wait_for

RETRYABLE = (429, 503)  # what an OTLP exporter retries, after Retry-After
READ_EVERY_TRACE = ("--rate-limit", "1000000")  # checks read every trace, one request each


@dataclass(frozen=True)
class Answer:
    """What the service said to one body: a status (None: the connection failed first)."""

    trace_id: str
    spans: int
    status: int | None
    retry_after: str | None = None
    error: str | None = None  # the connection error's type, when there was no answer

    @property
    def acknowledged(self) -> bool:
        return self.status == 200


def one_body(spans: int, filler_bytes: int) -> tuple[bytes, str]:
    """A protobuf export of one trace of `spans` spans (a root and its children), each with
    `filler_bytes` of attribute: its serialized form and the trace id's hex."""
    trace_id, root = new_trace_id(), new_span_id()
    filler = {"input.value": os.urandom(filler_bytes // 2).hex()} if filler_bytes else {}
    children = (span(trace_id, new_span_id(), root, attributes=filler) for _ in range(spans - 1))
    return request(span(trace_id, root, name="root"), *children).SerializeToString(), (
        trace_id.hex()
    )


class Exporters:
    """`threads` exporters posting bodies of `spans` spans to `base_url` with `key` until
    stopped. `answers` grows as they come; read it under no lock (appends are atomic)."""

    def __init__(
        self, base_url: str, key: str, threads: int = 4, spans: int = 40, filler_bytes: int = 200
    ) -> None:
        self.base_url, self.key = base_url, key
        self.spans, self.filler_bytes = spans, filler_bytes
        self.answers: list[Answer] = []
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._run, name=f"exporter-{n}", daemon=True)
            for n in range(threads)
        ]

    def start(self) -> Exporters:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self, timeout: float = 60.0) -> None:
        """Stop posting; returns once every body in flight has its answer (or error)."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout)
            assert not thread.is_alive(), "an exporter is still waiting for an answer"

    def acknowledged(self) -> list[Answer]:
        return [a for a in list(self.answers) if a.acknowledged]

    def count(self, status: int | None) -> int:
        return sum(1 for a in list(self.answers) if a.status == status)

    def _run(self) -> None:
        with root_client(self.base_url, self.key) as client:
            while not self._stop.is_set():
                body, trace_id = one_body(self.spans, self.filler_bytes)
                try:
                    answer = client.post(
                        "/v1/traces",
                        content=body,
                        headers={"Content-Type": "application/x-protobuf"},
                    )
                except httpx.TransportError as error:
                    self.answers.append(
                        Answer(trace_id, self.spans, None, None, type(error).__name__)
                    )
                    # The service is gone or going: wait a moment rather than spin.
                    self._stop.wait(0.05)
                    continue
                self.answers.append(
                    Answer(
                        trace_id, self.spans, answer.status_code, answer.headers.get("retry-after")
                    )
                )


@contextmanager
def exporting(base_url: str, key: str, **options: int) -> Iterator[Exporters]:
    """Exporters running for the `with` block, stopped on the way out however it ends."""
    exporters = Exporters(base_url, key, **options).start()
    try:
        yield exporters
    finally:
        exporters.stop()


def stored_spans(client: httpx.Client, trace_id: str) -> int:
    """How many spans of trace `trace_id` the service lists (0 for a trace it does not know)."""
    answer = client.get(f"/v1/traces/{trace_id}")
    if answer.status_code == 404:
        return 0
    assert answer.status_code == 200, answer.text
    count: int = answer.json()["span_count"]
    return count


def post_one(client: httpx.Client, spans: int = 3) -> tuple[httpx.Response, str]:
    """One body of `spans` spans posted now: the answer and its trace id."""
    trace_id, root = new_trace_id(), new_span_id()
    children = (span(trace_id, new_span_id(), root) for _ in range(spans - 1))
    return post(client, request(span(trace_id, root, name="root"), *children)), trace_id.hex()


def wait_for_progress(exporters: Exporters, bodies: int = 1) -> None:
    """Wait until `bodies` more bodies are acknowledged."""
    before = len(exporters.acknowledged())
    wait_for(lambda: len(exporters.acknowledged()) >= before + bodies, what="bodies acknowledged")


def assert_answers_asked_for_retries(answers: list[Answer]) -> None:
    """Every answer but 200 asks the exporter to retry later (or never came)."""
    for answer in answers:
        if answer.status is not None and answer.status != 200:
            assert answer.status in RETRYABLE, answer
            assert answer.retry_after, answer


def assert_acknowledged_stored(client: httpx.Client, answers: list[Answer]) -> None:
    """Every body answered 200 is listed whole."""
    for answer in answers:
        if answer.acknowledged:
            assert stored_spans(client, answer.trace_id) == answer.spans, answer


def assert_kept(db: Path, key: str, answers: list[Answer]) -> None:
    """The service's word kept, read back from the service started again on `db`: every body
    answered 200 is stored whole, every other answer asked for a retry (or never came); and the
    service ingests as before."""
    assert_answers_asked_for_retries(answers)
    with (
        serving(db, "--ingest-processes", "0", "--alert-interval", "0", *READ_EVERY_TRACE) as new,
        root_client(new.base_url, key) as client,
    ):
        assert_acknowledged_stored(client, answers)
        response, trace_id = post_one(client)
        assert response.status_code == 200
        assert stored_spans(client, trace_id) == 3
