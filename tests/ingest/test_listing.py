"""Listing while ingesting: pages never repeat a trace nor skip one that was already there,
although late roots move traces' starts and new traces keep arriving between pages."""

from __future__ import annotations

import random

import httpx

from tests.support.otlp import (
    new_project,
    new_span_id,
    new_trace_id,
    post,
    request,
    root_client,
    span,
)
from tests.support.service import RunningService
from tui.server.store.rows import now_ms


def page(client: httpx.Client, project_id: str, cursor: str | None) -> tuple[list[str], str | None]:
    params = {"project_id": project_id, "limit": 7, "from": "2000-01-01T00:00:00Z"}
    if cursor:
        params["cursor"] = cursor
    body = client.get("/v1/traces", params=params).json()
    return [t["id"] for t in body["data"]], body["next_cursor"]


def test_interleaved_pages_and_late_roots(service: RunningService) -> None:
    project_id, key = new_project(service)
    rng = random.Random(13)
    base = now_ms() - 3_600_000
    traces: dict[bytes, bytes] = {}  # trace id -> the id its root will have
    with root_client(service.base_url, key) as client:
        # 40 traces whose children came first, a minute apart.
        for n in range(40):
            trace, root = new_trace_id(), new_span_id()
            traces[trace] = root
            child = span(trace, new_span_id(), root, "child", base + n * 60_000 + 500, 100)
            assert post(client, request(child)).is_success
        before = {t.hex() for t in traces}
        seen: list[str] = []
        ids, cursor = page(client, project_id, None)
        seen += ids
        late_roots = 0
        rooted: set[bytes] = set()
        while cursor is not None:
            # Between pages: late roots that start long before everything (for traces already
            # shown and not yet shown), and brand-new traces older and newer than the cursor.
            for trace in rng.sample(sorted(traces), 4):
                root = span(trace, traces[trace], b"", "root", base - rng.randrange(10**7), 50)
                assert post(client, request(root)).is_success
                late_roots += 1
                rooted.add(trace)
            for start in (base - 30_000, now_ms() - 1000):
                fresh = new_trace_id()
                assert post(
                    client, request(span(fresh, new_span_id(), b"", "new", start))
                ).is_success
            ids, cursor = page(client, project_id, cursor)
            seen += ids
        assert late_roots >= 20
        assert len(seen) == len(set(seen)), "a trace was listed twice"
        assert before <= set(seen), "a trace that was there before the first page was skipped"

        # A late root moved its trace's start and name; its place in the list did not move.
        moved = client.get(f"/v1/traces/{sorted(rooted)[0].hex()}").json()
        assert moved["name"] == "root" and moved["spans"][0]["name"] == "root"
        assert moved["started_at"] < moved["spans"][-1]["started_at"]
