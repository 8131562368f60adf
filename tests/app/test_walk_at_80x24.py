"""The last rough edges of a newcomer's walk at 80x24 (issue 31): an alert's header agrees with
its history; a state the app works out itself (*) is said in words; the trace detail's footer
offers y and e; errors read as sentences, also in forms and the API log; one key is written
for retrying; relative ages keep counting; the alert chart says what its marks are; a model
without a price costs "unknown" in the trace's summary."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.alert_screens import spec_server
from tests.support.app import (
    loaded_traces,
    open_first_trace,
    rendered_text,
    running_app,
    showing,
    wait_for,
)
from tests.support.service import RunningService
from tui.server.store.rows import SpanRow, TraceRow, now_ms
from tui.ui.app import StartAt
from tui.ui.screens.alert_detail import AlertDetailScreen
from tui.ui.screens.alerts import AlertsScreen
from tui.ui.screens.api_log import ApiLogScreen
from tui.ui.screens.trace_detail import TraceDetailScreen
from tui.ui.widgets.span_tree import SpanTreeView
from tui.ui.widgets.table import Table

DOCS = Path(__file__).resolve().parents[2] / "docs"


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def text_of(screen: Any, selector: str) -> str:
    return " ".join(rendered_text(screen.query_one(selector)).split())


def on_top(app: Any) -> Any:
    """The screen in view, untyped (each test knows which it is)."""
    return app.screen


def footer_keys(screen: Any) -> list[Any]:
    return list(screen.query("FooterKey"))


def footer_text(screen: Any) -> str:
    return " ".join(f"{key.key_display} {key.description}" for key in footer_keys(screen))


def evaluating_server(alert: dict[str, object], histories: list[list[dict[str, object]]]):  # type: ignore[no-untyped-def]
    """A server that evaluates alerts: one alert, its history answered from `histories` in
    turn (the last one again after), no traces. Returns (transport, how many history reads)."""
    reads = [0]

    def answer(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path.endswith("/events"):
            page = histories[min(reads[0], len(histories) - 1)]
            reads[0] += 1
            return httpx.Response(200, json={"data": page, "next_cursor": None})
        if path.endswith("/alerts"):
            return httpx.Response(200, json={"data": [alert]})
        if path.endswith("/projects"):
            return httpx.Response(200, json={"data": [{"id": "proj_x", "name": "x"}]})
        return httpx.Response(200, json={"data": [], "next_cursor": None})

    return httpx.MockTransport(answer), reads


def slow_alert(state: str, evaluated: datetime, **more: object) -> dict[str, object]:
    return {
        "id": "a",
        "name": "Slow",
        "metric": "latency_ms_5m",
        "condition": "gt",
        "threshold": 8000,
        "webhook_url": "https://hooks.example.com/x",
        "state": state,
        "last_value": 500,
        "last_evaluated_at": iso(evaluated),
        **more,
    }


def change(at: datetime, old: str, new: str, value: float) -> dict[str, object]:
    return {
        "id": f"e{at.timestamp()}",
        "kind": "state",
        "at": iso(at),
        "from": old,
        "to": new,
        "value": value,
    }


async def open_detail(app: Any, pilot: Any) -> AlertDetailScreen:
    await wait_for(pilot, lambda: app.screen.is_mounted)
    app.open_alerts("proj_x", "x")
    await wait_for(pilot, lambda: showing(app, AlertsScreen) and bool(app.screen.alerts))
    await pilot.press("enter")
    await wait_for(pilot, lambda: showing(app, AlertDetailScreen))
    screen = app.screen
    assert isinstance(screen, AlertDetailScreen)
    return screen


# -- 1. the header and the history agree -------------------------------------------------------


async def test_the_header_follows_a_newer_change_in_the_history(service: RunningService) -> None:
    now = datetime.now(timezone.utc)
    # The alert was read before a round that the history, read after it, already lists.
    alert = slow_alert("ok", now - timedelta(minutes=3))
    fired = change(now - timedelta(minutes=1), "ok", "firing", 12_000)
    transport, _ = evaluating_server(alert, [[fired]])
    async with running_app(service, StartAt(project_id="proj_x"), transport=transport) as (
        app,
        pilot,
    ):
        screen = await open_detail(app, pilot)
        await wait_for(pilot, lambda: bool(screen.events), what="the history")
        await wait_for(pilot, lambda: text_of(screen, "#header").startswith("▲ firing"))
        assert "firing for 1m" in text_of(screen, "#facts")


async def test_a_history_older_than_the_alert_is_read_again(service: RunningService) -> None:
    now = datetime.now(timezone.utc)
    # The alert says firing since a minute ago; the first history read predates that change.
    alert = slow_alert(
        "firing", now - timedelta(seconds=10), firing_since=iso(now - timedelta(minutes=1))
    )
    resolved = change(now - timedelta(minutes=30), "firing", "ok", 500)
    fired = change(now - timedelta(minutes=1), "ok", "firing", 12_000)
    transport, reads = evaluating_server(alert, [[resolved], [fired, resolved]])
    async with running_app(service, StartAt(project_id="proj_x"), transport=transport) as (
        app,
        pilot,
    ):
        screen = await open_detail(app, pilot)
        await wait_for(pilot, lambda: len(screen.events) == 2, what="the history read again")
        assert reads[0] == 2
        assert text_of(screen, "#header").startswith("▲ firing")


# -- 2. a state worked out by the app is said in words --------------------------------------------


async def test_a_state_the_app_works_out_is_explained_in_words(service: RunningService) -> None:
    now = datetime.now(timezone.utc)
    alert = {
        "id": "a",
        "name": "Slow",
        "metric": "latency_ms_5m",
        "condition": "gt",
        "threshold": 8000,
        "webhook_url": "https://hooks.example.com/x",
    }
    traces = [
        {
            "id": "t1",
            "name": "t",
            "duration_ms": 9000,
            "status": "ok",
            "started_at": iso(now - timedelta(minutes=1)),
        }
    ]
    async with running_app(
        service, StartAt(project_id="proj_x"), transport=spec_server([alert], traces)
    ) as (app, pilot):
        await wait_for(pilot, lambda: app.screen.is_mounted)
        app.open_alerts("proj_x", "x")
        await wait_for(
            pilot, lambda: showing(app, AlertsScreen) and on_top(app).collected is not None
        )
        alerts = app.screen
        note = alerts.query_one("#computed")
        # Shown and laid out (its region is set by the layout after it is displayed).
        await wait_for(
            pilot, lambda: note.display and note.region.height >= 1, what="the note laid out"
        )
        assert "worked out by this app from the server's trace list" in text_of(alerts, "#computed")
        assert note.region.bottom <= 24  # in sight at 80x24
        await pilot.press("enter")
        await wait_for(pilot, lambda: showing(app, AlertDetailScreen) and bool(on_top(app).ranked))
        detail = app.screen
        await wait_for(pilot, lambda: text_of(detail, "#header").startswith("▲ firing*"))
        facts = text_of(detail, "#facts")
        assert "this server does not evaluate alerts" in facts
        assert "the state marked * is worked out by this app" in facts


# -- 3. the trace detail's footer at 80 columns -----------------------------------------------------


async def test_the_trace_detail_footer_offers_annotate_and_copy_at_80_columns(
    service: RunningService,
) -> None:
    async with running_app(service, StartAt("proj_support"), size=(80, 24)) as (app, pilot):
        await loaded_traces(app, pilot)
        screen = await open_first_trace(app, pilot)
        await wait_for(pilot, lambda: bool(screen.query(SpanTreeView)))
        # The tree: its keys, the panes' keys and A (annotate: it took y's place; y is in ?).
        await wait_for(pilot, lambda: "A Annotate" in footer_text(screen), what="A on the tree")
        shown = footer_text(screen)
        for key in ("n Next error", "tab Pane", "c View", "z Zoom", "/ Find", "? Keys", "q Quit"):
            assert key in shown, shown
        assert all(key.region.right <= 80 for key in footer_keys(screen))
        # The detail pane: its own y, and A after the panes' keys (e, export, is in ?).
        await pilot.press("tab")
        await wait_for(pilot, lambda: "y Copy" in footer_text(screen), what="y on the pane")
        assert "A Annotate" in footer_text(screen) and "tab Pane" in footer_text(screen)
        assert all(key.region.right <= 80 for key in footer_keys(screen))


# -- 5. errors read as sentences ------------------------------------------------------------------


async def test_a_refused_connection_reads_as_a_sentence_in_the_api_log(
    service: RunningService,
) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/alerts"):
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
        return httpx.Response(200, json={"data": [{"id": "proj_x", "name": "x"}]})

    async with running_app(
        service, StartAt(project_id="proj_x"), transport=httpx.MockTransport(refuse)
    ) as (app, pilot):
        await wait_for(pilot, lambda: app.screen.is_mounted)
        app.open_alerts("proj_x", "x")
        await wait_for(pilot, lambda: any(e.error for e in app.client.log), what="a failure")
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: showing(app, ApiLogScreen))
        log = on_top(app)
        await wait_for(pilot, lambda: bool(log.details))
        failed = [d for d in log.details if "nothing answered there" in d]
        assert failed and not any("ConnectError" in d for d in log.details), log.details
        rows = " ".join(str(c) for cells, _ in log.query_one(Table)._rows for c in cells)
        assert "ConnectError" not in rows


async def test_a_form_says_a_refused_connection_in_words(service: RunningService) -> None:

    from tui.ui.screens.forms import AlertForm

    def answer(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
        return spec_server([], []).handler(request)  # type: ignore[return-value]

    async with running_app(
        service, StartAt(project_id="proj_x"), transport=httpx.MockTransport(answer)
    ) as (app, pilot):
        await wait_for(pilot, lambda: app.screen.is_mounted)
        app.open_alerts("proj_x", "x")
        await wait_for(pilot, lambda: showing(app, AlertsScreen))
        await pilot.press("n")
        await wait_for(pilot, lambda: showing(app, AlertForm))
        form = on_top(app)
        for name, value in (
            ("name", "Slow"),
            ("metric", "latency_ms_5m"),
            ("threshold", "8000"),
            ("webhook_url", "https://hooks.example.com/x"),
        ):
            form.query_one(f"#field-{name}").value = value  # type: ignore[attr-defined]
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "Cannot connect" in text_of(form, "#form-error"))
        said = text_of(form, "#form-error")
        assert "ConnectError" not in said and "nothing answered there" in said, said


# -- 6. one key for retrying ---------------------------------------------------------------------


def test_the_usage_guide_names_the_retry_key_the_screens_name() -> None:
    usage = (DOCS / "usage.md").read_text()
    assert "(`r` retries)" not in usage and "`ctrl+r` retries" in usage


# -- 7. relative ages keep counting ----------------------------------------------------------------


async def test_the_trace_summary_age_keeps_counting(
    service: RunningService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tui.ui.screens.base.AGE_TICK_S", 0.05, raising=False)
    async with running_app(service, StartAt("proj_support")) as (app, pilot):
        await loaded_traces(app, pilot)
        screen = await open_first_trace(app, pilot)
        assert isinstance(screen, TraceDetailScreen) and screen.trace is not None
        started = screen.trace.started_at
        assert started is not None
        app.now = lambda: started + timedelta(hours=3, minutes=1)
        await wait_for(pilot, lambda: "(3h ago)" in text_of(screen, "#summary"), what="3h ago")


async def test_an_alerts_evaluated_age_keeps_counting(
    service: RunningService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tui.ui.screens.base.AGE_TICK_S", 0.05, raising=False)
    now = datetime.now(timezone.utc)
    transport, _ = evaluating_server(slow_alert("ok", now - timedelta(seconds=5)), [[]])
    async with running_app(service, StartAt(project_id="proj_x"), transport=transport) as (
        app,
        pilot,
    ):
        screen = await open_detail(app, pilot)
        await wait_for(pilot, lambda: "evaluated" in text_of(screen, "#facts"))
        app.now = lambda: now + timedelta(minutes=7)
        await wait_for(pilot, lambda: "evaluated 7m ago" in text_of(screen, "#facts"))


# -- 9. the chart's legend --------------------------------------------------------------------------


async def test_the_alert_chart_says_what_its_marks_are(service: RunningService) -> None:
    now = datetime.now(timezone.utc)
    traces = [
        {
            "id": f"t{i}",
            "name": "t",
            "duration_ms": ms,
            "status": "ok",
            "started_at": iso(now - timedelta(minutes=5 * i + 1)),
        }
        for i, ms in enumerate((500, 9000, 12000))
    ]
    alert = {
        "id": "a",
        "name": "Slow",
        "metric": "latency_ms_5m",
        "condition": "gt",
        "threshold": 8000,
        "webhook_url": "https://hooks.example.com/x",
    }
    async with running_app(
        service, StartAt(project_id="proj_x"), transport=spec_server([alert], traces)
    ) as (app, pilot):
        screen = await open_detail(app, pilot)
        chart = screen.query_one("#chart")
        await wait_for(pilot, lambda: "threshold" in rendered_text(chart), what="the legend")
        legend = rendered_text(chart).splitlines()[0]
        assert "latency /5m" in legend and "breaching" in legend and "┄┄ threshold" in legend
        assert "_ zero" in legend and len(legend.rstrip()) <= 78


# -- 10. a model without a price -------------------------------------------------------------------


def project_with_an_unpriced_call(service: RunningService) -> tuple[str, str]:
    project_id, trace_id = f"proj_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    start = now_ms() - 60_000
    trace = TraceRow(trace_id, project_id, "ask", start, 900, 2, 10, 5, 0.0, "ok", 0, "{}")
    spans = [
        SpanRow(
            trace_id, "s1", None, "ask", "chain", None, start, 900, 0, 0, 0.0, "ok", None, "{}"
        ),
        SpanRow(
            trace_id,
            "s2",
            "s1",
            "chat my-own-model",
            "llm",
            "my-own-model",
            start + 10,
            800,
            10,
            5,
            0.0,
            "ok",
            None,
            # As ingest writes it (tui/server/ingest/spans.py): the mark is in the attributes.
            '{"tracetui.cost_source": "unknown_model"}',
            cost_source="unknown_model",
        ),
    ]
    with service.store.transaction() as db:
        service.store.insert_project(db, project_id, None, 30, project_id=project_id)
        service.store.insert_traces(db, [trace], spans)
    return project_id, trace_id


async def test_a_model_without_a_price_makes_the_trace_cost_unknown(
    service: RunningService,
) -> None:
    project_id, trace_id = project_with_an_unpriced_call(service)
    async with running_app(service, StartAt(project_id, trace_id)) as (app, pilot):
        await wait_for(
            pilot, lambda: showing(app, TraceDetailScreen) and on_top(app).trace_tree is not None
        )
        summary = text_of(app.screen, "#summary")
        assert "cost unknown (1 span with a model without a price)" in summary, summary
        assert "cost $0 " not in summary


async def test_a_sessions_last_seen_keeps_counting(
    service: RunningService, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tui.ui.screens.sessions import SessionsScreen

    monkeypatch.setattr("tui.ui.screens.base.AGE_TICK_S", 0.05, raising=False)
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: bool(app.projects), what="the projects")
        await pilot.press("S")
        await wait_for(pilot, lambda: showing(app, SessionsScreen) and bool(on_top(app).sessions))
        screen = on_top(app)
        seen = max(s.last_seen for s in screen.sessions if s.last_seen is not None)
        app.now = lambda: seen + timedelta(days=3, hours=1)
        table = screen.query_one(Table)
        await wait_for(
            pilot, lambda: any("3d ago" in str(cells[2]) for cells, _ in table._rows), what="3d"
        )
