"""Trace ids are scoped by project: the same id sent to two projects is two traces, neither can
write into the other's, and another project's trace answers exactly as a missing one. On
SQLite and on PostgreSQL (`fresh_database`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from tests.support.otlp import new_span_id, new_trace_id, partial, post, request, root_client, span
from tui.server.run import LocalService
from tui.server.store.opening import open_store
from tui.server.store.protocol import TraceStore

A, B = "proj_a", "proj_b"
KEYS = {"ws": None, "pk-a": A, "pk-b": B, "pk-b2": B}
EVER = {"from": "2000-01-01T00:00:00Z"}


@contextmanager
def two_projects(database: str) -> Iterator[tuple[LocalService, TraceStore]]:
    store: Any = open_store(database)
    try:
        with store.transaction() as db:
            store.insert_project(db, "a", None, 30, project_id=A)
            store.insert_project(db, "b", None, 30, project_id=B)
        for key, project in KEYS.items():
            store.add_key(key, project, key)
        with LocalService(store, tasks=[]) as service:
            yield service, store
    finally:
        store.close()


def sent(client: httpx.Client, *spans: Any) -> None:
    """Post `spans` and check that none was refused."""
    response = post(client, request(*spans))
    assert response.is_success, response.text
    assert partial(response) == (0, "")


def get(client: httpx.Client, path: str, **params: str) -> httpx.Response:
    return client.get(f"/v1/{path}", params=params)


def test_the_same_trace_id_sent_to_two_projects_is_two_traces(fresh_database: str) -> None:
    trace, root, child = new_trace_id(), new_span_id(), new_span_id()
    with (
        two_projects(fresh_database) as (service, store),
        root_client(service.base_url, "pk-a") as a,
        root_client(service.base_url, "pk-b") as b,
        root_client(service.base_url, "ws") as ws,
    ):
        # B comes first with A's id (a squatter, or a clash of ids): A is not refused either.
        sent(b, span(trace, root, name="theirs", attributes={"input.value": "question of B"}))
        sent(
            a,
            span(trace, root, name="mine", duration_ms=500, attributes={"input.value": "of A"}),
            span(trace, child, parent=root, name="call", error="boom"),
        )
        # Then B re-sends its root: it replaces B's span, never A's.
        sent(b, span(trace, root, name="theirs again", attributes={"input.value": "B again"}))

        mine, theirs = (
            get(a, f"traces/{trace.hex()}").json(),
            get(b, f"traces/{trace.hex()}").json(),
        )
        assert (mine["project_id"], mine["name"], mine["span_count"]) == (A, "mine", 2)
        assert (mine["status"], mine["duration_ms"]) == ("error", 500)
        assert sorted(s["name"] for s in mine["spans"]) == ["call", "mine"]
        assert (theirs["project_id"], theirs["name"], theirs["span_count"]) == (
            B,
            "theirs again",
            1,
        )
        assert theirs["status"] == "ok" and [s["name"] for s in theirs["spans"]] == ["theirs again"]
        spans_of_b = get(b, f"traces/{trace.hex()}/spans").json()["data"]
        assert [s["name"] for s in spans_of_b] == ["theirs again"]

        # Each project's list shows its own trace, with its own preview.
        for client, project, preview in ((a, A, "of A"), (b, B, "B again")):
            rows = get(client, "traces", project_id=project, **EVER).json()["data"]
            assert [(r["id"], r["input_preview"]) for r in rows] == [(trace.hex(), preview)]
        assert store.count("traces") == 2 and store.count("spans") == 3

        # The workspace key names the project; without one it is told to.
        for path in (f"traces/{trace.hex()}", f"traces/{trace.hex()}/spans"):
            ambiguous = get(ws, path)
            assert ambiguous.status_code == 409, ambiguous.text
            error = ambiguous.json()["error"]
            assert error["code"] == "ambiguous_trace_id" and "?project_id=" in error["message"]
        assert get(ws, f"traces/{trace.hex()}", project_id=A).json()["name"] == "mine"
        assert get(ws, f"traces/{trace.hex()}", project_id=B).json()["name"] == "theirs again"
        spans = get(ws, f"traces/{trace.hex()}/spans", project_id=A).json()["data"]
        assert sorted(s["name"] for s in spans) == ["call", "mine"]
        # A project key may name its own project, which changes nothing.
        assert get(a, f"traces/{trace.hex()}", project_id=A).json()["name"] == "mine"


def test_the_workspace_key_reads_an_id_that_one_project_has_without_naming_it(
    fresh_database: str,
) -> None:
    trace = new_trace_id()
    with (
        two_projects(fresh_database) as (service, _),
        root_client(service.base_url, "pk-b") as b,
        root_client(service.base_url, "ws") as ws,
    ):
        sent(b, span(trace, new_span_id(), name="only in b"))
        assert get(ws, f"traces/{trace.hex()}").json()["project_id"] == B
        assert len(get(ws, f"traces/{trace.hex()}/spans").json()["data"]) == 1


def comparable(response: httpx.Response) -> tuple[int, bytes, dict[str, str]]:
    """Status, body and headers, but for the two headers a clock sets (both still there)."""
    headers = dict(response.headers)
    assert headers.pop("date", None) is not None
    assert headers.pop("x-ratelimit-reset") is not None
    return response.status_code, response.content, headers


def test_another_projects_trace_answers_exactly_as_a_missing_one(fresh_database: str) -> None:
    trace, missing = new_trace_id().hex(), new_trace_id().hex()
    with (
        two_projects(fresh_database) as (service, _),
        root_client(service.base_url, "pk-a") as a,
        root_client(service.base_url, "pk-b") as b,
        root_client(service.base_url, "pk-b2") as b2,
        root_client(service.base_url, "ws") as ws,
    ):
        sent(a, span(bytes.fromhex(trace), new_span_id()))
        for suffix in ("", "/spans"):
            # Two keys of B in step, one request each time: the same rate budget left in both.
            theirs = get(b, f"traces/{trace}{suffix}")
            nothing = get(b2, f"traces/{missing}{suffix}")
            assert theirs.status_code == 404
            assert comparable(theirs) == comparable(nothing)
            # Naming A's project from B's key does not reach it either.
            named = get(b, f"traces/{trace}{suffix}", project_id=A)
            named_missing = get(b2, f"traces/{missing}{suffix}", project_id=A)
            assert comparable(named) == comparable(named_missing)
            assert named.status_code == 404 and named.content == nothing.content
            # The workspace key asking B's project for A's trace: as missing there.
            wrong = get(ws, f"traces/{trace}{suffix}", project_id=B)
            assert wrong.status_code == 404 and wrong.content == nothing.content
            no_project = get(ws, f"traces/{trace}{suffix}", project_id="proj_none")
            assert no_project.status_code == 404 and no_project.content == nothing.content
