"""The alert form's metric and condition are chosen, not typed: nothing outside the grammar can
be entered (`foo` was accepted until save), the units follow the measure, and an alert edited
with another server's metric or condition keeps it as it came until something else is chosen."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Select

from tui.core.alert_rules import CONDITIONS, MEASURE_UNITS
from tui.ui.widgets.metric_picker import KEEP, ConditionPicker, MetricPicker


class Form(App[None]):
    def __init__(self, metric: str, condition: str) -> None:
        super().__init__()
        self.metric, self.condition = metric, condition

    def compose(self) -> ComposeResult:
        yield MetricPicker(self.metric, id="metric")
        yield ConditionPicker(self.condition, id="condition")


async def test_the_units_follow_the_measure_and_the_value_reads_as_the_api_spells_it() -> None:
    app = Form("latency_ms_15m", "gte")
    async with app.run_test(size=(100, 30)) as pilot:
        picker = app.query_one(MetricPicker)
        assert picker.value == "latency_ms_15m"
        assert app.query_one(ConditionPicker).value == "gte"
        measure = picker.query_one("#metric-measure", Select)
        measure.focus()
        await pilot.press("enter", *"err", "enter")  # typed to the choice, taken with enter
        await pilot.pause()
        assert picker.value == "error_rate_pct_15m"  # the measure's first unit, the period kept
        unit = picker.query_one("#metric-unit", Select)
        assert [value for _, value in unit._options] == list(MEASURE_UNITS["error_rate"])
        picker.value = "cost_usd_2h"  # a period of the grammar that is not offered: added
        await pilot.pause()
        assert picker.value == "cost_usd_2h"
        assert picker.query_one("#metric-period", Select).value == "2h"


async def test_another_servers_metric_and_condition_are_kept_until_changed() -> None:
    app = Form("queue_depth_[b]x[/b]_5m", "above")
    async with app.run_test(size=(100, 30)) as pilot:
        picker = app.query_one(MetricPicker)
        assert picker.value == "queue_depth_[b]x[/b]_5m"
        measure = picker.query_one("#metric-measure", Select)
        assert measure.value == KEEP
        condition = app.query_one(ConditionPicker)
        assert condition.value == "above"
        assert [value for _, value in condition._options][1:] == list(CONDITIONS)
        measure.value = "latency"
        await pilot.pause()
        assert picker.value == "latency_ms_5m"
