"""The local service over real HTTP: authentication, rate limits and the error body."""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.service import RunningService, local_service, start_service
from tui.demo.data import populate
from tui.server.api_keys import hash_key
from tui.server.http.ratelimit import RateLimiter
from tui.server.store.sqlite.store import Store

RATE_HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[RunningService]:
    running = start_service(tmp_path / "limited.sqlite3", rate_limit=5, scale=0.01)
    yield running
    running.service.stop()


@pytest.mark.parametrize(
    "header",
    [None, "", "Bearer", "Basic dXNlcjpwYXNz", "Token abc", "Bearer a b", "bearer wrong"],
)
def test_missing_malformed_or_unknown_keys_get_401(
    service: RunningService, header: str | None
) -> None:
    headers = {} if header is None else {"Authorization": header}
    response = httpx.get(f"{service.base_url}/projects", headers=headers)
    assert response.status_code == 401
    body = response.json()["error"]
    assert body["code"] == "unauthorized"
    assert "Bearer" in body["message"] or body["message"] == "Unknown API key."


def test_every_response_carries_rate_limit_headers(
    service: RunningService, api: httpx.Client
) -> None:
    responses = [
        api.get("projects"),
        api.get("traces/nope"),
        api.get("no/such/route"),
        api.post("projects", json={}),
        httpx.get(f"{service.base_url}/projects"),
    ]
    for response in responses:
        for header in RATE_HEADERS:
            assert response.headers[header].isdigit(), (response.status_code, header)
        assert int(response.headers["X-RateLimit-Reset"]) >= int(time.time())


def test_429_past_the_limit_with_retry_after(limited: RunningService) -> None:
    with limited.client() as client:
        remaining = [int(client.get("projects").headers["X-RateLimit-Remaining"]) for _ in range(5)]
        assert remaining == [4, 3, 2, 1, 0]
        refused = client.get("projects")
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert refused.headers["X-RateLimit-Remaining"] == "0"
    assert refused.headers["X-RateLimit-Limit"] == "5"
    # Another key has its own budget.
    with limited.client(limited.keys.projects["proj_rag"]) as other:
        assert other.get("projects").status_code == 200


def test_the_default_limit_is_1000_per_minute(tmp_path: Path) -> None:
    running = start_service(tmp_path / "default.sqlite3", rate_limit=1000, scale=0.01)
    try:
        with running.client() as client:
            statuses = [client.get("projects/proj_rag/alerts").status_code for _ in range(1000)]
            assert set(statuses) == {200}
            refused = client.get("projects/proj_rag/alerts")
            assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
    finally:
        running.service.stop()


def test_the_429_message_names_the_real_window(limited: RunningService, tmp_path: Path) -> None:
    with limited.client() as client:
        for _ in range(6):
            refused = client.get("projects")
    assert "5 requests per minute exceeded" in refused.json()["error"]["message"]
    store = Store(tmp_path / "window.sqlite3")
    keys = populate(store, seed=7, scale=0.01, big_traces=False)
    with local_service(store, rate_limit=1, window_s=2.5) as service:
        headers = {"Authorization": f"Bearer {keys.workspace}"}
        for _ in range(2):
            refused = httpx.get(f"{service.base_url}/projects", headers=headers)
    assert refused.status_code == 429
    message = refused.json()["error"]["message"]
    assert "1 requests per 2.5 s exceeded" in message and "minute" not in message


def test_window_resets_after_a_minute() -> None:
    now = [1000.0]
    limiter = RateLimiter(2, 60, clock=lambda: now[0])
    assert [limiter.hit("k").allowed for _ in range(3)] == [True, True, False]
    refused = limiter.hit("k")
    assert refused.retry_after == 60 and refused.reset_at == 1060
    now[0] = 1059.2
    assert limiter.hit("k").retry_after == 1
    now[0] = 1060.0
    assert limiter.hit("k").allowed and limiter.hit("k").remaining == 0


def test_unknown_routes_and_methods_get_the_json_error(api: httpx.Client) -> None:
    missing = api.get("nothing/here")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    wrong = api.delete("projects")
    assert wrong.status_code == 405 and wrong.json()["error"]["status"] == 405


def test_a_crash_is_a_json_500_without_a_trace(
    service: RunningService,
    api: httpx.Client,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def explode(*_: object, **__: object) -> None:
        raise RuntimeError(f"boom with {service.keys.workspace}")

    monkeypatch.setattr(service.store, "list_projects", explode)
    with caplog.at_level(logging.DEBUG):
        response = api.get("projects")
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "internal_error"
    assert "Traceback" not in response.text and "boom" not in response.text
    assert response.headers["X-RateLimit-Limit"]
    assert service.keys.workspace not in caplog.text


def test_keys_are_stored_hashed(service: RunningService) -> None:
    db = sqlite3.connect(service.store.path)
    dump = "\n".join(db.iterdump())
    for key in [service.keys.workspace, *service.keys.projects.values()]:
        assert key not in dump
    # The shared service gains keys from other tests: its own four are there, as hashes.
    stored = {row[0] for row in db.execute("SELECT key_hash FROM api_keys")}
    assert {
        hash_key(k) for k in [service.keys.workspace, *service.keys.projects.values()]
    } <= stored


def test_a_request_looks_its_key_up_once(tmp_path: Path) -> None:
    """The rate limiter's check of the key is the one the route uses: a request costs one
    look-up of its key, not two (on PostgreSQL each is a round trip)."""
    store = Store(tmp_path / "once.sqlite3")
    keys = populate(store, seed=7, scale=0.01, big_traces=False)
    asked: list[str] = []
    look_up = store.key_scope

    def counting(key: str) -> object:
        asked.append(key)
        return look_up(key)

    store.key_scope = counting  # type: ignore[method-assign]
    with local_service(store) as service:
        headers = {"Authorization": f"Bearer {keys.workspace}"}
        with httpx.Client(base_url=service.base_url + "/", headers=headers) as client:
            assert client.get("projects").status_code == 200
            assert client.post("projects", json={"name": "once"}).status_code == 201
            project = next(iter(keys.projects))
            assert client.get("traces", params={"project_id": project}).status_code == 200
    assert asked == [keys.workspace] * 3
