"""The alerts of one project: a table, and `n` to create one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from tui.api import Alert, ApiError, split_metric
from tui.api.urls import host_of
from tui.text import safe_text, visible
from tui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from tui.app import TraceTuiApp

CONDITION_SYMBOLS = {"gt": ">", "gte": "≥", "lt": "<", "lte": "≤"}


def metric_text(metric: str | None) -> Text:
    parts = split_metric(metric)
    if parts is None:
        return safe_text(metric or "–", 30)
    measure, unit, period = parts
    return safe_text(f"{measure.replace('_', ' ')} · {unit} · per {period}", 30)


def threshold_text(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:g}"


class AlertsScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "back", "Back", id="alerts.back"),
        Binding("n", "new", "New alert", id="alerts.new"),
        Binding("r", "refresh", "Refresh", id="alerts.refresh"),
    ]
    DEFAULT_CSS = """
    AlertsScreen #header { height: 1; background: $boost; padding: 0 1; }
    AlertsScreen DataTable { height: 1fr; }
    """

    def __init__(self, project_id: str, project_name: str) -> None:
        super().__init__()
        self.project_id = project_id
        self.project_name = project_name
        self.alerts: list[Alert] = []

    @property
    def tui(self) -> TraceTuiApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        yield DataTable(cursor_type="row", zebra_stripes=True)
        yield StatusBar()
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for column in ("Name", "Metric", "Condition", "Threshold", "Webhook host"):
            table.add_column(column, key=column)
        table.focus()
        self.action_refresh()

    def header(self, note: str = "") -> None:
        text = safe_text(self.project_name, 40, style="bold")
        text.append(f" · alerts · {len(self.alerts)}{note}")
        self.query_one("#header", Static).update(text)

    @work(exclusive=True, group="alerts", exit_on_error=False)
    async def action_refresh(self) -> None:
        self.header(" · loading…")
        try:
            alerts = await self.tui.client.list_alerts(self.project_id)
        except ApiError as error:
            self.header(f" · {error.title}")
            self.tui.report_error(error, retry=self.action_refresh, project_id=self.project_id)
            return
        self.alerts = alerts
        self.tui.mark_refreshed()
        table = self.query_one(DataTable)
        table.clear()
        for alert in alerts:
            condition = alert.condition or "–"
            table.add_row(
                safe_text(alert.name or "(no name)", 28),
                metric_text(alert.metric),
                safe_text(f"{CONDITION_SYMBOLS.get(condition, '')} {condition}".strip(), 8),
                threshold_text(alert.threshold),
                safe_text(host_of(alert.webhook_url or "") or alert.webhook_url or "–", 30),
            )
        self.header()

    def action_back(self) -> None:
        self.dismiss()

    def action_new(self) -> None:
        from tui.screens.forms import AlertForm

        def created(alert: Alert | None) -> None:
            if alert is not None:
                self.notify(visible(f"Alert {alert.name} created."), markup=False)
                self.action_refresh()

        self.app.push_screen(AlertForm(self.project_id, self.project_name), created)
