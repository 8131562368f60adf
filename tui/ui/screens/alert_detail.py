"""One alert, for the on-call engineer: is it breaching, since when, how its metric went over
the chosen range (a chart with the threshold row; `t` picks the range), what happened, and the
traces of its window ranked by what it measures (Enter opens one). The actions on it (pause,
mute, edit, delete, a new secret, a test event: alert_actions.py) are here too.

The state and history come from the server when it evaluates alerts (an extension of the
spec); a server that does not gets the same answer computed here from its trace list
(tui/model/metrics.py), and the screen says so in words (metrics.COMPUTED_NOTE). The chart,
computed here for every server, says what its bars and marks are on its first line.

The alert and its history come by two requests, and an evaluation round may fall between them:
the header follows the history's newest change when that is the newer read (`agreed`), and the
history is read again when the alert is (`history_behind`), so the two never contradict each
other. Its ages ("evaluated 2m ago", "firing for 12m") keep counting.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static

from tui.core.alert_rules import amount, metric_label, no_value_text, parse_metric, state_label
from tui.model import charts, metrics
from tui.model import formatting as fmt
from tui.model.metrics import compared_text
from tui.model.text import safe_text
from tui.model.timerange import TimeRange
from tui.ui.screens.alert_actions import (
    AlertActions,
    alert_bindings,
    fires_when,
    footer_when_room,
    merged,
    standing,
)
from tui.ui.screens.base import AppScreen
from tui.ui.trace_pages import Collected, collect
from tui.ui.widgets.key_footer import KeyFooter
from tui.ui.widgets.metric_chart import MetricChart
from tui.ui.widgets.status_bar import StatusBar
from tui.ui.widgets.table import Column, Table

if TYPE_CHECKING:
    from tui.api import Alert, AlertEvent, ApiError, Page, Trace, TraceSource

ORDERS = {"latency": "slowest first", "error_rate": "errored first", "cost": "costliest first"}
MAX_TRACES = 20_000  # of the window, paged in: beyond, the value says it is of these only
# The chart's series has a moment per period of the metric (so "would have fired" misses no
# window), within these bounds; the chart shows the worst of the moments in each cell.
LEAST_POINTS, MOST_POINTS = 120, 2880


def points_for(span: timedelta, period: timedelta | None) -> int:
    if period is None or period <= timedelta(0):
        return LEAST_POINTS
    return max(LEAST_POINTS, min(MOST_POINTS, math.ceil(span / period)))


EVENT_COLUMNS = (
    Column("When", least=11, most=16),
    Column("What", least=20, most=30, share=1),  # "· no traces → ▲ firing" whole
    Column("Detail", least=10, most=60, share=2),
)
TRACE_COLUMNS = (
    Column("Start", least=11, most=16),
    Column("Name", least=10, most=60, share=2),
    Column("Duration", least=8, most=10),
    Column("Errors", least=6, most=8),
    Column("Cost", least=8, most=10),
)
TITLED = {"#events-title": "#events", "#traces-title": "#traces"}  # a title -> its table


def chart_legend(alert: Alert) -> Text:
    """The chart's first line: what its bars and marks are (the marks of tui/model/charts.py)."""
    legend = Text(no_wrap=True, overflow="ellipsis")
    legend.append("█", style=charts.BAR_STYLE)
    legend.append(" ")
    legend.append_text(safe_text(metric_label(alert.metric, compact=True), 30))
    legend.append("  █", style=charts.BREACH_STYLE)
    legend.append(" breaching  ")
    legend.append(charts.THRESHOLD_MARK * 2, style="dim")
    legend.append(" threshold  ")
    legend.append(f"{charts.ZERO_MARK} zero, blank no data", style="dim")
    return legend


def change_text(event: AlertEvent, metric: str | None, first: bool = False) -> str:
    """`· no traces → ▲ firing`; the alert's first change starts from `· new` (the server's
    no_data before its first evaluation is not an empty window)."""
    before = "· new" if first and event.from_state == "no_data" else None
    return (
        f"{before or state_label(event.from_state, metric)} → {state_label(event.to_state, metric)}"
    )


def first_change(events: list[AlertEvent], complete: bool) -> AlertEvent | None:
    """The alert's first state change, when the history read holds it (`complete`: no older
    page)."""
    changes = [e for e in events if e.kind == "state" and e.at is not None]
    if not complete or not changes:
        return None
    return min(changes, key=lambda e: e.at.timestamp() if e.at else 0.0)


def event_row(
    event: AlertEvent, metric: str | None = None, first: bool = False
) -> tuple[str, str, str]:
    """A line of the history; a state change's value with the metric's unit."""
    when = fmt.local_time(event.at, seconds=True) if event.at else "–"
    if event.kind == "state":
        what = change_text(event, metric, first)
        value = "" if event.value is None else f"value {amount(metric, event.value)}"
        return when, what, value
    ok = event.ok is True or event.ok == 1
    what = f"{'✓' if ok else '✗'} webhook #{event.attempt or '?'}"
    detail = " · ".join(
        part
        for part in (
            event.event_type or "",
            f"HTTP {event.status_code}" if event.status_code else "",
            event.error or "",
            f"{event.duration_ms:.0f} ms" if event.duration_ms is not None else "",
        )
        if part
    )
    return when, what, detail


def newest_change(events: list[AlertEvent]) -> AlertEvent | None:
    """The latest state change of a history (servers may list it in either order)."""
    changes = [e for e in events if e.kind == "state" and e.at is not None and e.to_state]
    return max(changes, key=lambda e: e.at.timestamp() if e.at else 0.0, default=None)


def history_behind(alert: Alert, events: list[AlertEvent]) -> bool:
    """Whether the alert was read after a change its history (read by another request) does
    not list yet: its state differs from where the history's newest change led."""
    newest = newest_change(events)
    return (
        newest is not None
        and alert.state is not None
        and newest.to_state != alert.state
        and newest.at is not None
        and (alert.last_evaluated_at is None or alert.last_evaluated_at >= newest.at)
    )


def agreed(alert: Alert, events: list[AlertEvent]) -> Alert:
    """The alert as its history has it when the history is the newer of the two reads: the
    state, value and since of its newest change, so the header never contradicts the list."""
    newest = newest_change(events)
    if newest is None or alert.state is None or newest.to_state == alert.state:
        return alert
    if history_behind(alert, events):
        return alert  # the alert is the newer: the history is read again
    return alert.model_copy(
        update={
            "state": newest.to_state,
            "last_value": newest.value,
            "last_evaluated_at": newest.at,
            "firing_since": newest.at if newest.to_state == "firing" else None,
        }
    )


def event_lines(event: AlertEvent, alert: Alert, first: bool = False) -> list[tuple[str, str]]:
    """Every field of a history line, whole, for reading it in a dialog."""
    when = fmt.local_time(event.at, seconds=True) if event.at else ""
    if event.kind == "state":
        return [
            ("When", when),
            ("Change", change_text(event, alert.metric, first)),
            ("Value", "" if event.value is None else amount(alert.metric, event.value)),
            ("Fires when", fires_when(alert.metric, alert.condition, alert.threshold)),
        ]
    ok = event.ok is True or event.ok == 1
    return [
        ("When", when),
        ("Webhook", f"{event.event_type or 'event'}, attempt {event.attempt or '?'}"),
        ("Outcome", "delivered" if ok else "not delivered"),
        ("Status", f"HTTP {event.status_code}" if event.status_code else "no answer"),
        ("Error", event.error or ""),
        ("Took", fmt.duration(event.duration_ms) if event.duration_ms is not None else ""),
    ]


def trace_row(trace: Trace) -> tuple[str, str, str, str, str]:
    errors = trace.error_count or (1 if trace.status == "error" else 0)
    return (
        fmt.local_time(trace.started_at, seconds=True) if trace.started_at else "–",
        trace.name or trace.id or "–",
        fmt.duration(trace.duration_ms),
        f"✗ {errors}" if errors else "✓",
        fmt.cost(trace.total_cost_usd),
    )


class AlertDetailScreen(AlertActions, AppScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="alert.back"),
        Binding(
            "enter",
            "open",
            "Open",
            id="alert.open",
            priority=False,
            tooltip="The trace under the cursor; a history line read whole",
        ),
        Binding("tab", "switch", "Switch", id="alert.switch", tooltip="History or traces"),
        Binding("t", "time_range", "Range", id="alert.range", tooltip="The chart's time range"),
        Binding("r", "refresh", "Refresh", id="alert.refresh"),
        *alert_bindings("alert"),
    ]
    FOOTER_WHEN_ROOM = footer_when_room("alert")
    DEFAULT_CSS = """
    AlertDetailScreen #header { height: auto; background: $boost; padding: 0 1; }
    AlertDetailScreen #facts { height: auto; padding: 0 1; }
    AlertDetailScreen MetricChart { height: 8; }
    AlertDetailScreen.-tall MetricChart { height: 13; }
    AlertDetailScreen .title { height: 1; padding: 0 1; color: $text-muted; text-style: bold; }
    AlertDetailScreen .title.-focused { color: $text; text-style: bold reverse; }
    AlertDetailScreen #events { height: 1fr; max-height: 8; }
    AlertDetailScreen #traces { height: 2fr; }
    """

    def __init__(self, project_id: str, alert: Alert, collected: Collected | None = None) -> None:
        super().__init__()
        self.project_id = project_id
        self.alert = alert
        self.window: list[Trace] = []
        self.ranked: list[Trace] = []
        self.capped = False
        self.range = TimeRange()
        # The last 24 h the alerts screen already paged in: the chart needs no request of its own.
        self.collected = collected
        self.series: metrics.Series | None = None
        self.events: list[AlertEvent] = []
        self.events_complete = False  # the history read holds its first change
        self.titles: dict[str, str] = {}  # each table's title, as last said
        # The metric's value now as read from the trace list here, and over how many traces.
        self.computed: float | None = None
        self.counted: int | None = None
        self.history_reread = False  # the history was read again this refresh (history_behind)

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        yield Static(id="facts")
        yield MetricChart(id="chart")
        yield Static(id="events-title", classes="title")
        yield Table(EVENT_COLUMNS, id="events")
        yield Static(id="traces-title", classes="title")
        yield Table(TRACE_COLUMNS, id="traces")
        yield StatusBar()
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#traces", Table).focus()
        self._title("#events-title", "History (state changes and webhooks)")
        self._title("#traces-title", "Traces of the window")
        self.show_facts()
        self.action_refresh()
        self.learn_offers()
        self.keep_ages_current(self.show_facts)  # "evaluated 2m ago", "firing for 12m"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        allowed = self.alert_action_allowed(action)
        if allowed is not None:
            return allowed
        return super().check_action(action, parameters)

    # -- the actions' hooks (alert_actions.py) ---------------------------------------------------

    def current_alert(self) -> Alert | None:
        return self.alert

    def alert_changed(self, alert: Alert) -> None:
        self.alert = alert
        self.show_facts()
        self.refresh_bindings()  # p reads Pause or Resume
        self.tell_screens_below("alert_changed", alert)

    def alert_removed(self, alert: Alert) -> None:
        self.tell_screens_below("alert_removed", alert)
        self.dismiss()

    def tell_screens_below(self, hook: str, alert: Alert) -> None:
        """The alerts list beneath shows the change at once (screens never import each
        other: it is found by what it does)."""
        for screen in self.app.screen_stack:
            if screen is not self and getattr(screen, "project_id", None) == self.project_id:
                method = getattr(screen, hook, None)
                if callable(method):
                    method(alert)

    def after_test_event(self) -> None:
        # The delivery takes a moment: the history is read again shortly (r reads it now).
        self.set_timer(2.0, self.action_refresh)

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.height >= 40, "-tall")

    # -- what is shown ---------------------------------------------------------------------------

    def show_facts(self) -> None:
        alert = agreed(self.alert, self.events)
        computed, counted = self.computed, self.counted
        header = Text()
        computed_state = None
        if alert.state is None and metrics.computable(alert.metric) and counted is not None:
            computed_state = (
                "no_data"
                if computed is None
                else "firing"
                if metrics.breaches(alert.condition, computed, alert.threshold)
                else "ok"
            )
        shown = state_label(computed_state or alert.state, alert.metric)
        if metrics.awaits_evaluation(alert):
            shown = metrics.EVALUATING
        shown += "*" if computed_state else ""
        header.append(shown + "  ", style="bold")
        header.append_text(safe_text(alert.name or "(no name)", 60, style="bold"))
        header.append(standing(alert, self.tui.now()), style="bold yellow")
        header.append("  ")
        header.append_text(safe_text(metric_label(alert.metric), 60))
        self.query_one("#header", Static).update(header)
        facts = Text()
        now = self.tui.now()
        if alert.state is not None:
            now_value = (
                amount(alert.metric, alert.last_value)
                if alert.last_value is not None or alert.state != "no_data"
                else no_value_text(alert.metric)
            )
            facts.append(f"now {now_value} · ")
            # The server's condition and metric, made visible (an unknown one comes as sent).
            facts.append_text(safe_text(fires_when(alert.metric, alert.condition, alert.threshold)))
            if alert.state == "firing" and alert.firing_since is not None:
                facts.append(
                    f" · firing for {fmt.ago(alert.firing_since, now).removesuffix(' ago')}"
                )
            if alert.last_evaluated_at is not None:
                facts.append(f" · evaluated {fmt.ago(alert.last_evaluated_at, now)}", style="dim")
        else:
            facts.append_text(
                safe_text(
                    "this server does not evaluate alerts"
                    + (
                        "; " + metrics.DRIFT_NOTE
                        if (alert.metric or "").startswith("prompt_drift")
                        else f", so {metrics.COMPUTED_NOTE}: "
                        + compared_text(alert.metric, alert.condition, computed, alert.threshold)
                        + ("" if counted is None else f" over {fmt.counted(counted, 'trace')}")
                        + (" (the first ones only)" if self.capped else "")
                    ),
                    300,
                )
            )
        if computed is not None and alert.state is not None:
            here = amount(alert.metric, computed)
            # Only when it differs from the server's: traces arrived since its evaluation.
            if here != amount(alert.metric, alert.last_value):
                facts.append(f" · {here} from the traces listed now", style="dim")
        self.query_one("#facts", Static).update(facts)

    # -- loading ---------------------------------------------------------------------------------

    def action_refresh(self) -> None:
        self.history_reread = False
        self.load_chart()
        # The alert as it is now: the header and the history, read together, agree.
        self.call_api(
            self._current,
            self._reread,
            group="alert-itself",
            failed=lambda _error: True,  # the header keeps what it had; the status line tells
            project_id=self.project_id,
        )
        self.load_events()
        self.call_api(
            self._window_traces,
            self._traces,
            group="alert-traces",
            failed=lambda error: self._title("#traces-title", f"Traces: {error.title}"),
            retry=self.action_refresh,
            project_id=self.project_id,
        )

    def load_events(self) -> None:
        self.call_api(
            lambda client: client.list_alert_events(self.project_id, self.alert.id or ""),
            self._events,
            group="alert-events",
            failed=self._no_events,
            project_id=self.project_id,
        )

    def check_history(self) -> None:
        """Read the history once more when the alert was read after a change it lacks."""
        if not self.history_reread and history_behind(self.alert, self.events):
            self.history_reread = True
            self.load_events()

    def load_chart(self) -> None:
        chart = self.query_one(MetricChart)
        metric = self.alert.metric or ""
        if not metrics.computable(metric):
            chart.say(
                metrics.DRIFT_NOTE if metric.startswith("prompt_drift") else "not a metric of ours"
            )
            return
        start, end = self.range.bounds(self.tui.now())
        lookback = metrics.lookback(metric) or timedelta(0)
        reusable = self.collected
        if (
            reusable is not None
            and self.range.preset == "24h"
            and reusable.start <= start - lookback
            and end - reusable.end < timedelta(minutes=5)  # fresh enough: refresh asks again
        ):
            self._chart(reusable)
            return
        chart.say("loading the chart…")
        self.call_api(
            lambda client: collect(client, self.project_id, start - lookback, end),
            self._chart,
            group="alert-chart",
            failed=self._no_chart,
            project_id=self.project_id,
        )

    def _no_chart(self, error: ApiError) -> bool:
        self.query_one(MetricChart).say(f"chart: {error.title}")
        return True  # the rest of the screen stands; the chart says what is missing

    def _chart(self, collected: Collected) -> None:
        self.collected = collected
        metric = self.alert.metric or ""
        start, end = self.range.bounds(collected.end)
        self.series = metrics.series(
            metric,
            collected.traces,
            end,
            end - start,
            points_for(end - start, metrics.lookback(metric)),
            covered=collected.covered,
        )
        fired = metrics.firings(self.series.values, self.alert.condition, self.alert.threshold)
        note = f"{self.range.label} · would have fired {fmt.counted(fired, 'time')}"
        period = metrics.lookback(metric)
        if period is not None and self.series.step > period:  # windows between the moments
            note += f" (checked every {fmt.duration(self.series.step.total_seconds() * 1000)})"
        if collected.capped:
            note += f" · of {fmt.counted(len(collected.traces), 'trace')} only"
        self.query_one(MetricChart).show(
            self.series.values,
            self.series.start,
            end,
            lambda value: amount(metric, value),
            self.alert.threshold,
            self.alert.condition,
            note=note,
            title=chart_legend(self.alert),
        )

    async def _current(self, client: TraceSource) -> Alert | None:
        alerts = await client.list_alerts(self.project_id)
        return next((a for a in alerts if a.id and a.id == self.alert.id), None)

    def _reread(self, alert: Alert | None) -> None:
        if alert is None:  # deleted elsewhere: the header says so; the actions stay harmless
            self.query_one("#facts", Static).update(
                Text("This alert no longer exists on the server.", style="bold")
            )
            return
        self.alert = merged(self.alert, alert)
        self.show_facts()
        self.refresh_bindings()  # paused elsewhere: p reads Resume
        if self.events:  # the units follow an edited metric
            self._events_again()
        self.check_history()
        self.tell_screens_below("alert_changed", self.alert)

    def _events_again(self) -> None:
        first = first_change(self.events, self.events_complete)
        rows = [(event_row(e, self.alert.metric, e is first), None) for e in self.events]
        self.query_one("#events", Table).set_rows(rows)

    def _title(self, selector: str, text: str) -> None:
        """A table's title: ▸ before the one whose table has the focus (the keys go there),
        which is also drawn reversed; `tab` names the other."""
        self.titles[selector] = text
        title = self.query_one(selector, Static)
        focused = self.query_one(TITLED[selector], Table).has_focus
        title.set_class(focused, "-focused")
        shown = safe_text(f"▸ {text}" if focused else f"  {text}", 120)
        if focused:
            other = "traces" if selector == "#events-title" else "history"
            shown.append(f"  (tab: {other})", style="not bold")
        title.update(shown)

    def on_descendant_focus(self) -> None:
        for selector, text in self.titles.items():
            self._title(selector, text)

    def _events(self, page: Page) -> None:
        events: list[AlertEvent] = list(page.items)
        self.events = events
        self.events_complete = page.next_page is None
        self._events_again()
        more = " (newest)" if page.next_page is not None else ""
        read = " · enter on one reads it whole" if events else ""
        self._title("#events-title", f"History: {fmt.counted(len(events), 'event')}{more}{read}")
        self.show_facts()  # the header follows the history's newest change if it is newer
        self.check_history()

    def _no_events(self, error: ApiError) -> bool:
        from tui.api import NotFound

        if isinstance(error, NotFound):  # a server without alert history: nothing is wrong
            self._title("#events-title", "History: this server keeps none")
            return True
        self._title("#events-title", f"History: {error.title}")
        return False

    async def _window_traces(self, client: TraceSource) -> list[Trace]:
        window = metrics.window_of(self.alert.metric or "", self.tui.now())
        if window is None:
            return []
        found: list[Trace] = []
        async for trace in client.iter_traces(self.project_id, start=window[0], end=window[1]):
            found.append(trace)
            if len(found) >= MAX_TRACES:
                self.capped = True
                break
        return metrics.in_window(found, *window)

    def _traces(self, traces: list[Trace]) -> None:
        metric = self.alert.metric or ""
        self.window = traces
        self.ranked = metrics.ranked(metric, traces)
        self.query_one("#traces", Table).set_rows([(trace_row(t), None) for t in self.ranked[:500]])
        parsed = parse_metric(metric)
        order = ORDERS.get(parsed.measure if parsed else "", "newest first")
        self._title("#traces-title", f"Traces of the window: {len(traces):,}, {order}")
        self.computed, self.counted = metrics.value_of(metric, traces), len(traces)
        self.show_facts()

    # -- actions ---------------------------------------------------------------------------------

    @on(DataTable.RowSelected, "#traces")
    def _row_selected(self) -> None:  # Enter on the traces (the table takes the key first)
        self.action_open()

    @on(DataTable.RowSelected, "#events")
    def _event_selected(self) -> None:
        """Enter on a line of the history: the whole of it (the table cuts long errors)."""
        row = self.query_one("#events", Table).cursor_row
        if 0 <= row < len(self.events):
            from tui.ui.screens.dialogs import ReadDialog

            event = self.events[row]
            first = event is first_change(self.events, self.events_complete)
            self.tui.push_screen(
                ReadDialog("History: one event", event_lines(event, self.alert, first))
            )

    def action_open(self) -> None:
        table = self.query_one("#traces", Table)
        if table.has_focus and 0 <= table.cursor_row < len(self.ranked):
            trace = self.ranked[table.cursor_row]
            if trace.id:
                self.tui.open_trace(trace.id, self.project_id)

    def action_switch(self) -> None:
        events, traces = self.query_one("#events", Table), self.query_one("#traces", Table)
        (traces if events.has_focus else events).focus()

    def action_time_range(self) -> None:
        def chosen(value: TimeRange | None) -> None:
            if value is not None:
                self.range = value
                self.load_chart()

        self.tui.pick_time_range(self.range, chosen)

    def action_back(self) -> None:
        self.dismiss()
