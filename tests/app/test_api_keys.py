"""Keys the server refuses: a 403 asks for the project's key (masked, saved 0600 when asked,
the save box readable without colour, not saving said), and a wrong workspace key says where
the key is set."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pydantic import SecretStr
from textual.widgets import Input

from tests.support.app import (
    click_in_sight,
    found,
    loaded_traces,
    settled,
    type_into,
    wait_for,
)
from tests.support.service import RunningService
from tui.api import ApiClient
from tui.config import load_settings
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.prompts import KeyPrompt, Tick


async def test_a_403_asks_for_the_projects_key_and_saves_it_0600(
    service: RunningService, tmp_path: Path
) -> None:
    config = tmp_path / "tracetui" / "config.toml"
    wrong = SecretStr(service.keys.projects["proj_rag"])
    async with ApiClient(service.base_url, wrong) as client:
        app = TraceTuiApp(client, StartAt(project_id="proj_support"), config_path=config)
        async with app.run_test(size=(80, 24)) as pilot:
            # Keys go to the field only once the prompt has given it the focus.
            await type_into(pilot, "KeyPrompt #key", *service.keys.projects["proj_support"])
            prompt = app.screen
            assert isinstance(prompt, KeyPrompt)
            field = prompt.query_one("#key", Input)
            assert field.password  # masked as it is typed
            await wait_for(pilot, lambda: field.value == service.keys.projects["proj_support"])
            await click_in_sight(pilot, "#save")
            await wait_for(pilot, lambda: prompt.query_one(Tick).value, what="save ticked")
            await pilot.press("enter")
            await loaded_traces(app, pilot)
    assert stat.S_IMODE(os.stat(config).st_mode) == 0o600
    settings = load_settings(profile="default", env={}, path=config)
    assert (
        settings.project_keys["proj_support"].get_secret_value()
        == service.keys.projects["proj_support"]
    )


async def test_the_save_checkbox_says_its_state_without_colour_and_not_saving_is_said(
    service: RunningService, tmp_path: Path
) -> None:
    wrong = SecretStr(service.keys.projects["proj_rag"])
    async with ApiClient(service.base_url, wrong) as client:
        app = TraceTuiApp(
            client, StartAt(project_id="proj_support"), config_path=tmp_path / "c.toml"
        )
        async with app.run_test(size=(80, 24)) as pilot:
            # Pushed is not yet composed: wait for the checkbox itself, which comes later.
            await wait_for(pilot, lambda: found(app, "KeyPrompt Tick") is not None)
            tick = app.screen.query_one(Tick)
            unticked = str(tick.render())
            tick.value = True
            await wait_for(pilot, lambda: str(tick.render()) != unticked, what="the tick drawn")
            ticked = str(tick.render())
            tick.value = False
            await type_into(pilot, "KeyPrompt #key", *service.keys.projects["proj_support"])
            await pilot.press("enter")
            await loaded_traces(app, pilot)
            notes = [n.message for n in app._notifications]
    assert "✓" in ticked and "✓" not in unticked
    assert any("not saved" in note for note in notes)
    assert not (tmp_path / "c.toml").exists()


async def test_a_wrong_workspace_key_says_where_the_key_is_set(
    service: RunningService, tmp_path: Path
) -> None:
    async with ApiClient(service.base_url, SecretStr("tt_ws_wrong_key_123")) as client:
        app = TraceTuiApp(client, StartAt(trace_id="nope"), config_path=tmp_path / "c.toml")
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: bool(app._notifications))
            await settled(pilot)  # both requests answered: any second toast is up by now
            notes = [n.message for n in app._notifications]
    assert len(notes) == 1  # the projects and the trace failed alike: one toast
    assert "TRACETUI_API_KEY" in notes[0] and str(tmp_path / "c.toml") in notes[0]
