"""The alert form previews what the alert being typed would have done over the last 24 h: the
metric's sparkline with the threshold as its midline, and how many times it would have fired;
against the local service and against a server with only the spec's shapes."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from tests.support.alert_screens import project_with_traces, spec_server
from tests.support.app import running_app, showing, wait_for
from tests.support.service import RunningService
from tui.ui.app import StartAt
from tui.ui.screens.forms import AlertForm
from tui.ui.widgets.alert_preview import AlertPreview

# Minutes ago: quick traces every 10 minutes, and two bursts of slow ones 3 h and 10 h ago.
QUICK = [(m, 100.0) for m in range(1, 24 * 60, 10)]
SLOW = [(m + 0.5, 5000.0) for m in [*range(180, 200), *range(600, 620)]]  # 20 min each


def project_with_two_slow_bursts(service: RunningService) -> str:
    return project_with_traces(service, QUICK + SLOW)


async def type_alert(app, pilot, metric: str, threshold: str) -> AlertPreview:  # type: ignore[no-untyped-def]
    await pilot.press("n")
    await wait_for(pilot, lambda: showing(app, AlertForm))
    form = app.screen
    preview = form.query_one(AlertPreview)
    await wait_for(pilot, lambda: preview.collected is not None)
    await pilot.press(*"Slow")
    form.query_one("#field-metric").value = metric  # chosen: test_alert_metric_choices
    form.query_one("#field-threshold").focus()
    await pilot.press(*threshold)
    await wait_for(
        pilot, lambda: preview.fired is not None or "Prompt drift" in str(preview.content)
    )
    return preview


async def test_the_form_says_how_often_the_alert_would_have_fired(
    service: RunningService,
) -> None:
    project_id = project_with_two_slow_bursts(service)
    async with running_app(service, StartAt(project_id=project_id), size=(100, 40)) as (
        app,
        pilot,
    ):
        await open_alerts_screen(app, pilot)
        preview = await type_alert(app, pilot, "latency_ms_5m", "1000")
        assert preview.fired == 2  # one run of breaches per burst
        shown = str(preview.content)
        assert "would have fired 2 times" in shown and "100 ms ≤ 1 s" in shown
        # Typing on changes the preview: over 9 s it would never have fired.
        await pilot.press("ctrl+u", *"9000")
        await wait_for(pilot, lambda: preview.fired == 0)
        assert "would have fired 0 times" in str(preview.content)
        # Everything typed is still there to create the alert with.
        assert app.screen.values()["metric"] == "latency_ms_5m"


async def open_alerts_screen(app, pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.press("a")
    await wait_for(pilot, lambda: app.screen.__class__.__name__ == "AlertsScreen")


async def test_prompt_drift_says_why_there_is_no_preview(service: RunningService) -> None:
    project_id = project_with_two_slow_bursts(service)
    async with running_app(service, StartAt(project_id=project_id), size=(100, 40)) as (
        app,
        pilot,
    ):
        await open_alerts_screen(app, pilot)
        preview = await type_alert(app, pilot, "prompt_drift_score_24h", "0.3")
        assert "only the server can compute it" in str(preview.content)


async def test_a_spec_only_server_gets_the_same_preview(service: RunningService) -> None:
    now = datetime.now(timezone.utc)
    traces = [
        {
            "id": f"t{i}",
            "duration_ms": ms,
            "started_at": (now - timedelta(minutes=m)).isoformat().replace("+00:00", "Z"),
        }
        for i, (m, ms) in enumerate(QUICK + SLOW)
    ]
    async with running_app(
        service, StartAt(project_id="proj_x"), size=(100, 40), transport=spec_server([], traces)
    ) as (app, pilot):
        await open_alerts_screen(app, pilot)
        preview = await type_alert(app, pilot, "latency_ms_5m", "1000")
        assert preview.fired == 2
