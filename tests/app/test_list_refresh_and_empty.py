"""Issue 31's list screens: `r` keeps the cursor on its row (by id, on the same line of the
view), an empty list says what to do next with a key that works there, the trace list's footer
at 80x24 has Enter, /, r and L, and an alert created in the app shows its evaluated state
without a refresh."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.client.fake_management import DOCUMENT_PATHS, T0, FakeServer
from tests.support.alert_screens import project_with_traces
from tests.support.app import (
    loaded_traces,
    running_app,
    settled,
    showing,
    type_into,
    wait_for,
)
from tests.support.helpers import json_response, mock_client
from tests.support.service import RunningService, start_service
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens import alerts as alerts_screen
from tui.ui.screens.alerts import AlertsScreen
from tui.ui.screens.forms import AlertForm
from tui.ui.screens.project_settings import ProjectSettingsScreen
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.sessions import SessionsScreen
from tui.ui.screens.traces import TracesScreen
from tui.ui.screens.workspace_keys import WorkspaceKeysScreen
from tui.ui.widgets.table import Table
from tui.ui.widgets.trace_table import TraceTable

# -- a server whose lists the test changes between two loads ---------------------------------


@dataclass
class ListServer(FakeServer):
    """FakeServer (issue 28's contract) plus workspace keys and sessions."""

    workspace_keys: dict[str, dict[str, Any]] = field(default_factory=dict)
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path.removeprefix("/v1")
        if path == "/openapi.json":
            self.requests.append(request)
            paths = {
                **DOCUMENT_PATHS,
                "/v1/keys/{key_id}": {"delete": {}},
                "/v1/projects/{project_id}/sessions": {"get": {}},
            }
            return json_response({"openapi": "3.1.0", "paths": paths})
        if path == "/keys" and request.method == "GET":
            self.requests.append(request)
            return json_response({"data": list(self.workspace_keys.values())})
        if path.endswith("/sessions"):
            self.requests.append(request)
            return json_response({"data": list(self.sessions.values()), "next_cursor": None})
        return super().__call__(request)


def project(n: int) -> dict[str, Any]:
    return {"id": f"proj_{n:02}", "name": f"project {n:02}", "retention_days": 30}


def alert(n: int) -> dict[str, Any]:
    return {
        "id": f"al_{n:02}",
        "project_id": "proj_a",
        "name": f"alert {n:02}",
        "metric": "latency_ms_5m",
        "condition": "gt",
        "threshold": 2500,
        "webhook_url": "https://hooks.example.com/a",
        "state": "ok",
    }


def key(n: int, project_id: str | None = "proj_a") -> dict[str, Any]:
    return {
        "id": f"key_{n:02}",
        "label": f"key {n:02}",
        "prefix": "tt_pk_ab12",
        "project_id": project_id,
        "created_at": T0,
    }


def session(n: int) -> dict[str, Any]:
    return {"id": f"sess_{n:02}", "last_seen": T0, "trace_count": 1}


@dataclass(frozen=True)
class ListCase:
    """One list screen: how to reach it from the projects screen, the server's dict that
    holds its rows, and a row numbered n."""

    keys: tuple[str, ...]
    screen: type[Any]
    rows: Callable[[ListServer], dict[str, dict[str, Any]]]
    row: Callable[[int], dict[str, Any]]


CASES = {
    "projects": ListCase((), ProjectsScreen, lambda s: s.projects, project),
    "alerts": ListCase(("a",), AlertsScreen, lambda s: s.alerts, alert),
    "settings keys": ListCase(("s",), ProjectSettingsScreen, lambda s: s.keys, key),
    "workspace keys": ListCase(
        ("w",), WorkspaceKeysScreen, lambda s: s.workspace_keys, lambda n: key(n, None)
    ),
    "sessions": ListCase(("S",), SessionsScreen, lambda s: s.sessions, session),
}


def fill(server: ListServer, case: ListCase, numbers: range) -> None:
    """The case's rows are exactly `numbers`, in that order (proj_a first among projects, the
    one every other screen is reached from)."""
    rows = case.rows(server)
    keep = {"proj_a": rows["proj_a"]} if case.screen is ProjectsScreen else {}
    rows.clear()
    rows.update(keep)
    for n in numbers:
        row = case.row(n)
        rows[row["id"]] = row


@asynccontextmanager
async def list_screen(server: ListServer, case: ListCase) -> AsyncIterator[tuple[Any, Any]]:
    """The app on `server`, showing the case's screen with its rows loaded."""
    async with mock_client(server) as client:
        app = TraceTuiApp(client, StartAt())
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: showing(app, ProjectsScreen))
            await settled(pilot)
            if case.keys == ("w",):  # offered once the server's document is read
                await wait_for(pilot, lambda: bool(app.screen.check_action("workspace_keys", ())))
            await pilot.press(*case.keys)
            await wait_for(pilot, lambda: showing(app, case.screen))
            await settled(pilot)
            yield app, pilot


def table_of(app: TraceTuiApp) -> Table:
    return app.screen.query_one(Table)


def cursor_key(table: Table) -> object:
    return table._rows[table.cursor_row][1]


@pytest.mark.parametrize("name", list(CASES))
async def test_refresh_keeps_the_cursor_on_its_row_and_line(name: str) -> None:
    case = CASES[name]
    server = ListServer()
    fill(server, case, range(1, 41))
    async with list_screen(server, case) as (app, pilot):
        table = table_of(app)
        count = len(table._rows)
        # Down the list, the view scrolled, the cursor on its fourth line (the view can still
        # scroll one more row down, where a row above it comes).
        await pilot.press("G", *["up"] * 25, *["down"] * 3)
        await wait_for(pilot, lambda: table.cursor_row == count - 1 - 25 + 3)
        before = (cursor_key(table), table.cursor_row, table.cursor_row - table.scroll_y)
        assert before[1] > before[2] > 0  # scrolled, and not on the top line
        fill(server, case, range(0, 41))  # one more, above the cursor's row
        await pilot.press("r")
        await wait_for(pilot, lambda: len(table._rows) == count + 1, what="the new row")
        await settled(pilot)
        assert cursor_key(table) == before[0]
        assert table.cursor_row == before[1] + 1
        assert table.cursor_row - table.scroll_y == before[2]  # the view did not jump

        fill(server, case, range(0, 11))  # its row is gone: the nearest one
        await pilot.press("r")
        await wait_for(pilot, lambda: len(table._rows) < count, what="fewer rows")
        await settled(pilot)
        assert table.cursor_row == len(table._rows) - 1


async def test_refresh_keeps_the_trace_list_on_its_trace(service: RunningService) -> None:
    async with running_app(service, StartAt("proj_support")) as (app, pilot):
        screen = await loaded_traces(app, pilot)
        await settled(pilot)
        table = screen.query_one(TraceTable)
        assert table.row_count() > 25
        await pilot.press(*["down"] * 25)
        await wait_for(pilot, lambda: table.cursor == 25)
        trace_id, line = table.rows[25].id, 25 - int(table.scroll_y)
        assert table.scroll_y > 0
        await pilot.press("r")
        await wait_for(pilot, lambda: not screen.fetching and table.rows[0] is screen.traces[0])
        await settled(pilot)
        assert table.selected is not None and table.selected.id == trace_id
        assert table.cursor - int(table.scroll_y) == line


# -- empty lists say what to do next ---------------------------------------------------------


def shown_text(widget: Any) -> str:
    """What a list widget draws, line by line, as plain text."""
    return "\n".join(widget.render_line(y).text for y in range(widget.size.height))


def key_works(app: TraceTuiApp, key: str) -> bool:
    active = app.screen.active_bindings.get(key)
    return active is not None and active.enabled


@pytest.mark.parametrize(
    ("name", "says", "key"),
    [
        ("projects", "press n to create one", "n"),
        ("alerts", "press n to create one", "n"),
        ("settings keys", "press n to make one", "n"),
        ("workspace keys", "press n to make one", "n"),
        ("sessions", "session.id attribute", None),
    ],
)
async def test_an_empty_list_says_what_to_do_next(name: str, says: str, key: str | None) -> None:
    case = CASES[name]
    server = ListServer()
    fill(server, case, range(0))
    if name == "projects":
        server.projects.clear()
    async with list_screen(server, case) as (app, pilot):
        table = table_of(app)
        await wait_for(pilot, lambda: says in shown_text(table), what=f"{says!r} shown")
        assert not table._rows
        if key is not None:
            assert key_works(app, key)


async def test_an_empty_trace_list_says_how_to_send_traces_or_widen_the_range() -> None:
    server = ListServer()
    async with mock_client(server) as client:
        app = TraceTuiApp(client, StartAt("proj_a"))
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: showing(app, TracesScreen))
            table = app.screen.query_one(TraceTable)
            await wait_for(pilot, lambda: "/v1/traces" in shown_text(table))
            text = " ".join(shown_text(table).split())
            assert "Press t for a wider range" in text and key_works(app, "t")
            assert f"{client.base_url.removesuffix('/v1')}/v1/traces" in text


async def test_a_trace_list_emptied_by_its_query_names_the_key_that_clears_it(
    service: RunningService,
) -> None:
    async with running_app(service, StartAt("proj_support")) as (app, pilot):
        screen = await loaded_traces(app, pilot)
        await pilot.press("slash")
        await type_into(pilot, "#filter", *"zqxjnothingmatches", "enter")
        table = screen.query_one(TraceTable)
        await wait_for(pilot, lambda: "x clears it" in shown_text(table), what="the hint")
        assert "Nothing matches the query" in shown_text(table) and key_works(app, "x")
        await pilot.press("x")
        await wait_for(pilot, lambda: bool(table.rows), what="the traces again")
        assert "x clears it" not in shown_text(table)


# -- the trace list's footer -----------------------------------------------------------------


async def test_the_trace_list_footer_at_80_columns_has_open_query_refresh_and_live(
    service: RunningService,
) -> None:
    async with running_app(service, StartAt("proj_support"), size=(80, 24)) as (app, pilot):
        screen = await loaded_traces(app, pilot)

        def footer() -> list[Any]:
            return [key for key in screen.query("FooterKey") if key.region.width]

        def text() -> str:
            return " ".join(f"{key.key_display} {key.description}" for key in footer())

        await wait_for(pilot, lambda: "Quit" in text(), what="the footer laid out")
        await settled(pilot)
        for shown in ("esc Back", "⏎ Open", "/ Filter", "r Refresh", "L Live", "? Keys"):
            assert shown in text(), text()
        assert all(key.region.right <= 80 for key in footer())


# -- an alert created in the app ---------------------------------------------------------------


async def test_a_new_alert_shows_its_evaluated_state_without_a_refresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A service of its own: it evaluates alerts only when told to (alerts.evaluate()).
    service = start_service(tmp_path / "new-alert.sqlite3", scale=0.01)
    # Follow-ups close together, so the test does not wait out minutes; as many as it takes.
    monkeypatch.setattr(alerts_screen, "FOLLOW_UPS_S", (0.1,) * 300, raising=False)
    try:
        project_id = project_with_traces(service, [(1, 500), (2, 800)])
        async with running_app(service, StartAt(project_id=project_id), size=(100, 24)) as (
            app,
            pilot,
        ):
            await wait_for(pilot, lambda: showing(app, TracesScreen))
            await pilot.press("a")
            await wait_for(pilot, lambda: showing(app, AlertsScreen))
            assert isinstance(app.screen, AlertsScreen)
            screen = app.screen
            await settled(pilot)
            await pilot.press("n")
            await wait_for(pilot, lambda: showing(app, AlertForm))
            await type_into(
                pilot,
                "AlertForm #field-name",
                *"Slow",
                *["tab"] * 5,  # latency_ms_5m and gt: the choices a new alert starts with
                *"100000",
                "tab",
                *"https://hooks.example.com/x",
            )
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: type(app.screen).__name__ == "SecretDialog")
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is screen and len(screen.alerts) == 1)
            await settled(pilot)  # the refresh after the create is done: nothing evaluated yet

            def state() -> str:
                return str(screen.query_one(Table)._rows[0][0][0])

            assert "no data" not in state()  # not evaluated is not "no data"
            service.service.alerts.evaluate()
            await wait_for(pilot, lambda: state().startswith("✓ ok"), what="the state")
            assert "*" not in state()  # the server's own, not computed here
    finally:
        service.service.stop()
