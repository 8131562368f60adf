"""An alert whose window holds no traces says so, in the same words everywhere: the alerts list,
the alert's detail and history, and the form's preview on an empty project (never `0%`, never
`now > 5%`). Its first change starts from `new`, not from an empty window."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
from pydantic import SecretStr

from tests.support.alert_screens import project_with_traces
from tests.support.app import running_app, showing, wait_for
from tests.support.service import RunningService
from tui.api import ApiClient
from tui.core.alert_rules import no_value_text, state_label
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.alert_detail import AlertDetailScreen
from tui.ui.screens.alerts import AlertsScreen
from tui.ui.screens.forms import AlertForm
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.widgets.alert_preview import AlertPreview
from tui.ui.widgets.table import Table

NOW = datetime.now(timezone.utc).replace(microsecond=0)


def alert(n: int, name: str, metric: str) -> dict[str, Any]:
    return {
        "id": f"alert_{n}",
        "name": name,
        "metric": metric,
        "condition": "gte",
        "threshold": 5,
        "webhook_url": "https://hooks.example.com/x",
        "state": "no_data",
        "last_value": None,
        "last_evaluated_at": (NOW - timedelta(seconds=20)).isoformat(),
    }


ALERTS = [
    alert(1, "Slow replies", "latency_ms_5m"),
    alert(2, "Error spike", "error_rate_pct_15m"),
    alert(3, "Answer drift", "prompt_drift_score_24h"),
]
HISTORY = [
    {"id": "e2", "kind": "state", "at": (NOW - timedelta(minutes=5)).isoformat(),
     "from": "ok", "to": "no_data", "value": None},
    {"id": "e1", "kind": "state", "at": (NOW - timedelta(hours=2)).isoformat(),
     "from": "no_data", "to": "ok", "value": 0.0},
]  # fmt: skip


def server(request: httpx.Request) -> httpx.Response:
    """An evaluating server (the local service's shapes) whose windows are empty: no_data."""
    path = request.url.path.removeprefix("/v1")
    if path == "/projects":
        return httpx.Response(200, json={"data": [{"id": "p", "name": "shop"}]})
    if path == "/projects/p/alerts":
        return httpx.Response(200, json={"data": ALERTS})
    if path == "/projects/p/alerts/alert_2":
        return httpx.Response(200, json=ALERTS[1])
    if path == "/projects/p/alerts/alert_2/events":
        return httpx.Response(200, json={"data": HISTORY, "next_cursor": None})
    if path == "/traces":
        return httpx.Response(200, json={"data": [], "next_cursor": None})
    return httpx.Response(404, json={"error": {"message": "no such thing"}})


def table_rows(table: Table) -> list[str]:
    return [" ".join(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)]


def test_the_words_for_an_empty_window() -> None:
    assert state_label("no_data", "error_rate_pct_15m") == "· no traces"
    assert state_label("no_data", "latency_ms_5m") == "· no traces"
    assert state_label("no_data", "prompt_drift_score_24h") == "· no prompts"
    assert state_label("no_data", "queue_depth_count_5m") == "· no data"  # another vocabulary
    assert no_value_text("error_rate_pct_15m") == "no traces in the last 15m"


async def test_the_list_the_detail_and_the_history_say_no_traces() -> None:
    client = ApiClient(
        "http://alerts.example/v1", SecretStr("k" * 20), transport=httpx.MockTransport(server)
    )
    app = TraceTuiApp(client)
    async with client, app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        app.open_alerts("p", "shop")
        await wait_for(pilot, lambda: showing(app, AlertsScreen) and bool(app.screen.alerts))
        screen = app.screen
        table = screen.query_one(Table)
        await wait_for(pilot, lambda: table.row_count == 3)
        states = [str(table.get_row_at(i)[0]) for i in range(3)]
        assert states == ["· no traces", "· no traces", "· no prompts"], states
        assert not any("0%" in row for row in table_rows(table))

        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: showing(app, AlertDetailScreen))
        detail = app.screen
        assert isinstance(detail, AlertDetailScreen)
        await wait_for(pilot, lambda: len(detail.events) == 2)
        header = str(detail.query_one("#header").content)
        facts = str(detail.query_one("#facts").content)
        assert header.startswith("· no traces") and "Error spike" in header
        assert facts.startswith("now no traces in the last 15m"), facts
        history = table_rows(detail.query_one("#events", Table))
        assert "✓ ok → · no traces" in history[0] and "· new → ✓ ok" in history[1], history


async def test_the_form_preview_on_an_empty_project_says_no_traces(
    service: RunningService,
) -> None:
    project_id = project_with_traces(service, [])
    async with running_app(service, StartAt(project_id=project_id), size=(100, 40)) as (
        app,
        pilot,
    ):
        await pilot.press("a")
        await wait_for(pilot, lambda: showing(app, AlertsScreen))
        await pilot.press("n")
        await wait_for(pilot, lambda: showing(app, AlertForm))
        preview = app.screen.query_one(AlertPreview)
        await wait_for(pilot, lambda: preview.collected is not None)
        await pilot.press(*"Errors")
        app.screen.query_one("#field-metric").value = "error_rate_pct_15m"  # type: ignore[attr-defined]
        app.screen.query_one("#field-threshold").focus()
        await pilot.press(*"5")
        await wait_for(pilot, lambda: preview.fired is not None)
        shown = str(preview.content)
        assert "now no traces in the last 15m · would have fired 0 times" in shown, shown
        assert "> 5%" not in shown
