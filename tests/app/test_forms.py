"""The project and alert forms: tab order, values that do not look like placeholders, the
metric grammar the service accepts, what a rejected form keeps, one idempotency key per set of
values, and server strings capped in the form's title and toast."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest
from pydantic import SecretStr
from textual.widgets import Input, Select

from tests.support.app import (
    laid_out,
    loaded_traces,
    rendered_text,
    running_app,
    showing,
    type_into,
    wait_for,
)
from tests.support.faults import app_with_faults
from tests.support.service import RunningService
from tui.api import ApiClient
from tui.core.alert_rules import MEASURE_UNITS, metric_problem
from tui.model.text import NOTICE_MAX_CHARS
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.alerts import AlertsScreen
from tui.ui.screens.forms import AlertForm, ProjectForm, url_problem
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.traces import TracesScreen
from tui.ui.widgets.metric_picker import MetricPicker


async def test_tab_goes_from_field_to_field_with_no_invisible_stop(
    service: RunningService,
) -> None:
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: bool(app.projects))
        await pilot.press("n")
        await wait_for(pilot, lambda: showing(app, ProjectForm))
        await wait_for(pilot, lambda: app.focused is not None, what="a field has the focus")
        seen = []
        for _ in range(4):
            seen.append(app.focused.id if app.focused else None)
            await pilot.press("tab")
    assert seen == ["field-name", "field-description", "field-retention_days", "field-name"]


async def test_a_prefilled_value_does_not_look_like_a_placeholder(
    service: RunningService,
) -> None:
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: bool(app.projects))
        await pilot.press("n")
        await wait_for(pilot, lambda: showing(app, ProjectForm))
        form = app.screen
        await wait_for(pilot, lambda: laid_out(form, "#field-retention_days", "#field-description"))

        def styles(field: str, text: str) -> set[str]:
            line = form.query_one(f"#field-{field}", Input).render_line(0)
            return {str(s.style) for s in line if s.text.strip() and s.text.strip() in text}

        value = styles("retention_days", "30")
        placeholder = styles("description", "optional")
    assert value and placeholder and value.isdisjoint(placeholder)
    assert all("italic" in s for s in placeholder)


def test_webhook_urls_say_what_is_missing() -> None:
    assert "Add the host after http://" in (url_problem("http://") or "")
    assert "Start with http:// or https://" in (url_problem("hooks.example.com/x") or "")
    assert url_problem("https://hooks.example.com/x") is None


@pytest.mark.parametrize(
    "metric",
    [
        "latency_ms_5m",
        "latency_ms_0m",
        "latency_ms_1000h",
        "latency_min_5m",
        "error_rate_ratio_week",
        "cost_usd_999d",
        "cost_eur_1h",
        "prompt_drift_pct_24h",
        "tokens_count_1h",
        "latency_ms_5m_x",
    ],
)
def test_the_form_and_the_service_accept_the_same_metrics(api: httpx.Client, metric: str) -> None:
    answer = api.post(
        "projects/proj_rag/alerts",
        json={
            "name": "grammar",
            "metric": metric,
            "condition": "gt",
            "threshold": 1,
            "webhook_url": "https://hooks.example.com/g",
        },
    )
    assert (metric_problem(metric) is None) == (answer.status_code == 201), answer.text


async def test_the_alert_form_offers_the_whole_metric_grammar(service: RunningService) -> None:
    async with running_app(service, StartAt(project_id="proj_rag")) as (app, pilot):
        await loaded_traces(app, pilot)
        await pilot.press("a", "n")
        await wait_for(pilot, lambda: showing(app, AlertForm))
        form = app.screen
        picker = form.query_one("#field-metric", MetricPicker)
        measure = picker.query_one("#metric-measure", Select)
        unit = picker.query_one("#metric-unit", Select)
        offered = {}
        for key in MEASURE_UNITS:
            measure.value = key
            await pilot.pause()
            offered[key] = [value for _, value in unit._options]
        assert offered == {key: list(units) for key, units in MEASURE_UNITS.items()}
        # A metric that is chosen is one the grammar (and the service) accepts.
        assert metric_problem(picker.value) is None
        assert form.query_one("#field-condition", Select).value == "gt"


async def test_create_an_alert_and_see_it_listed(service: RunningService) -> None:
    name = f"Spend {uuid.uuid4().hex[:6]}"
    async with running_app(service, StartAt(project_id="proj_rag")) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, TracesScreen))
        await pilot.press("a")
        await wait_for(pilot, lambda: showing(app, AlertsScreen) and bool(app.screen.alerts))
        alerts = app.screen
        assert isinstance(alerts, AlertsScreen)
        before = len(alerts.alerts)
        await pilot.press("n")
        await wait_for(pilot, lambda: showing(app, AlertForm))
        # Keys alone: the metric and the condition are chosen from lists (enter opens one,
        # typing jumps to a choice, down moves, enter takes it).
        await type_into(pilot, "AlertForm #field-name", *name, "tab")
        await pilot.press("enter", "c", "enter")  # measure: cost (its one unit: US$)
        await pilot.press("tab", "tab", "enter", *"1h", "enter")  # period: 1h
        await pilot.press("tab", "enter", "down", "enter")  # condition: ≥ at or above
        await pilot.press("tab", *"2.5", "tab", *"https://hooks.example.com/x")
        form = app.screen
        assert isinstance(form, AlertForm)
        assert form.values()["metric"] == "cost_usd_1h" and form.values()["condition"] == "gte"
        await pilot.press("ctrl+s")
        # The new alert's signing secret is shown once, on top of the list.
        await wait_for(pilot, lambda: type(app.screen).__name__ == "SecretDialog")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is alerts and len(alerts.alerts) == before + 1)
        created = alerts.alerts[-1]
        assert (created.name, created.metric, created.condition) == (name, "cost_usd_1h", "gte")
        assert created.threshold == 2.5
    assert sum(1 for a in service.store.list_alerts("proj_rag") if a.name == name) == 1


async def test_a_rejected_form_keeps_what_was_typed(service: RunningService) -> None:
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        await pilot.press("n")
        await wait_for(pilot, lambda: showing(app, ProjectForm))
        form = app.screen
        assert isinstance(form, ProjectForm)
        await type_into(pilot, "ProjectForm #field-name", *"kept-name", "tab")
        form.query_one("#field-description").value = "d" * 2001  # only the server checks this
        await pilot.press("ctrl+s")
        error = form.query_one("#error-description")
        await wait_for(pilot, lambda: "2000" in rendered_text(error))
        assert form.values()["name"] == "kept-name" and len(form.values()["description"]) == 2001
        assert app.screen is form


@pytest.mark.parametrize("change_values", [False, True])
async def test_a_form_sends_one_idempotency_key_per_set_of_values(
    service: RunningService, change_values: bool
) -> None:
    keys: list[str] = []

    async def refuse_posts(request: httpx.Request) -> httpx.Response:
        keys.append(request.headers["idempotency-key"])
        return httpx.Response(422, json={"error": {"message": "no", "details": []}})

    async with app_with_faults(service, StartAt(project_id="proj_rag")) as (app, pilot, net):
        await loaded_traces(app, pilot)
        await pilot.press("a", "n")
        await wait_for(pilot, lambda: showing(app, AlertForm))
        form = app.screen
        typed = {
            "name": "Keyed",
            "metric": "latency_ms_5m",
            "threshold": "1",
            "webhook_url": "https://h.example/x",
        }
        for field, value in typed.items():
            form.query_one(f"#field-{field}").value = value  # type: ignore[attr-defined]
        net.fault = refuse_posts
        for attempt in range(2):
            if change_values and attempt:
                form.query_one("#field-threshold").value = "2"  # type: ignore[attr-defined]
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda n=attempt + 1: len(keys) == n)
            await wait_for(pilot, lambda: not form.submitting)
    assert (keys[0] != keys[1]) is change_values


MEGABYTE_NAME = "[b]big[/b] " + "n" * 1_000_000


def projects_with_a_megabyte_name(request: httpx.Request) -> httpx.Response:
    if request.url.path.endswith("/projects"):
        return httpx.Response(200, json={"data": [{"id": "p1", "name": MEGABYTE_NAME}]})
    if request.url.path.endswith("/alerts") and request.method == "POST":
        body = json.loads(request.content)
        return httpx.Response(201, json={**body, "id": "a1", "name": MEGABYTE_NAME})
    if request.url.path.endswith("/alerts"):
        return httpx.Response(200, json={"data": []})
    return httpx.Response(200, json={"data": [], "next_cursor": None})


async def test_server_strings_in_toasts_and_titles_are_capped() -> None:
    transport = httpx.MockTransport(projects_with_a_megabyte_name)
    async with ApiClient("http://x.example/v1", SecretStr("k" * 20), transport=transport) as client:
        app = TraceTuiApp(client)
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: bool(app.projects))
            await pilot.press("a", "n")
            await wait_for(pilot, lambda: showing(app, AlertForm))
            form = app.screen
            title = rendered_text(form.query_one(".title"))
            assert "New alert for [b]big[/b] nnn" in title and len(title.strip()) <= 80
            for field, value in {
                "name": "n",
                "metric": "latency_ms_5m",
                "threshold": "1",
                "webhook_url": "https://h.example/x",
            }.items():
                form.query_one(f"#field-{field}").value = value  # type: ignore[attr-defined]
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: bool(app._notifications))
            note = next(iter(app._notifications))
    assert note.message.startswith("Alert [b]big[/b] nnn") and not note.markup
    assert len(note.message) <= NOTICE_MAX_CHARS
