"""At 80 columns the alerts' footer offers the keys on-call reaches for first (open, pause or
resume, mute, edit, test the webhook) and every key stays on the line; wider, delete and a new
secret follow; a list's enter shows as the screen's own key (⏎ Open, ⏎ Traces). Against the
local service, which offers every alert action."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.app import running_app, showing, wait_for
from tests.support.service import RunningService
from tui.ui.app import StartAt
from tui.ui.screens.alert_detail import AlertDetailScreen
from tui.ui.screens.alerts import AlertsScreen
from tui.ui.screens.projects import ProjectsScreen


def footer(app: Any) -> tuple[str, int]:
    keys = list(app.screen.query("FooterKey"))
    text = " ".join(f"{key.key_display} {key.description}" for key in keys)
    return text, max((key.region.right for key in keys), default=0)


@pytest.mark.parametrize("width", [80, 160])
async def test_the_alerts_footer_puts_the_most_used_keys_first(
    service: RunningService, width: int
) -> None:
    async with running_app(service, StartAt(project_id="proj_support"), size=(width, 30)) as (
        app,
        pilot,
    ):
        await pilot.press("a")
        await wait_for(pilot, lambda: showing(app, AlertsScreen) and bool(app.screen.alerts))
        await wait_for(pilot, lambda: "e Edit" in footer(app)[0], what="e Edit in the footer")
        text, right = footer(app)
        for key in ("⏎ Open", "m Mute", "e Edit", "w Test", "? Keys", "q Quit"):
            assert key in text, text
        assert "p Pause" in text or "p Resume" in text
        assert right <= width, text
        wide = ("d Delete" in text, "s New secret" in text)
        assert wide == ((False, False) if width == 80 else (True, True)), text
        await pilot.press("enter")
        await wait_for(pilot, lambda: showing(app, AlertDetailScreen))
        await wait_for(pilot, lambda: "m Mute" in footer(app)[0], what="the detail's footer")
        text, right = footer(app)
        assert "⏎ Open" in text and "tab Switch" in text and right <= width, text


async def test_the_projects_footer_says_what_enter_does(service: RunningService) -> None:
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, ProjectsScreen) and bool(app.projects))
        await wait_for(pilot, lambda: "⏎ Traces" in footer(app)[0], what="⏎ Traces")
        assert footer(app)[1] <= 80
