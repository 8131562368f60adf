"""The query line's span(…) group and input:/output: with Pilot: against the real local service
(it answers them: "the failed gpt-4o calls over 2 s" is the one trace, not the three that the
whole-trace conditions keep), and against the same service with its OpenAPI document stripped
of them (a server that lacks them: the loaded rows are filtered by what the group implies of
each trace, and the header says the group is judged per trace)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
from pydantic import SecretStr

from tests.support.app import loaded_traces, rendered_text, wait_for
from tests.support.service import RunningService
from tui.api import ApiClient
from tui.server.store.rows import SpanRow, TraceRow, now_ms
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.widgets.trace_table import TraceTable

SPAN_PARAMETERS = {
    "span_model",
    "span_name",
    "span_kind",
    "span_status",
    "span_min_latency_ms",
    "span_max_latency_ms",
    "input",
    "output",
}


def add_traces(service: RunningService, project: str) -> None:
    """Three failed traces over 2 s that used gpt-4o: in `-0` its tool failed and its gpt-4o
    call succeeded, in `-1` the gpt-4o call failed after 3 s, in `-2` the call failed fast."""
    now = now_ms()
    stories = [
        # (tool status, call status, call duration, question, answer)
        ("error", "ok", 2_400, "Where is my order?", "Your refund is on its way."),
        ("ok", "error", 3_000, "I want a refund", "Sorry, it failed."),
        ("ok", "error", 900, "cancel my order", "Sorry, it failed."),
    ]
    rows, spans = [], []
    for n, (tool, call, duration, asked, answered) in enumerate(stories):
        trace_id, start = f"{project}-{n}", now - 60_000 * (3 - n)
        rows.append(
            TraceRow(
                *(trace_id, project, "agent", start, 5_000, 3, 10, 5, 0.01, "error", 1, "{}"),
                input_preview=asked,
            )
        )
        root = {"input.value": asked, "output.value": answered}
        for span_id, parent, name, kind, model, status, took, attributes in (
            ("root", None, "agent", "agent", None, "ok", 5_000, root),
            ("tool", "root", "search_orders", "tool", None, tool, 40, {}),
            ("call", "root", "chat gpt-4o", "llm", "gpt-4o", call, duration, {}),
        ):
            spans.append(
                SpanRow(
                    trace_id,
                    span_id,
                    parent,
                    name,
                    kind,
                    model,
                    start,
                    took,
                    0,
                    0,
                    0.0,
                    status,
                    "failed" if status == "error" else None,
                    json.dumps(attributes),
                )
            )
    with service.store.transaction() as db:
        service.store.insert_project(db, project, None, 30, project_id=project)
        service.store.insert_traces(db, rows, spans)


class Lacking(httpx.AsyncBaseTransport):
    """The real service, its OpenAPI document without the span and text parameters; the
    trace requests it gets are kept."""

    def __init__(self) -> None:
        self.real = httpx.AsyncHTTPTransport()
        self.traces: list[httpx.QueryParams] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path.removeprefix("/v1")
        if path == "/traces":
            self.traces.append(request.url.params)
        response = await self.real.handle_async_request(request)
        if path == "/openapi.json":
            document = json.loads(await response.aread())
            operation = document["paths"]["/v1/traces"]["get"]
            operation["parameters"] = [
                p for p in operation["parameters"] if p["name"] not in SPAN_PARAMETERS
            ]
            return httpx.Response(200, json=document)
        return response

    async def aclose(self) -> None:
        await self.real.aclose()


def header_of(screen: Any) -> str:
    return " ".join(rendered_text(screen.query_one("#header")).split())


async def ask(pilot: Any, screen: Any, query: str) -> None:
    await pilot.press("x")
    await pilot.press("slash", *query, "enter")
    await wait_for(pilot, lambda: screen.state.query_text == query and not screen.fetching)


async def test_the_service_answers_one_span_and_the_inputs_alone(service: RunningService) -> None:
    project = f"proj_span_{uuid.uuid4().hex[:6]}"
    add_traces(service, project)
    client = ApiClient(service.base_url, SecretStr(service.keys.workspace))
    async with client:
        app = TraceTuiApp(client, StartAt(project_id=project))
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await loaded_traces(app, pilot)
            table = screen.query_one(TraceTable)
            await ask(pilot, screen, "error model:gpt-4o latency>2s")
            await wait_for(pilot, lambda: len(table.rows) == 3)
            await ask(pilot, screen, "span(model:gpt-4o error latency>2s)")
            await wait_for(pilot, lambda: [t.id for t in table.rows] == [f"{project}-1"])
            assert screen.state.found_by_server and "1 found" in header_of(screen)
            assert "judged" not in header_of(screen)
            await ask(pilot, screen, "span(kind:tool error)")
            await wait_for(pilot, lambda: [t.id for t in table.rows] == [f"{project}-0"])
            await ask(pilot, screen, 'input:refund output:"sorry"')
            await wait_for(pilot, lambda: [t.id for t in table.rows] == [f"{project}-1"])


async def test_a_server_without_them_filters_the_loaded_rows_and_says_so(
    service: RunningService,
) -> None:
    project = f"proj_span_{uuid.uuid4().hex[:6]}"
    add_traces(service, project)
    transport = Lacking()
    client = ApiClient(service.base_url, SecretStr(service.keys.workspace), transport=transport)
    async with client:
        app = TraceTuiApp(client, StartAt(project_id=project))
        async with app.run_test(size=(160, 48)) as pilot:
            screen = await loaded_traces(app, pilot)
            table = screen.query_one(TraceTable)
            await ask(pilot, screen, "span(model:gpt-4o error latency>2s)")
            # Each of the three failed, used gpt-4o and lasted over 2 s: none can be ruled out.
            await wait_for(pilot, lambda: screen.state.query_here is not None)
            assert len(table.rows) == 3
            header = header_of(screen)
            assert "filtering loaded rows: 3 of 3" in header
            assert "span(…) judged per trace" in header
            assert not any("span_model" in params for params in transport.traces)
            await ask(pilot, screen, "span(error latency>4s)")
            await wait_for(pilot, lambda: len(table.rows) == 3)  # the traces lasted 5 s
            await ask(pilot, screen, "span(error latency>6s)")
            await wait_for(pilot, lambda: len(table.rows) == 0)
            await ask(pilot, screen, "input:refund")
            await wait_for(pilot, lambda: [t.id for t in table.rows] == [f"{project}-1"])
