"""Below 80x24 the app says the terminal is too small, from the first shrink, and goes back
to the screen it covered when the window grows again."""

from __future__ import annotations

from tests.support.app import running_app, showing, wait_for
from tests.support.service import RunningService
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.too_small import TooSmallScreen


async def test_the_too_small_notice_shows_on_the_first_shrink(service: RunningService) -> None:
    async with running_app(service, size=(80, 24)) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        await pilot.resize_terminal(70, 20)
        await wait_for(pilot, lambda: showing(app, TooSmallScreen))


async def test_below_80x24_says_the_terminal_is_too_small(service: RunningService) -> None:
    async with running_app(service, size=(70, 20)) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, TooSmallScreen))
        await pilot.resize_terminal(100, 30)
        await wait_for(pilot, lambda: not isinstance(app.screen, TooSmallScreen))


async def test_started_too_small_growing_goes_back_to_the_projects(
    service: RunningService,
) -> None:
    async with running_app(service, size=(70, 20)) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, TooSmallScreen))
        await pilot.resize_terminal(100, 30)
        await wait_for(pilot, lambda: not isinstance(app.screen, TooSmallScreen))
        assert isinstance(app.screen, ProjectsScreen), app.screen_stack
