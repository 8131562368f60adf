"""The app under every fault the network and the server can throw: it stays up, says what
happened, keeps the rows it had, sends the key nowhere else, and recovers when the server does.

Faults are injected by a transport in front of the real local service, switched on and off
while the app runs."""

from __future__ import annotations

import pytest

from tests.support.app import loaded_traces, settled, showing, wait_for
from tests.support.faults import FAULTS, JSON, answer, app_with_faults, error_body
from tests.support.service import RunningService
from tui.ui.app import StartAt, TraceTuiApp


def told(app: TraceTuiApp) -> bool:
    """The user has been told something went wrong: a notification or the status line."""
    return bool(app._notifications) or app.problem_text() is not None


@pytest.mark.parametrize("name", list(FAULTS))
async def test_the_app_survives_keeps_its_rows_and_recovers(
    service: RunningService, name: str
) -> None:
    async with app_with_faults(service, StartAt(project_id="proj_support")) as (app, pilot, net):
        screen = await loaded_traces(app, pilot)
        rows = list(screen.traces)
        # Nothing on its way when the fault starts: a fetch still running (the rows are shown
        # before the other requests of start-up end) would take the `r` press as already done,
        # end well, and leave nothing to fail under the fault.
        await settled(pilot)
        net.fault = FAULTS[name]
        await pilot.press("r")
        await wait_for(pilot, lambda: told(app) and not screen.fetching)
        assert app.is_running and app.screen is screen
        assert screen.traces == rows  # what was loaded stays
        for note in app._notifications:
            assert "\x1b" not in note.message and "\x00" not in note.message
        if "hostile" in name:  # the server's message is shown, made visible
            assert any("␛[31;1;4;7mRED" in n.message for n in app._notifications)
        assert {r.url.host for r in net.requests} == {"127.0.0.1"}  # nothing went elsewhere
        # The server is back: the app recovers (by itself after a 429, or on request).
        # Whatever was still on its way under the fault lands first, so nothing it says is
        # taken for the recovery's.
        await settled(pilot)
        net.fault = None
        app.clear_notifications()
        refreshed = app.last_refresh
        await pilot.press("ctrl+r")
        await pilot.press("r")
        await wait_for(
            pilot,
            lambda: (
                app.last_refresh != refreshed and not screen.fetching and app.problem_text() is None
            ),
            what="a refresh answered by the service, the problem gone",
        )
        await settled(pilot)
        assert len(screen.traces) == len(rows)
        assert not app._notifications


async def test_the_api_log_shows_hostile_headers_and_errors_literally(
    service: RunningService,
) -> None:
    """The API log draws what servers send in headers and error bodies; none of it is markup."""
    from tui.ui.screens.api_log import ApiLogScreen

    headers = {"x-ratelimit-remaining": "[@click=app.quit]Q[/]", **JSON}
    async with app_with_faults(service, StartAt(project_id="proj_support")) as (app, pilot, net):
        await loaded_traces(app, pilot)
        net.fault = answer(500, error_body(500), **headers)
        await pilot.press("r")
        await wait_for(pilot, lambda: told(app))
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: showing(app, ApiLogScreen))
        picture = app.export_screenshot()
        assert "[@click=app" in picture  # the header, as text
        assert "[@click=app.bell]B[/]" in picture  # the error: first, so it is in sight
        assert "\x1b" not in picture
        for x in range(1, 99, 3):  # clicking across the row triggers nothing
            await pilot.click(offset=(x, 1))
        assert app.is_running and isinstance(app.screen, ApiLogScreen)
