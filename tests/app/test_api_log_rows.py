"""The API log cuts each row to the width; Enter shows the row's error and path whole."""

from __future__ import annotations

from tests.support.app import rendered_text, running_app, showing, wait_for
from tests.support.service import RunningService
from tui.ui.app import StartAt
from tui.ui.screens.api_log import ApiLogScreen
from tui.ui.screens.prompts import ReadWhole


async def test_enter_reads_a_cut_row_whole(service: RunningService) -> None:
    long_id = "f" * 32 + "-" + "x" * 150  # a path far wider than 80 columns
    async with running_app(service, StartAt(trace_id=long_id)) as (app, pilot):
        await wait_for(pilot, lambda: any(long_id in e.url for e in app.client.log))
        app.action_api_log()
        await wait_for(pilot, lambda: showing(app, ApiLogScreen))
        screen = app.screen
        row = next(n for n, detail in enumerate(screen.details) if long_id in detail)
        screen.query_one("Table").move_cursor(row=row)
        await pilot.press("enter")
        await wait_for(pilot, lambda: showing(app, ReadWhole))
        whole = "".join(rendered_text(app.screen.query_one("#whole")).split())
        assert long_id in whole
        await pilot.press("escape")
        await wait_for(pilot, lambda: showing(app, ApiLogScreen))
