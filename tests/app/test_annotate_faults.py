"""The annotate form when writing goes wrong, with Pilot against the real local service behind a
transport that injects the fault: an answer lost after the write (looked for, never sent
twice), a 5xx, a refusal beside its field, and a server that keeps no annotations (said plainly,
nothing typed lost, ctrl+g copies it)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from tests.app.test_annotate_service import add_project, annotations_of, form, served
from tests.support.app import has_focus, loaded_traces, rendered_text, showing, wait_for
from tests.support.service import RunningService
from tui.api import ApiClient
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.annotate_form import AnnotateForm

Fault = Callable[[httpx.Request], "httpx.Response | None"]


class Faulty(httpx.AsyncBaseTransport):
    """The real service over loopback, but `fault(request)` answers first when it returns a
    response; `lose_next_answer` forwards the next annotation write and then raises a timeout
    (stored, the answer lost)."""

    def __init__(self, fault: Fault | None = None) -> None:
        self.real = httpx.AsyncHTTPTransport()
        self.fault = fault
        self.lose_next_answer = False
        self.writes: list[httpx.Request] = []
        # While set and not yet released, the answer to openapi.json waits (what the server
        # offers is then not known).
        self.hold_offers: asyncio.Event | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.hold_offers is not None and request.url.path.endswith("/openapi.json"):
            await self.hold_offers.wait()
        annotation_write = request.method != "GET" and "/annotations" in request.url.path
        if annotation_write:
            self.writes.append(request)
        if self.fault is not None:
            answer = self.fault(request)
            if answer is not None:
                return answer
        response = await self.real.handle_async_request(request)
        if annotation_write and self.lose_next_answer:
            self.lose_next_answer = False
            await response.aread()
            raise httpx.ReadTimeout("the answer was lost", request=request)
        return response

    async def aclose(self) -> None:
        await self.real.aclose()


@asynccontextmanager
async def faulty_app(
    service: RunningService, transport: Faulty, project: str
) -> AsyncIterator[tuple[TraceTuiApp, Any]]:
    client = ApiClient(service.base_url, SecretStr(service.keys.workspace), transport=transport)
    async with client:
        app = TraceTuiApp(client, StartAt(project_id=project))
        async with app.run_test(size=(80, 24)) as pilot:
            yield app, pilot


async def write_a_note(app: TraceTuiApp, pilot: Any, text: str) -> AnnotateForm:
    await loaded_traces(app, pilot)
    await pilot.press("A")
    annotate = await form(app, pilot)
    await pilot.press("tab")
    await wait_for(pilot, lambda: has_focus(app, "#field-name"))
    await pilot.press(*"note", "tab", "tab", "tab", *text, "ctrl+s")
    return annotate


def said(annotate: AnnotateForm) -> str:
    return " ".join(rendered_text(annotate.query_one("#form-error")).split())


@pytest.fixture
def project(service: RunningService) -> tuple[str, list[str]]:
    if not served(service):
        pytest.skip(
            "LOUD SKIP: this service keeps no annotations: the service lane (lane-as) is not "
            "merged into this branch yet; these tests run against it once it is"
        )
    name, ids, _ = add_project(service)
    return name, ids


async def test_a_lost_answer_is_looked_for_and_the_note_is_never_sent_twice(
    service: RunningService, project: tuple[str, list[str]]
) -> None:
    name, ids = project
    transport = Faulty()
    transport.lose_next_answer = True
    async with faulty_app(service, transport, name) as (app, pilot):
        annotate = await write_a_note(app, pilot, "stored once")
        await wait_for(pilot, lambda: "may have been stored anyway" in said(annotate))
        assert annotate.query_one("#field-note").text == "stored once"  # nothing typed lost
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not showing(app, AnnotateForm))
    assert len(transport.writes) == 1  # looked for, found, not sent again
    assert [a["explanation"] for a in annotations_of(service, name, ids[0])] == ["stored once"]


async def test_a_failed_write_keeps_the_form_and_is_sent_again_once(
    service: RunningService, project: tuple[str, list[str]]
) -> None:
    name, ids = project
    failing = [True]

    def busy(request: httpx.Request) -> httpx.Response | None:
        if request.method == "POST" and "/annotations" in request.url.path and failing[0]:
            failing[0] = False
            return httpx.Response(503, json={"error": {"message": "the store is busy"}})
        return None

    transport = Faulty(busy)
    async with faulty_app(service, transport, name) as (app, pilot):
        annotate = await write_a_note(app, pilot, "kept")
        await wait_for(pilot, lambda: "the store is busy" in said(annotate))
        assert showing(app, AnnotateForm) and annotate.query_one("#field-note").text == "kept"
        await pilot.press("ctrl+s")  # looks first (a 5xx may have been carried out), then sends
        await wait_for(pilot, lambda: not showing(app, AnnotateForm))
    assert [a["explanation"] for a in annotations_of(service, name, ids[0])] == ["kept"]
    assert len(transport.writes) == 2


async def test_a_refusal_shows_beside_its_field(
    service: RunningService, project: tuple[str, list[str]]
) -> None:
    name, _ = project

    def refuse(request: httpx.Request) -> httpx.Response | None:
        if request.method == "POST" and "/annotations" in request.url.path:
            details = [{"field": "data[0].score", "message": "must be at most 1 here"}]
            body = {"error": {"message": "Invalid fields: data[0].score.", "details": details}}
            return httpx.Response(422, json=body)
        return None

    async with faulty_app(service, Faulty(refuse), name) as (app, pilot):
        await loaded_traces(app, pilot)
        await pilot.press("A")
        annotate = await form(app, pilot)
        await pilot.press("tab", *"helpful", "tab", "tab", *"7", "ctrl+s")
        await wait_for(pilot, lambda: annotate.query_one("#error-score").display)
        assert "must be at most 1 here" in rendered_text(annotate.query_one("#error-score"))
        assert annotate.query_one("#field-score").value == "7"


async def test_a_server_that_keeps_no_annotations_says_so_and_loses_nothing(
    service: RunningService,
) -> None:
    name, _, _ = add_project(service)

    def spec_only(request: httpx.Request) -> httpx.Response | None:
        if request.url.path.endswith("/openapi.json"):
            return httpx.Response(404, json={"error": {"message": "Not Found"}})
        return None

    transport = Faulty(spec_only)
    transport.hold_offers = asyncio.Event()  # what it offers is not known when A is pressed
    async with faulty_app(service, transport, name) as (app, pilot):
        annotate = await write_a_note(app, pilot, "worth keeping")
        transport.hold_offers.set()
        await wait_for(pilot, lambda: "keeps no annotations" in said(annotate))
        assert "ctrl+g copies it" in said(annotate)
        assert annotate.query_one("#field-note").text == "worth keeping"
        await pilot.press("ctrl+g")
        assert "worth keeping" in app.clipboard
        await pilot.press("escape")
        await wait_for(pilot, lambda: not showing(app, AnnotateForm))
        await pilot.press("A")  # known now: said plainly, no form
        await wait_for(
            pilot,
            lambda: any("keeps no annotations" in n.message for n in app._notifications),
        )
        assert not showing(app, AnnotateForm)
    assert transport.writes == []
