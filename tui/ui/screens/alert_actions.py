"""What on-call does to an alert, from the alerts screen and an alert's detail alike: pause or
resume it, mute it for a while, edit it, delete it, give its webhook a new signing secret, send
its webhook a test event. Each key is there only when the server offers the action (the
client's `offers_*` flags); each result shows at once in the screen that asked.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.binding import Binding
from textual.css.query import NoMatches

from tui.core.alert_rules import amount, condition_symbol
from tui.model import formatting as fmt
from tui.model.text import notice, safe_text

if TYPE_CHECKING:
    from tui.api import Alert, RotatedSecret, TraceSource
    from tui.api.delivery import DeliveryOutcome
    from tui.ui.app import TraceTuiApp
    from tui.ui.screens.dialogs import MuteChoice

# Which of the client's flags each action needs.
OFFERED_BY = {
    "pause": "offers_alert_edit",
    "resume": "offers_alert_edit",
    "mute": "offers_alert_edit",
    "edit_alert": "offers_alert_edit",
    "delete_alert": "offers_alert_delete",
    "rotate_secret": "offers_secret_rotation",
    "test_webhook": "offers_alert_test",
}
# Kept from the alert as it was when an answer leaves the server's evaluation out.
STATE_FIELDS = ("state", "last_value", "last_evaluated_at", "firing_since")
GRACE_NOTE = (
    "The previous secret keeps signing too until {until}: every delivery carries both "
    "signatures (space-separated in webhook-signature), so receivers can switch over."
)
VERIFY_NOTE = (
    "To verify a delivery: base64 HMAC-SHA256, keyed with the base64 after whsec_, of "
    '"{webhook-id}.{webhook-timestamp}.{body}" equals a v1,<signature> in its '
    "webhook-signature header (Standard Webhooks). Two checks in Python, with the "
    'standardwebhooks package and by hand: docs/usage.md, "Verifying a webhook signature".'
)


def fires_when(metric: str | None, condition: str | None, threshold: float | None) -> str:
    """`fires when > 8000 ms`."""
    return f"fires when {condition_symbol(condition)} {amount(metric, threshold)}"


def footer_when_room(prefix: str) -> tuple[str, ...]:
    """The action keys kept out of the footer that it offers as width allows, most used by
    on-call first: edit, test the webhook, delete, a new secret (all are in `?`)."""
    return tuple(f"{prefix}.{name}" for name in ("edit", "test", "delete", "rotate_secret"))


def alert_bindings(prefix: str) -> list[Binding]:
    """The action keys, with ids under `prefix` ("alerts", "alert"). Pause (or resume) and mute
    are in the footer (what on-call reaches for); the others in help (?) and on the same keys."""
    return [
        # One key, named for what it does to the alert under the cursor (check_action shows
        # the one that applies): Pause on a running alert, Resume on a paused one.
        Binding("p", "pause", "Pause", id=f"{prefix}.pause", tooltip="Not evaluated until resumed"),
        Binding("p", "resume", "Resume", id=f"{prefix}.pause", tooltip="Evaluated again"),
        Binding("m", "mute", "Mute", id=f"{prefix}.mute", tooltip="1 h, 8 h, 24 h or a time"),
        Binding("e", "edit_alert", "Edit", id=f"{prefix}.edit", show=False),
        Binding("d", "delete_alert", "Delete", id=f"{prefix}.delete", show=False),
        Binding(
            "s",
            "rotate_secret",
            "New secret",
            id=f"{prefix}.rotate_secret",
            show=False,
            tooltip="A new webhook signing secret, shown once",
        ),
        Binding(
            "w",
            "test_webhook",
            "Test",
            id=f"{prefix}.test",
            show=False,
            tooltip="Send the webhook a test event",
        ),
    ]


def merged(old: Alert, new: Alert) -> Alert:
    """`new`, with the evaluation of `old` where the server's answer leaves it out."""
    if new.state is None and old.state is not None:
        new = new.model_copy(update={field: getattr(old, field) for field in STATE_FIELDS})
    return new


def muted_now(alert: Alert, now: datetime) -> bool:
    return alert.muted_until is not None and alert.muted_until > now


def standing(alert: Alert, now: datetime) -> str:
    """ " (paused)", " (muted to 14:00)" or "": what the name of an alert is followed by."""
    if alert.paused:
        return " (paused)"
    if alert.muted_until is not None and muted_now(alert, now):
        return f" (muted to {fmt.local_time(alert.muted_until, seconds=False)})"
    return ""


class AlertActions:
    """Mixed into a screen that has `project_id`, shows alerts, and implements
    `current_alert`, `alert_changed` and `alert_removed`."""

    project_id: str

    if TYPE_CHECKING:
        tui: TraceTuiApp

        def call_api(self, *args: Any, **kwargs: Any) -> Any: ...
        def notify(self, *args: Any, **kwargs: Any) -> None: ...
        def refresh_bindings(self) -> None: ...

    def current_alert(self) -> Alert | None:
        raise NotImplementedError

    def alert_changed(self, alert: Alert) -> None:
        raise NotImplementedError

    def alert_removed(self, alert: Alert) -> None:
        raise NotImplementedError

    def after_test_event(self) -> None:
        """A test event was queued (the detail reloads its history)."""

    def learn_offers(self) -> None:
        """Ask the server once what it offers, then show the keys it allows."""
        self.call_api(
            lambda client: client.discover_offers(),
            lambda _offers: self.refresh_bindings(),
            group="offers",
            failed=lambda _error: True,  # the keys stay hidden; nothing else is wrong
        )

    def alert_action_allowed(self, action: str) -> bool | None:
        """False for an action the server does not offer (its key is left out); None for
        an action that is not one of these."""
        flag = OFFERED_BY.get(action)
        if flag is None:
            return None
        try:
            offered = bool(getattr(self.tui.client, flag, False))
        except RuntimeError:  # the client is still loading
            return False
        if action in ("pause", "resume"):
            try:
                alert = self.current_alert()
            except NoMatches:  # not composed yet
                return False
            return offered and alert is not None and alert.paused == (action == "resume")
        return offered

    def _alert_label(self, alert: Alert) -> Text:
        return safe_text(alert.name or alert.id or "(no name)", 50)

    def _change(self, alert: Alert, call: Any, done_text: str) -> None:
        def done(new: Alert) -> None:
            self.alert_changed(merged(alert, new))
            self.notify(done_text.format(name=alert.name or alert.id or ""))

        self.call_api(call, done, group="alert-action", project_id=self.project_id)

    def action_pause(self) -> None:
        alert = self.current_alert()
        if alert is None or not alert.id:
            return
        pause = not alert.paused
        alert_id = alert.id
        self._change(
            alert,
            lambda client: client.pause_alert(self.project_id, alert_id, pause),
            "Paused {name}: not evaluated until resumed (p)."
            if pause
            else "Resumed {name}: evaluated again.",
        )

    def action_resume(self) -> None:
        self.action_pause()  # the same toggle, offered under its own name on a paused alert

    def action_mute(self) -> None:
        alert = self.current_alert()
        if alert is None or not alert.id:
            return
        from tui.ui.screens.dialogs import MuteDialog

        alert_id = alert.id

        def chosen(choice: MuteChoice | None) -> None:
            if choice is None:
                return
            until = choice.until
            said = (
                "Unmuted {name}."
                if until is None
                else "Muted {name} until "
                + fmt.local_time(until, seconds=False)
                + ": no webhooks till then."
            )
            self._change(
                alert,
                lambda client: client.mute_alert(self.project_id, alert_id, until),
                said,
            )

        dialog = MuteDialog(alert.name or alert_id, self.tui.now(), alert.muted_until)
        self.tui.push_screen(dialog, chosen)

    def action_delete_alert(self) -> None:
        alert = self.current_alert()
        if alert is None or not alert.id:
            return
        from tui.ui.screens.dialogs import ConfirmDialog

        alert_id = alert.id
        question = Text("Delete the alert ", style="bold")
        question.append_text(self._alert_label(alert))
        question.append("?")

        async def delete(client: TraceSource) -> None:
            await client.delete_alert(self.project_id, alert_id)

        def deleted(_: None) -> None:
            self.alert_removed(alert)
            self.notify(f"Deleted {alert.name or alert_id}.")

        def answered(yes: bool | None) -> None:
            if yes:
                self.call_api(delete, deleted, group="alert-action", project_id=self.project_id)

        self.tui.push_screen(
            ConfirmDialog(question, "Its history and pending webhooks go with it."), answered
        )

    def action_edit_alert(self) -> None:
        alert = self.current_alert()
        if alert is None or not alert.id:
            return
        from tui.ui.screens.edit_forms import AlertEditForm

        def saved(new: Alert | None) -> None:
            if new is not None:
                self.alert_changed(merged(alert, new))
                self.notify(f"Saved {new.name or alert.name or ''}.")

        self.tui.push_screen(AlertEditForm(self.project_id, alert), saved)

    def action_rotate_secret(self) -> None:
        alert = self.current_alert()
        if alert is None or not alert.id:
            return
        from tui.ui.screens.dialogs import ConfirmDialog

        alert_id = alert.id
        question = Text("A new signing secret for ", style="bold")
        question.append_text(self._alert_label(alert))
        question.append("?")

        def answered(yes: bool | None) -> None:
            if yes:
                self.call_api(
                    lambda client: client.rotate_secret(self.project_id, alert_id),
                    lambda rotated: self.show_rotated(alert, rotated),
                    group="alert-action",
                    project_id=self.project_id,
                )

        self.tui.push_screen(
            ConfirmDialog(question, "The previous one keeps signing for a grace period."),
            answered,
        )

    def show_rotated(self, alert: Alert, rotated: RotatedSecret) -> None:
        from tui.ui.screens.dialogs import SecretDialog

        until = rotated.previous_valid_until
        notes = (
            GRACE_NOTE.replace("{until}", fmt.local_time(until, seconds=False))
            if until is not None
            else "",
            VERIFY_NOTE,
        )
        self.tui.push_screen(
            SecretDialog(
                f"New signing secret of {alert.name or alert.id}",
                rotated.secret,
                "signing secret",
                tuple(note for note in notes if note),
            )
        )

    def action_test_webhook(self) -> None:
        alert = self.current_alert()
        if alert is None or not alert.id:
            return
        alert_id = alert.id
        self.notify("Sending a test event…", timeout=3)

        def sent(outcome: DeliveryOutcome) -> None:
            said, failed = receiver_answer(outcome)
            self.notify(said, severity="error" if failed else "information", timeout=10)
            self.after_test_event()

        self.call_api(
            lambda client: client.test_webhook(self.project_id, alert_id),
            sent,
            group="alert-action",
            project_id=self.project_id,
        )


def receiver_answer(outcome: DeliveryOutcome) -> tuple[str, bool]:
    """What the receiver answered a test event, in a sentence; and whether it failed."""
    if not outcome.answered:
        named = f" ({notice(outcome.webhook_id, 40)})" if outcome.webhook_id else ""
        return (
            f"Test event queued{named}: the alert's history (Enter) shows how the receiver "
            "answered.",
            False,
        )
    took = f" in {fmt.duration(outcome.latency_ms)}" if outcome.latency_ms is not None else ""
    if outcome.delivered:
        return f"The receiver took the test event: HTTP {outcome.status_code}{took}.", False
    if outcome.status_code is not None:
        why = f" ({notice(outcome.error, 80)})" if outcome.error else ""
        return (
            f"The receiver refused the test event: HTTP {outcome.status_code}{why}{took}; "
            "it is retried as a real one would be.",
            True,
        )
    return (
        f"The test event did not arrive: {notice(outcome.error or 'no answer', 200)}{took}.",
        True,
    )


def show_created_secret(app: TraceTuiApp, alert: Alert) -> None:
    """After a create: the alert's signing secret, once, if the server sent one."""
    if alert.webhook_secret is None:
        return
    from tui.ui.screens.dialogs import SecretDialog

    app.push_screen(
        SecretDialog(
            f"Signing secret of {alert.name or alert.id}",
            alert.webhook_secret,
            "signing secret",
            (VERIFY_NOTE,),
        )
    )
