"""What a new user's walk found (issue 12), each checked so it cannot come back: footers that fit,
tables that follow the window, the same keys everywhere, `?` with ids, the too-small notice,
careful forms, an honest status line, and failures that say what to do."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from rich.text import Text
from textual.widgets import Footer, Input

from tests.app.test_faults import app_with_faults, raising
from tests.app.test_flows import loaded_traces, rendered_text, running_app, wait_for
from tests.support.helpers import Sleeps, mock_client
from tests.support.service import RunningService
from tui.api import ApiClient, ConnectionFailed, Waiting
from tui.api.ratelimit import Pacer, budget_from_headers
from tui.core.alert_rules import metric_problem
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.api_log import ApiLogScreen, shown_path
from tui.ui.screens.forms import AlertForm, ProjectForm, url_problem
from tui.ui.screens.help import HelpScreen, keys_table
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.prompts import KeyPrompt, Tick
from tui.ui.screens.too_small import TooSmallScreen
from tui.ui.screens.trace_detail import TraceDetailScreen
from tui.ui.screens.traces import TracesScreen
from tui.ui.widgets.status_bar import Status, status_line
from tui.ui.widgets.table import Table
from tui.ui.widgets.trace_table import TraceTable

# -- layout and keys -----------------------------------------------------------------------------


@pytest.mark.parametrize("width", [80, 100])
@pytest.mark.parametrize("where", ["projects", "traces", "trace", "alerts"])
async def test_every_footer_key_fits_on_the_line(
    service: RunningService, width: int, where: str
) -> None:
    start = StartAt() if where == "projects" else StartAt(project_id="proj_support")
    async with running_app(service, start, size=(width, 24)) as (app, pilot):
        if where == "projects":
            await wait_for(pilot, lambda: isinstance(app.screen, ProjectsScreen))
        else:
            await loaded_traces(app, pilot)
        if where == "trace":
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, TraceDetailScreen))
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


async def test_the_projects_table_lays_out_again_when_the_window_grows(
    service: RunningService,
) -> None:
    async with running_app(service, size=(80, 24)) as (app, pilot):
        await wait_for(pilot, lambda: bool(app.projects))
        table = app.screen.query_one(Table)
        narrow = [str(cell) for cell in table.get_row_at(0)]
        await pilot.resize_terminal(160, 48)
        await pilot.pause(0.3)
        wide = [str(cell) for cell in table.get_row_at(0)]
    assert any(cell.endswith("…") for cell in narrow)
    assert not any(cell.endswith("…") for cell in wide)


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


async def test_help_lists_the_screens_own_keys_first_each_with_its_id(
    service: RunningService,
) -> None:
    async with running_app(service, StartAt(project_id="proj_rag")) as (app, pilot):
        traces = await loaded_traces(app, pilot)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        table = keys_table(traces)
    ids = [str(cell) for cell in table.columns[2].cells]
    keys = [str(cell) for cell in table.columns[0].cells]
    does = [str(cell) for cell in table.columns[1].cells]
    assert ids[0].startswith("traces.") and "traces.filter" in ids and "app.quit" in ids
    assert keys[ids.index("app.quit")] == "q ctrl+q"
    assert not any("Page Left" in d or "Scroll" in d for d in does)
    assert ids.index("rows.first") > max(i for i, x in enumerate(ids) if x.startswith("traces."))


async def test_the_too_small_notice_shows_on_the_first_shrink(service: RunningService) -> None:
    async with running_app(service, size=(80, 24)) as (app, pilot):
        await pilot.pause(0.2)
        await pilot.resize_terminal(70, 20)
        await pilot.pause(0.3)
        assert isinstance(app.screen, TooSmallScreen)


# -- forms ---------------------------------------------------------------------------------------


async def test_tab_goes_from_field_to_field_with_no_invisible_stop(
    service: RunningService,
) -> None:
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: bool(app.projects))
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, ProjectForm))
        seen = []
        for _ in range(4):
            seen.append(app.focused.id if app.focused else None)
            await pilot.press("tab")
    assert seen == ["field-name", "field-description", "field-retention_days", "field-name"]


async def test_a_prefilled_value_does_not_look_like_a_placeholder(
    service: RunningService,
) -> None:
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: bool(app.projects))
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, ProjectForm))
        await pilot.pause(0.1)
        form = app.screen

        def styles(field: str, text: str) -> set[str]:
            line = form.query_one(f"#field-{field}", Input).render_line(0)
            return {str(s.style) for s in line if s.text.strip() and s.text.strip() in text}

        value = styles("retention_days", "30")
        placeholder = styles("description", "optional")
    assert value and placeholder and value.isdisjoint(placeholder)
    assert all("italic" in s for s in placeholder)


def test_webhook_urls_say_what_is_missing() -> None:
    assert "Add the host after http://" in (url_problem("http://") or "")
    assert "Start with http:// or https://" in (url_problem("hooks.example.com/x") or "")
    assert url_problem("https://hooks.example.com/x") is None


@pytest.mark.parametrize(
    "metric",
    [
        "latency_ms_5m",
        "latency_ms_0m",
        "latency_ms_1000h",
        "latency_min_5m",
        "error_rate_ratio_week",
        "cost_usd_999d",
        "cost_eur_1h",
        "prompt_drift_pct_24h",
        "tokens_count_1h",
        "latency_ms_5m_x",
    ],
)
def test_the_form_and_the_service_accept_the_same_metrics(api: httpx.Client, metric: str) -> None:
    answer = api.post(
        "projects/proj_rag/alerts",
        json={
            "name": "grammar",
            "metric": metric,
            "condition": "gt",
            "threshold": 1,
            "webhook_url": "https://hooks.example.com/g",
        },
    )
    assert (metric_problem(metric) is None) == (answer.status_code == 201), answer.text


async def test_the_alert_form_shows_the_whole_metric_grammar(service: RunningService) -> None:
    async with running_app(service, StartAt(project_id="proj_rag")) as (app, pilot):
        await loaded_traces(app, pilot)
        await pilot.press("a", "n")
        await wait_for(pilot, lambda: isinstance(app.screen, AlertForm))
        await pilot.pause(0.1)
        hint = rendered_text(app.screen.query_one(".field-hint"))
        metric = app.screen.query_one("#field-metric", Input)
        assert len(metric.placeholder) < metric.size.width - 2
    for part in ("latency_ms|s", "error_rate_pct|ratio", "cost_usd", "prompt_drift_score|pct"):
        assert part in " ".join(hint.split())


async def test_the_save_checkbox_says_its_state_without_colour_and_not_saving_is_said(
    service: RunningService, tmp_path: Path
) -> None:
    wrong = SecretStr(service.keys.projects["proj_rag"])
    async with ApiClient(service.base_url, wrong) as client:
        app = TraceTuiApp(
            client, StartAt(project_id="proj_support"), config_path=tmp_path / "c.toml"
        )
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, KeyPrompt))
            tick = app.screen.query_one(Tick)
            unticked = str(tick.render())
            tick.value = True
            await pilot.pause()
            ticked = str(tick.render())
            tick.value = False
            await pilot.press(*service.keys.projects["proj_support"], "enter")
            await loaded_traces(app, pilot)
            notes = [n.message for n in app._notifications]
    assert "✓" in ticked and "✓" not in unticked
    assert any("not saved" in note for note in notes)
    assert not (tmp_path / "c.toml").exists()


# -- lists ---------------------------------------------------------------------------------------


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
        await wait_for(pilot, lambda: isinstance(app.screen, TracesScreen))
        await pilot.press("a")
        await wait_for(
            pilot, lambda: app.screen.query(Table) and app.screen.query_one(Table).row_count > 0
        )
        table = app.screen.query_one(Table)
        assert table.virtual_size.width <= table.scrollable_content_region.width
        titles = [str(column.label) for column in table.columns.values()]
        rows = [[str(cell) for cell in table.get_row_at(r)] for r in range(table.row_count)]
    # State, value and threshold are never cut, nor the metric's period.
    assert [row[0] for row in rows] == ["· no data", "· no data"]
    assert [row[3] for row in rows] == ["≥ 8000 ms", "≥ 8000%"]
    assert rows[1][2] == "error rate /15m"
    assert rows[1][1].startswith("Error spike")
    if width == 80:  # the webhook host gives way to the sparkline (the detail shows it)
        assert titles == ["State", "Name", "Metric", "Now / fires", "Last 24h"]
    else:  # the host keeps at least its first labels
        assert titles[-1] == "Webhook host"
        assert rows[0][5].startswith("hooks.slack") and rows[1][5].startswith("events.pagerd")


def test_the_api_log_shows_paths_not_the_host_again() -> None:
    assert shown_path("http://127.0.0.1:8000/v1/traces?limit=5", "127.0.0.1:8000") == (
        "/v1/traces?limit=5"
    )
    assert shown_path("https://other.example/v1/x", "127.0.0.1:8000").startswith("https://")


async def test_the_api_log_rows_start_with_the_path(service: RunningService) -> None:
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: bool(app.projects))
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, ApiLogScreen))
        table = app.screen.query_one(Table)
        detail = str(table.get_row_at(0)[6])
    assert detail.startswith("/v1/projects")


# -- failures ------------------------------------------------------------------------------------


def test_at_80_columns_a_problem_keeps_the_server_in_sight() -> None:
    status = Status(
        server="traces.example.com",
        profile="prod",
        rate_remaining=10,
        rate_limit=1000,
        refreshed_at=time.time(),
        problem=Text("⚠ Cannot reach the server · ctrl+r retries · rows kept"),
    )
    line = status_line(status, 78).plain
    assert "Cannot reach the server · ctrl+r retries · rows kept" in line
    assert "traces.example.com" in line and "…" not in line and len(line) <= 78
    assert "prod" in status_line(status, 200).plain


async def test_a_refused_connection_on_loopback_is_reported_after_one_quick_retry() -> None:
    sleeps = Sleeps()
    waits: list[Waiting] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    client = ApiClient(
        "http://127.0.0.1:9/v1",
        transport=httpx.MockTransport(refuse),
        sleep=sleeps,
        pacer=Pacer(per_minute=10**9, burst=10**6, sleep=sleeps),
        on_wait=waits.append,
    )
    async with client:
        with pytest.raises(ConnectionFailed):
            await client.list_projects()
    assert len(client.log) == 2 and len(sleeps.delays) == 1
    assert [w.reason for w in waits] == ["retry"] and waits[0].next_try == 2


async def test_a_refused_connection_elsewhere_is_still_retried() -> None:
    sleeps = Sleeps()

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    async with mock_client(refuse, sleeps) as client:
        with pytest.raises(ConnectionFailed):
            await client.list_projects()
    assert len(client.log) == 5


async def test_client_waits_are_counted_down_in_the_status_line(service: RunningService) -> None:
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: bool(app.projects))
        app.client_waiting(Waiting("pacing", 42))
        await pilot.pause(0.1)
        line = rendered_text(app.screen.query_one("StatusBar"))
    assert "next request in 42s" in line


def test_the_pacer_says_how_long_it_waits() -> None:
    told: list[float] = []
    sleeps = Sleeps()
    pacer = Pacer(per_minute=1000, burst=1, sleep=sleeps, clock=lambda: 0.0)
    budget = budget_from_headers(
        {"x-ratelimit-remaining": "2", "x-ratelimit-reset": str(int(time.time()) + 30)}
    )
    assert budget is not None
    pacer.observe("k", budget)
    asyncio.run(pacer.acquire("k", told.append))
    assert told and 25 < told[0] <= 30


async def test_a_wrong_workspace_key_says_where_the_key_is_set(
    service: RunningService, tmp_path: Path
) -> None:
    async with ApiClient(service.base_url, SecretStr("tt_ws_wrong_key_123")) as client:
        app = TraceTuiApp(client, StartAt(trace_id="nope"), config_path=tmp_path / "c.toml")
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: bool(app._notifications))
            await pilot.pause(0.5)
            notes = [n.message for n in app._notifications]
    assert len(notes) == 1  # the projects and the trace failed alike: one toast
    assert "TRACETUI_API_KEY" in notes[0] and str(tmp_path / "c.toml") in notes[0]


async def test_esc_from_a_trace_opened_by_id_goes_to_its_projects_traces(
    service: RunningService,
) -> None:
    trace_id = service.store.list_traces("proj_rag", 0, 2**62, 1)[0][0].id
    async with running_app(service, StartAt(trace_id=trace_id)) as (app, pilot):
        await wait_for(
            pilot, lambda: isinstance(app.screen, TraceDetailScreen) and app.screen.trace
        )
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, TracesScreen))
        assert isinstance(app.screen, TracesScreen) and app.screen.project_id == "proj_rag"


def test_a_negative_remaining_budget_reads_as_none_left() -> None:
    budget = budget_from_headers({"x-ratelimit-remaining": "-1", "x-ratelimit-limit": "1000"})
    assert budget is not None and budget.remaining == 0


# -- the trace list ------------------------------------------------------------------------------


def paged_traces(pages: int = 3, per_page: int = 200, gate: asyncio.Event | None = None) -> Any:
    """A server of `pages` pages of traces; the costliest and slowest one is on the last page.
    With a `gate`, every page after the first waits for it (so a test can stop the paging)."""
    now = time.time()

    async def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/projects"):
            return httpx.Response(200, json={"data": [{"id": "p1", "name": "p"}]})
        page = int(request.url.params.get("cursor") or 0)
        if page and gate is not None:
            await gate.wait()
        items = []
        for i in range(per_page):
            n = page * per_page + i
            last = page == pages - 1 and i == per_page - 1
            items.append(
                {
                    "id": f"t{n:05d}",
                    "name": "the costly one" if last else f"trace {n}",
                    "started_at": now - n * 10,
                    "duration_ms": 99_000 if last else 100 + n,
                    "total_cost_usd": 9.5 if last else 0.001,
                }
            )
        more = page + 1 < pages
        return httpx.Response(
            200, json={"data": items, "next_cursor": str(page + 1) if more else None}
        )

    return handler


class Transport(httpx.AsyncBaseTransport):
    def __init__(self, handler: Any) -> None:
        self.handler = handler
        self.requests = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        response: httpx.Response = await self.handler(request)
        return response


async def test_sorting_by_cost_ranks_the_whole_range_from_the_top(service: RunningService) -> None:
    transport = Transport(paged_traces())
    async with ApiClient("http://x.example/v1", SecretStr("k" * 20), transport=transport) as client:
        app = TraceTuiApp(client, StartAt(project_id="p1"))
        async with app.run_test(size=(100, 24)) as pilot:
            screen = await loaded_traces(app, pilot)
            table = screen.query_one(TraceTable)
            await pilot.press("j", "j", "j")
            await pilot.press("s", "s")  # duration, then cost
            await wait_for(pilot, lambda: screen.ended and not screen.fetching)
            await pilot.pause(0.1)
            header = rendered_text(screen.query_one("#header"))
            header += rendered_text(screen.query_one("#position"))
            assert table.cursor == 0 and table.selected is not None
            assert table.selected.name == "the costly one"
    assert len(screen.traces) == 600 and "costliest first" in header and "row 1 of 600" in header
    assert "all loaded" in header


async def test_esc_stops_a_ranking_and_the_header_says_it_is_partial(
    service: RunningService,
) -> None:
    gate = asyncio.Event()  # never set: the second page never comes
    transport = Transport(paged_traces(gate=gate))
    async with ApiClient("http://x.example/v1", SecretStr("k" * 20), transport=transport) as client:
        app = TraceTuiApp(client, StartAt(project_id="p1"))
        async with app.run_test(size=(100, 24)) as pilot:
            screen = await loaded_traces(app, pilot)
            await pilot.press("s")
            await wait_for(pilot, lambda: screen.fetching)
            loading = rendered_text(screen.query_one("#header"))
            await pilot.press("escape")
            await pilot.pause(0.1)
            stopped = rendered_text(screen.query_one("#header"))
            assert isinstance(app.screen, TracesScreen) and not screen.fetching
    assert "more coming (esc stops)" in " ".join(loading.split())
    assert "ranked among the 200 loaded only" in " ".join(stopped.split())


async def test_esc_clears_the_filter_before_it_leaves(service: RunningService) -> None:
    async with running_app(service, StartAt(project_id="proj_support")) as (app, pilot):
        screen = await loaded_traces(app, pilot)
        await pilot.press("slash", *"handle", "enter")
        assert screen.filter_text == "handle"
        await pilot.press("escape")
        assert app.screen is screen and screen.filter_text == ""
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ProjectsScreen))


async def test_live_mode_moves_the_ages_on(service: RunningService) -> None:
    async with running_app(service, StartAt(project_id="proj_support")) as (app, pilot):
        screen = await loaded_traces(app, pilot)
        table = screen.query_one(TraceTable)
        before = table.now
        app.now = lambda: before + timedelta(minutes=5)
        screen.poll_new()
        await wait_for(pilot, lambda: table.now > before)
        assert table.now - before == timedelta(minutes=5)


async def test_back_on_the_list_after_a_failure_it_loads_again_by_itself(
    service: RunningService,
) -> None:
    async with app_with_faults(service, StartAt(project_id="proj_rag")) as (app, pilot, net):
        screen = await loaded_traces(app, pilot)
        net.fault = raising(httpx.ConnectError)
        await pilot.press("r")
        await wait_for(pilot, lambda: screen.load_error is not None and not screen.fetching)
        await pilot.press("a")
        await wait_for(pilot, lambda: app.screen is not screen)
        net.fault = None  # the server is back
        await pilot.press("escape")
        await wait_for(pilot, lambda: screen.load_error is None and not screen.fetching)
        header = rendered_text(screen.query_one("#header"))
        assert "loading" not in header and "Cannot reach" not in header
        assert app.problem is None


def test_a_narrow_table_takes_width_from_the_long_columns_first() -> None:
    from tui.ui.screens.projects import COLUMNS
    from tui.ui.widgets.table import widths_for

    name, project_id, description, retention = widths_for(COLUMNS, [15, 12, 44, 4], 78)
    assert (name, project_id, retention) == (15, 12, 9)  # short ones whole
    assert sum((name, project_id, description, retention)) + 8 <= 78
