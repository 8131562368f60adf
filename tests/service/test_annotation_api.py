"""Annotations over real HTTP, on both backends: the walk of issue 41 (an on-call engineer marks
a failing trace's root cause and a span's note; another key of the project sees both with the
author; a key of another project sees nothing and learns nothing), the bounds with a 422 on the
field, Idempotency-Key, changes and deletion, and the summaries in the trace answers."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.support.otlp import new_span_id, new_trace_id, post, request, span
from tests.support.service import RunningService
from tui.server.api_keys import new_api_key


@pytest.fixture(scope="module")
def service(backend_service: RunningService) -> RunningService:
    return backend_service


@dataclass
class World:
    """Projects A and B, each with a trace of the same id and the same root (A's child span is
    its own), A's two keys and B's one."""

    a: str
    b: str
    trace_id: str
    root: str
    child: str
    laptop: httpx.Client  # A's key labelled "on-call laptop"
    terminal: httpx.Client  # A's key labelled "second terminal"
    other: httpx.Client  # B's key


def client(service: RunningService, key: str) -> httpx.Client:
    return httpx.Client(
        base_url=service.base_url + "/", headers={"Authorization": f"Bearer {key}"}, timeout=30
    )


def project_with_keys(service: RunningService, *labels: str) -> tuple[str, list[str]]:
    project = f"proj_{uuid.uuid4().hex[:10]}"
    with service.store.transaction() as db:
        service.store.insert_project(db, project, None, 30, project_id=project)
    keys = [new_api_key("pk") for _ in labels]
    for key, label in zip(keys, labels, strict=True):
        service.store.add_key(key, project, label)
    return project, keys


def send_trace(service: RunningService, key: str, trace: bytes, root: bytes, child: bytes) -> None:
    now = time.time_ns() // 1_000_000
    spans = [
        span(trace, root, name="answer", start_ms=now - 2000, duration_ms=900),
        span(trace, child, parent=root, name="retrieve", start_ms=now - 1900, error="stale policy"),
    ]
    with httpx.Client(
        base_url=service.base_url.removesuffix("/v1"),
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    ) as api:
        assert post(api, request(*spans)).status_code == 200


@pytest.fixture(scope="module")
def world(service: RunningService) -> World:
    a, (laptop, terminal) = project_with_keys(service, "on-call laptop", "second terminal")
    b, (other,) = project_with_keys(service, "other team")
    trace, root, child = new_trace_id(), new_span_id(), new_span_id()
    send_trace(service, laptop, trace, root, child)
    send_trace(service, other, trace, root, new_span_id())
    return World(
        a,
        b,
        trace.hex(),
        root.hex(),
        child.hex(),
        client(service, laptop),
        client(service, terminal),
        client(service, other),
    )


def traces_of(api: httpx.Client, project: str, **params: Any) -> list[dict[str, Any]]:
    answer = api.get("traces", params={"project_id": project, **params})
    assert answer.status_code == 200, answer.text
    return list(answer.json()["data"])


def annotate(
    api: httpx.Client, project: str, *items: dict[str, Any], **headers: str
) -> httpx.Response:
    return api.post(f"projects/{project}/annotations", json={"data": list(items)}, headers=headers)


def test_the_walk_one_key_marks_another_of_the_project_sees_another_project_sees_nothing(
    world: World,
) -> None:
    w = world
    stored = annotate(
        w.laptop,
        w.a,
        {"trace_id": w.trace_id, "name": "root_cause", "label": "retriever"},
        {"trace_id": w.trace_id, "span_id": w.child, "name": "note", "explanation": "wrong policy"},
    )
    assert stored.status_code == 201, stored.text
    records = stored.json()["data"]
    assert [r["author"] for r in records] == ["on-call laptop"] * 2
    assert records[1]["result"] == {"label": None, "score": None, "explanation": "wrong policy"}

    # The second terminal sees both at once, with the author.
    (row,) = traces_of(w.terminal, w.a)
    assert row["annotations"]["root_cause"]["label"] == "retriever"
    assert row["annotations"]["note"]["count"] == 1
    listed = w.terminal.get(f"projects/{w.a}/annotations", params={"trace_id": w.trace_id})
    assert {(r["name"], r["author"]) for r in listed.json()["data"]} == {
        ("root_cause", "on-call laptop"),
        ("note", "on-call laptop"),
    }
    whole = w.terminal.get(f"traces/{w.trace_id}", params={"project_id": w.a}).json()
    assert set(whole["annotations"]) == {"root_cause", "note"}
    spans = {s["id"]: s for s in whole["spans"]}
    assert "annotations" not in spans[w.root]
    assert spans[w.child]["annotations"]["note"]["count"] == 1
    listed_spans = w.terminal.get(f"traces/{w.trace_id}/spans", params={"project_id": w.a})
    assert {s["id"]: s.get("annotations") for s in listed_spans.json()["data"]} == {
        w.root: None,
        w.child: spans[w.child]["annotations"],
    }

    # Another project's key: its trace of the same id has none; A's are out of its reach.
    (its_row,) = traces_of(w.other, w.b)
    assert its_row["id"] == w.trace_id and its_row["annotations"] == {}
    its_trace = w.other.get(f"traces/{w.trace_id}").json()
    assert its_trace["annotations"] == {} and all(
        "annotations" not in s for s in its_trace["spans"]
    )
    assert traces_of(w.other, w.b, annotation="root_cause") == []
    assert w.other.get(f"projects/{w.b}/annotations").json()["data"] == []
    for answer in (
        w.other.get(f"projects/{w.a}/annotations"),
        annotate(w.other, w.a, {"trace_id": w.trace_id, "name": "x", "label": "y"}),
        w.other.get("traces", params={"project_id": w.a, "annotation": "note"}),
    ):
        assert answer.status_code == 403, answer.text


def test_another_projects_annotation_id_is_a_404_like_a_missing_one(world: World) -> None:
    w = world
    (mine,) = annotate(w.laptop, w.a, {"trace_id": w.trace_id, "name": "n", "label": "l"}).json()[
        "data"
    ]
    answers = []
    for aid in (mine["id"], "ann_" + "0" * 32):
        patched = w.other.patch(f"projects/{w.b}/annotations/{aid}", json={"label": "hijack"})
        deleted = w.other.delete(f"projects/{w.b}/annotations/{aid}")
        answers.append([(r.status_code, r.json()) for r in (patched, deleted)])
    assert answers[0] == answers[1] and answers[0][0][0] == 404
    assert w.other.patch(f"projects/{w.a}/annotations/{mine['id']}", json={}).status_code == 403
    # A's span, named in B's path, is refused as a span that exists nowhere.
    refusals = []
    for span_id in (w.child, "f" * 16):
        item = {"trace_id": w.trace_id, "span_id": span_id, "name": "n", "label": "x"}
        refused = annotate(w.other, w.b, item)
        refusals.append((refused.status_code, refused.json()))
    assert refusals[0] == refusals[1]
    assert refusals[0][1]["error"]["details"] == [
        {
            "field": "data[0].span_id",
            "message": "no span with this id in this trace of this project",
        }
    ]
    mine_now = w.laptop.get(f"projects/{w.a}/annotations", params={"name": "n"}).json()["data"]
    assert mine_now[0]["label"] == "l"


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ({"name": "x" * 65, "label": "l"}, "data[0].name"),
        ({"name": "   ", "label": "l"}, "data[0].name"),
        ({"name": "note", "explanation": "x" * 10_001}, "data[0].explanation"),
        ({"name": "n", "label": "x" * 201}, "data[0].label"),
        ({"name": "n", "score": "0.5"}, "data[0].score"),
        ({"name": "n", "score": True}, "data[0].score"),
        ({"name": "n", "result": {"score": [1]}}, "data[0].result.score"),
        ({"name": "n"}, "data[0].label"),
        ({"name": "n", "label": "a", "result": {"label": "b"}}, "data[0].result.label"),
        ({"name": "n", "label": "l", "annotator_kind": "ROBOT"}, "data[0].annotator_kind"),
        ({"name": "n", "label": "l", "metadata": {"x": "y" * 17_000}}, "data[0].metadata"),
        ({"name": "n", "label": "l", "metadata": [1]}, "data[0].metadata"),
        ({"name": "n", "label": "l", "author": "me"}, "data[0].author"),
        ({"name": "n", "label": "l", "tt_pk_secret123": 1}, "data[0]"),
    ],
)
def test_a_bad_field_is_a_422_on_it_and_nothing_is_stored(
    world: World, item: dict[str, Any], field: str
) -> None:
    w = world
    good = {"trace_id": w.trace_id, "name": "fine", "label": "ok"}
    before = w.laptop.get(f"projects/{w.a}/annotations", params={"limit": 500}).json()["data"]
    answer = annotate(w.laptop, w.a, good, {"trace_id": w.trace_id, **item})
    assert answer.status_code == 422, answer.text
    fields = [d["field"] for d in answer.json()["error"]["details"]]
    assert fields == [field.replace("data[0]", "data[1]")]
    assert "tt_pk_secret123" not in answer.text
    after = w.laptop.get(f"projects/{w.a}/annotations", params={"limit": 500}).json()["data"]
    assert after == before


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_a_score_that_is_not_finite_is_refused(world: World, number: str) -> None:
    item = f'{{"trace_id": "{world.trace_id}", "name": "n", "result": {{"score": {number}}}}}'
    answer = world.laptop.post(
        f"projects/{world.a}/annotations",
        content='{"data": [' + item + "]}",
        headers={"Content-Type": "application/json"},
    )
    assert answer.status_code == 422
    assert answer.json()["error"]["details"][0]["field"] == "data[0].result.score"


@pytest.mark.parametrize(
    ("target", "field"),
    [
        ({}, "data[0].trace_id"),
        ({"span_id": "ab"}, "data[0].trace_id"),
        ({"trace_id": "t", "session_id": "s"}, "data[0].session_id"),
        ({"trace_id": "nope"}, "data[0].trace_id"),
        ({"session_id": "nope"}, "data[0].session_id"),
    ],
)
def test_a_target_must_be_a_trace_a_span_or_a_session_of_the_project(
    world: World, target: dict[str, Any], field: str
) -> None:
    answer = annotate(world.laptop, world.a, {**target, "name": "n", "label": "l"})
    assert answer.status_code == 422
    assert [d["field"] for d in answer.json()["error"]["details"]] == [field]


def test_a_batch_holds_one_to_a_thousand(world: World) -> None:
    for items in ([], [{"trace_id": world.trace_id, "name": "n", "label": "l"}] * 1001):
        answer = world.laptop.post(f"projects/{world.a}/annotations", json={"data": items})
        assert answer.status_code == 422
        assert [d["field"] for d in answer.json()["error"]["details"]] == ["data"]


def test_an_idempotency_key_answers_a_repeat_as_the_first_and_refuses_another_body(
    world: World,
) -> None:
    w = world
    key = {"Idempotency-Key": f"batch-{uuid.uuid4()}"}
    item = {"trace_id": w.trace_id, "name": f"idem-{uuid.uuid4().hex[:6]}", "label": "l"}
    first = annotate(w.laptop, w.a, item, **key)
    again = annotate(w.laptop, w.a, item, **key)
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json() and again.headers["Idempotent-Replayed"] == "true"
    listed = w.laptop.get(f"projects/{w.a}/annotations", params={"name": item["name"]})
    assert len(listed.json()["data"]) == 1
    other = annotate(w.laptop, w.a, {**item, "label": "other"}, **key)
    assert other.status_code == 409
    assert other.json()["error"]["code"] == "idempotency_conflict"


def test_a_change_makes_the_changer_the_author_and_a_delete_is_a_204(world: World) -> None:
    w = world
    (record,) = annotate(
        w.laptop, w.a, {"trace_id": w.trace_id, "name": "verdict", "label": "wrong"}
    ).json()["data"]
    path = f"projects/{w.a}/annotations/{record['id']}"
    changed = w.terminal.patch(path, json={"label": None, "score": 0.25, "metadata": {"by": "me"}})
    assert changed.status_code == 200, changed.text
    body = changed.json()
    assert (body["label"], body["score"], body["author"]) == (None, 0.25, "second terminal")
    assert body["metadata"] == {"by": "me"} and body["created_at"] == record["created_at"]
    assert body["result"] == {"label": None, "score": 0.25, "explanation": None}
    emptied = w.terminal.patch(path, json={"score": None})
    assert emptied.status_code == 422
    assert emptied.json()["error"]["details"][0]["field"] == "label"
    assert w.terminal.patch(path, json={"name": None}).status_code == 422
    key = {"Idempotency-Key": f"delete-{uuid.uuid4()}"}
    assert w.terminal.delete(path, headers=key).status_code == 204
    assert w.terminal.delete(path, headers=key).status_code == 204  # the repeat's answer
    assert w.terminal.delete(path).status_code == 404
    assert w.terminal.patch(path, json={"label": "x"}).status_code == 404


def test_the_listing_needs_a_trace_for_a_span_and_its_cursor_carries_the_filters(
    world: World,
) -> None:
    w = world
    refused = w.laptop.get(f"projects/{w.a}/annotations", params={"span_id": w.child})
    assert refused.status_code == 422
    assert refused.json()["error"]["details"][0]["field"] == "span_id"
    name = f"paged-{uuid.uuid4().hex[:6]}"
    items = [{"trace_id": w.trace_id, "name": name, "score": n / 10} for n in range(5)]
    annotate(w.laptop, w.a, *items)
    annotate(w.laptop, w.a, {"trace_id": w.trace_id, "name": "unrelated", "label": "x"})
    seen: list[dict[str, Any]] = []
    params: dict[str, Any] = {"name": name, "limit": 2}
    while True:
        page = w.laptop.get(f"projects/{w.a}/annotations", params=params).json()
        seen += page["data"]
        if not page["has_more"]:
            break
        params = {"cursor": page["next_cursor"], "name": "unrelated"}  # ignored with a cursor
    assert sorted(r["score"] for r in seen) == [0.0, 0.1, 0.2, 0.3, 0.4]
    assert {r["name"] for r in seen} == {name}
    tampered = w.laptop.get(f"projects/{w.a}/annotations", params={"cursor": "e30"})
    assert tampered.status_code == 400


def test_a_session_annotation_is_listed_by_its_session(service: RunningService) -> None:
    project, (key,) = project_with_keys(service, "sessions")
    trace, root = new_trace_id(), new_span_id()
    now = time.time_ns() // 1_000_000
    with httpx.Client(
        base_url=service.base_url.removesuffix("/v1"),
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    ) as raw:
        spans = [span(trace, root, start_ms=now - 100, attributes={"session.id": "conv-7"})]
        assert post(raw, request(*spans)).status_code == 200
    with client(service, key) as api:
        stored = annotate(
            api, project, {"session_id": "conv-7", "name": "note", "explanation": "x"}
        )
        assert stored.status_code == 201, stored.text
        listed = api.get(f"projects/{project}/annotations", params={"session_id": "conv-7"})
        assert [r["session_id"] for r in listed.json()["data"]] == ["conv-7"]
        (row,) = traces_of(api, project)
        assert row["annotations"] == {}  # a session's annotations are on no trace


def test_the_openapi_document_offers_every_path_and_parameter(service: RunningService) -> None:
    with service.client() as api:
        document = api.get("openapi.json").json()
    paths = document["paths"]
    assert set(paths["/v1/projects/{project_id}/annotations"]) == {"get", "post"}
    assert set(paths["/v1/projects/{project_id}/annotations/{annotation_id}"]) == {
        "patch",
        "delete",
    }
    listing = paths["/v1/projects/{project_id}/annotations"]["get"]
    assert {p["name"] for p in listing["parameters"]} >= {
        "trace_id",
        "span_id",
        "session_id",
        "name",
        "limit",
        "cursor",
    }
    trace_params = {p["name"] for p in paths["/v1/traces"]["get"]["parameters"]}
    assert {"annotation", "label", "min_score", "max_score"} <= trace_params
    schemas = document["components"]["schemas"]
    for name in ("Annotation", "AnnotationList", "AnnotationsStored", "AnnotationSummary"):
        assert name in schemas
    assert "annotations" in schemas["Trace"]["properties"]
    assert "annotations" in schemas["Span"]["properties"]
    created = paths["/v1/projects/{project_id}/annotations"]["post"]["responses"]["201"]
    assert created["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/AnnotationsStored"
    }
    body = json.dumps(paths["/v1/projects/{project_id}/annotations"]["post"]["requestBody"])
    assert "AnnotationBatch" in body
