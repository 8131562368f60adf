"""The local service over real HTTP: projects, alerts, validation and idempotent creation."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from tests.support.service import RunningService


@pytest.fixture(scope="module")
def service(backend_service: RunningService) -> RunningService:
    """Every test here that uses the service runs on SQLite, then on PostgreSQL."""
    return backend_service


GOOD_ALERT = {
    "name": "Slow",
    "metric": "latency_ms_5m",
    "condition": "gt",
    "threshold": 2500,
    "webhook_url": "https://hooks.example.com/x",
}


def fields_of(response: httpx.Response) -> set[str]:
    body = response.json()["error"]
    assert body["status"] == response.status_code and body["message"]
    return {d["field"] for d in body["details"]}


def test_list_projects(service: RunningService, api: httpx.Client) -> None:
    projects = api.get("projects").json()["data"]
    ids = [p["id"] for p in projects]
    assert ids[:3] == ["proj_support", "proj_rag", "proj_agent"]
    assert set(projects[0]) >= {"id", "name", "description", "retention_days", "created_at"}
    with service.client(service.keys.projects["proj_rag"]) as rag:
        assert [p["id"] for p in rag.get("projects").json()["data"]] == ["proj_rag"]


def test_create_project_with_defaults(api: httpx.Client) -> None:
    name = f"new-{uuid.uuid4().hex[:6]}"
    created = api.post("projects", json={"name": name})
    assert created.status_code == 201
    body = created.json()
    assert body["name"] == name and body["retention_days"] == 30 and body["description"] is None
    assert body["id"] in [p["id"] for p in api.get("projects").json()["data"]]
    full = api.post(
        "projects", json={"name": f"{name}-full", "description": "d", "retention_days": 365}
    )
    assert full.json()["retention_days"] == 365 and full.json()["description"] == "d"


def test_only_the_workspace_key_creates_projects(service: RunningService) -> None:
    with service.client(service.keys.projects["proj_rag"]) as rag:
        response = rag.post("projects", json={"name": "sneaky"})
    assert response.status_code == 403


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({}, {"name"}),
        ({"name": ""}, {"name"}),
        ({"name": "   "}, {"name"}),
        ({"name": 5}, {"name"}),
        ({"name": "x" * 201}, {"name"}),
        ({"name": "a", "retention_days": 0}, {"retention_days"}),
        ({"name": "a", "retention_days": 366}, {"retention_days"}),
        ({"name": "a", "retention_days": "30"}, {"retention_days"}),
        ({"name": "a", "retention_days": True}, {"retention_days"}),
        ({"name": "a", "retention_days": 1.5}, {"retention_days"}),
        ({"name": "a", "description": 7}, {"description"}),
        ({"name": "a", "colour": "red"}, {"colour"}),
        ({"retention_days": 999}, {"name", "retention_days"}),
        ([1, 2], {"body"}),
    ],
)
def test_project_validation(api: httpx.Client, body: Any, fields: set[str]) -> None:
    response = api.post("projects", json=body)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"
    assert fields_of(response) == fields


def test_invalid_json_is_a_400(api: httpx.Client) -> None:
    response = api.post("projects", content=b"{nope", headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_json"


def test_alerts_list_and_create(api: httpx.Client) -> None:
    before = api.get("projects/proj_rag/alerts").json()["data"]
    assert len(before) >= 2 and {"id", "metric", "condition", "threshold", "webhook_url"} <= set(
        before[0]
    )
    created = api.post("projects/proj_rag/alerts", json=GOOD_ALERT)
    assert created.status_code == 201
    assert {k: created.json()[k] for k in GOOD_ALERT} == GOOD_ALERT
    after = api.get("projects/proj_rag/alerts").json()["data"]
    assert [a["id"] for a in after] == [a["id"] for a in before] + [created.json()["id"]]


@pytest.mark.parametrize(
    "metric",
    [
        "latency_ms_5m",
        "latency_s_1h",
        "error_rate_pct_15m",
        "error_rate_ratio_day",
        "cost_usd_1h",
        "cost_usd_7d",
        "prompt_drift_score_24h",
        "prompt_drift_pct_week",
    ],
)
def test_the_four_metric_kinds_are_accepted(api: httpx.Client, metric: str) -> None:
    response = api.post("projects/proj_agent/alerts", json={**GOOD_ALERT, "metric": metric})
    assert response.status_code == 201, response.text


@pytest.mark.parametrize(
    ("change", "fields"),
    [
        ({"name": None}, {"name"}),
        ({"metric": "latency"}, {"metric"}),
        ({"metric": "latency_kg_5m"}, {"metric"}),
        ({"metric": "tokens_count_1h"}, {"metric"}),
        ({"metric": "cost_usd_0h"}, {"metric"}),
        ({"condition": "eq"}, {"condition"}),
        ({"condition": "GT"}, {"condition"}),
        ({"threshold": "10"}, {"threshold"}),
        ({"threshold": True}, {"threshold"}),
        ({"webhook_url": "ftp://host/x"}, {"webhook_url"}),
        ({"webhook_url": "https://"}, {"webhook_url"}),
        ({"webhook_url": "javascript:alert(1)"}, {"webhook_url"}),
        ({"metric": "nope", "condition": "eq"}, {"metric", "condition"}),
    ],
)
def test_alert_validation(api: httpx.Client, change: dict[str, Any], fields: set[str]) -> None:
    body = {k: v for k, v in {**GOOD_ALERT, **change}.items() if v is not None}
    response = api.post("projects/proj_agent/alerts", json=body)
    assert response.status_code == 422, response.text
    assert fields_of(response) == fields


def test_alert_threshold_must_be_finite(api: httpx.Client) -> None:
    for raw in (b"NaN", b"Infinity"):
        body = b'{"name":"n","metric":"cost_usd_1h","condition":"gt","threshold":%s,' % raw
        body += b'"webhook_url":"https://h.example.com"}'
        response = api.post(
            "projects/proj_agent/alerts", content=body, headers={"content-type": "application/json"}
        )
        assert response.status_code == 422 and fields_of(response) == {"threshold"}


def test_every_required_alert_field(api: httpx.Client) -> None:
    response = api.post("projects/proj_agent/alerts", json={})
    assert fields_of(response) == set(GOOD_ALERT)


def test_alerts_are_scoped(service: RunningService, api: httpx.Client) -> None:
    assert api.get("projects/proj_nope/alerts").status_code == 404
    with service.client(service.keys.projects["proj_rag"]) as rag:
        assert rag.get("projects/proj_agent/alerts").status_code == 403
        assert rag.post("projects/proj_agent/alerts", json=GOOD_ALERT).status_code == 403
        assert rag.post("projects/proj_rag/alerts", json=GOOD_ALERT).status_code == 201


def test_idempotency_key_never_creates_twice(service: RunningService, api: httpx.Client) -> None:
    key = {"Idempotency-Key": uuid.uuid4().hex}
    before = service.store.count("alerts")
    first = api.post("projects/proj_support/alerts", json=GOOD_ALERT, headers=key)
    again = api.post("projects/proj_support/alerts", json=GOOD_ALERT, headers=key)
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert service.store.count("alerts") == before + 1
    other = api.post("projects/proj_support/alerts", json={**GOOD_ALERT, "name": "x"}, headers=key)
    assert other.status_code == 409
    assert service.store.count("alerts") == before + 1
    project = {"Idempotency-Key": uuid.uuid4().hex}
    once = f"once-{uuid.uuid4().hex[:6]}"  # project names are unique
    a = api.post("projects", json={"name": once}, headers=project).json()
    b = api.post("projects", json={"name": once}, headers=project).json()
    assert a["id"] == b["id"]
