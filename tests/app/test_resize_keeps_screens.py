"""Resizing below 80x24 and back never loses a screen: the notice goes, and every screen the
user had open (a trace, a dialog, one pushed while the notice showed) is there again."""

from __future__ import annotations

from tests.support.app import open_first_trace, running_app, showing, wait_for
from tests.support.service import RunningService
from tui.ui.app import StartAt
from tui.ui.screens.api_log import ApiLogScreen
from tui.ui.screens.help import HelpScreen
from tui.ui.screens.too_small import TooSmallScreen
from tui.ui.screens.trace_detail import TraceDetailScreen
from tui.ui.screens.traces import TracesScreen


def stack_types(app: object) -> list[str]:
    return [type(screen).__name__ for screen in app.screen_stack]  # type: ignore[attr-defined]


async def test_shrinking_and_growing_on_a_trace_keeps_it(service: RunningService) -> None:
    async with running_app(service, StartAt("proj_support")) as (app, pilot):
        await open_first_trace(app, pilot)
        await wait_for(pilot, lambda: showing(app, TraceDetailScreen))
        before = stack_types(app)
        for _ in range(3):
            await pilot.resize_terminal(70, 20)
            await wait_for(pilot, lambda: showing(app, TooSmallScreen))
            await pilot.resize_terminal(80, 24)
            await wait_for(pilot, lambda: not isinstance(app.screen, TooSmallScreen))
            await pilot.pause()
        assert stack_types(app) == before


async def test_a_screen_opened_while_too_small_stays_after_growing(
    service: RunningService,
) -> None:
    async with running_app(service, StartAt("proj_support")) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, TracesScreen))
        await pilot.resize_terminal(70, 20)
        await wait_for(pilot, lambda: showing(app, TooSmallScreen))
        app.action_api_log()  # ctrl+o, or anything a worker opens meanwhile
        await pilot.pause()
        assert isinstance(app.screen, TooSmallScreen), stack_types(app)
        await pilot.resize_terminal(80, 24)
        await wait_for(pilot, lambda: showing(app, ApiLogScreen), what=str(stack_types(app)))
        await pilot.pause()
        assert stack_types(app)[-2:] == ["TracesScreen", "ApiLogScreen"], stack_types(app)


async def test_a_dialog_closing_while_too_small_leaves_the_notice_on_top(
    service: RunningService,
) -> None:
    async with running_app(service, StartAt("proj_support")) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, TracesScreen))
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: showing(app, HelpScreen))
        await pilot.resize_terminal(70, 20)
        await wait_for(pilot, lambda: showing(app, TooSmallScreen))
        app.pop_screen()  # a dialog dismissing itself (a save that finished) while too small
        await pilot.pause()
        assert isinstance(app.screen, TooSmallScreen), stack_types(app)
        await pilot.resize_terminal(80, 24)
        await wait_for(pilot, lambda: showing(app, TracesScreen), what=str(stack_types(app)))
        assert stack_types(app)[-1] == "TracesScreen", stack_types(app)
