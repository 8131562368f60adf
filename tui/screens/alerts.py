"""The alerts of one project: a table, and `n` to create one."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Static

from tui.alert_rules import condition_symbol, metric_label
from tui.api import Alert
from tui.screens.base import AppScreen
from tui.text import safe_text
from tui.urls import host_of
from tui.widgets.status_bar import StatusBar
from tui.widgets.table import Column, Table

COLUMNS = (
    Column("Name", least=10, most=40, share=3),
    Column("Metric", least=12, most=40, share=2),
    # Where the page goes matters most at 3 a.m.: the host keeps its width, names give way.
    Column("Fires", least=6, most=20),
    Column("Webhook host", least=10, most=32),
)


def threshold_text(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:g}"


class AlertsScreen(AppScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="alerts.back"),
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
        self.query_one(Table).set_rows(
            [
                (
                    (
                        alert.name or "(no name)",
                        metric_label(alert.metric),
                        f"{condition_symbol(alert.condition)} {threshold_text(alert.threshold)}",
                        host_of(alert.webhook_url or "") or alert.webhook_url or "–",
                    ),
                    None,
                )
                for alert in alerts
            ]
        )
        self.header()

    def action_back(self) -> None:
        self.dismiss()

    def action_new(self) -> None:
        def created(alert: Alert | None) -> None:
            if alert is not None:
                self.notify(f"Alert {alert.name} created.")
                self.action_refresh()

        self.tui.new_alert(self.project_id, self.project_name, created)
