"""Hostile OTLP bodies: what a broken or malicious emitter sends is refused or stored as data,
never a 500, never a crash, never quoted back, and nothing it sends can poison other spans."""

from __future__ import annotations

import gzip
import json
import os
import zlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.otlp import (
    PROTOBUF,
    kv,
    new_project,
    new_span_id,
    new_trace_id,
    partial,
    post,
    post_json,
    request,
    root_client,
    span,
)
from tests.support.service import RunningService
from tui.server.ingest.body import MAX_BODY_BYTES
from tui.server.store.rows import now_ms

YEAR_9999_NS = 253_402_300_799 * 10**9  # past fixed64 (which ends in 2554): JSON only
FIXED64_MAX = 2**64 - 1


@pytest.fixture(params=["threads", "processes"])
def client(request: pytest.FixtureRequest) -> Iterator[httpx.Client]:
    """A project's client on the service ingesting in its threads, and on one ingesting in a
    worker process (as `tracetui serve` does): each hostile body meets both."""
    service: RunningService = request.getfixturevalue(
        "service" if request.param == "threads" else "pooled_service"
    )
    _, key = new_project(service)
    with root_client(service.base_url, key) as made:
        yield made


def strict_json(response: httpx.Response) -> Any:
    """The body parsed as strict JSON: NaN and Infinity are not JSON."""

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in a JSON answer")

    return json.loads(response.content, parse_constant=refuse)


def spans_of(client: httpx.Client, trace_id: bytes) -> list[dict[str, Any]]:
    response = client.get(f"/v1/traces/{trace_id.hex()}/spans")
    assert response.status_code == 200, response.text
    data: list[dict[str, Any]] = strict_json(response)["data"]
    return data


def test_a_span_with_100000_attributes_is_kept_whole(client: httpx.Client) -> None:
    trace = new_trace_id()
    big = span(trace, new_span_id(), name="wide")
    big.attributes.extend(kv(f"attr.{n}", n) for n in range(100_000))
    assert partial(post(client, request(big))) == (0, "")
    [stored] = spans_of(client, trace)
    assert len(stored["attributes"]) == 100_000 and stored["attributes"]["attr.99999"] == 99_999


def test_megabyte_values_are_kept_and_megabyte_names_cut(client: httpx.Client) -> None:
    trace = new_trace_id()
    megabyte = "x" * 1_000_000
    sent = span(trace, new_span_id(), name=megabyte, attributes={"input.value": megabyte})
    sent.attributes.append(kv("gen_ai.request.model", megabyte))
    assert partial(post(client, request(sent))) == (0, "")
    [stored] = spans_of(client, trace)
    assert stored["attributes"]["input.value"] == megabyte
    assert len(stored["name"]) == 1024 and len(stored["model"]) == 256
    listed = client.get(f"/v1/traces/{trace.hex()}").json()
    assert len(listed["name"]) == 1024  # the list never carries a megabyte per row


@pytest.mark.parametrize(
    ("trace_id", "span_id", "parent"),
    [
        (b"\x01" * 15, b"\x02" * 8, b""),
        (b"\x01" * 17, b"\x02" * 8, b""),
        (b"\x01" * 16, b"\x02" * 7, b""),
        (b"\x01" * 16, b"\x02" * 9, b""),
        (b"\x01" * 16, b"\x02" * 8, b"\x03" * 3),
        (b"\x00" * 16, b"\x02" * 8, b""),
        (b"\x01" * 16, b"\x00" * 8, b""),
        (b"", b"", b""),
    ],
)
def test_ids_of_the_wrong_length_are_refused_alone(
    client: httpx.Client, trace_id: bytes, span_id: bytes, parent: bytes
) -> None:
    good = new_trace_id()
    message = request(span(trace_id, span_id, parent), span(good, new_span_id()))
    rejected, why = partial(post(client, message))
    assert rejected == 1 and ("_id" in why)
    assert len(spans_of(client, good)) == 1


@pytest.mark.parametrize(
    ("start_ns", "end_ns"),
    [(0, 0), (0, 10**18), (FIXED64_MAX - 1, FIXED64_MAX), (10**18, FIXED64_MAX)],
)
def test_times_of_zero_and_the_far_future_are_refused(
    client: httpx.Client, start_ns: int, end_ns: int
) -> None:
    trace = new_trace_id()
    bad = span(trace, new_span_id())
    bad.start_time_unix_nano, bad.end_time_unix_nano = start_ns, end_ns
    rejected, why = partial(post(client, request(bad)))
    assert rejected == 1 and "time" in why
    assert client.get(f"/v1/traces/{trace.hex()}").status_code == 404


def test_an_end_before_the_start_is_a_zero_duration(client: httpx.Client) -> None:
    trace = new_trace_id()
    backwards = span(trace, new_span_id())
    backwards.end_time_unix_nano = backwards.start_time_unix_nano - 10**9
    assert partial(post(client, request(backwards))) == (0, "")
    assert spans_of(client, trace)[0]["duration_ms"] == 0


def test_a_span_naming_itself_as_parent_is_kept_as_sent(client: httpx.Client) -> None:
    trace, looped = new_trace_id(), new_span_id()
    assert partial(post(client, request(span(trace, looped, looped, name="ouroboros")))) == (0, "")
    [stored] = spans_of(client, trace)
    assert stored["parent_id"] == stored["id"] == looped.hex()
    whole = client.get(f"/v1/traces/{trace.hex()}").json()
    assert whole["name"] == "ouroboros" and whole["span_count"] == 1  # named all the same


@pytest.mark.parametrize(
    "body",
    [
        os.urandom(4096),
        b"\xff" * 64,
        request(span(new_trace_id(), new_span_id())).SerializeToString()[:-3],
    ],
    ids=["random", "ff", "truncated"],
)
def test_garbage_protobuf_is_a_400(client: httpx.Client, body: bytes) -> None:
    response = client.post("/v1/traces", content=body, headers=PROTOBUF)
    assert (
        response.status_code == 400 and response.headers["content-type"] == PROTOBUF["Content-Type"]
    )


def bomb(inflated: int, tail: bytes = b"") -> bytes:
    """A gzip stream of `inflated` zero bytes (~1000:1), then `tail` as raw deflate input."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1024 * 1024)
    parts = [compressor.compress(block) for _ in range(inflated // len(block))]
    parts.append(compressor.flush(zlib.Z_SYNC_FLUSH))
    return b"".join(parts) + tail


def test_a_gzip_bomb_is_refused_without_inflating_it_all(client: httpx.Client) -> None:
    # 64 MiB of zeros in ~64 KB, then bytes that are not deflate at all: a service that
    # inflated the whole body would reach them and answer 400; one that stops at the limit
    # answers 413 before it gets there.
    body = bomb(64 * 1024 * 1024, tail=b"\x07not deflate" * 100)
    assert len(body) < 200_000
    response = client.post(
        "/v1/traces", content=body, headers={**PROTOBUF, "Content-Encoding": "gzip"}
    )
    assert response.status_code == 413


def test_bodies_over_the_limit_are_413_compressed_or_not(client: httpx.Client) -> None:
    big = span(new_trace_id(), new_span_id(), attributes={"v": "y" * (MAX_BODY_BYTES + 10)})
    raw = request(big).SerializeToString()
    assert client.post("/v1/traces", content=raw, headers=PROTOBUF).status_code == 413
    zipped = gzip.compress(raw)
    response = client.post(
        "/v1/traces", content=zipped, headers={**PROTOBUF, "Content-Encoding": "gzip"}
    )
    assert response.status_code == 413
    broken = client.post(
        "/v1/traces", content=b"not gzip", headers={**PROTOBUF, "Content-Encoding": "gzip"}
    )
    assert broken.status_code == 400


@pytest.mark.parametrize(
    "document",
    [
        [],
        "resourceSpans",
        {"resourceSpans": "nope"},
        {"resourceSpans": [5]},
        {"resourceSpans": [{"scopeSpans": {"spans": []}}]},
        {"resourceSpans": [{"scopeSpans": [{"spans": "x"}]}]},
        {"resourceSpans": [{"resource": {"attributes": "x"}, "scopeSpans": []}]},
    ],
)
def test_json_of_the_wrong_shape_is_a_400(client: httpx.Client, document: Any) -> None:
    response = post_json(client, document)
    assert response.status_code == 400
    assert strict_json(response)["error"]["code"] == "invalid_body"


def json_span(**fields: Any) -> dict[str, Any]:
    start = now_ms() * 1_000_000
    base = {
        "traceId": new_trace_id().hex(),
        "spanId": new_span_id().hex(),
        "name": "s",
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 1000),
    }
    return {**base, **fields}


@pytest.mark.parametrize(
    "fields",
    [
        {"traceId": 5},
        {"spanId": ["a"]},
        {"name": 7},
        {"startTimeUnixNano": "soon"},
        {"startTimeUnixNano": -5},
        {"startTimeUnixNano": str(10**30)},
        {"startTimeUnixNano": str(YEAR_9999_NS), "endTimeUnixNano": str(YEAR_9999_NS)},
        {"endTimeUnixNano": YEAR_9999_NS},
        {"attributes": "x"},
        {"attributes": [{"key": 1, "value": {}}]},
        {"attributes": [{"key": "n", "value": {"intValue": "abc"}}]},
        {"attributes": [{"key": "b", "value": {"boolValue": "yes"}}]},
        {"attributes": [{"key": "a", "value": {"arrayValue": {"values": 3}}}]},
        {"status": "bad"},
        {"status": {"code": "STATUS_CODE_MAYBE"}},
        {"events": {"name": "x"}},
    ],
)
def test_json_spans_with_wrong_types_are_refused_alone(
    client: httpx.Client, fields: dict[str, Any]
) -> None:
    good = json_span()
    document = {"resourceSpans": [{"scopeSpans": [{"spans": [json_span(**fields), good]}]}]}
    response = post_json(client, document)
    assert response.status_code == 200, response.text
    assert strict_json(response)["partialSuccess"]["rejectedSpans"] == "1"
    assert len(spans_of(client, bytes.fromhex(good["traceId"]))) == 1


@pytest.mark.parametrize("depth", [200, 5000])
def test_nesting_too_deep_is_refused_not_a_500(client: httpx.Client, depth: int) -> None:
    # Built as text: json.dumps itself cannot go this deep.
    value = (
        '{"kvlistValue":{"values":[{"key":"k","value":' * depth
        + '{"stringValue":"bottom"}'
        + "}]}}" * depth
    )
    deep = json.dumps(json_span()).removesuffix("}") + ',"attributes":[{"key":"deep","value":'
    body = '{"resourceSpans":[{"scopeSpans":[{"spans":[' + deep + value + "}]}]}]}]}"
    response = client.post("/v1/traces", content=body, headers={"Content-Type": "application/json"})
    if depth < 500:  # deep but sane: stored
        assert response.status_code == 200 and strict_json(response) == {}
        return
    # Past Python's recursion limit: the body (400) or the span (refused), never a 500.
    assert response.status_code in (200, 400), response.text
    if response.status_code == 200:
        assert strict_json(response)["partialSuccess"]["rejectedSpans"] == "1"


def test_nan_surrogates_and_absurd_counts_are_stored_as_safe_data(client: httpx.Client) -> None:
    trace = new_trace_id()
    attributes = [
        {"key": "nan", "value": {"doubleValue": "NaN"}},
        {"key": "inf", "value": {"doubleValue": "-Infinity"}},
        {"key": "lone", "value": {"stringValue": "\ud800 half"}},
        {"key": "gen_ai.request.model", "value": {"stringValue": "gpt\udfff"}},
        {"key": "gen_ai.usage.input_tokens", "value": {"intValue": str(10**30)}},
        {"key": "gen_ai.usage.output_tokens", "value": {"intValue": "-40"}},
        {"key": "llm.cost.total", "value": {"doubleValue": "Infinity"}},
        {"key": "markup", "value": {"stringValue": "[@click=app.quit]\x1b[2J"}},
    ]
    hostile = json_span(
        traceId=trace.hex(),
        name="\ud800name",
        attributes=attributes,
        status={"code": 2, "message": "\udc00 broke"},
    )
    sent = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [hostile]}]}]})
    response = client.post("/v1/traces", content=sent, headers={"Content-Type": "application/json"})
    assert response.status_code == 200 and strict_json(response) == {}
    [stored] = spans_of(client, trace)
    assert stored["attributes"]["nan"] == "NaN" and stored["attributes"]["inf"] == "-Infinity"
    assert stored["attributes"]["markup"] == "[@click=app.quit]\x1b[2J"  # data, kept
    assert stored["input_tokens"] == 10**12 and stored["output_tokens"] == 0  # clamped
    assert (
        stored["attributes"]["tracetui.cost_source"] == "unknown_model" and stored["cost_usd"] == 0
    )
    assert stored["status"] == "error" and stored["error_message"].endswith(" broke")
    trace_row = client.get(f"/v1/traces/{trace.hex()}").json()
    assert trace_row["input_tokens"] == 10**12


def test_refusals_never_quote_what_was_sent(client: httpx.Client) -> None:
    secret = "tt_ws_SECRET_in_an_id_0123456789"
    document = {"resourceSpans": [{"scopeSpans": [{"spans": [json_span(traceId=secret)]}]}]}
    response = post_json(client, document)
    assert response.status_code == 200 and secret not in response.text
    garbage = client.post("/v1/traces", content=secret.encode(), headers=PROTOBUF)
    assert garbage.status_code == 400 and secret.encode() not in garbage.content
