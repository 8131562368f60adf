"""The API client against the local service over loopback, for every call."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import pytest
from pydantic import SecretStr

from tests.support.builders import add_bulk_traces
from tests.support.service import RunningService
from tui.api import ApiClient, Forbidden, NotFound, Unauthorized, ValidationFailed
from tui.core.alert_rules import AlertDraft
from tui.server.store.rows import now_ms


def client_for(service: RunningService, key: str | None = None, **project_keys: str) -> ApiClient:
    return ApiClient(
        service.base_url,
        SecretStr(key or service.keys.workspace),
        {p: SecretStr(k) for p, k in project_keys.items()},
    )


async def test_projects(service: RunningService) -> None:
    async with client_for(service) as client:
        projects = await client.list_projects()
        assert [p.id for p in projects][:3] == ["proj_support", "proj_rag", "proj_agent"]
        assert projects[0].retention_days == 30 and projects[0].created_at is not None
        name = f"client-{uuid.uuid4().hex[:6]}"
        created = await client.create_project(name, "made by the client", 7)
        assert (created.name, created.description, created.retention_days) == (
            name,
            "made by the client",
            7,
        )
        assert created.id in {p.id for p in await client.list_projects()}


async def test_create_project_errors_are_typed_with_fields(service: RunningService) -> None:
    async with client_for(service) as client:
        with pytest.raises(ValidationFailed) as caught:
            await client.create_project("  ", retention_days=400)
    assert caught.value.status == 422
    assert set(caught.value.field_messages()) == {"name", "retention_days"}


async def test_traces_page_trace_and_spans(service: RunningService) -> None:
    async with client_for(service) as client:
        page = await client.list_traces("proj_agent", limit=5)
        assert len(page.items) == 5 and page.next_page is not None
        second = await client.list_traces("proj_agent", limit=5, after=page.next_page)
        assert {t.id for t in page.items}.isdisjoint({t.id for t in second.items})
        trace = await client.get_trace(page.items[0].id or "")
        assert len(trace.spans) == trace.span_count and trace.total_cost_usd is not None
        spans = await client.list_spans(trace.id or "")
        assert [s.id for s in spans] == [
            s.id for s in sorted(trace.spans, key=lambda s: (s.started_at, s.id or ""))
        ]
        assert all(s.started_at is not None and s.duration_ms is not None for s in spans)


async def test_time_range(service: RunningService) -> None:
    """A six-hour window around a trace of two days ago (the demo's traffic is thin at night:
    a window fixed on the clock may hold none) gives exactly the week's traces inside it."""
    now = datetime.now(timezone.utc)
    async with client_for(service) as client:
        week = {
            t.id: t.started_at
            async for t in client.iter_traces(
                "proj_support", start=now - timedelta(days=7), end=now
            )
            if t.started_at is not None
        }
        middle = min(week, key=lambda i: abs(week[i] - (now - timedelta(days=2))))
        start, end = week[middle] - timedelta(hours=3), week[middle] + timedelta(hours=3)
        traces = [t async for t in client.iter_traces("proj_support", start=start, end=end)]
    inside = {i for i, at in week.items() if start <= at < end}
    assert middle in inside and {t.id for t in traces} == inside


async def test_alerts(service: RunningService) -> None:
    async with client_for(service) as client:
        alerts = await client.list_alerts("proj_support")
        assert alerts and alerts[0].metric and alerts[0].threshold is not None
        created = await client.create_alert(
            "proj_support",
            AlertDraft(
                name="From the client",
                metric="cost_usd_1h",
                condition="gte",
                threshold=1.5,
                webhook_url="https://hooks.example.com/c",
            ),
        )
        assert created.threshold == 1.5 and created.id in {
            a.id for a in await client.list_alerts("proj_support")
        }
        with pytest.raises(ValidationFailed) as caught:
            await client.create_alert(
                "proj_support",
                AlertDraft(
                    name="", metric="nope", condition="eq", threshold=1, webhook_url="ftp://x"
                ),
            )
    assert set(caught.value.field_messages()) == {"name", "metric", "condition", "webhook_url"}


async def test_a_retried_create_with_the_same_key_creates_once(service: RunningService) -> None:
    before = service.store.count("alerts")
    key = uuid.uuid4().hex
    async with client_for(service) as client:
        draft = AlertDraft(
            name="Once",
            metric="latency_ms_5m",
            condition="gt",
            threshold=1.0,
            webhook_url="https://hooks.example.com/once",
        )
        first = await client.create_alert("proj_rag", draft, idempotency_key=key)
        second = await client.create_alert("proj_rag", draft, idempotency_key=key)
    assert first.id == second.id and service.store.count("alerts") == before + 1


async def test_per_project_keys_and_typed_auth_errors(service: RunningService) -> None:
    rag_key = service.keys.projects["proj_rag"]
    async with client_for(service, rag_key) as client:
        with pytest.raises(Forbidden) as caught:
            await client.list_alerts("proj_support")
        assert caught.value.status == 403 and "HTTP 403" in caught.value.message
        assert await client.list_alerts("proj_rag")
    # A wrong default key, and the right key for one project: that project works.
    async with client_for(service, "tt_wrong", proj_rag=rag_key) as client:
        assert await client.list_alerts("proj_rag")
        with pytest.raises(Unauthorized):
            await client.list_alerts("proj_agent")
    async with client_for(service) as client:
        with pytest.raises(NotFound):
            await client.get_trace("does-not-exist")


async def test_iterating_10000_traces_yields_each_exactly_once(service: RunningService) -> None:
    async with client_for(service) as client:
        project = await client.create_project(f"ten-thousand-{uuid.uuid4().hex[:6]}")
        assert project.id
        add_bulk_traces(service.store, project.id, 10_000, now_ms(), span=3_600_000)
        ids = [t.id async for t in client.iter_traces(project.id, limit=500)]
    assert len(ids) == 10_000 and len(set(ids)) == 10_000
