"""The API log (ctrl+o): the requests made, their paths first and without the host again,
never the key."""

from __future__ import annotations

from tests.support.app import loaded_traces, running_app, showing, wait_for
from tests.support.service import RunningService
from tui.ui.app import StartAt
from tui.ui.screens.api_log import ApiLogScreen, shown_path
from tui.ui.widgets.table import Table


def test_the_api_log_shows_paths_not_the_host_again() -> None:
    assert shown_path("http://127.0.0.1:8000/v1/traces?limit=5", "127.0.0.1:8000") == (
        "/v1/traces?limit=5"
    )
    assert shown_path("https://other.example/v1/x", "127.0.0.1:8000").startswith("https://")


async def test_the_api_log_rows_start_with_the_path(service: RunningService) -> None:
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: bool(app.projects))
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: showing(app, ApiLogScreen))
        table = app.screen.query_one(Table)
        details = [str(table.get_row_at(row)[6]) for row in range(table.row_count)]
    # Newest first; what else start-up asked (the server's OpenAPI document) may come first.
    assert all(detail.startswith("/v1/") for detail in details), details
    assert any(detail.startswith("/v1/projects") for detail in details), details


async def test_the_api_log_shows_requests_and_never_the_key(service: RunningService) -> None:
    async with running_app(service, StartAt(project_id="proj_rag")) as (app, pilot):
        await loaded_traces(app, pilot)
        await pilot.press("ctrl+o")
        assert isinstance(app.screen, ApiLogScreen)
        table = app.screen.query_one("DataTable")
        cells = [str(cell) for row in range(table.row_count) for cell in table.get_row_at(row)]
        assert any("/v1/traces" in c for c in cells) and "200" in cells
        assert not any(service.keys.workspace in c for c in cells)
