"""The user's keymap: a binding id remapped takes the new key, an unknown id is reported once
at start, and a keymap of known ids says nothing."""

from __future__ import annotations

from pydantic import SecretStr

from tests.support.app import settled, showing, wait_for
from tests.support.service import RunningService
from tui.api import ApiClient
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.traces import TracesScreen


async def test_keys_can_be_remapped(service: RunningService) -> None:
    async with ApiClient(service.base_url, SecretStr(service.keys.workspace)) as client:
        app = TraceTuiApp(client, StartAt(project_id="proj_rag"), keymap={"traces.filter": "f"})
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: showing(app, TracesScreen))
            await pilot.press("f")
            assert app.screen.query_one("#filter").has_class("-open")


async def test_an_unknown_binding_id_in_the_keymap_is_reported_at_start(
    service: RunningService,
) -> None:
    keymap = {"traces.filter": "f", "traces.fliter": "x", "app.nope": "z"}
    async with ApiClient(service.base_url, SecretStr(service.keys.workspace)) as client:
        app = TraceTuiApp(client, keymap=keymap)
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: bool(app._notifications))
            notes = [n.message for n in app._notifications]
    assert len(notes) == 1
    assert "traces.fliter, app.nope" in notes[0] and "traces.filter," not in notes[0]


async def test_a_known_keymap_says_nothing(service: RunningService) -> None:
    async with ApiClient(service.base_url, SecretStr(service.keys.workspace)) as client:
        app = TraceTuiApp(client, keymap={"traces.filter": "f", "app.quit": "ctrl+q"})
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: showing(app, ProjectsScreen) and bool(app.projects))
            await settled(pilot)  # the keymap is checked once the first screen is up
            assert not app._notifications
