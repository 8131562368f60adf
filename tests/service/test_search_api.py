"""Search over real HTTP, on both backends: users, sessions and tags read from every convention
at ingest, the filters of GET /v1/traces as the OpenAPI document lists them, their errors, and
a project's sessions and users."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import httpx
import pytest

from tests.support.otlp import new_project, new_span_id, new_trace_id, post, request, span
from tests.support.service import RunningService
from tui.server.http.schemas import iso_ms, parse_timestamp


@pytest.fixture(scope="module")
def service(backend_service: RunningService) -> RunningService:
    return backend_service


@pytest.fixture(scope="module")
def project(service: RunningService) -> tuple[str, str]:
    """A project holding one trace per convention (and a few more), and its key."""
    project_id, key = new_project(service)
    now = time.time_ns() // 1_000_000
    spans = []
    for offset, (name, attributes) in enumerate(CONVENTIONS.items()):
        trace_id = new_trace_id()
        root = new_span_id()
        spans.append(
            span(
                trace_id,
                root,
                name=name,
                start_ms=now - 1000 + offset,
                attributes={**attributes, "output.value": f"the answer for {name}"},
            )
        )
        spans.append(
            span(
                trace_id,
                new_span_id(),
                parent=root,
                name="llm call",
                start_ms=now - 1000 + offset,
                attributes={"input.value": f"Question about REFUND-{offset}"},
                error="boom" if offset == 0 else None,
            )
        )
    with service.client(key) as api:
        assert post(root_of(service, api), request(*spans)).status_code == 200
    # SQLite indexes the text off ingest's path (store/texts.py): indexed here at once, so the
    # answers do not wait for the service's indexer (tests/service/test_text_index.py does).
    service.store.index_texts()
    return project_id, key


def root_of(service: RunningService, api: httpx.Client) -> httpx.Client:
    return httpx.Client(
        base_url=service.base_url.removesuffix("/v1"), headers=dict(api.headers), timeout=30
    )


CONVENTIONS: dict[str, dict[str, Any]] = {
    "openinference": {"session.id": "s-oi", "user.id": "u-oi", "tag.tags": ["a", "b"]},
    "genai": {"gen_ai.conversation.id": "s-genai", "enduser.id": "u-genai"},
    "langfuse": {
        "langfuse.session.id": "s-lf",
        "langfuse.user.id": "u-lf",
        "langfuse.tags": '["lf1", "lf2"]',
        "langfuse.trace.tags": ["lf3"],
    },
    "traceloop": {
        "traceloop.association.properties.session_id": "s-tl",
        "traceloop.association.properties.user_id": "u-tl",
    },
    "vercel": {"ai.telemetry.metadata.sessionId": "s-v", "ai.telemetry.metadata.userId": "u-v"},
    "metadata": {"metadata": json.dumps({"user_id": "u-md", "session_id": "s-md"})},
}
EXPECTED = {
    "openinference": ("u-oi", "s-oi", ["a", "b"]),
    "genai": ("u-genai", "s-genai", []),
    "langfuse": ("u-lf", "s-lf", ["lf1", "lf2", "lf3"]),
    "traceloop": ("u-tl", "s-tl", []),
    "vercel": ("u-v", "s-v", []),
    "metadata": ("u-md", "s-md", []),
}


def listed(api: httpx.Client, project_id: str, **params: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    query: dict[str, Any] = {"project_id": project_id, "limit": 2, **params}
    for _ in range(100):
        answer = api.get("traces", params=query)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        rows += body["data"]
        if body["next_cursor"] is None:
            return rows
        query = {"project_id": project_id, "cursor": body["next_cursor"], "limit": 2}
    raise AssertionError("paging did not end")


def test_each_conventions_user_session_and_tags_are_read(
    service: RunningService, project: tuple[str, str]
) -> None:
    project_id, key = project
    with service.client(key) as api:
        rows = {row["name"]: row for row in listed(api, project_id)}
    for name, (user, session, tags) in EXPECTED.items():
        row = rows[name]
        assert (row["user_id"], row["session_id"], row["tags"]) == (user, session, tags), name
        assert row["output_preview"] == f"the answer for {name}"


def test_the_openapi_document_lists_every_filter_and_the_new_routes(api: httpx.Client) -> None:
    document = api.get("openapi.json").json()
    names = {p["name"] for p in document["paths"]["/v1/traces"]["get"]["parameters"]}
    assert names >= {
        "q",
        "status",
        "model",
        "name",
        "min_latency_ms",
        "max_latency_ms",
        "min_cost_usd",
        "user_id",
        "session_id",
        "tag",
        "sort",
        "order",
    }
    assert "/v1/projects/{project_id}/sessions" in document["paths"]
    assert "/v1/projects/{project_id}/users" in document["paths"]
    trace = document["components"]["schemas"]["Trace"]["properties"]
    assert {"user_id", "session_id", "tags", "output_preview"} <= set(trace)


def test_filters_over_http(service: RunningService, project: tuple[str, str]) -> None:
    project_id, key = project
    with service.client(key) as api:

        def names(**params: Any) -> list[str]:
            return [row["name"] for row in listed(api, project_id, **params)]

        assert names(user_id="u-lf") == ["langfuse"]
        assert names(session_id="s-md") == ["metadata"]
        assert names(tag=["lf1", "lf3"]) == ["langfuse"]
        assert names(tag=["a", "lf1"]) == []
        assert names(q="refund-0") == ["openinference"]
        assert names(q='"answer for gen"') == ["genai"]
        assert names(status="error") == ["openinference"]
        assert names(name="VERCEL") == ["vercel"]
        assert names(sort="started_at", order="asc") == list(CONVENTIONS)
        assert names() == list(reversed(CONVENTIONS))
        # Filters sent with a cursor are ignored: the cursor's are used.
        first = api.get(
            "traces", params={"project_id": project_id, "limit": 1, "q": "answer", "order": "asc"}
        ).json()
        second = api.get(
            "traces",
            params={"project_id": project_id, "cursor": first["next_cursor"], "q": "nothing"},
        ).json()
        assert [r["name"] for r in first["data"] + second["data"]] == list(CONVENTIONS)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"q": "ab"}, "q"),
        ({"q": 'refund "to"'}, "q"),
        ({"status": "bad"}, "status"),
        ({"min_latency_ms": "-1"}, "min_latency_ms"),
        ({"sort": "name"}, "sort"),
        ({"order": "up"}, "order"),
    ],
)
def test_bad_filters_are_422_naming_the_field(
    api: httpx.Client, project: tuple[str, str], params: dict[str, str], field: str
) -> None:
    answer = api.get("traces", params={"project_id": project[0], **params})
    assert answer.status_code == 422, answer.text
    error = answer.json()["error"]
    assert error["code"] == "validation_error"
    assert any(field in d["field"] for d in error["details"]), error


def cursor_of(values: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(values).encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "values",
    [
        {"t": 1, "i": "x", "f": 0, "u": 1, "x": {"status": "maybe"}},
        {"t": 1, "i": "x", "f": 0, "u": 1, "x": {"q": "ab"}},
        {"t": 1, "i": "x", "f": 0, "u": 1, "x": {"tags": "a"}},
        {"t": 1, "i": "x", "f": 0, "u": 1, "x": {"drop": "table"}},
        {"t": 1.5, "i": "x", "f": 0, "u": 1, "x": {"sort": "duration_ms"}},
        {"t": 1, "i": "x", "f": 0, "u": 1, "x": []},
    ],
)
def test_a_crafted_cursor_is_a_400(
    api: httpx.Client, project: tuple[str, str], values: dict[str, Any]
) -> None:
    answer = api.get("traces", params={"project_id": project[0], "cursor": cursor_of(values)})
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["code"] == "invalid_cursor"


def test_sessions_and_users_page_and_lead_to_their_traces(service: RunningService) -> None:
    project_id, key = new_project(service)
    now = time.time_ns() // 1_000_000
    spans = []
    # Three sessions: s0 (alice: 2 traces, one failed), s1 (bob then alice), s2 (bob).
    plan = [
        ("s0", "alice", 0),
        ("s0", "alice", 1),
        ("s1", "bob", 2),
        ("s1", "alice", 3),
        ("s2", "bob", 4),
    ]
    for session, user, offset in plan:
        trace_id = new_trace_id()
        spans.append(
            span(
                trace_id,
                new_span_id(),
                name=f"turn {offset}",
                start_ms=now - 5000 + offset * 100,
                attributes={
                    "session.id": session,
                    "user.id": user,
                    "llm.token_count.prompt": 10,
                    "llm.token_count.completion": 5,
                },
                error="boom" if offset == 1 else None,
            )
        )
    with service.client(key) as api:
        assert post(root_of(service, api), request(*spans)).status_code == 200
        sessions = pages(api, f"projects/{project_id}/sessions", {})
        assert [s["id"] for s in sessions] == ["s2", "s1", "s0"]
        by_id = {s["id"]: s for s in sessions}
        # Each session's most recent trace's user, in the page's order.
        assert [s["user_id"] for s in sessions] == ["bob", "alice", "alice"]
        assert (by_id["s0"]["trace_count"], by_id["s0"]["error_count"]) == (2, 1)
        assert by_id["s0"]["total_tokens"] == 30
        assert [
            s["id"] for s in pages(api, f"projects/{project_id}/sessions", {"user_id": "bob"})
        ] == ["s2", "s1"]
        users = pages(api, f"projects/{project_id}/users", {})
        assert [u["id"] for u in users] == ["bob", "alice"]
        alice = users[1]
        assert (alice["trace_count"], alice["session_count"], alice["error_count"]) == (3, 2, 1)
        # A session's traces, in order, with the window the app sends.
        s0 = by_id["s0"]
        turns = listed(
            api,
            project_id,
            session_id="s0",
            sort="started_at",
            order="asc",
            **{"from": s0["first_seen"], "to": iso_ms(parse_timestamp(s0["last_seen"]) + 1)},
        )
        assert [t["name"] for t in turns] == ["turn 0", "turn 1"]
    # Key rules: a project key reads its own project only.
    other, other_key = new_project(service)
    with service.client(other_key) as api:
        for path in ("sessions", "users"):
            assert api.get(f"projects/{project_id}/{path}").status_code == 403
            assert api.get(f"projects/{other}/{path}").json()["data"] == []


def pages(api: httpx.Client, path: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """Every row, one per page (limit 1), checking the answer's shape."""
    rows: list[dict[str, Any]] = []
    query = {**params, "limit": 1}
    for _ in range(100):
        answer = api.get(path, params=query)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        rows += body["data"]
        assert body["has_more"] == (body["next_cursor"] is not None)
        if body["next_cursor"] is None:
            assert len({r["id"] for r in rows}) == len(rows)
            return rows
        query = {"cursor": body["next_cursor"], "limit": 1}
    raise AssertionError("paging did not end")
