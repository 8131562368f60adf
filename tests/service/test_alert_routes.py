"""PATCH, DELETE and rotate-secret of an alert (extensions) on SQLite, then PostgreSQL: what
each stores, who may call them (a project key manages its own project's alerts), and their
Idempotency-Keys. What pausing, muting and rotating do to webhooks is in
tests/alerts/test_alert_changes.py, against a real receiver."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from tests.support.service import RunningService
from tui.server.store.rows import now_ms

ALERT = {
    "name": "Slow",
    "metric": "latency_ms_5m",
    "condition": "gt",
    "threshold": 2500,
    "webhook_url": "https://93.184.215.14/hook",
}


@pytest.fixture(scope="module")
def service(backend_service: RunningService) -> RunningService:
    return backend_service


@pytest.fixture
def project(api: httpx.Client) -> str:
    created = api.post("projects", json={"name": f"alerts-{uuid.uuid4().hex[:6]}"})
    assert created.status_code == 201
    return str(created.json()["id"])


@pytest.fixture
def alert(api: httpx.Client, project: str) -> dict[str, Any]:
    created = api.post(f"projects/{project}/alerts", json=ALERT)
    assert created.status_code == 201, created.text
    body: dict[str, Any] = created.json()
    assert body["paused"] is False and body["muted_until"] is None
    return body


def test_patch_stores_every_field_it_names(
    service: RunningService, api: httpx.Client, project: str, alert: dict[str, Any]
) -> None:
    path = f"projects/{project}/alerts/{alert['id']}"
    changes = {
        "name": "Very slow",
        "metric": "error_rate_pct_1h",
        "condition": "gte",
        "threshold": 5.5,
        "webhook_url": "https://93.184.215.15/other",
        "paused": True,
        "muted_until": "2030-01-02T03:04:05Z",
    }
    changed = api.patch(path, json=changes)
    assert changed.status_code == 200, changed.text
    body = changed.json()
    assert {k: body[k] for k in changes} == changes | {"muted_until": "2030-01-02T03:04:05.000Z"}
    assert "webhook_secret" not in body
    assert api.get(path).json() == body
    [listed] = api.get(f"projects/{project}/alerts").json()["data"]
    assert listed == body
    [row] = [a for a in service.store.all_alerts() if a.id == alert["id"]]
    assert row.paused and row.muted_until == 1893553445000
    assert api.patch(path, json={}).json() == body  # nothing named, nothing changed


def test_a_project_key_manages_its_own_projects_alerts_only(
    service: RunningService, api: httpx.Client, project: str, alert: dict[str, Any]
) -> None:
    path = f"projects/{project}/alerts/{alert['id']}"
    own_key = api.post(f"projects/{project}/keys", json={"label": "own"}).json()["key"]
    with service.client(service.keys.projects["proj_rag"]) as stranger:
        assert stranger.patch(path, json={"paused": True}).status_code == 403
        assert stranger.post(f"{path}/rotate-secret").status_code == 403
        assert stranger.delete(path).status_code == 403
    with service.client(own_key) as own:
        assert own.patch(path, json={"paused": True}).json()["paused"] is True
        assert own.post(f"{path}/rotate-secret").status_code == 200
        assert own.delete(path).status_code == 204
    assert api.get(path).status_code == 404


def test_unknown_alerts_are_404_without_echoing_the_id(api: httpx.Client, project: str) -> None:
    path = f"projects/{project}/alerts/tt_pk_pasted_here"
    for answer in (
        api.patch(path, json={"paused": True}),
        api.delete(path),
        api.post(f"{path}/rotate-secret"),
    ):
        assert answer.status_code == 404 and "tt_pk_pasted_here" not in answer.text


def test_rotation_keeps_the_previous_secret_for_24_hours(
    service: RunningService, api: httpx.Client, project: str, alert: dict[str, Any]
) -> None:
    path = f"projects/{project}/alerts/{alert['id']}/rotate-secret"
    before = now_ms()
    rotated = api.post(path)
    assert rotated.status_code == 200
    new = rotated.json()["secret"]
    secrets = service.store.alert_secret(alert["id"])
    assert secrets.secret == new and secrets.previous_secret == alert["webhook_secret"]
    assert before + 24 * 3_600_000 <= secrets.previous_valid_until <= now_ms() + 24 * 3_600_000
    assert secrets.signing_secrets(before) == [new, alert["webhook_secret"]]
    assert secrets.signing_secrets(secrets.previous_valid_until) == [new]
    assert new not in repr(secrets) and alert["webhook_secret"] not in repr(secrets)


def test_a_repeated_rotation_answers_the_first_secret(
    service: RunningService, api: httpx.Client, project: str, alert: dict[str, Any]
) -> None:
    path = f"projects/{project}/alerts/{alert['id']}/rotate-secret"
    headers = {"Idempotency-Key": f"r-{uuid.uuid4().hex}"}
    first = api.post(path, headers=headers)
    again = api.post(path, headers=headers)
    assert again.json() == first.json() and again.headers["idempotent-replayed"] == "true"
    assert service.store.alert_secret(alert["id"]).previous_secret == alert["webhook_secret"]
