"""API keys over the API (an extension): who may list, create and revoke which keys, what a
key's metadata shows (never the key), a revoked key failing at once, the last workspace key
kept, a key's last use noted, and the CLI sharing the routes' rules. On SQLite, then
PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.service import RunningService, local_service
from tui.cli import main
from tui.server.api_keys import hash_key
from tui.server.store.opening import open_store


@pytest.fixture(scope="module")
def service(backend_service: RunningService) -> RunningService:
    return backend_service


@pytest.fixture
def project(api: httpx.Client) -> str:
    created = api.post("projects", json={"name": f"keys-{uuid.uuid4().hex[:6]}"})
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


def client(service: RunningService, key: str) -> httpx.Client:
    return service.client(key)


def make_key(api: httpx.Client, path: str, label: str = "ci") -> dict[str, Any]:
    made = api.post(path, json={"label": label})
    assert made.status_code == 201, made.text
    body: dict[str, Any] = made.json()
    return body


def test_a_project_key_is_made_listed_without_its_key_and_works_at_once(
    service: RunningService, api: httpx.Client, project: str
) -> None:
    made = make_key(api, f"projects/{project}/keys", "ingest from ci")
    key = made.pop("key")
    assert key.startswith("tt_pk_") and made["prefix"] == key[:10]
    assert made["id"] == "key_" + hash_key(key)[:12]
    assert made["project_id"] == project and made["label"] == "ingest from ci"
    assert made["last_used_at"] is None and made["created_at"].endswith("Z")
    listed = api.get(f"projects/{project}/keys")
    assert listed.status_code == 200
    assert listed.json()["data"] == [made]
    assert key not in listed.text and hash_key(key) not in listed.text
    with client(service, key) as own:
        assert [p["id"] for p in own.get("projects").json()["data"]] == [project]


def test_a_revoked_key_fails_at_once(
    service: RunningService, api: httpx.Client, project: str
) -> None:
    made = make_key(api, f"projects/{project}/keys")
    with client(service, made["key"]) as own:
        assert own.get(f"projects/{project}/alerts").status_code == 200
        gone = api.delete(f"projects/{project}/keys/{made['id']}")
        assert gone.status_code == 204 and gone.content == b""
        refused = own.get(f"projects/{project}/alerts")
        assert refused.status_code == 401
    assert api.get(f"projects/{project}/keys").json()["data"] == []
    again = api.delete(f"projects/{project}/keys/{made['id']}")
    assert again.status_code == 404 and made["id"] not in again.text


def test_a_project_key_sees_its_own_key_only_and_manages_nothing(
    service: RunningService, api: httpx.Client, project: str
) -> None:
    mine = make_key(api, f"projects/{project}/keys", "mine")
    other = make_key(api, f"projects/{project}/keys", "other")
    with client(service, mine["key"]) as own:
        listed = own.get(f"projects/{project}/keys").json()["data"]
        assert [k["id"] for k in listed] == [mine["id"]]
        assert own.post(f"projects/{project}/keys", json={"label": "x"}).status_code == 403
        assert own.delete(f"projects/{project}/keys/{other['id']}").status_code == 403
        assert own.get("keys").status_code == 403
        assert own.post("keys", json={"label": "x"}).status_code == 403
        assert own.delete(f"keys/{other['id']}").status_code == 403
    with client(service, service.keys.projects["proj_rag"]) as stranger:
        # Another project's key learns nothing about this project, not even that it exists.
        assert stranger.get(f"projects/{project}/keys").status_code == 403
    assert len(api.get(f"projects/{project}/keys").json()["data"]) == 2


def test_labels_are_validated_and_unknown_projects_are_404(api: httpx.Client, project: str) -> None:
    for body in ({}, {"label": ""}, {"label": "   "}, {"label": "x" * 101}, {"label": 5}):
        refused = api.post(f"projects/{project}/keys", json=body)
        assert refused.status_code == 422, body
        assert refused.json()["error"]["details"][0]["field"].startswith(("label", "body"))
    assert (
        api.post(f"projects/{project}/keys", json={"label": "x", "admin": True}).status_code == 422
    )
    assert api.post("projects/proj_nope/keys", json={"label": "x"}).status_code == 404
    assert api.get("projects/proj_nope/keys").status_code == 404


def test_a_workspace_key_cannot_be_revoked_under_a_project(api: httpx.Client, project: str) -> None:
    workspace = make_key(api, "keys", "second workspace key")
    assert workspace["project_id"] is None and workspace["key"].startswith("tt_ws_")
    assert api.delete(f"projects/{project}/keys/{workspace['id']}").status_code == 404
    assert workspace["id"] in [k["id"] for k in api.get("keys").json()["data"]]
    assert api.delete(f"keys/{workspace['id']}").status_code == 204
    assert workspace["id"] not in [k["id"] for k in api.get("keys").json()["data"]]


def test_a_repeated_creation_never_shows_the_key_again(api: httpx.Client, project: str) -> None:
    headers = {"Idempotency-Key": f"key-{uuid.uuid4().hex}"}
    first = api.post(f"projects/{project}/keys", json={"label": "once"}, headers=headers)
    assert first.status_code == 201
    again = api.post(f"projects/{project}/keys", json={"label": "once"}, headers=headers)
    assert again.status_code == 409 and first.json()["key"] not in again.text
    assert first.json()["id"] in again.json()["error"]["message"]
    assert len(api.get(f"projects/{project}/keys").json()["data"]) == 1


@pytest.fixture
def lone_service(fresh_database: str) -> Iterator[tuple[Any, str]]:
    """A service whose database holds one workspace key."""
    store = open_store(fresh_database)
    store.add_key("tt_ws_the_only_one_0123456789abcdef", None, "only")
    running = local_service(store).start()
    try:
        yield running, "tt_ws_the_only_one_0123456789abcdef"
    finally:
        running.stop()
        store.close()


def test_the_last_workspace_key_is_never_revoked(
    lone_service: tuple[Any, str], fresh_database: str
) -> None:
    running, only = lone_service
    with httpx.Client(
        base_url=running.base_url + "/", headers={"Authorization": f"Bearer {only}"}
    ) as api:
        [listed] = api.get("keys").json()["data"]
        assert listed["prefix"] == only[:10]
        refused = api.delete(f"keys/{listed['id']}")
        assert refused.status_code == 409
        assert refused.json()["error"]["code"] == "last_workspace_key"
        second = make_key(api, "keys", "second")
        # Revoking one's own key is allowed while another workspace key remains.
        assert api.delete(f"keys/{listed['id']}").status_code == 204
        assert api.get("keys").status_code == 401
    # The CLI shares the rule: the remaining key is the last one.
    assert main(["keys", "revoke", second["id"], "--db", fresh_database]) == 2
    with httpx.Client(
        base_url=running.base_url + "/", headers={"Authorization": f"Bearer {second['key']}"}
    ) as api:
        assert [k["id"] for k in api.get("keys").json()["data"]] == [second["id"]]


def test_a_keys_last_use_is_noted(lone_service: tuple[Any, str]) -> None:
    running, only = lone_service
    with httpx.Client(
        base_url=running.base_url + "/", headers={"Authorization": f"Bearer {only}"}
    ) as api:
        made = make_key(api, "keys", "used later")
        assert made["last_used_at"] is None
        with httpx.Client(
            base_url=running.base_url + "/", headers={"Authorization": f"Bearer {made['key']}"}
        ) as other:
            assert other.get("projects").status_code == 200
        listed = {k["id"]: k for k in api.get("keys").json()["data"]}
        assert listed[made["id"]]["last_used_at"] is not None
        assert listed[made["id"]]["last_used_at"] >= made["created_at"]
