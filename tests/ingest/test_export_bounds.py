"""How much one export may hold (ingest/bounds.py): spans, log records and values are counted
before the body is decoded, and an export past a bound is refused with 413 in its own encoding,
cheaply: 16 MiB of 8.3 million empty spans no longer costs a worker 1.4 GB."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tests.support.otlp import (
    JSON,
    PROTOBUF,
    new_project,
    new_span_id,
    new_trace_id,
    partial,
    post,
    request,
    root_client,
    span,
)
from tests.support.procfs import peak_rss_kb
from tests.support.service import RunningService, local_service, wait_for
from tui.server.api_keys import new_api_key
from tui.server.ingest.body import MAX_BODY_BYTES
from tui.server.ingest.bounds import MAX_SPANS, MAX_VALUES, check_protobuf
from tui.server.ingest.types import TooLarge
from tui.server.store.sqlite.store import Store


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        if not value:
            out.append(low)
            return bytes(out)
        out.append(low | 0x80)


def field(number: int, payload: bytes) -> bytes:
    """A length-delimited field, as protobuf writes it."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def empty_spans(count: int) -> bytes:
    """An ExportTraceServiceRequest of `count` empty spans (two bytes each) in one scope."""
    return field(1, field(2, b"\x12\x00" * count))


def empty_attributes(count: int) -> bytes:
    """One span of `count` empty attributes."""
    return field(1, field(2, field(2, b"\x4a\x00" * count)))


def bound(body: bytes) -> None:
    check_protobuf(body, ExportTraceServiceRequest, Span.DESCRIPTOR, "spans")


def test_spans_are_counted_up_to_the_bound_and_refused_past_it() -> None:
    bound(empty_spans(MAX_SPANS))
    with pytest.raises(TooLarge, match="more than 20,000 spans"):
        bound(empty_spans(MAX_SPANS + 1))
    # Spans in many resources and scopes add up.
    scopes = field(2, b"\x12\x00" * (MAX_SPANS // 4)) * 2
    bound(field(1, scopes) * 2)
    with pytest.raises(TooLarge):
        bound(field(1, scopes) * 2 + field(1, field(2, b"\x12\x00")))


def test_values_are_counted_inside_spans_in_a_body_big_enough_to_hold_too_many() -> None:
    assert len(empty_attributes(MAX_VALUES)) > 2 * MAX_VALUES  # walked inside its spans
    with pytest.raises(TooLarge, match="more than 1,000,000 values"):
        bound(empty_attributes(MAX_VALUES))
    bound(empty_attributes(MAX_VALUES // 2))  # too small to hold too many: not walked inside


def test_a_broken_body_is_left_to_the_parser() -> None:
    for broken in (b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", b"\x0a", b"\x0b\x00"):
        bound(broken)  # no error here: parsing it answers 400


@pytest.fixture(scope="module")
def service(backend_service: RunningService) -> RunningService:
    return backend_service


@pytest.fixture(params=["threads", "processes"])
def client(request: pytest.FixtureRequest, service: RunningService) -> Iterator[httpx.Client]:
    """A project's client on the service ingesting in its threads (both stores), and on one
    ingesting in a worker process: the refusal has to come back from the worker."""
    target = service if request.param == "threads" else request.getfixturevalue("pooled_service")
    _, key = new_project(target)
    with root_client(target.base_url, key) as made:
        yield made


def status_of(response: httpx.Response) -> Status:
    assert response.headers["content-type"] == PROTOBUF["Content-Type"]
    return Status.FromString(response.content)


def test_an_export_of_too_many_spans_is_a_413_in_its_own_encoding(client: httpx.Client) -> None:
    attack = empty_spans(MAX_BODY_BYTES // 2 - 16)  # 8.4 million empty spans in 16 MiB
    assert len(attack) <= MAX_BODY_BYTES
    response = client.post("/v1/traces", content=attack, headers=PROTOBUF)
    assert response.status_code == 413
    assert "more than 20,000 spans" in status_of(response).message
    spans = [
        {"traceId": new_trace_id().hex(), "spanId": new_span_id().hex()}
        for _ in range(MAX_SPANS + 1)
    ]
    document = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    response = client.post("/v1/traces", content=json.dumps(document), headers=JSON)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"
    # An export at the bound is only decoded: its refusals are its spans'.
    trace = new_trace_id()
    assert partial(post(client, request(span(trace, new_span_id())))) == (0, "")


def test_json_of_too_many_objects_is_refused_before_it_is_parsed(client: httpx.Client) -> None:
    body = b'{"resourceSpans": [' + b",".join([b"{}"] * (MAX_VALUES + 1)) + b"]}"
    response = client.post("/v1/traces", content=body, headers=JSON)
    assert response.status_code == 413
    assert "more than 1,000,000 values" in response.json()["error"]["message"]


def test_logs_of_too_many_records_are_a_413(client: httpx.Client) -> None:
    message = ExportLogsServiceRequest()
    message.resource_logs.add().scope_logs.add().log_records.extend(
        LogRecord() for _ in range(MAX_SPANS + 1)
    )
    response = client.post("/v1/logs", content=message.SerializeToString(), headers=PROTOBUF)
    assert response.status_code == 413 and "log records" in status_of(response).message
    metrics = field(1, b"\x12\x00" * (MAX_VALUES + 1))  # resource metrics of empty scopes
    response = client.post("/v1/metrics", content=metrics, headers=PROTOBUF)
    assert response.status_code == 413 and "values" in status_of(response).message


def test_a_worker_refusing_attack_bodies_stays_small(tmp_path: Path) -> None:
    """The worker's peak memory (VmHWM, from /proc) grows by far less than parsing the bodies
    took (1.4 GB for the first), with a generous bound: 200 MB."""
    store = Store(tmp_path / "bounded.sqlite3")
    key = new_api_key("ws")
    store.add_key(key, None, "test")
    bodies = [
        empty_spans(MAX_BODY_BYTES // 2 - 16),
        empty_attributes(MAX_BODY_BYTES // 2 - 32),
        b"[" + b",".join([b"{}"] * (MAX_BODY_BYTES // 3 - 4)) + b"]",
    ]
    with local_service(store, ingest_processes=1) as service:
        processes = service.app.state.ingest.processes
        wait_for(lambda: processes.ready, what="the worker")
        assert processes._pool is not None
        (worker,) = set(processes._pool._processes)
        with root_client(service.base_url, key) as client:
            warmed = client.post("/v1/traces", content=empty_spans(10), headers=PROTOBUF)
            assert warmed.status_code == 200
            before = peak_rss_kb(worker)
            for body in bodies:
                kind = JSON if body.startswith(b"[") else PROTOBUF
                response = client.post("/v1/traces", content=body, headers=kind)
                assert response.status_code == 413, response.content[:200]
            assert processes.bodies == 1  # the warm-up: the others were refused there
        grown_mb = (peak_rss_kb(worker) - before) / 1024
    assert grown_mb < 200, f"the worker grew by {grown_mb:.0f} MB"
