"""The overview's cost by model shows each model's name whole where there is room (160
columns), and at 80 columns what tells the models apart: the name without its date, cut in
its middle if need be (it cut every name at 18 characters, at any width)."""

from __future__ import annotations

import pytest

from tests.support.app import rendered_text, running_app, showing, wait_for
from tests.support.service import RunningService
from tui.ui.app import StartAt
from tui.ui.screens.overview import OverviewScreen


@pytest.mark.parametrize(
    ("size", "shown"),
    [
        ((160, 48), ["claude-3-5-sonnet-20241022", "text-embedding-3-small", "gpt-4o-mini"]),
        ((80, 24), ["claude-3-5-sonnet ", "text-embe", "-3-small", "gpt-4o-mini"]),
    ],
)
async def test_cost_by_model_fits_the_names(
    service: RunningService, size: tuple[int, int], shown: list[str]
) -> None:
    async with running_app(service, StartAt(project_id="proj_support"), size=size) as (
        app,
        pilot,
    ):
        await wait_for(pilot, lambda: app.screen.is_mounted)
        app.open_overview("proj_support", "support-chatbot")
        await wait_for(pilot, lambda: showing(app, OverviewScreen))
        screen = app.screen
        assert isinstance(screen, OverviewScreen)
        await wait_for(pilot, lambda: not screen.paging and screen.pages > 0)
        models = rendered_text(screen.query_one("#models"))
        for name in shown:
            assert name in models, models
        assert "sonnet…" not in models
