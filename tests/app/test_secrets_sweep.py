"""A recognisable key, configured and typed, against a server that echoes it back in every error
it can: every screen and error the app can show is saved as a screenshot, and neither key is in
any of them, nor in a notification, the API log, the log records or the client's repr.

(The crash report is checked in test_crash_secrets.py, the client's error paths one by one in
tests/client/test_secrets.py, and the terminal's bytes in test_hostile_terminal.py.)"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.app import loaded_traces, settled, showing, tree_shown, type_into, wait_for
from tests.support.faults import (
    Fault,
    FaultyTransport,
    answer,
    app_with_faults,
)
from tests.support.service import RunningService, start_service
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.alerts import AlertsScreen
from tui.ui.screens.forms import AlertForm
from tui.ui.screens.prompts import KeyPrompt
from tui.ui.screens.traces import TracesScreen

WORKSPACE_KEY = f"tt_SECRET_sweep_workspace_{uuid.uuid4().hex}"
TYPED_KEY = f"tt_SECRET_sweep_typed_{uuid.uuid4().hex}"
KEYS = (WORKSPACE_KEY, TYPED_KEY)
JSON = {"content-type": "application/json"}


def echo(key: str) -> str:
    """What a careless server says: the key it was sent, back (it cannot know any other)."""
    return f"key {key} (Bearer {key}) rejected"


def echoing(status: int, key: str, **headers: str) -> Fault:
    message = echo(key)
    details = [{"field": "name", "message": message}, {"field": message, "message": message}]
    body = httpx.Response(status, json={"error": {"message": message, "details": details}})
    return answer(status, body.content, **JSON, **headers)


def raising_with(error: type[httpx.TransportError], key: str) -> Fault:
    async def fault(request: httpx.Request) -> httpx.Response:
        raise error(echo(key), request=request)

    return fault


def echoing_faults(key: str) -> dict[str, Fault]:
    """Every kind of failure, each carrying `key` back."""
    return {
        "401": echoing(401, key),
        "403": echoing(403, key),
        "404": echoing(404, key),
        "422": echoing(422, key),
        "429": echoing(429, key, **{"retry-after": "1"}),
        "500": echoing(500, key),
        "503": echoing(503, key),
        "HTML 200": answer(200, echo(key).encode(), **{"content-type": "text/html"}),
        "redirect": answer(302, b"", location=f"https://evil.example/?k={key}"),
        "refused": raising_with(httpx.ConnectError, key),
        "timeout": raising_with(httpx.ReadTimeout, key),
        "dropped": raising_with(httpx.RemoteProtocolError, key),
    }


class Sweep:
    """Saves a screenshot of what is shown now, under a name saying where, and keeps the
    notifications of the moment."""

    def __init__(self, app: TraceTuiApp, folder: Path) -> None:
        self.app, self.folder, self.count = app, folder, 0
        self.notes: list[str] = []

    def shot(self, where: str) -> None:
        self.count += 1
        self.app.save_screenshot(f"{self.count:02d}-{where}.svg", path=str(self.folder))
        self.notes += [f"{n.title} {n.message}" for n in self.app._notifications]


@pytest.fixture
def service(tmp_path: Path) -> Iterator[RunningService]:
    """A service of its own: the sweep adds keys, which other tests count."""
    running = start_service(tmp_path / "sweep.sqlite3")
    yield running
    running.service.stop()


async def test_no_screen_error_or_log_ever_shows_a_key(
    service: RunningService, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    service.store.add_key(WORKSPACE_KEY, None, "sweep")
    project = f"proj_sweep_{uuid.uuid4().hex[:6]}"
    with service.store.transaction() as db:
        service.store.insert_project(db, "sweep", None, 30, project_id=project)
    service.store.add_key(TYPED_KEY, project, "sweep project")
    start = StartAt(project_id="proj_support")
    async with app_with_faults(service, start, WORKSPACE_KEY) as (app, pilot, net):
        sweep = Sweep(app, tmp_path)
        await walk_every_screen(app, pilot, net, sweep, project)
        api_log = [repr(entry) for entry in app.client.log]
        client_repr = repr(app.client)
    assert sweep.count >= 45
    # The server's echo was shown, redacted, in notifications and on the form.
    assert any("key [redacted] (Bearer [redacted]) rejected" in note for note in sweep.notes)
    texts = {"notifications": "\n".join(sweep.notes), "API log": "\n".join(api_log)}
    texts |= {"log records": caplog.text, "client": client_repr}
    assert where_keys_are(tmp_path, texts) == []


def where_keys_are(folder: Path, texts: dict[str, str]) -> list[str]:
    """The screenshots in `folder` and the `texts` that hold a key or its last 12 characters."""
    screenshots = {path.name: path.read_text() for path in folder.glob("*.svg")}
    assert any("[redacted]" in text for text in screenshots.values())  # the echoes were drawn
    return [
        where
        for where, text in (screenshots | texts).items()
        if any(key in text or key[-12:] in text for key in KEYS)
    ]


async def walk_every_screen(
    app: TraceTuiApp, pilot: Any, net: FaultyTransport, sweep: Sweep, project: str
) -> None:
    await loaded_traces(app, pilot)
    sweep.shot("traces")
    await pilot.press("enter")
    await wait_for(pilot, lambda: tree_shown(app))
    await pilot.press("down")
    sweep.shot("trace")
    await pilot.press("escape", "a")
    await wait_for(pilot, lambda: showing(app, AlertsScreen))
    sweep.shot("alerts")
    # Every echoing fault on a refresh of the alerts, and on the alert form's create.
    await refresh_under_every_fault(app, pilot, net, sweep, WORKSPACE_KEY)
    await pilot.press("n")
    await wait_for(pilot, lambda: showing(app, AlertForm))
    form = app.screen
    for field, value in (("name", "x"), ("metric", "latency_ms_5m"), ("threshold", "1")):
        form.query_one(f"#field-{field}").value = value  # type: ignore[attr-defined]
    form.query_one("#field-webhook_url").value = "https://hooks.example.com/k"  # type: ignore[attr-defined]
    for name, fault in echoing_faults(WORKSPACE_KEY).items():
        net.fault = fault
        await pilot.press("ctrl+s")
        await settle(pilot, app, lambda: not form.submitting)  # type: ignore[attr-defined]
        sweep.shot(f"form-{name}")
    net.fault = None
    await pilot.press("escape", "escape", "escape")  # the projects
    sweep.shot("projects")
    # A 401 on a project asks for its key: typed, hidden, used, never shown.
    app.open_traces(project, "sweep")
    await settle(pilot, app, lambda: showing(app, TracesScreen))
    net.fault = echoing(401, WORKSPACE_KEY)
    await pilot.press("a")
    await wait_for(pilot, lambda: showing(app, KeyPrompt))
    sweep.shot("key-prompt")
    net.fault = None
    await type_into(pilot, "KeyPrompt #key", *TYPED_KEY)
    sweep.shot("key-typed")
    await pilot.press("enter")
    await wait_for(pilot, lambda: showing(app, AlertsScreen) and not app.problem_text())
    sweep.shot("alerts-with-the-typed-key")
    await refresh_under_every_fault(app, pilot, net, sweep, TYPED_KEY)
    for keys, where, shown in (
        ("ctrl+o", "api-log", "ApiLogScreen"),
        ("escape", "back", "AlertsScreen"),
        ("?", "help", "HelpScreen"),
    ):
        await pilot.press(keys)
        await wait_for(pilot, lambda name=shown: screen_named(app, name), what=shown)
        sweep.shot(where)
    await pilot.press("escape", "ctrl+p")
    await wait_for(pilot, lambda: screen_named(app, "CommandPalette"), what="the palette")
    sweep.shot("palette")
    await type_into(pilot, "CommandInput", *"sweep")
    await settled(pilot)  # the palette's search is a worker: its results are listed
    sweep.shot("palette-search")
    await pilot.press("escape")


async def refresh_under_every_fault(
    app: TraceTuiApp, pilot: Any, net: FaultyTransport, sweep: Sweep, key: str
) -> None:
    """Refresh the alerts screen under every echoing fault; a key prompt is dismissed."""
    for name, fault in echoing_faults(key).items():
        net.fault = fault
        await pilot.press("r")
        await settle(pilot, app, lambda: isinstance(app.screen, (AlertsScreen, KeyPrompt)))
        sweep.shot(f"alerts-{name}")
        if isinstance(app.screen, KeyPrompt):
            await pilot.press("escape")
        app.clear_notifications()
    net.fault = None
    await pilot.press("r")
    await settle(pilot, app, lambda: showing(app, AlertsScreen))


def screen_named(app: TraceTuiApp, name: str) -> bool:
    """Whether the screen in view is of the class `name` and mounted."""
    return type(app.screen).__name__ == name and app.screen.is_mounted


async def settle(pilot: Any, app: TraceTuiApp, condition: Callable[[], bool]) -> None:
    """`condition` holds and every request is answered, its outcome drawn."""
    await wait_for(pilot, condition)
    await settled(pilot)
