"""PATCH and DELETE /v1/projects/{id} (extensions): validated as at creation, by the workspace
key only; a shorter retention says how many traces it deletes (and ?dry_run=true changes
nothing); a deleted project takes its traces, spans, alerts with their history and webhooks,
and its keys with it. On SQLite, then PostgreSQL."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from tests.support.service import RunningService
from tui.server.store.rows import SpanRow, TraceRow, now_ms

DAY_MS = 86_400_000


@pytest.fixture(scope="module")
def service(backend_service: RunningService) -> RunningService:
    return backend_service


@pytest.fixture
def project(api: httpx.Client) -> dict[str, Any]:
    created = api.post(
        "projects",
        json={"name": f"chg-{uuid.uuid4().hex[:6]}", "description": "d", "retention_days": 30},
    )
    assert created.status_code == 201, created.text
    body: dict[str, Any] = created.json()
    return body


def add_traces(service: RunningService, project_id: str, ages_days: list[float]) -> list[str]:
    """Traces of `project_id` that ended `ages_days` ago, one span each; their ids."""
    now = now_ms()
    traces, spans = [], []
    for n, age in enumerate(ages_days):
        trace_id = f"{uuid.uuid4().hex[:24]}{n:08x}"
        start = now - int(age * DAY_MS) - 1000
        traces.append(
            TraceRow(trace_id, project_id, "run", start, 1000, 1, 1, 1, 0.0, "ok", 0, "{}")
        )
        spans.append(
            SpanRow(
                trace_id,
                f"s{n:015x}",
                None,
                "run",
                "llm",
                None,
                start,
                1000,
                1,
                1,
                0.0,
                "ok",
                None,
                "{}",
            )
        )
    with service.store.transaction() as db:
        service.store.insert_traces(db, traces, spans)
    return [t.id for t in traces]


def test_patch_changes_what_it_names_and_keeps_the_rest(
    api: httpx.Client, project: dict[str, Any]
) -> None:
    changed = api.patch(f"projects/{project['id']}", json={"name": "renamed"})
    assert changed.status_code == 200, changed.text
    body = changed.json()
    assert body["name"] == "renamed" and body["description"] == "d"
    assert body["retention_days"] == 30 and body["traces_to_delete"] == 0
    assert body["created_at"] == project["created_at"]
    listed = {p["id"]: p for p in api.get("projects").json()["data"]}
    assert listed[project["id"]]["name"] == "renamed"
    cleared = api.patch(f"projects/{project['id']}", json={"description": None})
    assert cleared.json()["description"] is None and cleared.json()["name"] == "renamed"


@pytest.mark.parametrize(
    "body",
    [
        {"name": ""},
        {"name": "   "},
        {"name": None},
        {"name": "x" * 201},
        {"retention_days": 0},
        {"retention_days": 366},
        {"retention_days": "7"},
        {"retention_days": None},
        {"description": "d" * 2001},
        {"colour": "red"},
    ],
)
def test_patch_is_validated_as_create(
    api: httpx.Client, project: dict[str, Any], body: dict[str, Any]
) -> None:
    refused = api.patch(f"projects/{project['id']}", json=body)
    assert refused.status_code == 422, body
    assert refused.json()["error"]["details"]
    assert api.get("projects").json()["data"]  # nothing broke
    listed = {p["id"]: p for p in api.get("projects").json()["data"]}
    assert listed[project["id"]]["retention_days"] == 30


def test_a_shorter_retention_says_what_goes_and_dry_run_changes_nothing(
    service: RunningService, api: httpx.Client, project: dict[str, Any]
) -> None:
    add_traces(service, project["id"], [1, 2, 10, 20, 25])
    path = f"projects/{project['id']}"
    trial = api.patch(path, params={"dry_run": "true"}, json={"retention_days": 7})
    assert trial.status_code == 200
    assert trial.json()["traces_to_delete"] == 3 and trial.json()["retention_days"] == 7
    listed = {p["id"]: p for p in api.get("projects").json()["data"]}
    assert listed[project["id"]]["retention_days"] == 30  # dry run: nothing changed
    longer = api.patch(path, params={"dry_run": "true"}, json={"retention_days": 90})
    assert longer.json()["traces_to_delete"] == 0
    done = api.patch(path, json={"retention_days": 7})
    assert done.json()["traces_to_delete"] == 3
    listed = {p["id"]: p for p in api.get("projects").json()["data"]}
    assert listed[project["id"]]["retention_days"] == 7
    # Reads act on the new retention at once: only the two recent traces are served.
    window = {"project_id": project["id"], "from": "2000-01-01T00:00:00Z"}
    traces = api.get("traces", params=window).json()["data"]
    assert len(traces) == 2


def test_only_the_workspace_key_changes_or_deletes_projects(
    service: RunningService, api: httpx.Client, project: dict[str, Any]
) -> None:
    made = api.post(f"projects/{project['id']}/keys", json={"label": "own"}).json()
    with service.client(made["key"]) as own:
        assert own.patch(f"projects/{project['id']}", json={"name": "x"}).status_code == 403
        assert own.delete(f"projects/{project['id']}").status_code == 403
    with service.client(service.keys.projects["proj_rag"]) as stranger:
        assert stranger.patch(f"projects/{project['id']}", json={"name": "x"}).status_code == 403
        assert stranger.delete(f"projects/{project['id']}").status_code == 403
    assert api.patch("projects/proj_nope", json={"name": "x"}).status_code == 404
    assert api.delete("projects/proj_nope").status_code == 404
    listed = {p["id"]: p for p in api.get("projects").json()["data"]}
    assert listed[project["id"]]["name"] == project["name"]


def test_delete_takes_everything_of_the_project_and_nothing_else(
    service: RunningService, api: httpx.Client, project: dict[str, Any]
) -> None:
    pid = project["id"]
    store = service.store
    [trace_id] = add_traces(service, pid, [1])
    alert = api.post(
        f"projects/{pid}/alerts",
        json={
            "name": "a",
            "metric": "latency_ms_5m",
            "condition": "gt",
            "threshold": 1,
            "webhook_url": "https://hooks.example.com/x",
        },
    ).json()
    test = api.post(f"projects/{pid}/alerts/{alert['id']}/test")
    assert test.status_code == 202
    webhook_id = test.json()["webhook_id"]
    key = api.post(f"projects/{pid}/keys", json={"label": "k"}).json()["key"]
    other = {p["id"] for p in api.get("projects").json()["data"]} - {pid}
    others_traces = {p: len(store.list_traces(p, 0, 2**62, 1000)[0]) for p in other}

    gone = api.delete(f"projects/{pid}")
    assert gone.status_code == 204 and gone.content == b""

    assert pid not in {p["id"] for p in api.get("projects").json()["data"]}
    assert api.get(f"projects/{pid}/alerts").status_code == 404
    assert store.find_traces(trace_id) == [] and list(store.iter_spans(trace_id, pid)) == []
    assert store.get_alert(alert["id"]) is None and store.alert_secret(alert["id"]) is None
    assert store.get_delivery(webhook_id) is None
    assert store.list_alert_events(alert["id"], 10)[0] == []
    assert [k for k in store.list_keys() if k.project_id == pid] == []
    with service.client(key) as own:
        assert own.get("projects").status_code == 401
    assert {p: len(store.list_traces(p, 0, 2**62, 1000)[0]) for p in other} == others_traces
    assert api.delete(f"projects/{pid}").status_code == 404


def test_writes_honour_idempotency_keys(api: httpx.Client, project: dict[str, Any]) -> None:
    path = f"projects/{project['id']}"
    headers = {"Idempotency-Key": f"p-{uuid.uuid4().hex}"}
    first = api.patch(path, json={"name": "once"}, headers=headers)
    api.patch(path, json={"name": "between"})
    again = api.patch(path, json={"name": "once"}, headers=headers)
    assert again.status_code == 200 and again.headers.get("idempotent-replayed") == "true"
    assert again.json() == first.json()
    listed = {p["id"]: p for p in api.get("projects").json()["data"]}
    assert listed[project["id"]]["name"] == "between"  # the repeat did not apply again
    other = api.patch(path, json={"name": "other"}, headers=headers)
    assert other.status_code == 409
    delete_headers = {"Idempotency-Key": f"d-{uuid.uuid4().hex}"}
    assert api.delete(path, headers=delete_headers).status_code == 204
    replayed = api.delete(path, headers=delete_headers)
    assert replayed.status_code == 204 and replayed.headers.get("idempotent-replayed") == "true"


def test_one_project_is_read_by_its_id(
    service: RunningService, api: httpx.Client, project: dict[str, Any]
) -> None:
    assert api.get(f"projects/{project['id']}").json() == project
    assert api.get("projects/proj_nope").status_code == 404
    with service.client(service.keys.projects["proj_rag"]) as stranger:
        assert stranger.get(f"projects/{project['id']}").status_code == 403
        assert stranger.get("projects/proj_rag").json()["id"] == "proj_rag"


def test_a_name_another_project_has_is_refused_on_create_and_rename(
    api: httpx.Client, project: dict[str, Any]
) -> None:
    taken = project["name"]
    before = len(api.get("projects").json()["data"])
    created = api.post("projects", json={"name": taken})
    assert created.status_code == 409, created.text
    assert created.json()["error"]["code"] == "name_taken"
    assert [d["field"] for d in created.json()["error"]["details"]] == ["name"]
    assert len(api.get("projects").json()["data"]) == before

    other = api.post("projects", json={"name": f"other-{uuid.uuid4().hex[:6]}"}).json()
    for params in ({"dry_run": "true"}, {}):
        renamed = api.patch(f"projects/{other['id']}", json={"name": taken}, params=params)
        assert renamed.status_code == 409 and renamed.json()["error"]["code"] == "name_taken"
    assert api.get(f"projects/{other['id']}").json()["name"] == other["name"]
    # Its own name again, with another field changed: not a clash.
    same = api.patch(f"projects/{project['id']}", json={"name": taken, "retention_days": 31})
    assert same.status_code == 200, same.text


def test_a_repeated_create_answers_as_the_first_though_its_name_is_taken_now(
    api: httpx.Client,
) -> None:
    name = f"repeat-{uuid.uuid4().hex[:6]}"
    headers = {"Idempotency-Key": uuid.uuid4().hex}
    first = api.post("projects", json={"name": name}, headers=headers)
    again = api.post("projects", json={"name": name}, headers=headers)
    assert first.status_code == again.status_code == 201 and again.json() == first.json()


def test_racing_renames_to_one_name_give_it_to_one_project(api: httpx.Client) -> None:
    """Many renames at once, each of another project to one new name: the store looks and
    writes under one lock, so exactly one is taken and the others are refused."""
    from concurrent.futures import ThreadPoolExecutor

    ids = [
        api.post("projects", json={"name": f"racer-{uuid.uuid4().hex[:8]}"}).json()["id"]
        for _ in range(6)
    ]
    wanted = f"winner-{uuid.uuid4().hex[:6]}"
    with ThreadPoolExecutor(len(ids)) as pool:
        statuses = sorted(
            pool.map(
                lambda pid: api.patch(f"projects/{pid}", json={"name": wanted}).status_code, ids
            )
        )
    assert statuses == [200] + [409] * (len(ids) - 1)
    names = [p["name"] for p in api.get("projects").json()["data"]]
    assert names.count(wanted) == 1
