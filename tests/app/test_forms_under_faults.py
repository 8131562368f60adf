"""Both create forms under every fault: the form stays, keeps what was typed and says what
happened; and when the server is back, one retry creates exactly one record, even when the
failed attempt had in fact been carried out and the server ignores Idempotency-Key (checked in
the server's own records)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.support.app import rendered_text, showing, wait_for
from tests.support.faults import (
    FAULTS,
    Fault,
    FaultyTransport,
    answer,
    app_with_faults,
    dropped_mid_body,
    raising,
)
from tests.support.service import RunningService
from tui.server.config import ServerConfig
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.alerts import AlertsScreen
from tui.ui.screens.forms import AlertForm, CreateForm, ProjectForm
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.traces import TracesScreen


@dataclass
class FormCase:
    """How to reach a form, what to type in it, and how many such records the server holds."""

    kind: str
    name: str
    project_id: str

    def typed(self) -> dict[str, str]:
        if self.kind == "project":
            return {"name": self.name, "description": "made under faults", "retention_days": "45"}
        return {
            "name": self.name,
            "metric": "latency_ms_5m",
            "condition": "gte",
            "threshold": "2.5",
            "webhook_url": "https://hooks.example.com/faults",
        }

    def records(self, service: RunningService) -> int:
        if self.kind == "project":
            rows = service.store.list_projects()
        else:
            rows = service.store.list_alerts(self.project_id)
        return sum(1 for row in rows if row.name == self.name)


def new_case(service: RunningService, kind: str) -> FormCase:
    suffix = uuid.uuid4().hex[:8]
    project_id = f"proj_forms_{suffix}"
    with service.store.transaction() as db:  # each test its own project: its alerts alone
        service.store.insert_project(db, f"forms {suffix}", None, 30, project_id=project_id)
    return FormCase(kind, f"{kind} {suffix}", project_id)


@asynccontextmanager
async def open_form(
    service: RunningService, case: FormCase
) -> AsyncIterator[tuple[TraceTuiApp, Any, FaultyTransport, CreateForm]]:
    start = StartAt() if case.kind == "project" else StartAt(project_id=case.project_id)
    async with app_with_faults(service, start) as (app, pilot, net):
        if case.kind == "project":
            await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        else:
            await wait_for(pilot, lambda: showing(app, TracesScreen))
            await pilot.press("a")
            await wait_for(pilot, lambda: showing(app, AlertsScreen))
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, (ProjectForm, AlertForm)))
        form = app.screen
        assert isinstance(form, CreateForm)
        for field, value in case.typed().items():
            form.query_one(f"#field-{field}").value = value  # type: ignore[attr-defined]
        yield app, pilot, net, form


def form_message(form: CreateForm) -> str:
    return rendered_text(form.query_one("#form-error"))


async def submit_and_wait_for_error(app: TraceTuiApp, pilot: Any, form: CreateForm) -> str:
    await pilot.press("ctrl+s")
    await wait_for(pilot, lambda: not form.submitting and "—" in form_message(form))
    return form_message(form)


async def submit_and_wait_until_created(app: TraceTuiApp, pilot: Any, form: CreateForm) -> None:
    await pilot.press("ctrl+s")
    await wait_for(pilot, lambda: app.screen is not form)


@pytest.mark.parametrize("kind", ["project", "alert"])
async def test_every_fault_keeps_the_form_and_one_retry_creates_one_record(
    service: RunningService, kind: str
) -> None:
    case = new_case(service, kind)
    async with open_form(service, case) as (app, pilot, net, form):
        for name, fault in FAULTS.items():
            net.fault = fault
            message = await submit_and_wait_for_error(app, pilot, form)
            assert app.screen is form, name
            assert form.values() == case.typed(), f"{name}: what was typed is lost"
            assert "ctrl+s" in message, f"{name}: the form does not say how to retry"
            assert "\x1b" not in message
            assert {r.url.host for r in net.requests} == {"127.0.0.1"}, name
            form.query_one("#form-error").update("")  # type: ignore[attr-defined]
        assert case.records(service) == 0  # no fault let a create through
        net.fault = None
        await submit_and_wait_until_created(app, pilot, form)
    assert case.records(service) == 1


def carried_out_then(net: FaultyTransport, fault: Fault, honour_key: bool) -> Fault:
    """The request reaches the server and is carried out, then the answer is lost to `fault`.
    Without `honour_key`, the server never sees Idempotency-Key, as one that ignores it."""

    async def carried_out(request: httpx.Request) -> httpx.Response:
        if not honour_key:
            request.headers.pop("Idempotency-Key", None)
        response = await net.real.handle_async_request(request)
        await response.aread()
        return await fault(request)

    return carried_out


LOST_ANSWERS: dict[str, Fault] = {
    "timeout": raising(httpx.ReadTimeout),
    "connection dropped mid-body": dropped_mid_body,
    "502 from a proxy": answer(502, b"<html>Bad Gateway</html>"),
    "200 with an HTML body": answer(200, b"<html>ok</html>"),
}


@pytest.mark.parametrize("honour_key", [True, False], ids=["key honoured", "key ignored"])
@pytest.mark.parametrize("lost", list(LOST_ANSWERS))
@pytest.mark.parametrize("kind", ["project", "alert"])
async def test_a_retry_after_a_lost_answer_never_creates_twice(
    service: RunningService, kind: str, lost: str, honour_key: bool
) -> None:
    case = new_case(service, kind)
    async with open_form(service, case) as (app, pilot, net, form):
        net.fault = carried_out_then(net, LOST_ANSWERS[lost], honour_key)
        message = await submit_and_wait_for_error(app, pilot, form)
        assert case.records(service) == 1  # the server did create it
        assert "may have been created" in message and form.values() == case.typed()
        net.fault = None
        posts_before = sum(1 for r in net.requests if r.method == "POST")
        await submit_and_wait_until_created(app, pilot, form)
        posts = sum(1 for r in net.requests if r.method == "POST") - posts_before
        assert posts == 0  # found, not sent again
        assert any("nothing was sent again" in n.message for n in app._notifications)
    assert case.records(service) == 1


async def test_a_project_at_its_bound_of_alerts_says_so_without_asking_for_a_change(
    service: RunningService,
) -> None:
    """A 409 about the project's state (its alerts at the service's bound), not about a value
    typed: the form keeps what was typed and says the server's sentence alone (no "change it"),
    and names no field."""
    case = new_case(service, "alert")
    bound = ServerConfig().alerts_per_project  # the session's service runs with the default
    with service.store.transaction() as db:
        for n in range(bound):
            service.store.insert_alert(
                db,
                project_id=case.project_id,
                name=f"filler {n}",
                metric="latency_ms_5m",
                condition="gt",
                threshold=1000,
                webhook_url="https://hooks.example.com/filler",
            )
    async with open_form(service, case) as (app, pilot, _net, form):
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not form.submitting and "alerts" in form_message(form))
        message = form_message(form)
        assert f"has {bound} alerts" in message and "delete one" in message, message
        assert "Change it" not in message and "project_id" not in message, message
        assert form.values() == case.typed() and app.screen is form
    assert case.records(service) == 0
