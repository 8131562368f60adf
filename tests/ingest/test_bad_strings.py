"""One bad string never loses an export: lone surrogates (what JavaScript's JSON.stringify
emits for a string cut mid-emoji) and NUL, in any string of an OTLP export or a log record,
are stored as U+FFFD on both stores, and the good trace beside them is stored with them."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from google.rpc.status_pb2 import Status
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from tests.support.otlp import (
    JSON,
    PROTOBUF,
    any_value,
    new_project,
    new_span_id,
    new_trace_id,
    partial,
    post,
    request,
    root_client,
    span,
)
from tests.support.service import RunningService
from tui.server.ingest.text_repair import UNSOUND, lenient_class
from tui.server.store.rows import now_ms

REPLACED = "\ufffd"
LONE = "\ud83d"  # the first half of 😀, cut from its second
NUL = "\x00"


@pytest.fixture(scope="module")
def service(backend_service: RunningService) -> RunningService:
    """Every test here runs on SQLite, then on PostgreSQL."""
    return backend_service


@pytest.fixture
def client(service: RunningService) -> Iterator[httpx.Client]:
    _, key = new_project(service)
    with root_client(service.base_url, key) as made:
        yield made


def json_value(value: Any) -> dict[str, Any]:
    if isinstance(value, list):
        return {"arrayValue": {"values": [json_value(v) for v in value]}}
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": value}


def json_span(trace_id: bytes, name: str, attributes: dict[str, Any], **more: Any) -> Any:
    start = now_ms() * 1_000_000
    return {
        "traceId": trace_id.hex(),
        "spanId": new_span_id().hex(),
        "name": name,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 1_000_000),
        "attributes": [{"key": k, "value": json_value(v)} for k, v in attributes.items()],
        **more,
    }


def json_export(*spans: Any, resource: dict[str, Any] | None = None) -> bytes:
    attributes = [{"key": k, "value": json_value(v)} for k, v in (resource or {}).items()]
    document = {
        "resourceSpans": [
            {
                "resource": {"attributes": attributes},
                "scopeSpans": [{"scope": {"name": "tests"}, "spans": list(spans)}],
            }
        ]
    }
    # ensure_ascii: a lone surrogate goes out as the escape \ud83d, as JSON.stringify sends it
    return json.dumps(document, ensure_ascii=True).encode()


def trace_of(client: httpx.Client, trace_id: bytes) -> dict[str, Any]:
    response = client.get(f"/v1/traces/{trace_id.hex()}")
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


def spans_of(client: httpx.Client, trace_id: bytes) -> list[dict[str, Any]]:
    response = client.get(f"/v1/traces/{trace_id.hex()}/spans")
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["data"]
    return found


# Where the review's strings broke an export: a preview, the session, the tags, the model.
FIELDS: dict[str, Callable[[str], dict[str, Any]]] = {
    "input.value": lambda bad: {"input.value": f"hello {bad}", "openinference.span.kind": "LLM"},
    "output.value": lambda bad: {"output.value": f"bye {bad}", "openinference.span.kind": "LLM"},
    "session.id": lambda bad: {"session.id": f"s-{bad}"},
    "tag.tags": lambda bad: {"tag.tags": ["ok", f"t-{bad}"]},
    "gen_ai.request.model": lambda bad: {"gen_ai.request.model": f"gpt-{bad}"},
    "user.id": lambda bad: {"user.id": f"u-{bad}"},
}


@pytest.mark.parametrize("field", list(FIELDS))
@pytest.mark.parametrize("bad", [LONE, NUL], ids=["lone-surrogate", "nul"])
def test_a_bad_character_in_json_is_stored_as_a_replacement(
    client: httpx.Client, field: str, bad: str
) -> None:
    hurt, good = new_trace_id(), new_trace_id()
    body = json_export(
        json_span(hurt, "hurt", FIELDS[field](bad)), json_span(good, "good", {"input.value": "ok"})
    )
    response = client.post("/v1/traces", content=body, headers=JSON)
    assert response.status_code == 200, response.text
    assert response.json() == {}
    assert trace_of(client, good)["name"] == "good"
    stored = json.dumps(trace_of(client, hurt), ensure_ascii=False) + json.dumps(
        spans_of(client, hurt), ensure_ascii=False
    )
    assert REPLACED in stored and bad not in stored


@pytest.mark.parametrize("field", list(FIELDS))
def test_a_nul_in_protobuf_is_stored_as_a_replacement(client: httpx.Client, field: str) -> None:
    hurt, good = new_trace_id(), new_trace_id()
    message = request(
        span(hurt, new_span_id(), name="hurt", attributes=FIELDS[field](NUL)),
        span(good, new_span_id(), name="good"),
    )
    assert partial(post(client, message)) == (0, "")
    assert trace_of(client, good)["name"] == "good"
    [stored] = spans_of(client, hurt)
    text = json.dumps(stored, ensure_ascii=False) + json.dumps(trace_of(client, hurt))
    assert REPLACED in text and NUL not in text


def test_names_messages_and_resources_are_repaired_too(client: httpx.Client) -> None:
    trace = new_trace_id()
    bad = json_span(
        trace,
        f"name {LONE}{NUL}",
        {f"key {LONE}": "v"},
        status={"code": 2, "message": f"broke {NUL}{LONE}"},
        events=[{"name": f"exception {LONE}", "timeUnixNano": "1", "attributes": []}],
    )
    body = json_export(bad, resource={"service.name": f"svc {LONE}{NUL}"})
    response = client.post("/v1/traces", content=body, headers=JSON)
    assert response.status_code == 200 and response.json() == {}, response.text
    [stored] = spans_of(client, trace)
    assert stored["name"] == f"name {REPLACED}{REPLACED}"
    assert stored["error_message"] == f"broke {REPLACED}{REPLACED}"
    assert stored["attributes"][f"key {REPLACED}"] == "v"


def logs_message(trace_id: bytes, span_id: bytes, content: str) -> ExportLogsServiceRequest:
    record = LogRecord(trace_id=trace_id, span_id=span_id, event_name="gen_ai.user.message")
    record.time_unix_nano = now_ms() * 1_000_000
    record.body.CopyFrom(any_value({"content": content}))
    message = ExportLogsServiceRequest()
    message.resource_logs.add().scope_logs.add().log_records.append(record)
    return message


def test_a_log_body_with_bad_characters_is_stored_repaired(client: httpx.Client) -> None:
    trace, span_id = new_trace_id(), new_span_id()
    chat = span(trace, span_id, name="chat", attributes={"gen_ai.operation.name": "chat"})
    assert partial(post(client, request(chat))) == (0, "")
    as_json = {
        "resourceLogs": [
            {
                "scopeLogs": [
                    {
                        "logRecords": [
                            {
                                "traceId": trace.hex(),
                                "spanId": span_id.hex(),
                                "eventName": "gen_ai.user.message",
                                "timeUnixNano": str(now_ms() * 1_000_000),
                                "body": {
                                    "kvlistValue": {
                                        "values": [
                                            {"key": "content", "value": json_value(f"hi {LONE}")}
                                        ]
                                    }
                                },
                            }
                        ]
                    }
                ]
            }
        ]
    }
    response = client.post(
        "/v1/logs", content=json.dumps(as_json, ensure_ascii=True).encode(), headers=JSON
    )
    assert response.status_code == 200, response.text
    protobuf = client.post(
        "/v1/logs",
        content=logs_message(trace, span_id, f"there {NUL}").SerializeToString(),
        headers=PROTOBUF,
    )
    assert protobuf.status_code == 200, protobuf.text
    [stored] = spans_of(client, trace)
    logs = json.dumps(stored["attributes"].get("tracetui.logs"), ensure_ascii=False)
    assert f"hi {REPLACED}" in logs and f"there {REPLACED}" in logs


def loose_bytes(text: str) -> bytes:
    """`text` as a protobuf encoder that does not check sends it: a lone surrogate as its three
    bytes (protobuf.js), not valid UTF-8."""
    return text.encode("utf-8", "surrogatepass")


def test_a_protobuf_string_that_is_not_utf8_loses_nothing_beside_it(client: httpx.Client) -> None:
    # protobuf.js writes a lone surrogate as three bytes no UTF-8 decoder takes: the parser
    # refuses the whole body unless the service repairs it.
    hurt, good = new_trace_id(), new_trace_id()
    message = request(
        span(hurt, new_span_id(), name="hurt-XXXX", attributes={"input.value": "in YYYY"}),
        span(good, new_span_id(), name="good"),
    )
    body = message.SerializeToString()
    body = body.replace(b"XXXX", loose_bytes(f"a{LONE}b")[:4])  # same length: no framing change
    body = body.replace(b"YYYY", b"\xff\xfe\x00Z")
    assert partial(client.post("/v1/traces", content=body, headers=PROTOBUF)) == (0, "")
    assert trace_of(client, good)["name"] == "good"
    assert trace_of(client, hurt)["name"] == f"hurt-a{REPLACED}"
    [stored] = spans_of(client, hurt)
    assert stored["attributes"]["input.value"] == f"in {REPLACED * 3}Z"


def test_a_workspace_export_names_its_project_soundly(service: RunningService) -> None:
    name = f"app {LONE}{NUL} {new_trace_id().hex()[:8]}"
    trace = new_trace_id()
    body = json_export(json_span(trace, "t", {}), resource={"tracetui.project": name})
    with root_client(service.base_url, service.keys.workspace) as client:
        response = client.post("/v1/traces", content=body, headers=JSON)
        assert response.status_code == 200 and response.json() == {}, response.text
        stored = trace_of(client, trace)
        names = {p["id"]: p["name"] for p in client.get("/v1/projects").json()["data"]}
    assert names[stored["project_id"]] == name.replace(LONE, REPLACED).replace(NUL, REPLACED)


@pytest.mark.parametrize("encoding", [JSON, PROTOBUF], ids=["json", "protobuf"])
def test_an_internal_error_is_answered_in_the_requests_encoding(
    client: httpx.Client, monkeypatch: pytest.MonkeyPatch, encoding: dict[str, str]
) -> None:
    def broken(*args: Any) -> Any:
        raise RuntimeError("a fault planted by the test, quoting tt_ws_SECRET")

    monkeypatch.setattr("tui.server.routes.otlp.decode", broken)
    monkeypatch.setattr("tui.server.routes.telemetry.decode_logs", broken)
    trace = new_trace_id()
    if encoding is JSON:
        traces_body = json_export(json_span(trace, "t", {}))
        logs_body = b'{"resourceLogs": []}'
    else:
        traces_body = request(span(trace, new_span_id())).SerializeToString()
        logs_body = ExportLogsServiceRequest().SerializeToString()
    for path, body in (("/v1/traces", traces_body), ("/v1/logs", logs_body)):
        response = client.post(path, content=body, headers=encoding)
        assert response.status_code == 500
        assert response.headers["content-type"] == encoding["Content-Type"]
        assert b"SECRET" not in response.content
        if encoding is PROTOBUF:
            status = Status.FromString(response.content)
            assert status.code == 13 and "unexpectedly" in status.message  # INTERNAL
        else:
            assert response.json()["error"]["code"] == "internal_error"


# -- any string, anywhere ---------------------------------------------------------------------

# Every string an export carries, by where it goes: a resource's, the scope's, the span's name,
# an attribute's key and value (plain, or read for a preview, a session, a user, tags, a model
# or a cost), a status message, an event's name and attributes, and strings inside arrays and
# key-value lists.
SLOTS = (
    "resource.key",
    "resource.value",
    "scope.name",
    "span.name",
    "attribute.key",
    "attribute.value",
    "input.value",
    "output.value",
    "session.id",
    "user.id",
    "tag",
    "metadata",
    "model",
    "status.message",
    "event.name",
    "event.value",
    "array.item",
    "kvlist.key",
)
TRICKY = st.sampled_from(
    [NUL, LONE, "\udc00", "\udfff\ud800", "\x1b[2J", "\u202e", REPLACED, "😀", "\x7f", "[b]x[/b]"]
)
ANY_TEXT = st.lists(
    st.one_of(TRICKY, st.text(st.characters(exclude_categories=()), max_size=6)), max_size=5
).map("".join)
EXAMPLES = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def hostile_attributes(text: dict[str, str]) -> dict[str, Any]:
    return {
        text["attribute.key"]: text["attribute.value"],
        "input.value": text["input.value"],
        "output.value": text["output.value"],
        "session.id": text["session.id"],
        "user.id": text["user.id"],
        "tag.tags": [text["tag"], "plain"],
        "metadata": json.dumps({"tags": [text["tag"]], "note": text["metadata"]}),
        "gen_ai.request.model": text["model"],
        "gen_ai.usage.input_tokens": 10,
        "openinference.span.kind": "LLM",
        "nested": [text["array.item"], {text["kvlist.key"]: text["array.item"]}],
    }


def hostile_json(trace: bytes, good: bytes, text: dict[str, str]) -> bytes:
    def value(item: Any) -> dict[str, Any]:
        if isinstance(item, dict):
            pairs = [{"key": k, "value": value(v)} for k, v in item.items()]
            return {"kvlistValue": {"values": pairs}}
        if isinstance(item, list):
            return {"arrayValue": {"values": [value(v) for v in item]}}
        return json_value(item)

    attributes = [{"key": k, "value": value(v)} for k, v in hostile_attributes(text).items()]
    hostile = json_span(
        trace, text["span.name"], {}, status={"code": 2, "message": text["status.message"]}
    )
    hostile["attributes"] = attributes
    hostile["events"] = [
        {
            "name": text["event.name"],
            "timeUnixNano": hostile["startTimeUnixNano"],
            "attributes": [{"key": "why", "value": json_value(text["event.value"])}],
        }
    ]
    resource = {
        "attributes": [{"key": text["resource.key"], "value": json_value(text["resource.value"])}]
    }
    document = {
        "resourceSpans": [
            {
                "resource": resource,
                "scopeSpans": [
                    {
                        "scope": {"name": text["scope.name"]},
                        "spans": [hostile, json_span(good, "good", {})],
                    }
                ],
            }
        ]
    }
    return json.dumps(document, ensure_ascii=True).encode()


def hostile_protobuf(trace: bytes, good: bytes, text: dict[str, str]) -> bytes:
    """The same export in protobuf, built with every string field as bytes (so that a lone
    surrogate goes out as protobuf.js sends it)."""
    loose, _ = lenient_class(ExportTraceServiceRequest)
    strict = request(
        span(trace, new_span_id(), name="X", error="X", events=[("X", {"why": "X"})]),
        span(good, new_span_id(), name="good"),
    )
    message: Any = loose.FromString(strict.SerializeToString())
    resource_spans = message.resource_spans[0]
    pair = resource_spans.resource.attributes[0]
    pair.key, pair.value.string_value = (
        loose_bytes(text["resource.key"]),
        loose_bytes(text["resource.value"]),
    )
    scope_spans = resource_spans.scope_spans[0]
    scope_spans.scope.name = loose_bytes(text["scope.name"])
    hostile = scope_spans.spans[0]
    hostile.name = loose_bytes(text["span.name"])
    hostile.status.message = loose_bytes(text["status.message"])
    hostile.events[0].name = loose_bytes(text["event.name"])
    hostile.events[0].attributes[0].value.string_value = loose_bytes(text["event.value"])

    def fill(target: Any, item: Any) -> None:
        if isinstance(item, dict):
            for k, v in item.items():
                entry = target.kvlist_value.values.add()
                entry.key = loose_bytes(k)
                fill(entry.value, v)
        elif isinstance(item, list):
            for v in item:
                fill(target.array_value.values.add(), v)
        elif isinstance(item, int):
            target.int_value = item
        else:
            target.string_value = loose_bytes(item)

    for key, item in hostile_attributes(text).items():
        entry = hostile.attributes.add()
        entry.key = loose_bytes(key)
        fill(entry.value, item)
    body: bytes = message.SerializeToString()
    return body


def strings_in(document: Any) -> Iterator[str]:
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            yield node
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            stack.extend(node)
            stack.extend(node.values())


def sound_everywhere(answer: httpx.Response) -> None:
    """Every string of the answer (keys included) holds no NUL and no lone surrogate."""
    assert answer.status_code == 200, answer.text
    unsound = [s for s in strings_in(answer.json()) if UNSOUND.search(s)]
    assert not unsound, answer.text[:3000]


@pytest.mark.parametrize("encoding", ["json", "protobuf"])
def test_any_string_in_any_field_is_stored_never_a_500(
    service: RunningService, encoding: str
) -> None:
    _, key = new_project(service)

    @EXAMPLES
    @given(st.fixed_dictionaries({slot: ANY_TEXT for slot in SLOTS}))
    def export(text: dict[str, str]) -> None:
        trace, good = new_trace_id(), new_trace_id()
        with root_client(service.base_url, key) as client:
            if encoding == "json":
                response = client.post(
                    "/v1/traces", content=hostile_json(trace, good, text), headers=JSON
                )
                assert response.status_code == 200, response.text
                assert response.json() == {}  # nothing refused: every string is repaired
            else:
                body = hostile_protobuf(trace, good, text)
                response = client.post("/v1/traces", content=body, headers=PROTOBUF)
                assert partial(response) == (0, "")
            assert trace_of(client, good)["name"] == "good"
            sound_everywhere(client.get(f"/v1/traces/{trace.hex()}"))
            sound_everywhere(client.get(f"/v1/traces/{trace.hex()}/spans"))

    export()
