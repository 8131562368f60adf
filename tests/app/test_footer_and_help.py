"""The footer and `?`: every footer key fits on an 80- or 100-column line on every screen, and
help lists the screen's own keys first, each with the id that remaps it."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Footer

from tests.support.app import loaded_traces, rendered_text, running_app, showing, wait_for
from tests.support.service import RunningService
from tui.ui.app import StartAt
from tui.ui.screens.help import HelpScreen, keys_table
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.trace_detail import TraceDetailScreen
from tui.ui.screens.traces import TracesScreen


@pytest.mark.parametrize("width", [80, 100])
@pytest.mark.parametrize("where", ["projects", "traces", "trace", "alerts"])
async def test_every_footer_key_fits_on_the_line(
    service: RunningService, width: int, where: str
) -> None:
    start = StartAt() if where == "projects" else StartAt(project_id="proj_support")
    async with running_app(service, start, size=(width, 24)) as (app, pilot):
        if where == "projects":
            await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        else:
            await loaded_traces(app, pilot)
        if where == "trace":
            await pilot.press("enter")
            await wait_for(pilot, lambda: showing(app, TraceDetailScreen))
        elif where == "alerts":
            await pilot.press("a")
            await wait_for(pilot, lambda: type(app.screen).__name__ == "AlertsScreen")

        # Laid out, not only mounted: under load the footer's keys come a few frames later.
        def footer_keys() -> list[Any]:
            return list(app.screen.query_one(Footer).query("FooterKey"))

        await wait_for(
            pilot, lambda: bool(footer_keys()) and all(key.region.width for key in footer_keys())
        )
        keys = footer_keys()
        assert all(key.region.right <= width for key in keys)
        assert any("Quit" in str(key.render()) for key in keys)


async def test_help_lists_the_screens_own_keys_first_each_with_its_id(
    service: RunningService,
) -> None:
    async with running_app(service, StartAt(project_id="proj_rag")) as (app, pilot):
        traces = await loaded_traces(app, pilot)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: showing(app, HelpScreen))
        table = keys_table(traces)
    ids = [str(cell) for cell in table.columns[2].cells]
    keys = [str(cell) for cell in table.columns[0].cells]
    does = [str(cell) for cell in table.columns[1].cells]
    assert ids[0].startswith("traces.") and "traces.filter" in ids and "app.quit" in ids
    assert keys[ids.index("app.quit")] == "q ctrl+q"
    assert not any("Page Left" in d or "Scroll" in d for d in does)
    assert ids.index("rows.first") > max(i for i, x in enumerate(ids) if x.startswith("traces."))


async def test_help_lists_the_screens_keys(service: RunningService) -> None:
    async with running_app(service, StartAt(project_id="proj_rag")) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, TracesScreen))
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = rendered_text(app.screen.query_one("#keys"))
        for description in (
            "Filter",
            "Range",
            "Sort",
            "Refresh",
            "Live",
            "Alerts",
            "Errors",
            "Open",
            "Back",
        ):
            assert description in text
