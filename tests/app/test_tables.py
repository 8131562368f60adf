"""The tables: laid out again when the window changes, the same movement keys in every one,
width taken from the long columns first, and the alerts table whole without sideways scrolling."""

from __future__ import annotations

import uuid

import httpx
import pytest

from tests.support.app import running_app, settled, showing, wait_for
from tests.support.service import RunningService
from tui.ui.app import StartAt
from tui.ui.screens.traces import TracesScreen
from tui.ui.widgets.table import Table


async def test_the_projects_table_lays_out_again_when_the_window_grows(
    service: RunningService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The columns take the width the window gives: wider once it grows. (A cell's "…" is no
    sign of it: a row shows "…" while its figures load.) The health is read once only, so
    that only the resize can lay the rows out again."""
    from tui.ui.screens import projects

    monkeypatch.setattr(projects, "HEALTH_EVERY_S", 3600.0)
    monkeypatch.setattr(projects, "HEALTH_PER_PROJECT_EVERY_S", 3600.0)
    async with running_app(service, size=(80, 24)) as (app, pilot):
        table = app.screen.query_one(Table)
        await wait_for(
            pilot,
            lambda: table.row_count > 0 and str(table.get_row_at(0)[1]) != "…",
            what="the projects and their health",
        )
        await settled(pilot)
        narrow = [column.width for column in table.columns.values()]
        assert sum(narrow) <= 80
        await pilot.resize_terminal(160, 48)
        await wait_for(
            pilot,
            lambda: sum(column.width for column in table.columns.values()) > 80,
            what="the columns laid out again for 160 cells",
        )


async def test_home_end_g_and_G_move_the_same_way_in_every_table(
    service: RunningService,
) -> None:
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: bool(app.projects))
        table = app.screen.query_one(Table)
        last = table.row_count - 1
        for key, row in (("G", last), ("g", 0), ("end", last), ("home", 0), ("j", 1), ("k", 0)):
            await pilot.press(key)
            assert table.cursor_row == row, key


def test_a_narrow_table_takes_width_from_the_long_columns_first() -> None:
    from tui.ui.screens.projects import COLUMNS
    from tui.ui.widgets.table import widths_for

    wants = [15, 16, 4, 16, 12, 44, 4]  # name, alerts, errors, traffic, id, description, retention
    widths = widths_for(COLUMNS, wants, 78)
    assert widths[:5] == [15, 16, 9, 16, 12]  # the name and the health whole, the id too
    assert widths[5:] == [0, 0]  # the description and retention left out at 80 columns
    wide = widths_for(COLUMNS, wants, 100)
    assert wide[:3] == [15, 16, 9] and wide[5] >= 12 and wide[6] == 9
    assert sum(wide) + 2 * len(wide) <= 100


def project_with_alerts(api: httpx.Client) -> str:
    """A new project with two alerts whose names and hosts are as long as real ones."""
    project: str = api.post("projects", json={"name": f"fits {uuid.uuid4().hex[:6]}"}).json()["id"]
    for name, metric, host in (
        ("Slow replies", "latency_ms_5m", "hooks.slack.example.com"),
        ("Error spike (5xx from the model)", "error_rate_pct_15m", "events.pagerduty.example.com"),
    ):
        alert = {"name": name, "metric": metric, "condition": "gte", "threshold": 8000}
        api.post(
            f"projects/{project}/alerts", json={**alert, "webhook_url": f"https://{host}/x"}
        ).raise_for_status()
    return project


@pytest.mark.parametrize("width", [80, 120])
async def test_the_alerts_table_fits_without_sideways_scrolling(
    service: RunningService, api: httpx.Client, width: int
) -> None:
    project = project_with_alerts(api)
    async with running_app(service, StartAt(project_id=project), size=(width, 24)) as (
        app,
        pilot,
    ):
        await wait_for(pilot, lambda: showing(app, TracesScreen))
        await pilot.press("a")
        await wait_for(
            pilot, lambda: app.screen.query(Table) and app.screen.query_one(Table).row_count > 0
        )
        table = app.screen.query_one(Table)
        assert table.virtual_size.width <= table.scrollable_content_region.width
        titles = [str(column.label) for column in table.columns.values()]
        rows = [[str(cell) for cell in table.get_row_at(r)] for r in range(table.row_count)]
    # State, value and threshold are never cut, nor the metric's period.
    assert [row[0] for row in rows] == ["… evaluating", "… evaluating"]  # not evaluated yet
    assert [row[3] for row in rows] == ["≥ 8 s", "≥ 8,000%"]
    assert rows[1][2] == "error rate /15m"
    assert rows[1][1].startswith("Error spike")
    if width == 80:  # the webhook host gives way to the sparkline (the detail shows it)
        assert titles == ["State", "Name", "Metric", "Now vs threshold", "Last 24h"]
    else:  # the host keeps at least its first labels
        assert titles[-1] == "Webhook host"
        assert rows[0][5].startswith("hooks.slack") and rows[1][5].startswith("events.pagerd")
