"""Below 80x24 the app says the terminal is too small, from the first shrink, and goes back
to the screen it covered when the window grows again."""

from __future__ import annotations

import io

from pydantic import SecretStr
from rich.console import Console

from tests.support.app import running_app, showing, wait_for
from tests.support.service import RunningService
from tui.api import ApiClient
from tui.ui.app import TraceTuiApp
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


def drawn_lines(app: TraceTuiApp) -> list[str]:
    """The window's rows as the terminal shows them: the screen in view over what shows
    through it (as Textual draws a screenshot), in plain text."""
    console = Console(width=app.size.width, height=app.size.height, file=io.StringIO(), record=True)
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return console.export_text().splitlines()


async def test_at_60x20_the_notice_alone_says_the_sizes_and_the_quit_key(
    service: RunningService,
) -> None:
    async with running_app(service, size=(80, 24)) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, ProjectsScreen) and bool(app.projects))
        await pilot.resize_terminal(60, 20)
        await wait_for(pilot, lambda: showing(app, TooSmallScreen))
        await pilot.pause()
        text = "\n".join(drawn_lines(app))
        assert "This window is 60x20; tracetui needs 80x24." in text, text
        assert " q  quits" in text, text
        # Nothing of the projects beneath shows at its edges or through it.
        assert "Projects" not in text and "support-chatbot" not in text, text
        await pilot.resize_terminal(50, 12)  # smaller still: it says so, and fits
        await wait_for(pilot, lambda: "50x12" in "\n".join(drawn_lines(app)))
        await pilot.resize_terminal(80, 24)
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        await pilot.pause()
        assert "support-chatbot" in "\n".join(drawn_lines(app))


async def test_q_quits_while_the_terminal_is_too_small(service: RunningService) -> None:
    async with running_app(service, size=(80, 24)) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        await pilot.resize_terminal(60, 20)
        await wait_for(pilot, lambda: showing(app, TooSmallScreen))
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running, what="the app quit on q")


async def test_a_remapped_quit_key_is_the_one_named_and_it_quits(service: RunningService) -> None:
    client = ApiClient(service.base_url, SecretStr(service.keys.workspace))
    async with client:
        app = TraceTuiApp(client, keymap={"app.quit": "x"})
        async with app.run_test(size=(60, 20)) as pilot:
            await wait_for(pilot, lambda: showing(app, TooSmallScreen))
            await pilot.pause()
            assert " x  quits" in "\n".join(drawn_lines(app))
            await pilot.press("q")  # no longer the quit key
            await pilot.pause()
            assert app.is_running
            await pilot.press("x")
            await wait_for(pilot, lambda: not app.is_running, what="the app quit on x")
