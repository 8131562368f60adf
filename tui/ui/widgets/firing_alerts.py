"""FiringAlerts: the alerts of a project that are firing now, a row each (for how long, the
name, the value against the threshold), above the overview's charts; hidden when none fires.
Enter on a row posts `Opened` with its alert (the overview opens the alert's detail)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from textual import on
from textual.message import Message
from textual.widgets import DataTable

from tui.api import Alert
from tui.core.alert_rules import metric_label, state_label
from tui.model.formatting import ago
from tui.model.metrics import compared_text
from tui.ui.widgets.table import Column, Table

COLUMNS = (
    Column("Firing", least=12, most=16),
    Column("Alert", least=12, most=40, share=2),
    Column("Metric", least=15, most=30, share=1),
    Column("Now vs threshold", least=12, most=28),
)
MOST_ROWS = 4  # rows shown before the table scrolls: the charts keep their room


class FiringAlerts(Table):
    DEFAULT_CSS = f"""
    FiringAlerts {{ height: auto; max-height: {MOST_ROWS}; display: none; }}
    FiringAlerts.-firing {{ display: block; }}
    """

    @dataclass
    class Opened(Message):
        """Enter on a firing alert."""

        alert: Alert

    def __init__(self, **kwargs: object) -> None:
        super().__init__(COLUMNS, **kwargs)
        self.show_header = False  # the rows read whole: "▲ firing 12m  Slow replies …"
        self.alerts: list[Alert] = []

    def show_alerts(self, alerts: list[Alert], now: datetime) -> None:
        """The firing ones of `alerts`, the longest firing first."""
        firing = [a for a in alerts if a.state == "firing" and not a.paused]
        firing.sort(key=lambda a: a.firing_since.timestamp() if a.firing_since else 0.0)
        self.alerts = firing
        rows = []
        for alert in firing:
            since = ago(alert.firing_since, now).removesuffix(" ago") if alert.firing_since else ""
            cells = (
                f"{state_label('firing')} {since}".rstrip(),
                alert.name or "(no name)",
                metric_label(alert.metric, compact=True),
                compared_text(alert.metric, alert.condition, alert.last_value, alert.threshold),
            )
            rows.append((cells, alert.id))
        self.set_rows(rows)
        self.set_class(bool(firing), "-firing")

    @on(DataTable.RowSelected)
    def _opened(self, event: DataTable.RowSelected) -> None:
        """A click on a row (the screen's enter opens the row under the cursor)."""
        event.stop()
        if 0 <= event.cursor_row < len(self.alerts):
            self.post_message(self.Opened(self.alerts[event.cursor_row]))
