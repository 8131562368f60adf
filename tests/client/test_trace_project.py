"""The client names a trace's project when it knows it: on a server that scopes trace ids by
project (the local service) that picks the right trace; a server that does not ignores it."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from tests.support.helpers import json_response, mock_client
from tests.support.service import local_service
from tui.api import ApiClient, Conflict
from tui.server.store.rows import SpanGroup, SpanRow
from tui.server.store.sqlite.store import Store


async def test_get_trace_and_list_spans_send_the_project_only_when_known() -> None:
    asked: list[tuple[str, dict[str, str]]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        params = dict(request.url.params)
        asked.append((request.url.path, params))
        if request.url.path.endswith("/spans"):
            if "cursor" in params:
                return json_response({"data": [{"id": "b", "parent_id": "a"}]})
            return json_response({"data": [{"id": "a"}], "next_cursor": "2"})
        return json_response({"id": "t"})  # no spans: the client asks /spans for them

    async with mock_client(handler) as client:
        trace = await client.get_trace("t", "proj_b")
        assert [s.id for s in trace.spans] == ["a", "b"]
        await client.get_trace("t")
    assert asked == [
        ("/v1/traces/t", {"project_id": "proj_b"}),
        ("/v1/traces/t/spans", {"project_id": "proj_b"}),
        ("/v1/traces/t/spans", {"project_id": "proj_b", "cursor": "2"}),
        ("/v1/traces/t", {}),
        ("/v1/traces/t/spans", {}),
        ("/v1/traces/t/spans", {"cursor": "2"}),
    ]


def span_named(trace_id: str, name: str) -> SpanRow:
    return SpanRow(
        trace_id, "a" * 16, None, name, "chain", None, 10**12, 5, 0, 0, 0.0, "ok", None, "{}"
    )


async def test_the_same_trace_id_in_two_projects_reads_as_each_projects(tmp_path: Path) -> None:
    store = Store(tmp_path / "two.sqlite3")
    with store.transaction() as db:
        store.insert_project(db, "a", None, 365, project_id="proj_a")
        store.insert_project(db, "b", None, 365, project_id="proj_b")
    store.add_key("ws", None, "ws")
    trace_id = "ab" * 16
    store.ingest(
        [
            [
                SpanGroup("proj_a", None, "{}", [span_named(trace_id, "in a")]),
                SpanGroup("proj_b", None, "{}", [span_named(trace_id, "in b")]),
            ]
        ]
    )
    with local_service(store, tasks=[], clock=lambda: 10**12 + 60_000) as service:
        async with ApiClient(service.base_url, SecretStr("ws")) as client:
            for project, name in (("proj_a", "in a"), ("proj_b", "in b")):
                trace = await client.get_trace(trace_id, project)
                assert (trace.project_id, trace.name) == (project, name)
                spans = await client.list_spans(trace_id, project)
                assert [s.name for s in spans] == [name]
            with pytest.raises(Conflict) as caught:
                await client.get_trace(trace_id)
            assert "?project_id=" in caught.value.message
