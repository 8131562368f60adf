"""The local service over real HTTP: listing, paging and fetching traces and spans."""

from __future__ import annotations

import threading
import uuid

import httpx
import pytest

from tests.support.builders import add_bulk_traces
from tests.support.service import RunningService
from tui.server.http.schemas import iso_ms, parse_timestamp
from tui.server.store.rows import TraceRow, now_ms


@pytest.fixture(scope="module")
def service(backend_service: RunningService) -> RunningService:
    """Every test here that uses the service runs on SQLite, then on PostgreSQL."""
    return backend_service


def new_project(api: httpx.Client, name: str = "paging") -> str:
    response = api.post("projects", json={"name": f"{name}-{uuid.uuid4().hex[:6]}"})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def all_pages(api: httpx.Client, params: dict[str, object]) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    cursor = None
    for _ in range(10_000):
        page = api.get("traces", params={**params, **({"cursor": cursor} if cursor else {})})
        assert page.status_code == 200, page.text
        body = page.json()
        rows += body["data"]
        cursor = body["next_cursor"]
        assert body["has_more"] == (cursor is not None)
        if cursor is None:
            return rows
    raise AssertionError("paging did not end")


def test_default_window_is_the_last_24_hours_newest_first(api: httpx.Client) -> None:
    body = api.get("traces", params={"project_id": "proj_support"}).json()
    rows = body["data"]
    assert 0 < len(rows) <= 100  # default limit
    starts = [parse_timestamp(r["started_at"]) for r in rows]
    assert starts == sorted(starts, reverse=True)
    assert min(starts) >= now_ms() - 24 * 3_600_000 - 5_000
    first = rows[0]
    for field in ("id", "project_id", "name", "duration_ms", "span_count", "total_cost_usd"):
        assert field in first
    assert first["started_at"].endswith("Z") and len(first["started_at"]) == 24  # ms precision


def test_limit_bounds(service: RunningService, api: httpx.Client) -> None:
    # Up to 501 of the project's traces, whenever they started: enough to tell "500" from "all".
    page, _ = service.store.list_traces("proj_support", 0, now_ms() + 3_600_000, 501)
    stored = len(page)
    ok = api.get("traces", params={"project_id": "proj_support", "limit": 500, "from": iso_ms(0)})
    assert ok.status_code == 200 and len(ok.json()["data"]) == min(500, stored) >= 250
    for bad in (0, 501, -1, "ten"):
        response = api.get("traces", params={"project_id": "proj_support", "limit": bad})
        assert response.status_code == 422, bad
        assert response.json()["error"]["details"][0]["field"] == "limit"


def test_from_to_bounds(api: httpx.Client) -> None:
    now = now_ms()
    params = {"project_id": "proj_support", "limit": 500}
    window = {"from": iso_ms(now - 48 * 3_600_000), "to": iso_ms(now - 24 * 3_600_000)}
    rows = api.get("traces", params={**params, **window}).json()["data"]
    assert rows, "the demo has traffic every day"
    for row in rows:
        assert now - 48 * 3_600_000 <= parse_timestamp(row["started_at"]) < now - 24 * 3_600_000
    # Offsets are understood, and `to` is exclusive while `from` is inclusive.
    edge = rows[0]["started_at"]
    as_offset = iso_ms(parse_timestamp(edge)).replace("Z", "+00:00")
    only_edge = api.get(
        "traces", params={**params, "from": as_offset, "to": iso_ms(parse_timestamp(edge) + 1)}
    )
    assert [r["id"] for r in only_edge.json()["data"]] == [rows[0]["id"]]
    none = api.get("traces", params={**params, "from": edge, "to": edge}).json()["data"]
    assert none == []
    reversed_ = api.get("traces", params={**params, "from": window["to"], "to": window["from"]})
    assert reversed_.status_code == 422
    assert reversed_.json()["error"]["details"][0]["field"] == "from"
    for field in ("from", "to"):
        bad = api.get("traces", params={**params, field: "yesterday"})
        assert bad.status_code == 422
        assert bad.json()["error"]["details"][0]["field"] == field


def test_project_id_is_required_and_checked(service: RunningService, api: httpx.Client) -> None:
    missing = api.get("traces")
    assert missing.status_code == 422
    assert missing.json()["error"]["details"][0] == {
        "field": "project_id",
        "message": "is required",
    }
    assert api.get("traces", params={"project_id": "proj_nope"}).status_code == 404
    with service.client(service.keys.projects["proj_rag"]) as rag:
        assert rag.get("traces", params={"project_id": "proj_rag"}).status_code == 200
        assert rag.get("traces", params={"project_id": "proj_support"}).status_code == 403
        assert rag.get("traces", params={"project_id": "proj_nope"}).status_code == 403


def test_paging_has_no_duplicate_and_no_gap(service: RunningService, api: httpx.Client) -> None:
    project = new_project(api)
    now = now_ms()
    add_bulk_traces(service.store, project, 1234, now, span=3_600_000)
    rows = all_pages(api, {"project_id": project, "limit": 100})
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)) == 1234
    assert set(ids) == {f"{project}-{i:08d}" for i in range(1234)}


def test_paging_ties_on_start_time_are_not_lost(service: RunningService, api: httpx.Client) -> None:
    project = new_project(api, "ties")
    add_bulk_traces(service.store, project, 250, now_ms(), span=1)  # all in the same ms
    ids = [r["id"] for r in all_pages(api, {"project_id": project, "limit": 7})]
    assert len(ids) == len(set(ids)) == 250


def test_paging_while_traces_are_inserted(service: RunningService, api: httpx.Client) -> None:
    project = new_project(api, "live")
    start = now_ms() - 10_000
    add_bulk_traces(service.store, project, 600, start, span=3_600_000)
    original = {f"{project}-{i:08d}" for i in range(600)}
    stop = threading.Event()

    def insert_newer() -> None:
        n = 0
        while not stop.is_set() and n < 200:
            with service.store.transaction() as db:
                trace_id = f"new-{project}-{n}"
                t = start + 1 + n
                service.store.insert_traces(
                    db, [TraceRow(trace_id, project, "new", t, 5, 0, 0, 0, 0.0, "ok", 0, "{}")]
                )
            n += 1

    writer = threading.Thread(target=insert_newer)
    writer.start()
    try:
        rows = all_pages(api, {"project_id": project, "limit": 25, "to": iso_ms(now_ms() + 1000)})
    finally:
        stop.set()
        writer.join()
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), "a trace was returned twice"
    assert original <= set(ids), "a trace that existed before paging was skipped"


def test_bad_cursor_is_a_400(api: httpx.Client) -> None:
    for cursor in ("garbage", "eyJ0IjogMX0", "%%%"):
        response = api.get("traces", params={"project_id": "proj_support", "cursor": cursor})
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "invalid_cursor"


def test_get_trace_with_spans_attributes_and_cost(api: httpx.Client) -> None:
    listed = api.get("traces", params={"project_id": "proj_agent", "limit": 1}).json()["data"][0]
    trace = api.get(f"traces/{listed['id']}").json()
    assert trace["id"] == listed["id"] and trace["project_id"] == "proj_agent"
    assert isinstance(trace["attributes"], dict) and "input" in trace["attributes"]
    spans = trace["spans"]
    assert len(spans) == trace["span_count"] > 1
    assert trace["total_cost_usd"] == pytest.approx(sum(s["cost_usd"] for s in spans), abs=1e-5)
    assert trace["input_tokens"] == sum(s["input_tokens"] for s in spans)
    ids = {s["id"] for s in spans}
    roots = [s for s in spans if s["parent_id"] is None]
    assert len(roots) == 1
    assert all(s["parent_id"] in ids for s in spans if s["parent_id"] is not None)
    kinds = {s["kind"] for s in spans}
    assert kinds <= {"llm", "retrieval", "tool", "agent", "chain"} and "llm" in kinds
    llm = next(s for s in spans if s["kind"] == "llm")
    assert llm["model"] and llm["input_tokens"] > 0 and llm["status"] in ("ok", "error")


def test_list_spans_is_ordered_by_start_time(api: httpx.Client) -> None:
    listed = api.get("traces", params={"project_id": "proj_agent", "limit": 3}).json()["data"]
    for trace in listed:
        spans = api.get(f"traces/{trace['id']}/spans").json()["data"]
        assert len(spans) == trace["span_count"]
        starts = [parse_timestamp(s["started_at"]) for s in spans]
        assert starts == sorted(starts)


def test_another_projects_trace_is_not_found_as_a_missing_one(
    service: RunningService, api: httpx.Client
) -> None:
    assert api.get("traces/nope").status_code == 404
    assert api.get("traces/nope/spans").json()["error"]["code"] == "not_found"
    trace_id = api.get("traces", params={"project_id": "proj_support", "limit": 1}).json()["data"][
        0
    ]["id"]
    with service.client(service.keys.projects["proj_rag"]) as rag:
        for suffix in ("", "/spans"):
            theirs, missing = rag.get(f"traces/{trace_id}{suffix}"), rag.get(f"traces/nope{suffix}")
            assert theirs.status_code == missing.status_code == 404
            assert theirs.content == missing.content
