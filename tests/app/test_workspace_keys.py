"""The workspace keys screen against the real local service (one per module), with Pilot at
80x24: reached from the projects screen (w) and the palette; a key made there shown once and
working at once; one revoked after a confirmation, failing at once; the last one never revoked;
and no such key or entry on a server that speaks only the spec."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import SecretStr

from tests.app.test_palette_and_profiles import offered
from tests.support.alert_screens import spec_server
from tests.support.app import rendered_text, running_app, showing, type_into, wait_for
from tests.support.service import RunningService, local_service
from tui.api import ApiClient
from tui.demo.data import DemoKeys
from tui.server.store.sqlite.store import Store
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.palette import workspace_keys_offered
from tui.ui.screens.dialogs import ConfirmDialog, SecretDialog
from tui.ui.screens.edit_forms import KeyLabelForm
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.workspace_keys import WorkspaceKeysScreen
from tui.ui.widgets.table import Table

FIRST_KEY = "tt_ws_first_of_the_workspace"


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningService]:
    """A service of its own: the test counts the workspace's keys."""
    store = Store(tmp_path_factory.mktemp("workspace-keys") / "service.sqlite3")
    with store.transaction() as db:
        store.insert_project(db, "support", None, 30, project_id="proj_support")
    store.add_key(FIRST_KEY, None, "first")
    running = local_service(store).start()
    yield RunningService(running, store, DemoKeys(FIRST_KEY, {}))
    running.stop()


def labels(app: TraceTuiApp) -> list[str]:
    tables = app.screen.query(Table)
    return [str(cells[0]) for cells, _ in tables.first()._rows] if tables else []


def notes(app: TraceTuiApp) -> list[str]:
    return [str(note.message) for note in app._notifications]


def status_of(own: RunningService, key: str) -> int:
    with own.client(key) as api:
        return api.get("keys").status_code


async def projects_shown(app: TraceTuiApp, pilot: Any) -> None:
    await wait_for(pilot, lambda: showing(app, ProjectsScreen) and bool(app.screen.projects))
    await wait_for(pilot, lambda: app.screen.check_action("workspace_keys", ()) is True)


async def test_a_workspace_key_made_works_at_once_and_fails_once_revoked(
    own: RunningService,
) -> None:
    async with running_app(own, StartAt()) as (app, pilot):
        await projects_shown(app, pilot)
        await pilot.press("w")
        await wait_for(pilot, lambda: showing(app, WorkspaceKeysScreen))
        await wait_for(pilot, lambda: labels(app) == ["first"], what="the one key")
        await wait_for(pilot, lambda: app.screen.check_action("revoke_key", ()) is True)

        await pilot.press("d")  # the last one: refused here, as the service would
        await wait_for(pilot, lambda: any("cannot be revoked" in n for n in notes(app)))
        assert showing(app, WorkspaceKeysScreen) and status_of(own, FIRST_KEY) == 200
        assert not [e for e in app.client.log if e.method == "DELETE"]

        await pilot.press("n")
        await wait_for(pilot, lambda: showing(app, KeyLabelForm))
        await type_into(pilot, "#field-label", *"ops-laptop", "enter")
        await wait_for(pilot, lambda: showing(app, SecretDialog))
        key = app.screen.secret.get_secret_value()
        assert key in rendered_text(app.screen.query_one("#secret"))
        assert status_of(own, key) == 200  # at once
        copied: list[str] = []
        app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
        await pilot.press("c")
        assert copied == [key]
        await pilot.press("enter")
        await wait_for(pilot, lambda: labels(app) == ["first", "ops-laptop"])
        assert all(key not in entry.url + (entry.error or "") for entry in app.client.log)

        app.screen.query_one(Table).move_cursor(row=1)
        await pilot.press("d")
        await wait_for(pilot, lambda: showing(app, ConfirmDialog))
        await pilot.press("y")
        await wait_for(pilot, lambda: showing(app, WorkspaceKeysScreen) and len(labels(app)) == 1)
        assert labels(app) == ["first"] and status_of(own, key) == 401


async def test_the_palette_offers_the_workspace_keys(own: RunningService) -> None:
    async with running_app(own, StartAt()) as (app, pilot):
        await projects_shown(app, pilot)
        assert workspace_keys_offered(app)
        await pilot.press("ctrl+p")
        await type_into(pilot, "CommandInput", *"Workspace keys")
        await wait_for(pilot, lambda: any("Workspace keys" in p for p in offered(app)))
        await pilot.press("enter")
        await wait_for(pilot, lambda: showing(app, WorkspaceKeysScreen))


async def test_a_spec_only_server_has_no_workspace_keys() -> None:
    transport = spec_server([], [])
    async with ApiClient("http://spec.test/v1", SecretStr("k"), transport=transport) as client:
        app = TraceTuiApp(client, StartAt())
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(
                pilot, lambda: showing(app, ProjectsScreen) and bool(app.screen.projects)
            )
            await wait_for(pilot, lambda: client.offers_known)
            assert app.screen.check_action("workspace_keys", ()) is False
            assert not workspace_keys_offered(app)
            await pilot.press("w")
            assert showing(app, ProjectsScreen)


async def test_a_keys_last_use_keeps_counting(
    own: RunningService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The "last used" age is redrawn from the keys held, as the other screens' ages are."""
    from datetime import timedelta

    monkeypatch.setattr("tui.ui.screens.base.AGE_TICK_S", 0.05, raising=False)
    assert status_of(own, FIRST_KEY) == 200  # a use: the key has a last use now
    async with running_app(own, StartAt()) as (app, pilot):
        await projects_shown(app, pilot)
        await pilot.press("w")
        await wait_for(pilot, lambda: showing(app, WorkspaceKeysScreen))
        screen = app.screen
        await wait_for(pilot, lambda: any(k.last_used_at for k in screen.keys), what="a use")
        used = max(k.last_used_at for k in screen.keys if k.last_used_at)
        app.now = lambda: used + timedelta(hours=5, minutes=2)

        def ages() -> str:
            return " ".join(
                str(cell) for cells, _ in screen.query_one(Table)._rows for cell in cells
            )

        await wait_for(pilot, lambda: "5h ago" in ages(), what="5h ago")
