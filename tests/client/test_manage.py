"""The management calls (keys, project settings, alert actions) and what a server offers, learnt
once from its OpenAPI document: against a MockTransport server that answers the contract, and
one that speaks only the spec."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

import httpx
import pytest

from tests.client.fake_management import CREATED_SECRET, NEW_KEY, NEW_SECRET, FakeServer
from tests.support.helpers import mock_client
from tui.api import NotOffered, ValidationFailed
from tui.api.offers import NOTHING, offers_from_document
from tui.api.phoenix.client import PhoenixClient
from tui.api.source import TraceSource
from tui.core.alert_rules import AlertDraft


async def test_the_offers_come_from_the_openapi_document_once() -> None:
    server = FakeServer()
    async with mock_client(server) as client:
        assert not client.offers_key_management  # nothing known before it is asked
        offers = await client.discover_offers()
        await client.discover_offers()
        await client.list_keys("proj_a")
        assert offers.key_management and offers.workspace_keys and offers.project_edit
        assert offers.alert_edit and offers.alert_delete and offers.secret_rotation
        assert client.offers_key_management and client.offers_alert_edit
        assert [p for p in server.paths() if p[1].endswith("openapi.json")] == [
            ("GET", "/v1/openapi.json")
        ]


async def test_a_spec_only_server_offers_nothing_and_no_request_is_sent_for_it() -> None:
    server = FakeServer(offered=False)
    async with mock_client(server) as client:
        assert await client.discover_offers() == NOTHING
        with pytest.raises(NotOffered, match="does not offer managing keys"):
            await client.list_keys("proj_a")
        with pytest.raises(NotOffered, match="does not offer changing alerts"):
            await client.pause_alert("proj_a", "al_1", True)
        with pytest.raises(NotOffered):
            await client.delete_project("proj_a")
        assert server.paths() == [("GET", "/v1/openapi.json")]


async def test_a_connection_failure_is_asked_again_later() -> None:
    calls = 0

    def flaky(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        if calls <= 6:  # every retry of the first discovery
            raise httpx.ConnectError("down")
        return FakeServer()(request)

    async with mock_client(flaky, max_retries=1) as client:
        assert await client.discover_offers() == NOTHING
        assert not client.offers_known
        calls = 10
        assert (await client.discover_offers()).key_management


def test_paths_are_matched_whatever_their_parameters_are_named() -> None:
    document = {"paths": {"/projects/{pid}/alerts/{aid}": {"PATCH": {}}}}
    offers = offers_from_document(document)
    assert offers.alert_edit and not offers.alert_delete and not offers.key_management
    assert offers_from_document(["not", "a", "document"]) == NOTHING
    assert offers_from_document({"paths": "nope"}) == NOTHING


async def test_phoenix_offers_none_of_them_without_asking() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(404)

    client = PhoenixClient("http://127.0.0.1:6006", transport=httpx.MockTransport(handler))
    async with client:
        assert isinstance(client, TraceSource)
        # Phoenix manages nothing of ours; what it reads (sessions, a few trace filters) and
        # keeps (annotations) it says without asking, as its reader knows them.
        offers = await client.discover_offers()
        assert offers.annotations and offers.sessions
        assert replace(offers, trace_filters=frozenset(), sessions=False, annotations=False) == (
            NOTHING
        )
        assert not client.offers_key_management and not client.offers_alert_edit
        assert client.offers_known
        assert seen == []


async def test_a_new_key_is_a_secret_in_the_answer_only() -> None:
    server = FakeServer()
    async with mock_client(server) as client:
        created = await client.create_key("proj_a", "laptop")
        assert created.key is not None and created.key.get_secret_value() == NEW_KEY
        assert NEW_KEY not in repr(created) and NEW_KEY not in str(created.extras)
        assert created.label == "laptop" and created.prefix == NEW_KEY[:10]
        request = server.requests[-1]
        assert request.headers.get("idempotency-key")
        listed = await client.list_keys("proj_a")
        assert [k.label for k in listed] == ["ci", "laptop"]
        assert all(k.key is None for k in listed)
        await client.revoke_key("proj_a", "key_1")
        assert ("DELETE", "/v1/projects/proj_a/keys/key_1") in server.paths()
        # A server that echoes the key back later finds it scrubbed from the error.
        server.fail_next = httpx.Response(400, json={"error": {"message": f"bad {NEW_KEY}"}})
        with pytest.raises(ValidationFailed) as caught:
            await client.create_key("proj_a", "again")
        assert NEW_KEY not in caught.value.message and "[redacted]" in caught.value.message
        assert all(NEW_KEY not in entry.url + (entry.error or "") for entry in client.log)


async def test_workspace_keys_live_under_keys() -> None:
    server = FakeServer()

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/keys":
            server.requests.append(request)
            return httpx.Response(200, json={"data": []})
        return server(request)

    async with mock_client(handler) as client:
        assert await client.list_keys(None) == []
        assert ("GET", "/v1/keys") in server.paths()


async def test_a_project_change_says_how_many_traces_a_shorter_retention_deletes() -> None:
    server = FakeServer()
    async with mock_client(server) as client:
        would = await client.update_project("proj_a", {"retention_days": 7}, dry_run=True)
        assert would.traces_to_delete == 7 and would.project.retention_days == 7
        assert server.requests[-1].url.params["dry_run"] == "true"
        assert server.projects["proj_a"]["retention_days"] == 30  # nothing changed
        done = await client.update_project("proj_a", {"retention_days": 7, "name": "bot"})
        assert done.project.name == "bot" and server.projects["proj_a"]["retention_days"] == 7
        with pytest.raises(ValidationFailed) as caught:
            await client.update_project("proj_a", {"retention_days": 0})
        assert "retention_days" in caught.value.field_messages()
        await client.delete_project("proj_a")
        assert "proj_a" not in server.projects


async def test_alert_actions() -> None:
    server = FakeServer()
    until = datetime(2030, 5, 1, 12, 0, tzinfo=timezone.utc)
    async with mock_client(server) as client:
        paused = await client.pause_alert("proj_a", "al_1", True)
        assert paused.paused is True
        muted = await client.mute_alert("proj_a", "al_1", until)
        assert muted.muted_until == until
        assert server.alerts["al_1"]["muted_until"] == "2030-05-01T12:00:00.000Z"
        unmuted = await client.mute_alert("proj_a", "al_1", None)
        assert unmuted.muted_until is None
        edited = await client.update_alert("proj_a", "al_1", {"threshold": 3000})
        assert edited.threshold == 3000
        rotated = await client.rotate_secret("proj_a", "al_1")
        assert rotated.secret.get_secret_value() == NEW_SECRET
        assert NEW_SECRET not in repr(rotated)
        assert await client.send_test_event("proj_a", "al_1") == "msg_1"
        await client.delete_alert("proj_a", "al_1")
        assert "al_1" not in server.alerts
        assert client.redact(f"x {NEW_SECRET} y") == "x [redacted] y"


async def test_a_created_alerts_secret_is_kept_as_a_secret() -> None:
    server = FakeServer()
    draft = AlertDraft("Spend", "cost_usd_1h", "gt", 2.0, "https://hooks.example.com/b")
    async with mock_client(server) as client:
        alert = await client.create_alert("proj_a", draft)
        assert alert.webhook_secret.get_secret_value() == CREATED_SECRET
        assert CREATED_SECRET not in repr(alert) and CREATED_SECRET not in str(alert.extras)
        assert client.redact(CREATED_SECRET) == "[redacted]"
