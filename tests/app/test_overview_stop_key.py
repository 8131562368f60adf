"""The overview offers `s Stop` only while it is paging the range in: once loading ends, the
key goes from the footer (it stayed, stopping nothing)."""

from __future__ import annotations

from typing import Any

from tests.support.app import running_app, showing, wait_for
from tests.support.service import RunningService
from tui.ui.app import StartAt
from tui.ui.screens.overview import OverviewScreen


def footer(app: Any) -> str:
    return " ".join(f"{k.key_display} {k.description}" for k in app.screen.query("FooterKey"))


async def test_stop_goes_once_loading_ends(service: RunningService) -> None:
    async with running_app(service, StartAt(project_id="proj_support")) as (app, pilot):
        await wait_for(pilot, lambda: app.screen.is_mounted)
        app.open_overview("proj_support", "support-chatbot")
        await wait_for(pilot, lambda: showing(app, OverviewScreen))
        screen = app.screen
        assert isinstance(screen, OverviewScreen)
        assert screen.check_action("stop", ()) is screen.paging
        await wait_for(pilot, lambda: not screen.paging and screen.pages > 0, what="loaded")
        await wait_for(pilot, lambda: "r Refresh" in footer(app), what="the footer")
        await wait_for(pilot, lambda: "s Stop" not in footer(app), what="s Stop gone")
        assert screen.check_action("stop", ()) is False
