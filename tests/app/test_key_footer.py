"""The footer of keys (tui/ui/widgets/key_footer.py): rebuilt once as a screen opens, not once per
bindings update, and still following the keys a screen shows as they come and go."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.app import loaded_traces, running_app, settled, showing, wait_for
from tests.support.chat_app import chat_trace, document, select
from tests.support.service import RunningService
from tui.ui.app import StartAt
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.widgets.key_footer import KeyFooter


def footer_text(screen: Any) -> str:
    return " ".join(f"{key.key_display} {key.description}" for key in screen.query("FooterKey"))


async def test_opening_the_trace_list_builds_its_footer_once(
    service: RunningService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Textual's Footer rebuilt itself four times here (15-25 ms each on a small machine).
    builds: list[KeyFooter] = []
    recompose = KeyFooter.recompose

    async def counted(self: KeyFooter) -> None:
        builds.append(self)
        await recompose(self)

    monkeypatch.setattr(KeyFooter, "recompose", counted)
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, ProjectsScreen) and bool(app.screen.projects))
        await pilot.press("enter")
        screen = await loaded_traces(app, pilot)
        await wait_for(pilot, lambda: "Filter" in footer_text(screen))
        await settled(pilot)  # any rebuild still to come has come
        footer = screen.query_one(KeyFooter)
        assert builds.count(footer) == 1
        assert "/ Filter" in footer_text(screen) and "? Keys" in footer_text(screen)


async def test_the_footer_follows_keys_that_come_and_go(service: RunningService) -> None:
    # n (next match) shows once there is a search to repeat (DocumentView.check_action).
    async with chat_trace(service, long_lines=60) as (app, pilot, screen):
        await select(pilot, app, "chat gpt-4o-mini")
        await pilot.press("tab")
        await wait_for(pilot, lambda: "y Copy" in footer_text(screen))
        assert "n Next match" not in footer_text(screen)
        await pilot.press("slash", *"line 42", "enter", "escape")
        assert document(app).search_text
        await wait_for(pilot, lambda: "n Next match" in footer_text(screen))


async def test_the_trace_list_opened_at_start_has_its_keys(service: RunningService) -> None:
    async with running_app(service, StartAt(project_id="proj_rag")) as (app, pilot):
        screen = await loaded_traces(app, pilot)
        await wait_for(pilot, lambda: "Filter" in footer_text(screen))
        assert "a Alerts" in footer_text(screen)
