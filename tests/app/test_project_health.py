"""The projects screen's health at a glance, with Pilot against the real local service: each
project's firing alert, error rate and traffic read in ONE request from a service that offers
it; `u` lists the unhealthy first and `f` opens the firing alert. And the same read from a
server that lacks it (its OpenAPI document without the path): per project, bounded, said in
the header, with the same figures."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from tests.support.app import rendered_text, settled, showing, wait_for
from tui.api import ApiClient
from tui.server.run import LocalService
from tui.server.store.alert_rows import AlertState, new_alert
from tui.server.store.rows import TraceRow, now_ms
from tui.server.store.sqlite.store import Store
from tui.ui import project_health
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens import projects as projects_screen
from tui.ui.screens.alert_detail import AlertDetailScreen
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.traces import TracesScreen
from tui.ui.widgets.table import Table

MINUTE = 60_000
KEY = "tt_ws_health_test_key_0123456789"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    """Three projects over the last hour: calm (no errors, an alert ok), failing (1 in 4
    traces failed, an alert firing) and quiet (no traces, no alerts)."""
    store = Store(Path(tmp_path_factory.mktemp("health")) / "health.sqlite3")
    now = now_ms()
    with store.transaction() as db:
        for name in ("calm", "failing", "quiet"):
            store.insert_project(db, name, None, 30, project_id=f"p_{name}")
    store.add_key(KEY, None, "ws")
    rows = []
    for n in range(40):
        project = "p_calm" if n % 2 else "p_failing"
        failed = project == "p_failing" and n % 8 == 0
        start = now - (n + 1) * MINUTE
        rows.append(
            TraceRow(
                f"{n:032x}",
                project,
                "run",
                start,
                20,
                1,
                1,
                1,
                0.0,
                "error" if failed else "ok",
                int(failed),
                "{}",
            )
        )
    hook = "http://127.0.0.1:9/"
    alerts = [
        new_alert("p_calm", "Slow replies", "latency_ms_5m", "gt", 5000, hook, "al_calm"),
        new_alert("p_failing", "Error spike", "error_rate_pct_1h", "gt", 5, hook, "al_spike"),
    ]
    with store.transaction() as db:
        store.insert_traces(db, rows, [], texts=[])
        for alert in alerts:
            store.insert_alert(db, secret="whsec_x", **alert._asdict())
    states = [
        AlertState("al_calm", "ok", 20.0, now, None),
        AlertState("al_spike", "firing", 25.0, now, now - 7 * MINUTE),
    ]
    store.record_round(states, {s.alert_id: "no_data" for s in states}, [], [])
    with LocalService(store, tasks=[]) as running:
        yield running
    store.close()


@pytest.fixture(autouse=True)
def health_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The screen's health is read again while shown: not within these tests (they count the
    requests), but in the one that asks for it."""
    monkeypatch.setattr(projects_screen, "HEALTH_EVERY_S", 3600.0)
    monkeypatch.setattr(projects_screen, "HEALTH_PER_PROJECT_EVERY_S", 3600.0)


class Recorder(httpx.AsyncBaseTransport):
    """The real service, its requests noted; `lacking`: its OpenAPI document without the
    health route, as a server that does not offer it."""

    def __init__(self, lacking: bool = False) -> None:
        self.real = httpx.AsyncHTTPTransport()
        self.lacking = lacking
        self.paths: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path.removeprefix("/v1")
        self.paths.append(path)
        if self.lacking and path == "/projects/health":
            return httpx.Response(404, json={"error": {"message": "no such route"}})
        response = await self.real.handle_async_request(request)
        if self.lacking and path == "/openapi.json":
            document = json.loads(await response.aread())
            document["paths"].pop("/v1/projects/health")
            return httpx.Response(200, json=document)
        return response

    async def aclose(self) -> None:
        await self.real.aclose()


def rows_of(screen: ProjectsScreen) -> list[list[str]]:
    table = screen.query_one(Table)
    return [
        [str(getattr(cell, "plain", cell)) for cell in table.get_row_at(i)]
        for i in range(table.row_count)
    ]


async def health_shown(app: TraceTuiApp, pilot: Any, size: tuple[int, int]) -> ProjectsScreen:
    await wait_for(pilot, lambda: showing(app, ProjectsScreen))
    screen = app.screen
    assert isinstance(screen, ProjectsScreen)
    await wait_for(
        pilot, lambda: screen.health is not None and screen.query_one(Table).row_count == 3
    )
    return screen


def client_for(service: LocalService, transport: httpx.AsyncBaseTransport) -> ApiClient:
    return ApiClient(service.base_url, SecretStr(KEY), transport=transport)


async def test_the_service_tells_every_projects_health_in_one_request(
    service: LocalService,
) -> None:
    recorder = Recorder()
    async with client_for(service, recorder) as client:
        app = TraceTuiApp(client)
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await health_shown(app, pilot, (80, 24))
            rows = {row[0]: row for row in rows_of(screen)}
            assert rows["failing"][1] == "▲ Error spike 7m"
            assert rows["failing"][2] == "25%"  # 5 of its 20 traces failed
            assert rows["failing"][3].endswith(" 20")
            assert rows["calm"][1:3] == ["✓ 1 ok", "0%"]
            assert rows["quiet"][1:4] == ["no alerts", "no traces", "_" * 12 + " 0"]
            header = rendered_text(screen.query_one("#header"))
            assert (
                "▲ 1 project firing (u lists first, f opens)" in header
                and "per project" not in header
            )
            assert recorder.paths.count("/projects/health") == 1
            assert "/traces" not in recorder.paths  # nothing read per project

            await pilot.press("u")
            await wait_for(pilot, lambda: rows_of(screen)[0][0] == "failing")
            assert [row[0] for row in rows_of(screen)] == ["failing", "calm", "quiet"]
            assert screen.query_one(Table).cursor_row == 0
            assert "unhealthy first" in rendered_text(screen.query_one("#header"))
            await pilot.press("f")
            await wait_for(pilot, lambda: showing(app, AlertDetailScreen))
            detail = app.screen
            assert isinstance(detail, AlertDetailScreen) and detail.alert.id == "al_spike"


async def test_f_on_a_project_without_a_firing_alert_says_so(service: LocalService) -> None:
    async with client_for(service, Recorder()) as client:
        app = TraceTuiApp(client)
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await health_shown(app, pilot, (80, 24))
            calm = [row[0] for row in rows_of(screen)].index("calm")
            screen.query_one(Table).move_cursor(row=calm)
            await pilot.press("f")
            await wait_for(
                pilot,
                lambda: any(
                    "No alert of calm is firing" in str(n.message) for n in app._notifications
                ),
            )
            assert showing(app, ProjectsScreen)


async def test_a_server_without_it_has_each_project_read_and_says_so(
    service: LocalService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same figures from each project's traces and alerts; two requests a project at most,
    the first MAX_PROJECTS projects only, and the header says how it was read."""
    monkeypatch.setattr(project_health, "MAX_PROJECTS", 2)
    recorder = Recorder(lacking=True)
    async with client_for(service, recorder) as client:
        app = TraceTuiApp(client)
        async with app.run_test(size=(160, 48)) as pilot:
            screen = await health_shown(app, pilot, (160, 48))
            rows = {row[0]: row for row in rows_of(screen)}
            assert rows["failing"][1:3] == ["▲ Error spike 7m", "25%"]
            assert rows["calm"][1:3] == ["✓ 1 ok", "0%"]
            assert rows["quiet"][1:4] == ["–", "–", "–"]  # the third: not read
            header = rendered_text(screen.query_one("#header"))
            assert "health read per project, ≤500 traces each" in header
            assert "first 2 projects only" in header
            assert "/projects/health" not in recorder.paths
            assert recorder.paths.count("/traces") == 2
            assert sum(p.endswith("/alerts") for p in recorder.paths) == 2


async def test_started_at_a_project_the_health_is_read_when_the_projects_are_shown(
    service: LocalService,
) -> None:
    """The projects screen beneath a project's traces reads nothing of the projects' health
    until the user goes back to it; then it reads it once."""
    recorder = Recorder()
    async with client_for(service, recorder) as client:
        app = TraceTuiApp(client, StartAt(project_id="p_calm"))
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: showing(app, TracesScreen) and app.screen.traces)
            projects = app.screen_stack[-2]
            assert isinstance(projects, ProjectsScreen)
            await wait_for(pilot, lambda: bool(projects.listed))
            await settled(pilot)
            assert "/projects/health" not in recorder.paths and projects.health is None
            await pilot.press("escape")
            screen = await health_shown(app, pilot, (80, 24))
            assert {row[0]: row for row in rows_of(screen)}["failing"][2] == "25%"
            await pilot.press("enter")
            await wait_for(pilot, lambda: showing(app, TracesScreen))
            await pilot.press("escape")
            await wait_for(pilot, lambda: showing(app, ProjectsScreen))
            await settled(pilot)
            assert recorder.paths.count("/projects/health") == 1


async def test_the_health_is_read_again_while_shown_and_when_come_back_to(
    service: LocalService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Left open, the screen shows a project that starts failing without a key pressed; beneath
    another screen it reads nothing, and reads at once when the user comes back if it is due."""
    monkeypatch.setattr(projects_screen, "HEALTH_EVERY_S", 0.05)
    recorder = Recorder()
    failed = TraceRow(
        "f" * 32, "p_calm", "run", now_ms() - MINUTE, 20, 1, 1, 1, 0.0, "error", 1, "{}"
    )
    async with client_for(service, recorder) as client:
        app = TraceTuiApp(client)
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await health_shown(app, pilot, (80, 24))
            assert {row[0]: row for row in rows_of(screen)}["calm"][2] == "0%"
            with service.store.transaction() as db:
                service.store.insert_traces(db, [failed], [], texts=[])
            try:
                await wait_for(
                    pilot, lambda: {row[0]: row for row in rows_of(screen)}["calm"][2] == "4.8%"
                )
                screen.query_one(Table).move_cursor(row=0)
                await pilot.press("enter")
                await wait_for(pilot, lambda: showing(app, TracesScreen))
                await wait_for(pilot, lambda: screen.health_due, what="the health due")
                asked = recorder.paths.count("/projects/health")
                await settled(pilot)
                assert recorder.paths.count("/projects/health") == asked  # not on top: not read
                await pilot.press("escape")
                await wait_for(pilot, lambda: recorder.paths.count("/projects/health") > asked)
            finally:
                with service.store.transaction() as db:
                    db.execute("DELETE FROM traces WHERE id = ?", (failed.id,))
