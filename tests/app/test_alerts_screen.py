"""The alerts screen says which alert is breaching: state in words and symbol, the value beside
the threshold with units, for how long; against the local service (which evaluates alerts) and
against a server with only the spec's alert shapes (MockTransport: every state is unknown)."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest

from tests.support.alert_screens import project_with_traces, spec_server
from tests.support.app import running_app, showing, wait_for
from tests.support.service import RunningService, start_service
from tui.core.alert_rules import amount, breach_text, state_label
from tui.server.store.rows import TraceRow, now_ms
from tui.ui.app import StartAt
from tui.ui.screens.alerts import AlertsScreen
from tui.ui.widgets.table import Drawn, Table


def table_text(screen: AlertsScreen, chart_width: int = 24) -> str:
    table = screen.query_one(Table)
    return "\n".join(
        " | ".join(
            str(cell.draw(chart_width) if isinstance(cell, Drawn) else cell) for cell in cells
        )
        for cells, _ in table._rows
    )


def new_project_with_slow_traces(service: RunningService) -> str:
    return project_with_traces(service, [(1, 500), (2, 800), (3, 1200), (4, 3000)])


async def open_alerts(app, pilot, project_id: str) -> AlertsScreen:  # type: ignore[no-untyped-def]
    await pilot.press("a")
    await wait_for(pilot, lambda: showing(app, AlertsScreen) and bool(app.screen.alerts))
    screen = app.screen
    assert isinstance(screen, AlertsScreen)
    return screen


async def test_a_firing_alert_shows_its_state_value_and_threshold(tmp_path: Path) -> None:
    # A service of its own: a round evaluates every alert, and the shared service holds alerts
    # other tests made with webhooks to names that must never be looked up.
    service = start_service(tmp_path / "states.sqlite3", scale=0.01)
    try:
        await check_firing_alert(service)
    finally:
        service.service.stop()


async def check_firing_alert(service: RunningService) -> None:
    project_id = new_project_with_slow_traces(service)
    with service.client() as api:
        for name, metric, condition, threshold in (
            ("Slow replies", "latency_ms_5m", "gt", 1000),
            ("Spend", "cost_usd_1h", "gt", 2.5),
        ):
            created = api.post(
                f"projects/{project_id}/alerts",
                json={
                    "name": name,
                    "metric": metric,
                    "condition": condition,
                    "threshold": threshold,
                    "webhook_url": "https://hooks.example.com/x",
                },
            )
            assert created.status_code == 201, created.text
    service.service.alerts.evaluate()
    async with running_app(service, StartAt(project_id=project_id), size=(100, 24)) as (app, pilot):
        screen = await open_alerts(app, pilot, project_id)
        text = table_text(screen)
        # p95 of [500, 800, 1200, 3000] ms: 2730 ms, breaching > 1000 ms.
        assert "▲ firing" in text and "2.73 s > 1 s" in text
        assert "✓ ok" in text and "$0.00 ≤ $2.50" in text  # the sign true of them
        assert "▲ 1 firing" in str(screen.query_one("#header").content)
        await wait_for(pilot, lambda: screen.collected is not None)
        slow = table_text(screen).splitlines()[0].split(" | ")
        assert slow[0].startswith("▲ firing") and "*" not in slow[0]  # the server's own state
        assert slow[4][-1] in "▅▆▇█"  # the sparkline agrees: above its midline now


async def test_a_server_without_alert_state_gets_it_computed_from_traces(
    service: RunningService,
) -> None:
    """Only the spec's alert fields and trace rows: the app computes state, value, since when
    and the 24 h sparkline from the trace list, and marks them computed (`*`)."""
    now = datetime.now(timezone.utc)
    spec_alerts = [
        {
            "id": f"alert_{metric}",
            "project_id": "proj_x",
            "name": name,
            "metric": metric,
            "condition": "gt",
            "threshold": threshold,
            "webhook_url": "https://hooks.example.com/x",
        }
        for name, metric, threshold in (("Slow", "latency_s_5m", 8), ("Spend", "cost_usd_1h", 5))
    ]
    # Three traces in the last five minutes: p95 of 0.5 s, 9 s, 12 s is 11.7 s, over 8 s.
    traces = [
        {
            "id": f"t{i}",
            "project_id": "proj_x",
            "duration_ms": ms,
            "total_cost_usd": 0.5,
            "started_at": (now - timedelta(minutes=i + 1)).isoformat().replace("+00:00", "Z"),
        }
        for i, ms in enumerate((500, 9000, 12000))
    ]
    asked: list[httpx.QueryParams] = []
    transport = spec_server(spec_alerts, traces, asked)
    async with running_app(service, StartAt(project_id="proj_x"), transport=transport) as (
        app,
        pilot,
    ):
        screen = await open_alerts(app, pilot, "proj_x")
        await wait_for(pilot, lambda: screen.collected is not None)
        slow, spend = table_text(screen).splitlines()
        assert slow.startswith("▲ firing") and "*" in slow.split(" | ")[0]
        assert "11.7 s > 8 s" in slow
        assert "$1.50 ≤ $5.00" in spend and spend.startswith("✓ ok*")
        header = str(screen.query_one("#header").content)
        assert "▲ 1 firing" in header and "computed from traces" in header
        # The sparkline's last cell is above its midline (the threshold): a breach.
        sparkline = slow.split(" | ")[4]
        assert len(sparkline) == 24 and sparkline[-1] in "▅▆▇█"
        assert set(spend.split(" | ")[4][-1]) <= set("▁▂▃▄")
        assert any("from" in params for params in asked)  # one range: the last 24 h and more


async def test_a_server_without_alert_state_or_traces_reads_no_data(
    service: RunningService,
) -> None:
    spec_alert = {
        "id": "a",
        "name": "Slow",
        "metric": "latency_s_5m",
        "condition": "gt",
        "threshold": 8,
        "webhook_url": "https://hooks.example.com/x",
    }
    transport = spec_server([spec_alert], [])
    async with running_app(service, StartAt(project_id="proj_x"), transport=transport) as (
        app,
        pilot,
    ):
        screen = await open_alerts(app, pilot, "proj_x")
        await wait_for(pilot, lambda: screen.collected is not None)
        text = table_text(screen)
        assert text.startswith("· no traces*") and "> 8 s" in text
        assert "firing" not in str(screen.query_one("#header").content)


def test_amounts_carry_their_units() -> None:
    assert amount("latency_s_5m", 8.4) == "8.4 s"
    assert amount("latency_ms_5m", 2730.0) == "2.73 s"
    assert amount("latency_ms_5m", 850.0) == "850 ms"
    assert amount("latency_ms_5m", 113_235.0) == "1 min 53 s"
    assert amount("latency_ms_5m", 8001.0, exact=True) == "8,001 ms"
    assert amount("error_rate_pct_15m", 8000) == "8,000%"
    assert amount("cost_usd_1h", 3.1) == "$3.10" and amount("cost_usd_1h", 0.0004) == "$0.0004"
    assert amount("error_rate_pct_15m", 12.5) == "12.5%"
    assert amount("error_rate_ratio_1h", 0.0625) == "0.0625"
    assert amount("prompt_drift_score_24h", None) == "–"
    assert breach_text("cost_usd_1h", "gt", 3.1, 2.5) == "$3.10 > $2.50"
    assert breach_text("latency_s_5m", "gte", None, 8) == "≥ 8 s"
    assert [state_label(s) for s in ("firing", "ok", "no_data", None, "weird")] == [
        "▲ firing",
        "✓ ok",
        "· no data",
        "? unknown",
        "? unknown",
    ]
    assert json.dumps(state_label("firing"))  # plain text, no markup


async def test_enter_opens_an_alerts_state_history_and_window_traces(tmp_path: Path) -> None:
    """The local service evaluated the alert: the detail shows its history, the window's
    traces slowest first (Enter opens one), and the value the app computes from the trace list
    is the service's own (the same window, the same p95)."""
    from tui.ui.screens.alert_detail import AlertDetailScreen
    from tui.ui.screens.trace_detail import TraceDetailScreen

    service = start_service(tmp_path / "detail.sqlite3", scale=0.01)
    try:
        project_id = new_project_with_slow_traces(service)
        with service.client() as api:
            for metric in ("latency_ms_5m", "cost_usd_1h", "error_rate_pct_15m"):
                api.post(
                    f"projects/{project_id}/alerts",
                    json={
                        "name": metric,
                        "metric": metric,
                        "condition": "gt",
                        "threshold": 1000,
                        "webhook_url": "https://hooks.example.com/x",
                    },
                ).raise_for_status()
        service.service.alerts.evaluate()
        async with running_app(service, StartAt(project_id=project_id), size=(100, 30)) as (
            app,
            pilot,
        ):
            screen = await open_alerts(app, pilot, project_id)
            served = {a.metric: a.last_value for a in screen.alerts}
            await pilot.press("enter")
            await wait_for(
                pilot, lambda: showing(app, AlertDetailScreen) and bool(app.screen.ranked)
            )
            detail = app.screen
            assert isinstance(detail, AlertDetailScreen)
            events = detail.query_one("#events", Table)

            def history() -> str:
                return "\n".join(" | ".join(map(str, cells)) for cells, _ in events._rows)

            await wait_for(pilot, lambda: "· new → ▲ firing" in history())
            assert "value 2.73 s" in history()
            assert [t.duration_ms for t in detail.ranked] == [3000, 1200, 800, 500]
            facts = str(detail.query_one("#facts").content)
            assert "now 2.73 s · fires when > 1 s" in facts
            assert "from the traces listed now" not in facts  # the app reads the same value
            assert "value 2.73 s" in history()  # with its unit
            from tui.model import metrics

            for metric, value in served.items():  # the service's own numbers
                assert metrics.value_of(metric, detail.window) == pytest.approx(value, rel=1e-9)
            await wait_chart(pilot, detail)
            assert detail.series is not None
            assert detail.series.values[-1] == pytest.approx(2730)  # now, as the service says
            await pilot.press("enter")
            await wait_for(pilot, lambda: showing(app, TraceDetailScreen))
    finally:
        service.service.stop()


async def wait_chart(pilot, detail, fired: str = "1 time") -> None:  # type: ignore[no-untyped-def]
    """The detail's chart drawn: bars, the threshold's dotted row labelled with its value."""
    from tui.model.charts import THRESHOLD_MARK
    from tui.ui.widgets.metric_chart import MetricChart

    chart = detail.query_one(MetricChart)
    await wait_for(pilot, lambda: THRESHOLD_MARK in str(chart.content))
    lines = str(chart.content).splitlines()
    assert any(line.lstrip().startswith("1 s ") and THRESHOLD_MARK in line for line in lines)
    assert any(bar in str(chart.content) for bar in "▁▂▃▄▅▆▇█")
    assert f"would have fired {fired}" in lines[-1]


async def test_a_spec_only_server_gets_the_detail_computed_here(service: RunningService) -> None:
    from datetime import datetime, timedelta, timezone

    from tui.ui.screens.alert_detail import AlertDetailScreen

    now = datetime.now(timezone.utc)
    spec_alert = {
        "id": "alert_1",
        "project_id": "proj_x",
        "name": "Slow",
        "metric": "latency_ms_5m",
        "condition": "gt\x1b[2J[@click=app.quit]",
        "threshold": 1000,
        "webhook_url": "https://hooks.example.com/x",
    }
    traces = [
        {
            "id": f"t{i}",
            "name": f"t{i}",
            "started_at": (now - timedelta(minutes=i + 1)).isoformat(),
            "duration_ms": ms,
            "status": "ok",
        }
        for i, ms in enumerate((500, 800, 1200, 3000))
    ]
    transport = spec_server([spec_alert], traces)
    async with running_app(service, StartAt(project_id="proj_x"), transport=transport) as (
        app,
        pilot,
    ):
        await open_alerts(app, pilot, "proj_x")
        await pilot.press("enter")
        await wait_for(pilot, lambda: showing(app, AlertDetailScreen) and bool(app.screen.ranked))
        detail = app.screen
        await wait_for(
            pilot, lambda: "keeps none" in str(detail.query_one("#events-title").content)
        )
        facts = " ".join(str(detail.query_one("#facts").content).split())
        assert (
            "does not evaluate alerts" in facts
            and "2.73 s gt␛[2J[@click=app.quit] 1 s over 4" in facts
        )
        assert [t.id for t in detail.ranked] == ["t3", "t2", "t1", "t0"]
        assert str(detail.query_one("#header").content).startswith("▲ firing*")
        await wait_chart(pilot, detail)
        # A hostile condition from the server is shown inert: no ESC, no markup parsed.
        for part in ("#header", "#facts"):
            shown = detail.query_one(part).content
            assert "\x1b" not in str(shown) and "␛[2J" in str(detail.query_one("#facts").content)


async def test_a_resolved_alert_reads_ok_with_its_episode_in_the_history(tmp_path: Path) -> None:
    """Fired, then the window filled with quick traces: the service resolves it; the app shows
    ok, the value under the threshold, and both changes in the history."""
    from tui.ui.screens.alert_detail import AlertDetailScreen

    service = start_service(tmp_path / "resolved.sqlite3", scale=0.01)
    try:
        project_id = new_project_with_slow_traces(service)
        with service.client() as api:
            api.post(
                f"projects/{project_id}/alerts",
                json={
                    "name": "Slow replies",
                    "metric": "latency_ms_5m",
                    "condition": "gt",
                    "threshold": 1000,
                    "webhook_url": "https://hooks.example.com/x",
                },
            ).raise_for_status()
        service.service.alerts.evaluate()  # 2730 ms: firing
        quick = [
            TraceRow(
                uuid.uuid4().hex,
                project_id,
                "t",
                now_ms() - 1000 * (i + 1),
                100,
                1,
                1,
                1,
                0.0,
                "ok",
                0,
                "{}",
            )
            for i in range(100)
        ]
        with service.store.transaction() as db:
            service.store.insert_traces(db, quick)
        service.service.alerts.evaluate()  # the p95 of 104 is a quick one now: resolved
        async with running_app(service, StartAt(project_id=project_id), size=(100, 30)) as (
            app,
            pilot,
        ):
            screen = await open_alerts(app, pilot, project_id)
            row = table_text(screen).split(" | ")
            assert row[0] == "✓ ok" and row[3] == "100 ms ≤ 1 s"
            await pilot.press("enter")
            await wait_for(pilot, lambda: showing(app, AlertDetailScreen))
            detail = app.screen
            assert isinstance(detail, AlertDetailScreen)
            events = detail.query_one("#events", Table)
            await wait_for(pilot, lambda: events.row_count >= 3)
            history = [" | ".join(map(str, cells)) for cells, _ in events._rows]
            states = [line for line in history if "→" in line]
            assert "▲ firing → ✓ ok" in states[0] and "· new → ▲ firing" in states[1]
            # Sampled every 5 minutes, the chart's moments fall outside the slow minutes.
            await wait_chart(pilot, detail, fired="0 times")
    finally:
        service.service.stop()
