"""Retention: traces older than their project's retention_days are not served from the moment
they pass it, and the periodic sweep deletes them; driven by the service's clock. On both stores
(`store` is parametrised over SQLite and PostgreSQL: tests/service/conftest.py)."""

from __future__ import annotations

from typing import Any

from tests.support.otlp import new_span_id, new_trace_id, post, request, root_client, span
from tui.server.background import expire_old_traces
from tui.server.run import LocalService
from tui.server.store.rows import now_ms

DAY = 86_400_000


def test_old_traces_are_hidden_at_once_and_swept_later(store: Any) -> None:
    clock = [now_ms()]
    with store.transaction() as db:
        store.insert_project(db, "short", None, 7, project_id="proj_short")
        store.insert_project(db, "long", None, 30, project_id="proj_long")
    store.add_key("ws", None, "ws")
    sweep = expire_old_traces(store, clock=lambda: clock[0], period_s=3600)
    with (
        LocalService(store, tasks=[sweep], clock=lambda: clock[0]) as service,
        root_client(service.base_url, "ws") as client,
    ):
        ids = {}
        for project, age_days in (("proj_short", 10), ("proj_short", 3), ("proj_long", 10)):
            trace = new_trace_id()
            ids[(project, age_days)] = trace.hex()
            start = clock[0] - age_days * DAY
            sent = request(
                span(trace, new_span_id(), start_ms=start), resource={"tracetui.project": project}
            )
            assert post(client, sent).is_success

        def listed(project: str) -> list[str]:
            params = {"project_id": project, "from": "2000-01-01T00:00:00Z"}
            response = client.get("/v1/traces", params=params)
            return [t["id"] for t in response.json()["data"]]

        def status(trace_id: str) -> tuple[int, int]:
            return (
                client.get(f"/v1/traces/{trace_id}").status_code,
                client.get(f"/v1/traces/{trace_id}/spans").status_code,
            )

        old, recent = ids[("proj_short", 10)], ids[("proj_short", 3)]
        # Past the 7 days already: not served, although nothing has deleted it yet.
        assert listed("proj_short") == [recent]
        assert status(old) == (404, 404) and status(recent) == (200, 200)
        assert listed("proj_long") == [ids[("proj_long", 10)]]  # 30 days: kept
        assert store.get_trace(old) is not None

        sweep.round()
        assert store.get_trace(old) is None and store.list_spans(old) == []
        assert store.get_trace(recent) is not None
        assert store.count("traces") == 2

        clock[0] += 5 * DAY  # the recent one is 8 days old now
        assert listed("proj_short") == [] and status(recent) == (404, 404)
        sweep.round()
        assert store.count("traces") == 1 and store.count("spans") == 1


def test_a_sweep_deletes_in_bounded_batches(store: Any) -> None:
    with store.transaction() as db:
        store.insert_project(db, "p", None, 1, project_id="proj_p")
    store.add_key("ws", None, "ws")
    with LocalService(store, tasks=[]) as service, root_client(service.base_url, "ws") as client:
        old = now_ms() - 3 * DAY
        sent = request(
            *(span(new_trace_id(), new_span_id(), start_ms=old + n) for n in range(5)),
            resource={"tracetui.project": "proj_p"},
        )
        assert post(client, sent).is_success
    assert store.expire(now_ms(), batch=2, max_batches=1) == 2  # bounded: the rest waits
    assert store.count("traces") == 3
    assert store.expire(now_ms(), batch=2) == 3
    assert store.count("traces") == 0 and store.count("spans") == 0


def test_a_trace_is_kept_while_its_newest_span_is_and_then_deleted_whole(store: Any) -> None:
    now = now_ms()
    with store.transaction() as db:
        store.insert_project(db, "p", None, 30, project_id="proj_p")
    store.add_key("ws", None, "ws")
    fresh, stale = new_trace_id(), new_trace_id()
    with (
        LocalService(store, tasks=[], clock=lambda: now) as service,
        root_client(service.base_url, "ws") as client,
    ):
        fresh_root, stale_root = new_span_id(), new_span_id()
        old_roots = request(
            span(fresh, fresh_root, name="old root", start_ms=now - 40 * DAY),
            span(stale, stale_root, name="old root", start_ms=now - 40 * DAY),
            resource={"tracetui.project": "proj_p"},
        )
        assert post(client, old_roots).is_success
        # Later requests: a span from today into one, one from 31 days ago into the other.
        later = request(
            span(fresh, new_span_id(), parent=fresh_root, name="today", start_ms=now - 60_000),
            span(stale, new_span_id(), parent=stale_root, start_ms=now - 31 * DAY),
            resource={"tracetui.project": "proj_p"},
        )
        assert post(client, later).is_success

        def served(trace: bytes) -> tuple[int, int, list[str]]:
            rows = client.get(
                "/v1/traces", params={"project_id": "proj_p", "from": "2000-01-01T00:00:00Z"}
            ).json()["data"]
            return (
                client.get(f"/v1/traces/{trace.hex()}").status_code,
                client.get(f"/v1/traces/{trace.hex()}/spans").status_code,
                [row["id"] for row in rows if row["id"] == trace.hex()],
            )

        # Before the sweep reads act as after it: the fresh one is served, the stale one not.
        assert served(fresh) == (200, 200, [fresh.hex()])
        assert served(stale) == (404, 404, [])

        assert store.expire(now) == 1  # a 30-day sweep
        kept = store.get_trace(fresh.hex())
        assert kept is not None and kept.span_count == 2 and kept.name == "old root"
        assert len(store.list_spans(fresh.hex())) == 2  # the old root stays with its trace
        assert store.get_trace(stale.hex()) is None
        assert store.count("traces") == 1 and store.count("spans") == 2  # the stale one whole
        assert served(fresh) == (200, 200, [fresh.hex()])
