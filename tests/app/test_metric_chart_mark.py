"""The chart's mark (▲ under the marked bar) is drawn reversed while the chart has the focus and
plainly once it has gone: drawn as the focus is, not as it was (the overview's chart lost the
focus to its firing alerts and kept a reversed mark, in one snapshot in two)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import Input

from tests.support.app import wait_for
from tui.ui.widgets.metric_chart import MetricChart


class ChartApp(App[None]):
    def compose(self) -> ComposeResult:
        yield MetricChart(id="chart", selectable=True)
        yield Input(id="other")


def mark_style(chart: MetricChart) -> str:
    content = chart.content
    assert isinstance(content, Text)
    at = content.plain.rindex("▲")
    return " ".join(
        str(span.style) for span in content.spans if span.start <= at < span.end and span.style
    )


async def test_the_mark_is_reversed_only_while_the_chart_has_the_focus() -> None:
    app = ChartApp()
    async with app.run_test(size=(80, 24)) as pilot:
        chart = app.query_one(MetricChart)
        end = datetime(2026, 11, 21, 12, tzinfo=timezone.utc)
        chart.focus()
        await wait_for(pilot, lambda: chart.has_focus)
        chart.show([1.0, 3.0, 2.0], end - timedelta(hours=3), end, lambda v: f"{v:g}")
        chart.mark(1)
        await wait_for(pilot, lambda: "▲" in chart.content.plain)  # type: ignore[union-attr]
        assert "reverse" in mark_style(chart)
        app.query_one("#other", Input).focus()
        await wait_for(pilot, lambda: not chart.has_focus)
        await wait_for(pilot, lambda: "reverse" not in mark_style(chart), what="a plain mark")
        chart.focus()
        await wait_for(pilot, lambda: "reverse" in mark_style(chart), what="a reversed mark")
