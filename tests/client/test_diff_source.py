"""The two traces of a diff, fetched through the client from the real local service (on both
stores), and B's last good trace found: asked of a server that filters by name and status,
looked for in the pages of one that filters nothing (the spec alone), bounded; errors that say
which trace and why. The demo's summarizer (tui/demo/regression.py) is the data: it worked
every 4 hours, then failed twice after a prompt and model change."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta, timezone

import httpx
import pytest
from pydantic import SecretStr

from tests.support.service import RunningService
from tui.api import ApiClient, NotFound
from tui.demo.regression import NAME, PROJECT
from tui.model.diff import ADDED, REMOVED
from tui.model.diff.last_good import MAX_LOOKED_AT
from tui.ui import trace_pair
from tui.ui.trace_pair import NoLastGood, NotComparable, find_last_good, load_pair


@pytest.fixture(scope="module")
def service(backend_service: RunningService) -> RunningService:
    return backend_service


class Recording(httpx.AsyncBaseTransport):
    """The real transport, recording every request; `spec_only` answers 404 for the OpenAPI
    document, as a server of the spec alone does (it then offers no filter)."""

    def __init__(self, spec_only: bool = False) -> None:
        self.real = httpx.AsyncHTTPTransport()
        self.spec_only = spec_only
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.spec_only and request.url.path.endswith("openapi.json"):
            return httpx.Response(404, json={"error": {"message": "no such route"}})
        return await self.real.handle_async_request(request)

    async def aclose(self) -> None:
        await self.real.aclose()

    def listings(self) -> list[httpx.URL]:
        return [r.url for r in self.requests if r.url.path.endswith("/traces")]


@asynccontextmanager
async def client_for(service: RunningService, transport: Recording) -> AsyncIterator[ApiClient]:
    client = ApiClient(service.base_url, SecretStr(service.keys.workspace), transport=transport)
    async with client:
        yield client


def summarizer_runs(service: RunningService) -> list[dict[str, object]]:
    """The summarizer's traces, newest first, as the service lists them."""
    since = (datetime.now(timezone.utc) - timedelta(days=3)).isoformat()
    params = {"project_id": PROJECT, "name": NAME, "limit": 100, "from": since}
    with service.client() as api:
        answer = api.get("traces", params=params)
    rows: list[dict[str, object]] = answer.json()["data"]
    assert len(rows) >= 12
    return rows


async def test_a_server_that_filters_is_asked_for_the_last_good_one(
    service: RunningService,
) -> None:
    runs = summarizer_runs(service)
    b = runs[0]
    assert b["status"] == "error" and runs[1]["status"] == "error"
    expected = next(r for r in runs if r["status"] == "ok")
    recording = Recording()
    async with client_for(service, recording) as client:
        loaded = await load_pair(client, str(b["id"]), None, PROJECT)
    assert loaded.a.id == expected["id"] and loaded.b.id == b["id"]
    assert loaded.found is not None and loaded.found.chosen is not None
    asked = recording.listings()
    assert asked and all(
        url.params.get("name") == NAME and url.params.get("status") == "ok" for url in asked
    )
    # What the diff says of the demo's regression.
    diff = loaded.diff
    names = {diff.name(r): diff.status[r] for r in range(diff.size)}
    assert names["check_summary"] == REMOVED
    assert sum(1 for r in range(diff.size) if diff.status[r] == ADDED) == 5
    sentence = loaded.found.sentence()
    assert sentence.startswith(f"A is the last good {NAME}, ") and "before B" in sentence


async def test_a_server_of_the_spec_alone_has_its_pages_looked_through(
    service: RunningService,
) -> None:
    runs = summarizer_runs(service)
    expected = next(r for r in runs if r["status"] == "ok")
    recording = Recording(spec_only=True)
    async with client_for(service, recording) as client:
        loaded = await load_pair(client, str(runs[0]["id"]), None, PROJECT)
    assert loaded.a.id == expected["id"]
    asked = recording.listings()
    assert asked and not any("name" in url.params or "status" in url.params for url in asked)
    assert loaded.found is not None
    assert loaded.found.looked_at > len(runs)  # every trace of the window, not just its name
    assert loaded.found.complete


async def test_the_search_is_bounded_and_says_how_far_it_looked(
    service: RunningService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trace_pair, "MAX_LOOKED_AT", 3)
    monkeypatch.setattr(trace_pair, "PAGE", 3)
    runs = summarizer_runs(service)
    recording = Recording(spec_only=True)
    async with client_for(service, recording) as client:
        b = await client.get_trace(str(runs[0]["id"]), PROJECT)
        found = await find_last_good(client, b, PROJECT)
    assert found is not None and not found.complete
    assert found.looked_at == 3
    assert "stopping at" in found.sentence()
    assert MAX_LOOKED_AT == 2_000  # the real bound is untouched


async def test_the_first_run_has_no_last_good_one(service: RunningService) -> None:
    first = summarizer_runs(service)[-1]
    async with client_for(service, Recording()) as client:
        with pytest.raises(NoLastGood) as raised:
            await load_pair(client, str(first["id"]), None, PROJECT)
    assert raised.value.found is not None and raised.value.found.candidates == []
    assert raised.value.message.startswith(f"No earlier trace named {NAME} without an error")


async def test_two_projects_cannot_be_compared(service: RunningService) -> None:
    runs = summarizer_runs(service)
    with service.client() as api:
        other = api.get("traces", params={"project_id": "proj_support", "limit": 1}).json()
    async with client_for(service, Recording()) as client:
        with pytest.raises(NotComparable, match="different projects"):
            await load_pair(client, str(runs[0]["id"]), str(other["data"][0]["id"]), None)


async def test_an_unknown_id_is_named(service: RunningService) -> None:
    runs = summarizer_runs(service)
    async with client_for(service, Recording()) as client:
        with pytest.raises(NotFound, match="No trace no-such-trace in project proj_rag"):
            await load_pair(client, str(runs[0]["id"]), "no-such-trace", PROJECT)
