"""An alert's detail says which of its two tables has the keys: the title of the focused one
starts with ▸, is drawn reversed and names what `tab` moves to; `tab` moves both."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import httpx
from pydantic import SecretStr
from textual.widgets import Static

from tests.support.app import rendered_text, showing, wait_for
from tui.api import Alert, ApiClient
from tui.ui.app import TraceTuiApp
from tui.ui.screens.alert_detail import AlertDetailScreen
from tui.ui.screens.projects import ProjectsScreen

NOW = datetime.now(timezone.utc).replace(microsecond=0)
ALERT = {
    "id": "al_1",
    "name": "Slow replies",
    "metric": "latency_ms_5m",
    "condition": "gt",
    "threshold": 8000,
    "webhook_url": "https://hooks.example.com/x",
    "state": "ok",
    "last_value": 1200.0,
    "last_evaluated_at": (NOW - timedelta(seconds=20)).isoformat(),
}
EVENT = {"id": "e1", "kind": "state", "at": NOW.isoformat(), "from": "no_data", "to": "ok"}


def server(request: httpx.Request) -> httpx.Response:
    path = request.url.path.removeprefix("/v1")
    if path == "/projects":
        return httpx.Response(200, json={"data": [{"id": "p", "name": "shop"}]})
    if path == "/projects/p/alerts":
        return httpx.Response(200, json={"data": [ALERT]})
    if path == "/projects/p/alerts/al_1":
        return httpx.Response(200, json=ALERT)
    if path == "/projects/p/alerts/al_1/events":
        return httpx.Response(200, json={"data": [EVENT], "next_cursor": None})
    return httpx.Response(200, json={"data": [], "next_cursor": None})


def title(screen: AlertDetailScreen, selector: str) -> tuple[str, bool]:
    shown = screen.query_one(selector, Static)
    return rendered_text(shown).strip(), shown.has_class("-focused")


async def test_the_focused_table_is_marked_and_tab_moves_the_mark() -> None:
    transport = httpx.MockTransport(server)
    client = ApiClient("http://alerts.example/v1", SecretStr("k" * 20), transport=transport)
    app = TraceTuiApp(client)
    async with client, app.run_test(size=(100, 40)) as pilot:
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        app.open_alert("p", Alert.model_validate(ALERT))
        await wait_for(pilot, lambda: showing(app, AlertDetailScreen))
        screen = app.screen
        assert isinstance(screen, AlertDetailScreen)
        await wait_for(pilot, lambda: bool(screen.events))
        traces, traces_focused = title(screen, "#traces-title")
        history, history_focused = title(screen, "#events-title")
        assert traces.startswith("▸ Traces of the window") and "(tab: history)" in traces
        assert traces_focused and not history_focused
        assert history.startswith("History: 1 event") and "tab:" not in history
        await pilot.press("tab")
        await wait_for(pilot, lambda: title(screen, "#events-title")[1])
        history, _ = title(screen, "#events-title")
        assert history.startswith("▸ History: 1 event") and "(tab: traces)" in history
        assert not title(screen, "#traces-title")[0].startswith("▸")
