"""The named rows of alerts, as the store writes and reads them: an alert, its signing secret,
its state after a round, its history (state changes and delivery attempts), the webhooks to
deliver, and what a window of traces gives its evaluation. Named rows as in `rows`."""

from __future__ import annotations

import uuid
from typing import NamedTuple

from tui.server.store.rows import now_ms


class AlertRow(NamedTuple):
    id: str
    project_id: str
    name: str
    metric: str
    condition: str
    threshold: float
    webhook_url: str
    created_at: int
    paused: bool = False  # not evaluated while paused: no transitions, no webhooks
    muted_until: int | None = None  # transitions recorded, no webhook made before this time


def new_alert(
    project_id: str,
    name: str,
    metric: str,
    condition: str,
    threshold: float,
    webhook_url: str,
    id: str | None = None,
    created_at: int | None = None,
    paused: bool = False,
    muted_until: int | None = None,
) -> AlertRow:
    """An alert row with a fresh id and the current time unless given (0 counts as not given)."""
    return AlertRow(
        id=id or f"alert_{uuid.uuid4().hex[:12]}",
        project_id=project_id,
        name=name,
        metric=metric,
        condition=condition,
        threshold=threshold,
        webhook_url=webhook_url,
        created_at=created_at or now_ms(),
        paused=paused,
        muted_until=muted_until,
    )


class AlertSecretRow(NamedTuple):
    """An alert's webhook signing secret (`whsec_` + base64). Its repr hides the secret, so a
    row that ends up in a log line or a traceback never carries it."""

    alert_id: str
    secret: str
    # The secret a rotation replaced, which also signs every delivery until
    # previous_valid_until (epoch ms): receivers roll over to the new one without a gap.
    previous_secret: str | None = None
    previous_valid_until: int | None = None

    def __repr__(self) -> str:
        return f"AlertSecretRow(alert_id={self.alert_id!r}, secret='whsec_…')"

    def signing_secrets(self, now: int) -> list[str]:
        """The secrets a delivery attempted at `now` is signed with: the current one, and the
        previous one while its grace period lasts."""
        previous = self.previous_secret
        until = self.previous_valid_until
        if previous is not None and until is not None and now < until:
            return [self.secret, previous]
        return [self.secret]


class AlertState(NamedTuple):
    """Where an alert stands after its last evaluation (none yet: state no_data, times None)."""

    alert_id: str
    state: str  # ok, firing, no_data
    last_value: float | None
    last_evaluated_at: int | None
    firing_since: int | None


class AlertEventRow(NamedTuple):
    """One line of an alert's history: a state change (kind "state") or one delivery attempt
    of a webhook (kind "delivery"); the other kind's columns are None."""

    id: str  # evt_... or dlv_...
    alert_id: str
    kind: str
    at: int
    from_state: str | None = None
    to_state: str | None = None
    value: float | None = None
    window_start: int | None = None
    window_end: int | None = None
    event_type: str | None = None  # alert.firing, alert.resolved, alert.test
    webhook_id: str | None = None
    attempt: int | None = None
    status_code: int | None = None
    error: str | None = None
    duration_ms: int | None = None
    ok: bool | None = None


class DeliveryRow(NamedTuple):
    """A webhook event to deliver: its body is fixed when it is made, so every attempt sends
    the same bytes under the same webhook-id (its id)."""

    id: str  # msg_...: the webhook-id header
    alert_id: str
    event_type: str
    body: str  # the JSON text sent
    created_at: int
    attempts: int = 0
    next_attempt_at: int | None = None  # None once delivered or given up
    status: str = "pending"  # pending, delivered, failed


class WindowStats(NamedTuple):
    """What a window's traces give: how many, how many errored, their summed cost, and the
    95th percentile of their durations (None when not asked for, or no traces)."""

    traces: int
    errors: int
    cost_usd: float
    p95_ms: float | None = None
    slowest: list[tuple[str, float]] = []  # (trace id, duration ms), slowest first, with p95


def new_event_id(prefix: str) -> str:
    """A fresh id for an event (`evt`), a delivery attempt (`dlv`) or a webhook (`msg`)."""
    return f"{prefix}_{uuid.uuid4().hex[:20]}"
