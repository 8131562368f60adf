"""OTLP/HTTP ingest over real HTTP: traces assembled from spans in many requests, in any order,
more than once; both encodings; gzip; auth and routing; limits; the answer's encoding."""

from __future__ import annotations

import gzip
import json
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.rpc.status_pb2 import Status

from tests.support.otlp import (
    PROTOBUF,
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
from tests.support.service import RunningService, local_service
from tui.server.run import LocalService
from tui.server.store.rows import now_ms
from tui.server.store.sqlite.store import Store


@pytest.fixture(scope="module")
def service(backend_service: RunningService) -> RunningService:
    """Every test here that uses the service runs on SQLite, then on PostgreSQL."""
    return backend_service


@pytest.fixture
def project(service: RunningService) -> Iterator[tuple[str, httpx.Client]]:
    project_id, key = new_project(service)
    with root_client(service.base_url, key) as client:
        yield project_id, client


def trace_of(client: httpx.Client, trace_id: bytes) -> dict[str, Any]:
    response = client.get(f"/v1/traces/{trace_id.hex()}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def listed(client: httpx.Client, project_id: str) -> list[dict[str, Any]]:
    params = {"project_id": project_id, "from": "2000-01-01T00:00:00Z", "limit": 500}
    data: list[dict[str, Any]] = client.get("/v1/traces", params=params).json()["data"]
    return data


LLM = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "openai",
    "gen_ai.request.model": "gpt-4o-mini",
    "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
    "gen_ai.usage.input_tokens": 1000,
    "gen_ai.usage.output_tokens": 200,
}


def test_children_first_root_last_each_answer_leaves_the_trace_right(
    project: tuple[str, httpx.Client],
) -> None:
    project_id, client = project
    trace, root, chat, tool = new_trace_id(), new_span_id(), new_span_id(), new_span_id()
    t0 = now_ms() - 60_000
    children = request(
        span(trace, chat, root, "chat gpt-4o-mini", t0 + 10, 300, LLM),
        span(
            trace,
            tool,
            root,
            "lookup_order",
            t0 + 400,
            50,
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup_order"},
            error="",
            events=[("exception", {"exception.type": "KeyError", "exception.message": "48213"})],
        ),
    )
    assert partial(post(client, children)) == (0, "")

    first = trace_of(client, trace)
    assert first["span_count"] == 2 and first["name"] == "chat gpt-4o-mini"  # no root yet
    assert first["started_at"].startswith(time.strftime("%Y-%m-%dT", time.gmtime(t0 / 1000)))
    assert (first["input_tokens"], first["output_tokens"]) == (1000, 200)
    assert first["status"] == "error" and first["error_count"] == 1
    assert first["total_cost_usd"] == pytest.approx(1000 * 0.15e-6 + 200 * 0.6e-6)
    spans = {s["id"]: s for s in first["spans"]}
    assert spans[chat.hex()]["kind"] == "llm" and spans[tool.hex()]["kind"] == "tool"
    assert spans[chat.hex()]["model"] == "gpt-4o-mini-2024-07-18"
    assert spans[chat.hex()]["attributes"]["tracetui.cost_source"] == "estimated"
    assert spans[tool.hex()]["error_message"] == "KeyError: 48213"  # from the exception event
    assert [t["id"] for t in listed(client, project_id)] == [trace.hex()]

    # The root comes last and started earlier: the trace takes its name, start and duration.
    assert partial(post(client, request(span(trace, root, b"", "handle_ticket", t0, 600)))) == (
        0,
        "",
    )
    whole = trace_of(client, trace)
    assert whole["name"] == "handle_ticket" and whole["span_count"] == 3
    assert whole["duration_ms"] == 600 and whole["spans"][0]["id"] == root.hex()
    assert whole["spans"][0]["parent_id"] is None and whole["spans"][1]["parent_id"] == root.hex()
    assert (whole["input_tokens"], whole["error_count"]) == (1000, 1)
    assert [t["id"] for t in listed(client, project_id)] == [trace.hex()]  # still one trace


def test_a_resent_span_replaces_itself_and_never_counts_twice(
    project: tuple[str, httpx.Client],
) -> None:
    _, client = project
    trace, root, chat = new_trace_id(), new_span_id(), new_span_id()
    batch = request(span(trace, root, name="run"), span(trace, chat, root, "chat", attributes=LLM))
    for _ in range(3):  # an exporter retrying after a lost answer
        assert post(client, batch).status_code == 200
    again = trace_of(client, trace)
    assert again["span_count"] == 2 and again["input_tokens"] == 1000

    changed = dict(LLM, **{"gen_ai.usage.input_tokens": 10})
    assert post(client, request(span(trace, chat, root, "chat", attributes=changed))).is_success
    after = trace_of(client, trace)
    assert after["span_count"] == 2 and after["input_tokens"] == 10


def test_otlp_json_with_its_own_rules(project: tuple[str, httpx.Client]) -> None:
    _, client = project
    trace, root, child = new_trace_id().hex(), new_span_id().hex(), new_span_id().hex()
    start = now_ms() * 1_000_000
    document = {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "j"}}]
                },
                "scopeSpans": [
                    {
                        "scope": {"name": "json"},
                        "spans": [
                            {
                                "traceId": trace.upper(),  # hex of any case
                                "spanId": root.upper(),
                                "name": "agent run",
                                "kind": "SPAN_KIND_SERVER",  # an enum by name
                                "startTimeUnixNano": str(start),  # int64 as a string
                                "endTimeUnixNano": start + 9_000_000,  # or a number
                                "attributes": [
                                    {
                                        "key": "openinference.span.kind",
                                        "value": {"stringValue": "AGENT"},
                                    },
                                    {"key": "n", "value": {"intValue": "42"}},
                                    {"key": "f", "value": {"doubleValue": 0.5}},
                                    {"key": "b", "value": {"boolValue": True}},
                                    {"key": "raw", "value": {"bytesValue": "AAEC"}},
                                    {
                                        "key": "list",
                                        "value": {
                                            "arrayValue": {
                                                "values": [{"stringValue": "a"}, {"intValue": 2}]
                                            }
                                        },
                                    },
                                    {
                                        "key": "map",
                                        "value": {
                                            "kvlistValue": {
                                                "values": [
                                                    {"key": "k", "value": {"stringValue": "v"}}
                                                ]
                                            }
                                        },
                                    },
                                ],
                                "status": {"code": "STATUS_CODE_ERROR", "message": "boom"},
                            },
                            {  # snake_case names and an integer enum
                                "trace_id": trace,
                                "span_id": child,
                                "parent_span_id": root,
                                "name": "llm",
                                "kind": 3,
                                "start_time_unix_nano": start + 1_000_000,
                                "end_time_unix_nano": start + 2_000_000,
                                "attributes": [
                                    {"key": "llm.model_name", "value": {"stringValue": "gpt-4o"}},
                                    {"key": "llm.token_count.prompt", "value": {"intValue": 7}},
                                    {"key": "llm.cost.total", "value": {"doubleValue": 0.25}},
                                ],
                                "status": {"code": 1},
                            },
                        ],
                    }
                ],
            }
        ]
    }
    response = post_json(client, document)
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    assert response.json() == {}
    body = trace_of(client, bytes.fromhex(trace))
    spans = {s["id"]: s for s in body["spans"]}
    assert spans[root]["kind"] == "agent" and spans[root]["status"] == "error"
    assert spans[root]["error_message"] == "boom"
    attributes = spans[root]["attributes"]
    assert attributes["n"] == 42 and attributes["f"] == 0.5 and attributes["b"] is True
    assert attributes["raw"] == "AAEC" and attributes["list"] == ["a", 2]
    assert attributes["map"] == {"k": "v"}
    assert (
        spans[child]["cost_usd"] == 0.25
        and spans[child]["attributes"]["tracetui.cost_source"] == "reported"
    )
    assert spans[child]["input_tokens"] == 7 and spans[child]["model"] == "gpt-4o"
    assert body["attributes"] == {"service.name": "j"}  # the resource's, when first stored


def test_gzip_bodies_are_inflated(project: tuple[str, httpx.Client]) -> None:
    _, client = project
    trace = new_trace_id()
    body = gzip.compress(request(span(trace, new_span_id(), name="zipped")).SerializeToString())
    response = client.post(
        "/v1/traces", content=body, headers={**PROTOBUF, "Content-Encoding": "gzip"}
    )
    assert response.status_code == 200
    assert trace_of(client, trace)["name"] == "zipped"


def test_partial_success_names_the_refused_spans(project: tuple[str, httpx.Client]) -> None:
    _, client = project
    good = new_trace_id()
    message = request(
        span(good, new_span_id(), name="kept"),
        span(b"\x01" * 5, new_span_id(), name="short trace id"),
        span(good, b"", name="no span id"),
    )
    rejected, why = partial(post(client, message))
    assert rejected == 2 and "trace_id" in why
    assert trace_of(client, good)["span_count"] == 1

    json_answer = post_json(
        client, {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz"}]}]}]}
    )
    assert json_answer.status_code == 200
    assert json_answer.json()["partialSuccess"]["rejectedSpans"] == "1"


def status_of(response: httpx.Response) -> Status:
    assert response.headers["content-type"] == "application/x-protobuf"
    return Status.FromString(response.content)


def test_keys_are_checked_and_errors_answered_in_the_request_encoding(
    service: RunningService,
) -> None:
    message = request(span(new_trace_id(), new_span_id()))
    with httpx.Client(base_url=service.base_url.removesuffix("/v1")) as anonymous:
        missing = post(anonymous, message)
        assert missing.status_code == 401 and status_of(missing).code == 16
        unknown = post(anonymous, message, Authorization="Bearer tt_pk_not_a_key")
        assert unknown.status_code == 401 and "tt_pk_not_a_key" not in unknown.text
        as_json = post_json(anonymous, {})
        assert as_json.status_code == 401
        assert as_json.json()["error"]["code"] == "unauthorized" and as_json.json()["code"] == 16


def test_unsupported_content_types_and_encodings_get_415(
    project: tuple[str, httpx.Client],
) -> None:
    _, client = project
    assert (
        client.post("/v1/traces", content=b"x", headers={"Content-Type": "text/plain"}).status_code
        == 415
    )
    deflated = client.post(
        "/v1/traces", content=b"x", headers={**PROTOBUF, "Content-Encoding": "br"}
    )
    assert deflated.status_code == 415


def test_a_project_key_writes_into_its_project_whatever_the_resource_says(
    project: tuple[str, httpx.Client],
) -> None:
    project_id, client = project
    trace = new_trace_id()
    resource = {"service.name": "x", "tracetui.project": "proj_support"}
    assert post(client, request(span(trace, new_span_id()), resource=resource)).is_success
    assert trace_of(client, trace)["project_id"] == project_id


def test_the_workspace_key_routes_by_resource_attribute(service: RunningService) -> None:
    name = f"my-app-{uuid.uuid4().hex[:8]}"
    with root_client(service.base_url, service.keys.workspace) as client:
        by_tracetui, by_openinference, by_id = new_trace_id(), new_trace_id(), new_trace_id()
        post(client, request(span(by_tracetui, new_span_id()), resource={"tracetui.project": name}))
        post(
            client,
            request(
                span(by_openinference, new_span_id()),
                resource={"openinference.project.name": name},
            ),
        )
        post(
            client,
            request(span(by_id, new_span_id()), resource={"tracetui.project": "proj_rag"}),
        )
        projects = [p for p in client.get("/v1/projects").json()["data"] if p["name"] == name]
        assert len(projects) == 1 and projects[0]["retention_days"] == 30  # created once
        assert trace_of(client, by_tracetui)["project_id"] == projects[0]["id"]
        assert trace_of(client, by_openinference)["project_id"] == projects[0]["id"]
        assert trace_of(client, by_id)["project_id"] == "proj_rag"  # an id names a project too

        unnamed = new_trace_id()
        post(client, request(span(unnamed, new_span_id()), resource={"service.name": "svc"}))
        default = trace_of(client, unnamed)["project_id"]
        names = {p["id"]: p["name"] for p in client.get("/v1/projects").json()["data"]}
        assert names[default] == "default"


def test_a_trace_of_another_project_is_not_written_into(service: RunningService) -> None:
    _, key_a = new_project(service)
    _, key_b = new_project(service)
    trace, root = new_trace_id(), new_span_id()
    with root_client(service.base_url, key_a) as a, root_client(service.base_url, key_b) as b:
        assert post(a, request(span(trace, root, name="mine"))).is_success
        # B sends a span with A's trace id, and one with the id of A's root: B's own trace.
        sent = post(b, request(span(trace, new_span_id()), span(trace, root, name="forged")))
        assert partial(sent) == (0, "")
        body = trace_of(a, trace)
        assert body["span_count"] == 1 and body["spans"][0]["name"] == "mine"
        theirs = trace_of(b, trace)
        assert theirs["span_count"] == 2 and "forged" in {s["name"] for s in theirs["spans"]}


def test_get_on_the_same_path_is_still_the_trace_list(api: httpx.Client) -> None:
    response = api.get("traces", params={"project_id": "proj_support"})
    assert response.status_code == 200 and "data" in response.json()


def test_ingest_has_its_own_rate_budget(tmp_path: Path) -> None:
    store = Store(tmp_path / "limits.sqlite3")
    store.add_key("ws", None, "ws")
    message = request(span(new_trace_id(), new_span_id()))
    with (
        local_service(store, rate_limit=5, ingest_rate_limit=2) as service,
        root_client(service.base_url, "ws") as client,
    ):
        statuses = [post(client, message).status_code for _ in range(3)]
        assert statuses == [200, 200, 429]
        limited = post(client, message)
        assert int(limited.headers["Retry-After"]) >= 1
        assert status_of(limited).code == 8  # RESOURCE_EXHAUSTED, in the request's encoding
        api = client.get("/v1/projects")  # the API's budget is untouched by ingest
        assert api.status_code == 200 and api.headers["X-RateLimit-Remaining"] == "4"


class BlockingStore(Store):
    """A store whose ingest waits until released: the writer is saturated."""

    release = threading.Event()

    def ingest(self, batches: Any) -> None:
        assert self.release.wait(30)
        super().ingest(batches)


def test_a_saturated_writer_answers_503_with_retry_after(tmp_path: Path) -> None:
    store = BlockingStore(tmp_path / "busy.sqlite3")
    keys = ["ws_a", "ws_b", "ws_c"]  # three keys: no one key's share (4) is what refuses
    for key in keys:
        store.add_key(key, None, key)
    BlockingStore.release.clear()
    body = request(span(new_trace_id(), new_span_id())).SerializeToString()
    with LocalService(store) as service:
        results: list[int] = []

        def send(key: str) -> None:
            with httpx.Client(timeout=30) as client:
                response = client.post(
                    service.base_url.removesuffix("/v1") + "/v1/traces",
                    content=body,
                    headers={**PROTOBUF, "Authorization": f"Bearer {key}"},
                )
                results.append(response.status_code)
                if response.status_code == 503:
                    assert response.headers["Retry-After"] == "1"

        threads = [threading.Thread(target=send, args=(keys[n % 3],)) for n in range(9)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 10
        while 503 not in results and time.monotonic() < deadline:
            time.sleep(0.01)
        BlockingStore.release.set()
        for thread in threads:
            thread.join(30)
    assert sorted(results) == [200] * 8 + [503]
    assert store.count("spans") == 1  # eight sent the same span: it replaced itself


def test_group_commit_answers_each_request_its_own_refusals(service: RunningService) -> None:
    """Requests written in one transaction still get their own partial success."""
    _, key_a = new_project(service)
    _, key_b = new_project(service)
    with root_client(service.base_url, key_a) as a, root_client(service.base_url, key_b) as b:
        answers: dict[str, tuple[int, str]] = {}

        def send(label: str, client: httpx.Client, *spans: Any) -> None:
            answers[label] = partial(post(client, request(*spans)))

        trace = new_trace_id()
        # B's request: one span stored, one refused (a span id of the wrong length).
        b_spans = (span(trace, new_span_id()), span(trace, b"\x01" * 4))
        threads = [
            threading.Thread(target=send, args=("b-refused", b, *b_spans)),
            *(
                threading.Thread(
                    target=send, args=(f"a{n}", a, span(new_trace_id(), new_span_id()))
                )
                for n in range(4)
            ),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    assert answers.pop("b-refused")[0] == 1
    assert all(answer == (0, "") for answer in answers.values())


def test_ingested_traces_keep_the_spec_shape_the_app_reads_fastest(
    project: tuple[str, httpx.Client],
) -> None:
    """What ingest adds (cost_source, cache and reasoning tokens) rides in the attributes: a
    field beyond the spec's would send every ingested trace down the app's slow reader."""
    from tui.api.readers import read_trace_fast

    _, client = project
    trace, root = new_trace_id(), new_span_id()
    cached = dict(LLM, **{"gen_ai.usage.cache_read.input_tokens": 600})
    post(
        client,
        request(
            span(trace, root, name="run"),
            span(trace, new_span_id(), root, "chat", attributes=cached),
        ),
    )
    response = client.get(f"/v1/traces/{trace.hex()}")
    fast = read_trace_fast(response.content)
    assert fast is not None and len(fast.spans) == 2
    chat = next(s for s in response.json()["spans"] if s["name"] == "chat")
    assert chat["attributes"]["tracetui.cache_read_tokens"] == 600
    assert chat["attributes"]["gen_ai.usage.cache_read.input_tokens"] == 600  # as sent, too


def test_the_list_shows_what_the_user_asked(project: tuple[str, httpx.Client]) -> None:
    """A trace's list row carries an input preview (an extension): the first model call's last
    user message until the root comes with its own input, which then wins for good."""
    project_id, client = project
    trace, root, chat, later = new_trace_id(), new_span_id(), new_span_id(), new_span_id()
    t0 = now_ms() - 60_000
    messages = [
        {"role": "user", "parts": [{"type": "text", "content": "Hello"}]},
        {"role": "assistant", "parts": [{"type": "text", "content": "Hi, how can I help?"}]},
        {"role": "user", "parts": [{"type": "text", "content": "Where is\norder #48213?"}]},
    ]
    attributes = {**LLM, "gen_ai.input.messages": json.dumps(messages)}
    tool = {"gen_ai.operation.name": "execute_tool"}
    assert partial(
        post(
            client,
            request(
                span(trace, chat, root, "chat", t0 + 10, 300, attributes),
                span(trace, later, root, "t", t0 + 20, 5, tool),
            ),
        )
    ) == (0, "")
    assert [t.get("input_preview") for t in listed(client, project_id)] == [
        "Where is order #48213?"
    ]

    # Another model call later does not replace it; the root's own input does.
    other = {**LLM, "gen_ai.input.messages": json.dumps(messages[:1])}
    post(client, request(span(trace, new_span_id(), root, "chat", t0 + 400, 300, other)))
    assert listed(client, project_id)[0]["input_preview"] == "Where is order #48213?"
    post(client, request(span(trace, root, b"", "agent", t0, 900, {"input.value": "Order status"})))
    assert listed(client, project_id)[0]["input_preview"] == "Order status"
    post(client, request(span(trace, new_span_id(), root, "chat", t0 + 800, 30, attributes)))
    assert listed(client, project_id)[0]["input_preview"] == "Order status"
    # A trace with no input anywhere has no preview field at all (the spec's shape).
    bare = new_trace_id()
    post(client, request(span(bare, new_span_id(), b"", "cron", t0 + 5, 10, tool)))
    rows = {t["id"]: t for t in listed(client, project_id)}
    assert "input_preview" not in rows[bare.hex()]
