"""Replicas sharing a store look a request's key up and count it against the rate limit in one
store call (ratelimit.IdentifyCounted; TraceStore.key_scope_counted: one statement on
PostgreSQL, one transaction on SQLite)."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from starlette.testclient import TestClient

from tests.service.conftest import OpenStore
from tui.server.api_keys import hash_key
from tui.server.http.ratelimit import RateLimitMiddleware, SharedRateLimiter
from tui.server.store.postgres.sql import COUNT_REQUESTS, KEY_SCOPE_COUNTED
from tui.server.store.rows import KeyScope

KEY = "tt_ws_counted_key_0123456789"
NOW = 600.0  # the limiter's clock: the window [600, 660) s


def test_a_known_keys_look_up_counts_its_request_across_replicas(open_store: OpenStore) -> None:
    # Two handles on one database, as two replicas have (on SQLite: two processes' worth).
    first, second = open_store(pool_size=1), open_store(pool_size=1)
    first.add_key(KEY, None, "ci")
    bucket = f"api:key:{hash_key(KEY)}"
    assert first.key_scope_counted(KEY, bucket, 600_000) == (KeyScope(hash_key(KEY), None), 1)
    assert second.key_scope_counted(KEY, bucket, 600_000) == (KeyScope(hash_key(KEY), None), 2)
    # The same row the limiter's own count adds to.
    assert first.count_requests(bucket, 600_000) == 3
    assert first.key_scope_counted(KEY, bucket, 660_000) == (KeyScope(hash_key(KEY), None), 1)
    # An unknown key: None, and nothing counted for it.
    assert first.key_scope_counted("tt_ws_unknown", "api:key:x", 600_000) is None
    assert first.count_requests("api:key:x", 600_000) == 1


@pytest.mark.parametrize("backend", ["postgres"])  # SQLite's limiter counts in memory
def test_a_counted_request_commits_without_waiting_for_the_disk(
    open_store: OpenStore, store_url: str
) -> None:
    # Every request of a replica writes its count: a WAL flush each would put the disk's
    # latency into every request. The statements the store runs, each in a transaction of its
    # own as autocommit runs it, leave synchronous_commit off for that transaction alone.
    store = open_store(pool_size=1)
    store.add_key(KEY, None, "ci")
    bucket = f"api:key:{hash_key(KEY)}"
    looked_up = {"hash": hash_key(KEY), "bucket": bucket, "window": 600_000}
    with psycopg.connect(store_url, autocommit=True) as db:
        # As a durable server commits (the tests' server may not), for this session.
        db.execute("SET synchronous_commit = on")
        for sql, args, hits in (
            (KEY_SCOPE_COUNTED, looked_up, (None, 1)),
            (COUNT_REQUESTS, (bucket, 600_000, 1), (2,)),
        ):
            with db.transaction():
                assert db.execute(sql, args).fetchone() == hits
                assert db.execute("SHOW synchronous_commit").fetchone() == ("off",)
            assert db.execute("SHOW synchronous_commit").fetchone() == ("on",)
    # The store's own calls count in the same rows.
    assert store.key_scope_counted(KEY, bucket, 600_000) == (KeyScope(hash_key(KEY), None), 3)
    assert store.count_requests(bucket, 600_000) == 4
    assert store.key_scope_counted("tt_ws_unknown", bucket, 600_000) is None


class CountingStore:
    """What the middleware calls, counted: the key's look-up, the look-up and count in one,
    and the limiter's separate count."""

    def __init__(self) -> None:
        self.keys = {KEY}
        self.counts: dict[tuple[str, int], int] = {}
        self.calls: list[str] = []

    def identify(self, key: str) -> tuple[str, object] | None:
        self.calls.append("identify")
        return (hash_key(key), "scope") if key in self.keys else None

    def identify_counted(
        self, key: str, bucket: str, window: int
    ) -> tuple[str, object, int] | None:
        self.calls.append("identify_counted")
        if key not in self.keys:
            return None
        assert bucket == f"api:key:{hash_key(key)}"
        return hash_key(key), "scope", self.count(bucket, window, 1)

    def count(self, bucket: str, window: int, hits: int = 1) -> int:
        self.counts[bucket, window] = self.counts.get((bucket, window), 0) + hits
        return self.counts[bucket, window]

    def count_alone(self, bucket: str, window: int, hits: int = 1) -> int:
        self.calls.append("count")
        return self.count(bucket, window, hits)


@pytest.fixture
def counted() -> tuple[CountingStore, TestClient]:
    store = CountingStore()

    async def ok(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    limiter = SharedRateLimiter("api", store.count_alone, lambda: None, 3, 60.0, clock=lambda: NOW)
    app = RateLimitMiddleware(
        ok, limiter, identify=store.identify, identify_counted=store.identify_counted
    )
    return store, TestClient(app)


def test_a_request_is_looked_up_and_counted_in_one_store_call(
    counted: tuple[CountingStore, TestClient],
) -> None:
    store, client = counted
    headers = {"Authorization": f"Bearer {KEY}"}
    answers = [client.get("/v1/projects", headers=headers) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert [a.headers["x-ratelimit-remaining"] for a in answers] == ["2", "1", "0"]
    assert store.calls == ["identify_counted"] * 3
    # Past the limit: 429, and once the window is spent the key is still looked up (a
    # revoked key stops at once) but no longer counted.
    store.calls.clear()
    assert client.get("/v1/projects", headers=headers).status_code == 429
    assert client.get("/v1/projects", headers=headers).status_code == 429
    assert store.calls == ["identify_counted", "identify"]


def test_an_unknown_key_is_counted_against_its_address(
    counted: tuple[CountingStore, TestClient],
) -> None:
    store, client = counted
    answer = client.post("/v1/projects", headers={"Authorization": "Bearer tt_ws_nope"}, json={})
    assert answer.status_code == 401
    assert store.calls == ["identify_counted", "count"]
    assert list(store.counts) == [("api:ip:testclient", 600_000)]
