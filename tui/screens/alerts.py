"""The alerts of one project: a table (Enter opens one), and `n` to create one."""

from __future__ import annotations

from datetime import datetime, timezone

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Static

from tui.alert_rules import breach_text, metric_label, state_label
from tui.api import Alert
from tui.formatting import ago
from tui.screens.base import AppScreen
from tui.text import safe_text
from tui.urls import host_of
from tui.widgets.status_bar import StatusBar
from tui.widgets.table import Column, Table

COLUMNS = (
    # Is it breaching? first: state in words and symbol, the value beside the threshold.
    Column("State", least=9, most=14),
    Column("Name", least=10, most=40, share=3),
    Column("Metric", least=19, most=40, share=1),  # "error rate pct /15m": the period whole
    Column("Now / fires", least=12, most=28),
    # Where the page goes matters at 3 a.m.: the host gives way only when the rest are at their least.
    Column("Webhook host", least=14, most=32, share=2),
)


def state_text(alert: Alert, now: datetime) -> str:
    """`▲ firing 12m` (for how long), `✓ ok`, `· no data`, `? unknown`."""
    label = state_label(alert.state)
    if alert.state == "firing" and alert.firing_since is not None:
        label += " " + ago(alert.firing_since, now).removesuffix(" ago")
    return label


class AlertsScreen(AppScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="alerts.back"),
        Binding("enter", "open", "Open", id="alerts.open", priority=False),
        Binding("n", "new", "New alert", id="alerts.new"),
        Binding("r", "refresh", "Refresh", id="alerts.refresh"),
    ]
    DEFAULT_CSS = """
    AlertsScreen #header { height: 1; background: $boost; padding: 0 1; }
    AlertsScreen Table { height: 1fr; }
    """

    def __init__(self, project_id: str, project_name: str) -> None:
        super().__init__()
        self.project_id = project_id
        self.project_name = project_name
        self.alerts: list[Alert] = []

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        yield Table(COLUMNS)
        yield StatusBar()
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one(Table).focus()
        self.action_refresh()

    def header(self, note: str = "") -> None:
        text = safe_text(self.project_name, 40, style="bold")
        text.append(f" · alerts · {len(self.alerts)}{note}")
        self.query_one("#header", Static).update(text)

    def action_refresh(self) -> None:
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
        now = datetime.now(timezone.utc)
        firing = sum(alert.state == "firing" for alert in alerts)
        self.query_one(Table).set_rows(
            [
                (
                    (
                        state_text(alert, now),
                        alert.name or "(no name)",
                        metric_label(alert.metric, compact=True),
                        breach_text(
                            alert.metric, alert.condition, alert.last_value, alert.threshold
                        ),
                        host_of(alert.webhook_url or "") or alert.webhook_url or "–",
                    ),
                    None,
                )
                for alert in alerts
            ]
        )
        self.header(f" · ▲ {firing} firing" if firing else "")

    def action_back(self) -> None:
        self.dismiss()

    @on(DataTable.RowSelected)
    def _row_selected(self) -> None:  # Enter on the table (the table takes the key first)
        self.action_open()

    def action_open(self) -> None:
        """The alert under the cursor: its state, history and the traces of its window."""
        row = self.query_one(Table).cursor_row
        if 0 <= row < len(self.alerts):
            self.tui.open_alert(self.project_id, self.alerts[row])

    def action_new(self) -> None:
        def created(alert: Alert | None) -> None:
            if alert is not None:
                self.notify(f"Alert {alert.name} created.")
                self.action_refresh()

        self.tui.new_alert(self.project_id, self.project_name, created)
