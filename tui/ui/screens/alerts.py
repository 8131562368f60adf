"""The alerts of one project: a table (Enter opens one), `n` to create one, and on-call's
actions on the one under the cursor (alert_actions.py: pause, mute, edit, delete, a new secret,
a test event) where the server offers them.

Each row says whether the alert is breaching (state in words and symbol, the value beside the
threshold, since when) and how its metric went over the last 24 h (a sparkline whose midline is
the threshold). The sparklines are computed here from the trace list (tui/model/metrics.py), for any
server; a server that does not evaluate alerts also gets its states and values from them,
marked `*`, said in the header and in words under the table (metrics.COMPUTED_NOTE). The
states' ages ("firing 12m") keep counting between refreshes.

An alert created here has no state until the service's next evaluation round (the local
service evaluates every minute unless told otherwise): the list asks again, a few times and
further apart, until the alert has been evaluated, and shows it as "evaluating" meanwhile,
not as "no traces".
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.timer import Timer
from textual.widgets import DataTable, Static

from tui.api import Alert
from tui.core.alert_rules import metric_label, state_label
from tui.core.urls import host_of
from tui.model import charts, metrics
from tui.model.formatting import ago, counted
from tui.model.metrics import EVALUATING, awaits_evaluation, compared_text
from tui.model.text import safe_text
from tui.ui.screens.alert_actions import (
    AlertActions,
    alert_bindings,
    footer_when_room,
    show_created_secret,
    standing,
)
from tui.ui.screens.base import AppScreen
from tui.ui.trace_pages import Collected, collect
from tui.ui.widgets.key_footer import KeyFooter
from tui.ui.widgets.status_bar import StatusBar
from tui.ui.widgets.table import Column, Drawn, Table

if TYPE_CHECKING:
    from tui.api import ApiError, TraceSource

COLUMNS = (
    # Is it breaching? first: state in words and symbol, the value beside the threshold.
    Column("State", least=9, most=14),
    Column("Name", least=12, most=40, share=2),
    Column("Metric", least=15, most=40, share=1),  # "error rate /15m": the period whole
    # The sign between the two is true of them: `1956 ms ≤ 8000 ms` beside "ok".
    Column("Now vs threshold", least=12, most=28),
    Column("Last 24h", least=8, most=32, share=2),  # a sparkline: its midline is the threshold
    # Where the page goes: left out below ~100 columns (the detail shows it).
    Column("Webhook host", least=14, most=32, share=1, optional=True),
)
SPAN = timedelta(hours=24)
POINTS = 96  # a value every 15 minutes; a sparkline shows the worst of those in each cell
LONGEST_LOOKBACK = timedelta(hours=24)  # traces older than 48 h are not paged in for a chart
# After a create, the list is asked for again after each of these (seconds) until the new
# alert has been evaluated: some 3 minutes in all, a handful of requests.
FOLLOW_UPS_S = (2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 60.0)
EMPTY = Text("No alerts yet: press n to create one.")


def state_text(
    state: str | None, since: datetime | None, now: datetime, metric: str | None = None
) -> str:
    """`▲ firing 12m` (for how long), `✓ ok`, `· no traces` (in the window), `? unknown`."""
    label = state_label(state, metric)
    if state == "firing" and since is not None:
        label += " " + ago(since, now).removesuffix(" ago")
    return label


def computed_state(
    alert: Alert, series: metrics.Series
) -> tuple[str, float | None, datetime | None]:
    """For a server without alert state: the state, value and firing-since of the series' last
    moment (now)."""
    value = series.values[-1] if series.values else None
    if value is None:
        return "no_data", None, None
    if metrics.breaches(alert.condition, value, alert.threshold):
        return "firing", value, metrics.breaching_since(series, alert.condition, alert.threshold)
    return "ok", value, None


def trend_cell(alert: Alert, series: metrics.Series | None) -> Drawn | str:
    if series is None:
        return "…"
    if (alert.metric or "").startswith("prompt_drift"):
        return "server only"  # drift needs the prompts: metrics.DRIFT_NOTE
    return Drawn(
        lambda width: charts.sparkline(series.values, width, alert.threshold, alert.condition),
        width=24,
    )


def series_of(alerts: list[Alert], collected: Collected) -> dict[int, metrics.Series]:
    """Each alert's last 24 h (by position), from the traces paged in."""
    return {
        index: metrics.series(
            alert.metric or "", collected.traces, collected.end, SPAN, POINTS, collected.covered
        )
        for index, alert in enumerate(alerts)
    }


class AlertsScreen(AlertActions, AppScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="alerts.back"),
        Binding("enter", "open", "Open", id="alerts.open", priority=False),
        Binding("n", "new", "New", id="alerts.new", tooltip="A new alert"),
        Binding("r", "refresh", "Refresh", id="alerts.refresh"),
        *alert_bindings("alerts"),
    ]
    FOOTER_WHEN_ROOM = footer_when_room("alerts")
    DEFAULT_CSS = """
    AlertsScreen #header { height: 1; background: $boost; padding: 0 1; }
    AlertsScreen Table { height: 1fr; }
    AlertsScreen #computed { height: auto; padding: 0 1; color: $text-muted; display: none; }
    AlertsScreen #computed.-shown { display: block; }
    """

    def __init__(self, project_id: str, project_name: str) -> None:
        super().__init__()
        self.project_id = project_id
        self.project_name = project_name
        self.alerts: list[Alert] = []
        self.series: dict[int, metrics.Series] = {}  # by position in `alerts`
        self.collected: Collected | None = None
        self.awaiting: set[str] = set()  # ids of alerts created here and not yet evaluated
        self._follow_ups = 0  # of FOLLOW_UPS_S, asked so far
        self._follow_up_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        yield Table(COLUMNS)
        yield Static(
            f"* This server does not evaluate alerts: {metrics.COMPUTED_NOTE}.", id="computed"
        )
        yield StatusBar()
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(Table).focus()
        self.action_refresh()
        self.learn_offers()
        self.keep_ages_current(self._redraw_ages)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        allowed = self.alert_action_allowed(action)
        if allowed is not None:
            return allowed and bool(self.alerts)
        return super().check_action(action, parameters)

    # -- the actions' hooks (alert_actions.py) ---------------------------------------------------

    def current_alert(self) -> Alert | None:
        row = self.query_one(Table).cursor_row
        return self.alerts[row] if 0 <= row < len(self.alerts) else None

    def alert_changed(self, alert: Alert) -> None:
        for index, shown in enumerate(self.alerts):
            if shown.id == alert.id:
                self.alerts[index] = alert
        self.show_rows()

    @on(DataTable.RowHighlighted)
    def _cursor_moved(self) -> None:
        self.refresh_bindings()  # p reads Pause or Resume, for the alert under the cursor

    def alert_removed(self, alert: Alert) -> None:
        kept = [i for i, shown in enumerate(self.alerts) if shown.id != alert.id]
        self.series = {new: self.series[old] for new, old in enumerate(kept) if old in self.series}
        self.alerts = [self.alerts[i] for i in kept]
        self.show_rows()

    def header(self, note: str = "") -> None:
        text = safe_text(self.project_name, 40, style="bold")
        text.append(f" · alerts · {len(self.alerts)}{note}")
        self.query_one("#header", Static).update(text)

    def _redraw_ages(self) -> None:
        """The rows again from what is held (no request) when one shows an age: `▲ firing 12m`."""
        if any(
            state == "firing" and since is not None
            for state, _, since, _ in map(self.shown_state, range(len(self.alerts)))
        ):
            self.show_rows()

    def summary(self) -> str:
        firing = sum(self.shown_state(i)[0] == "firing" for i in range(len(self.alerts)))
        note = f" · ▲ {firing} firing" if firing else ""
        computed = any(alert.state is None for alert in self.alerts)
        # The * in words, once the rows show one.
        self.query_one("#computed", Static).set_class(
            computed and self.collected is not None, "-shown"
        )
        if self.collected is None:
            return note + " · charts loading…"
        if computed:
            note += " · * computed from traces"
        if self.collected.capped:
            note += f" · charts of {counted(len(self.collected.traces), 'trace')} only"
        return note

    def shown_state(self, index: int) -> tuple[str | None, float | None, datetime | None, bool]:
        """(state, value, firing since, computed here) of the alert at `index`."""
        alert = self.alerts[index]
        series = self.series.get(index)
        if alert.state is None and series is not None and metrics.computable(alert.metric):
            return (*computed_state(alert, series), True)
        return alert.state, alert.last_value, alert.firing_since, False

    def action_refresh(self) -> None:
        if not self.tui.client.has_alerts:
            from tui.api.source import missing_feature

            self.header(" · " + missing_feature(self.tui.client, "alerts"))
            return
        self.header(" · loading…")
        self.call_api(
            lambda client: client.list_alerts(self.project_id),
            self._loaded,
            group="alerts",
            failed=lambda error: self.header(f" · {error.title}"),
            retry=self.action_refresh,
            project_id=self.project_id,
        )

    def _loaded(self, alerts: list[Alert]) -> None:
        self.alerts = alerts
        self.awaiting &= {alert.id for alert in alerts if alert.id and awaits_evaluation(alert)}
        self.series = {}
        self.collected = None
        self.show_rows()
        self.call_api(
            self._collect,
            self._collected,
            group="alerts-series",
            failed=self._no_charts,
            project_id=self.project_id,
        )

    def _no_charts(self, error: ApiError) -> bool:
        self.header(f" · charts: {error.title}")
        return True  # the alerts are shown; the header says what is missing

    def show_rows(self) -> None:
        now = self.tui.now()
        rows = []
        for index, alert in enumerate(self.alerts):
            state, value, since, computed = self.shown_state(index)
            rows.append(
                (
                    (
                        self.state_cell(alert, state, since, computed, now),
                        (alert.name or "(no name)") + standing(alert, now),
                        metric_label(alert.metric, compact=True),
                        compared_text(alert.metric, alert.condition, value, alert.threshold),
                        trend_cell(alert, self.series.get(index, None) if self.collected else None),
                        host_of(alert.webhook_url or "") or alert.webhook_url or "–",
                    ),
                    alert.id,  # the row's key: a refresh keeps the cursor on its alert
                )
            )
        table = self.query_one(Table)
        table.set_rows(rows)
        table.empty_text = EMPTY
        self.header(self.summary())
        self.refresh_bindings()  # the action keys need an alert under the cursor

    def state_cell(
        self, alert: Alert, state: str | None, since: datetime | None, computed: bool, now: datetime
    ) -> str:
        if alert.paused:
            return "‖ paused"
        if alert.id in self.awaiting or awaits_evaluation(alert):
            return EVALUATING  # the server's "no data" would say the window has no traces
        return state_text(state, since, now, alert.metric) + ("*" if computed else "")

    async def _collect(self, client: TraceSource) -> tuple[Collected, dict[int, metrics.Series]]:
        now = self.tui.now()
        alerts = list(self.alerts)
        lookback = max(
            (w for w in (metrics.lookback(a.metric or "") for a in alerts) if w is not None),
            default=timedelta(0),
        )
        start = now - SPAN - min(lookback, LONGEST_LOOKBACK)
        collected = await collect(client, self.project_id, start, now)
        # Tens of ms per alert over 50,000 traces: in a thread, so keys and frames go on.
        return collected, await asyncio.to_thread(series_of, alerts, collected)

    def _collected(self, result: tuple[Collected, dict[int, metrics.Series]]) -> None:
        self.collected, self.series = result
        self.show_rows()

    def action_back(self) -> None:
        self.dismiss()

    @on(DataTable.RowSelected)
    def _row_selected(self) -> None:  # Enter on the table (the table takes the key first)
        self.action_open()

    def action_open(self) -> None:
        """The alert under the cursor: its state, history and the traces of its window."""
        row = self.query_one(Table).cursor_row
        if 0 <= row < len(self.alerts):
            self.tui.open_alert(self.project_id, self.alerts[row], self.collected)

    def action_new(self) -> None:
        def created(alert: Alert | None) -> None:
            if alert is not None:
                self.notify(f"Alert {alert.name} created.")
                self.alerts.append(alert)  # in the list at once; the refresh adds its state
                if alert.id and awaits_evaluation(alert):
                    self.awaiting.add(alert.id)
                    self._follow_ups = 0
                    self._follow_up_later()
                self.show_rows()
                self.action_refresh()
                show_created_secret(self.tui, alert)

        self.tui.new_alert(self.project_id, self.project_name, created, self.collected)

    # -- following a new alert until the service has evaluated it --------------------------------

    def _follow_up_later(self) -> None:
        if self._follow_up_timer is not None or not self.awaiting:
            return
        if self._follow_ups >= len(FOLLOW_UPS_S):
            self.awaiting.clear()  # not evaluated yet: the list shows what the server says
            self.show_rows()
            return
        delay = FOLLOW_UPS_S[self._follow_ups]
        self._follow_ups += 1
        self._follow_up_timer = self.set_timer(delay, self._follow_up)

    def _follow_up(self) -> None:
        self._follow_up_timer = None

        def failed(_error: ApiError) -> bool:
            self._follow_up_later()  # the next one may get through; `r` is there meanwhile
            return True

        self.call_api(
            lambda client: client.list_alerts(self.project_id),
            self._followed,
            group="alerts-follow-up",
            failed=failed,
            project_id=self.project_id,
        )

    def _followed(self, alerts: list[Alert]) -> None:
        """The evaluated ones of the alerts awaited take the server's state, in place (the
        charts stay)."""
        listed = {alert.id: alert for alert in alerts if alert.id}
        self.awaiting &= set(listed)  # one deleted meanwhile is not awaited
        for index, shown in enumerate(self.alerts):
            fresh = listed.get(shown.id) if shown.id in self.awaiting else None
            if fresh is not None and not awaits_evaluation(fresh):
                self.alerts[index] = fresh
                self.awaiting.discard(fresh.id or "")
        self.show_rows()
        self._follow_up_later()
