"""The issue's question over real HTTP on both backends: "the failed gpt-4o calls over 2 s" as
conditions on one span (`span_model`, `span_status`, `span_min_latency_ms`), which the same
conditions on the whole trace answer wrongly; text in the inputs or the outputs alone (`input`,
`output`); the cursor carrying them; their 422s; the OpenAPI document listing them."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from tests.support.otlp import new_project, new_span_id, new_trace_id, post, request, span
from tests.support.service import RunningService


@pytest.fixture(scope="module")
def service(backend_service: RunningService) -> RunningService:
    return backend_service


def story(
    name: str,
    at: int,
    calls: list[tuple[str, str | None, int, str | None]],
    asked: str,
    answered: str,
) -> list[Any]:
    """A trace: an agent whose input is `asked` and output `answered`, and its `calls` (name,
    model, duration, error)."""
    trace_id, root = new_trace_id(), new_span_id()
    spans = [
        span(
            trace_id,
            root,
            name=name,
            start_ms=at,
            duration_ms=5_000,
            attributes={"input.value": asked, "output.value": answered},
        )
    ]
    for offset, (call, model, duration, error) in enumerate(calls):
        attributes = (
            {"gen_ai.request.model": model, "gen_ai.operation.name": "chat"} if model else {}
        )
        spans.append(
            span(
                trace_id,
                new_span_id(),
                parent=root,
                name=call,
                start_ms=at + 10 + offset,
                duration_ms=duration,
                attributes=attributes,
                error=error,
            )
        )
    return spans


@pytest.fixture(scope="module")
def project(service: RunningService) -> tuple[str, str]:
    project_id, key = new_project(service)
    now = time.time_ns() // 1_000_000 - 60_000
    spans = [
        # Failed (its tool), used gpt-4o, over 2 s: the whole trace matches; no one span does.
        *story(
            "tool failed",
            now,
            [("search_orders", None, 40, "timeout"), ("chat gpt-4o", "gpt-4o", 2_400, None)],
            "Where is my order?",
            "Your refund is on its way.",
        ),
        # Its gpt-4o call failed after 3 s: the one span the question asks for.
        *story(
            "call failed",
            now + 1,
            [("chat gpt-4o", "gpt-4o", 3_000, "rate limited")],
            "I want a refund",
            "Sorry, something went wrong.",
        ),
        # Its gpt-4o call failed quickly.
        *story(
            "fast failure",
            now + 2,
            [("chat gpt-4o", "gpt-4o", 900, "bad request")],
            "cancel my order",
            "Sorry, something went wrong.",
        ),
    ]
    with service.client(key) as api:
        root = httpx.Client(
            base_url=service.base_url.removesuffix("/v1"), headers=dict(api.headers)
        )
        with root:
            assert post(root, request(*spans)).status_code == 200
    # SQLite indexes the text off ingest's path (store/texts.py): indexed here at once, so the
    # answers do not wait for the service's indexer (tests/service/test_text_index.py does).
    service.store.index_texts()
    return project_id, key


def names(api: httpx.Client, project_id: str, **params: Any) -> list[str]:
    rows: list[str] = []
    query: dict[str, Any] = {"project_id": project_id, "limit": 1, **params}
    for _ in range(20):
        body = api.get("traces", params=query).json()
        rows += [row["name"] for row in body["data"]]
        if body["next_cursor"] is None:
            return rows
        # Sent with the cursor, other filters are ignored: the cursor carries the first page's.
        query = {"project_id": project_id, "cursor": body["next_cursor"], "span_model": "x"}
    raise AssertionError("paging did not end")


def test_the_failed_gpt_4o_calls_over_2_s(
    service: RunningService, project: tuple[str, str]
) -> None:
    project_id, key = project
    with service.client(key) as api:
        whole = names(api, project_id, status="error", model="gpt-4o", min_latency_ms=2000)
        assert sorted(whole) == ["call failed", "fast failure", "tool failed"]
        one_span = dict(span_model="GPT-4o", span_status="error", span_min_latency_ms=2000)
        assert names(api, project_id, **one_span) == ["call failed"]
        assert names(api, project_id, span_model="gpt-4o", span_status="error") == [
            "fast failure",
            "call failed",
        ]
        assert names(api, project_id, span_status="error", span_name="SEARCH_ORDERS") == [
            "tool failed"
        ]
        assert names(api, project_id, span_max_latency_ms=50, span_status="error") == [
            "tool failed"
        ]
        assert names(api, project_id, span_kind="llm", span_status="ok") == ["tool failed"]
        assert names(api, project_id, span_model="gpt-4o", order="asc") == [
            "tool failed",
            "call failed",
            "fast failure",
        ]


def test_text_in_the_inputs_or_the_outputs_alone(
    service: RunningService, project: tuple[str, str]
) -> None:
    project_id, key = project
    with service.client(key) as api:
        assert sorted(names(api, project_id, q="refund")) == ["call failed", "tool failed"]
        assert names(api, project_id, input="REFUND") == ["call failed"]
        assert names(api, project_id, output="refund") == ["tool failed"]
        assert names(api, project_id, output="sorry", input="order") == ["fast failure"]
        assert names(api, project_id, input=["cancel", "my order"]) == ["fast failure"]
        assert names(api, project_id, input="rate limited") == []  # an error, not an input
        assert names(api, project_id, q="rate limited") == ["call failed"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"input": "ab"}, "input"),
        ({"input": "x" * 65}, "input"),  # search bounds: a text term is 64 characters at most
        ({"output": "  x "}, "output"),
        ({"span_status": "failed"}, "span_status"),
        ({"span_kind": "robot"}, "span_kind"),
        ({"span_min_latency_ms": "-1"}, "span_min_latency_ms"),
        ({"span_model": "m" * 201}, "span_model"),
    ],
)
def test_bad_span_and_text_filters_are_422_naming_the_field(
    service: RunningService, project: tuple[str, str], params: dict[str, str], field: str
) -> None:
    project_id, key = project
    with service.client(key) as api:
        answer = api.get("traces", params={"project_id": project_id, **params})
    assert answer.status_code == 422, answer.text
    assert any(field in d["field"] for d in answer.json()["error"]["details"])


def test_the_openapi_document_lists_them(api: httpx.Client) -> None:
    document = api.get("openapi.json").json()
    listed = {p["name"] for p in document["paths"]["/v1/traces"]["get"]["parameters"]}
    assert listed >= {
        "input",
        "output",
        "span_model",
        "span_name",
        "span_kind",
        "span_status",
        "span_min_latency_ms",
        "span_max_latency_ms",
    }
