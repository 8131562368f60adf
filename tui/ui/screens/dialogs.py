"""Dialogs for the management actions: a yes/no confirmation, a deletion confirmed by typing the
name, the choice of how long to mute, and the one dialog that shows a new key or signing secret
(once, on purpose) with its copy keys. Each fits 80x24 and is driven from the keyboard."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import HorizontalScroll, Vertical
from textual.widgets import Input, Static

from tui.core.secret import SecretLike
from tui.model.text import safe_text
from tui.ui.screens.base import AppModal

DIALOG_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{ width: 76; max-width: 100%; height: auto; max-height: 100%; border: thick $primary; background: $surface; padding: 0 1; }}
{name} .hint {{ color: $text-muted; margin-top: 1; }}
{name} .error {{ color: $text-error; height: auto; }}
{name} Input {{ border: none; height: 1; padding: 0 1; background: $boost; }}
"""
NAME_SHOWN = 60  # a project's or alert's name in a question is cut to this


class ConfirmDialog(AppModal[bool]):
    """`question`? y (or enter) does it, n or esc does not."""

    BINDINGS = [
        Binding("y,enter", "yes", "Yes", id="confirm.yes"),
        Binding("n,escape", "no", "No", id="confirm.no"),
    ]
    DEFAULT_CSS = DIALOG_CSS.format(name="ConfirmDialog")

    def __init__(self, question: Text, detail: str = "") -> None:
        super().__init__()
        self.question = question
        self.detail = detail

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question)
            if self.detail:
                yield Static(Text(self.detail))
            yield Static(Text("y or enter: yes · n or esc: no"), classes="hint")

    def action_yes(self) -> None:
        self.dismiss(True)

    def action_no(self) -> None:
        self.dismiss(False)


class TypeNameDialog(AppModal[bool]):
    """A deletion that cannot be undone: done only once the exact name is typed."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="typename.cancel")]
    DEFAULT_CSS = DIALOG_CSS.format(name="TypeNameDialog")

    def __init__(self, what: str, name: str, consequence: str) -> None:
        super().__init__()
        self.what = what
        self.name_to_type = name
        self.consequence = consequence

    def compose(self) -> ComposeResult:
        with Vertical():
            title = Text(f"Delete {self.what} ", style="bold")
            title.append_text(safe_text(self.name_to_type, NAME_SHOWN, style="bold"))
            yield Static(title)
            yield Static(Text(self.consequence))
            yield Static(Text("Type its name to confirm:"))
            yield Input(id="typed")
            yield Static("", classes="error", id="typed-error")
            yield Static(Text("enter deletes · esc cancels"), classes="hint")

    def on_mount(self) -> None:
        self.query_one("#typed", Input).focus()

    @on(Input.Submitted)
    def _typed(self, event: Input.Submitted) -> None:
        if event.value == self.name_to_type:
            self.dismiss(True)
        else:
            self.query_one("#typed-error", Static).update(
                Text("That is not its name: nothing was deleted.")
            )

    def action_cancel(self) -> None:
        self.dismiss(False)


@dataclass(frozen=True)
class MuteChoice:
    """Mute until `until`; None: unmute."""

    until: datetime | None


MUTE_PRESETS = (("1", timedelta(hours=1)), ("8", timedelta(hours=8)), ("2", timedelta(hours=24)))


def parse_until(text: str, now: datetime) -> datetime | None:
    """A time typed as `HH:MM` (the next such moment, local time) or `YYYY-MM-DD HH:MM` (local),
    as an aware datetime; None when it cannot be read or is not in the future."""
    text = text.strip()
    local_now = now.astimezone()
    try:
        if len(text) <= 5:
            clock = datetime.strptime(text, "%H:%M")
            moment = local_now.replace(
                hour=clock.hour, minute=clock.minute, second=0, microsecond=0
            )
            if moment <= local_now:
                moment += timedelta(days=1)
        else:
            moment = datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=local_now.tzinfo)
    except ValueError:
        return None
    return moment.astimezone(timezone.utc) if moment > local_now else None


class MuteDialog(AppModal[MuteChoice | None]):
    """Mute an alert: 1 h, 8 h, 24 h, until a time typed, or unmute."""

    BINDINGS = [
        Binding("1", "preset('1')", "1 hour", id="mute.1h"),
        Binding("8", "preset('8')", "8 hours", id="mute.8h"),
        Binding("2", "preset('2')", "24 hours", id="mute.24h"),
        Binding("u", "unmute", "Unmute", id="mute.unmute"),
        Binding("t", "type_time", "Until a time", id="mute.until"),
        Binding("escape", "cancel", "Cancel", id="mute.cancel"),
    ]
    DEFAULT_CSS = DIALOG_CSS.format(name="MuteDialog")
    AUTO_FOCUS = None  # the digit keys choose; t opens the time field

    def __init__(self, alert_name: str, now: datetime, muted_until: datetime | None) -> None:
        super().__init__()
        self.alert_name = alert_name
        self.now = now
        self.muted_until = muted_until

    def compose(self) -> ComposeResult:
        with Vertical():
            title = Text("Mute ", style="bold")
            title.append_text(safe_text(self.alert_name, NAME_SHOWN, style="bold"))
            yield Static(title)
            yield Static(
                Text("Muted, it is still evaluated and its changes recorded; no webhook is sent.")
            )
            yield Static(Text("1: for 1 hour · 8: for 8 hours · 2: for 24 hours · u: unmute"))
            yield Static(Text("t: until a time (HH:MM or YYYY-MM-DD HH:MM, local), then enter"))
            until = Input(placeholder="e.g. 18:30", id="until")
            until.can_focus = False  # until t: the digits above choose
            yield until
            yield Static("", classes="error", id="until-error")
            yield Static(Text("esc cancels"), classes="hint")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # While a time is typed, digits and u go into it.
        if action in ("preset", "unmute", "type_time") and isinstance(self.focused, Input):
            return False
        return super().check_action(action, parameters)

    def action_type_time(self) -> None:
        until = self.query_one("#until", Input)
        until.can_focus = True
        until.focus()

    def action_preset(self, key: str) -> None:
        hours = dict(MUTE_PRESETS)[key]
        self.dismiss(MuteChoice(self.now + hours))

    def action_unmute(self) -> None:
        self.dismiss(MuteChoice(None))

    @on(Input.Submitted)
    def _until(self, event: Input.Submitted) -> None:
        until = parse_until(event.value, self.now)
        if until is None:
            self.query_one("#until-error", Static).update(
                Text("A time to come, as 18:30 or 2025-06-01 09:00.")
            )
            return
        self.dismiss(MuteChoice(until))

    def action_cancel(self) -> None:
        self.dismiss(None)


class SecretDialog(AppModal[None]):
    """A new key or signing secret, shown this once: c copies it (OSC 52), l copies the lines
    to paste when there are any; the notes say what to do with it."""

    BINDINGS = [
        Binding("c", "copy_secret", "Copy", id="secret.copy"),
        Binding("l", "copy_lines", "Copy lines", id="secret.copy_lines"),
        Binding("escape,enter", "close", "Done", id="secret.close"),
    ]
    DEFAULT_CSS = DIALOG_CSS.format(name="SecretDialog") + (
        "SecretDialog #secret { background: $boost; padding: 0 1; }\n"
        # The lines to paste are never wrapped (a wrapped line, copied with the mouse, breaks):
        # wider than the dialog, they scroll sideways, and `l` copies them whole.
        "SecretDialog #lines-box { height: auto; scrollbar-size-horizontal: 1; }\n"
        "SecretDialog #lines { width: auto; }\n"
    )

    def __init__(
        self,
        title: str,
        secret: SecretLike,
        what: str,
        notes: tuple[str, ...] = (),
        lines: tuple[str, ...] = (),
    ) -> None:
        super().__init__()
        self.title_text = title
        self.secret = secret
        self.what = what
        self.notes = notes
        self.lines = lines

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(safe_text(self.title_text, 70, style="bold"))
            yield Static(
                Text("Shown this once: copy it now; it cannot be shown again.", style="bold")
            )
            yield Static(safe_text(self.secret.get_secret_value(), multiline=True), id="secret")
            for note in self.notes:
                yield Static(safe_text(note, multiline=True))
            if self.lines:
                yield Static(Text("Paste into your app's shell (l copies them):"))
                with HorizontalScroll(id="lines-box"):
                    yield Static(
                        Text("\n", no_wrap=True).join(map(safe_text, self.lines)), id="lines"
                    )
            keys = "c copies it · " + ("l copies the lines · " if self.lines else "")
            yield Static(Text(keys + "enter or esc closes"), classes="hint")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "copy_lines" and not self.lines:
            return False
        return super().check_action(action, parameters)

    def action_copy_secret(self) -> None:
        self.tui.copy_secret(self.secret.get_secret_value(), self.what)

    def action_copy_lines(self) -> None:
        self.tui.copy_secret("\n".join(self.lines), "two lines")

    def action_close(self) -> None:
        self.dismiss(None)


class ReadDialog(AppModal[None]):
    """A record read whole (an alert history's line whose detail the table cuts): label and
    value pairs, each value wrapped in full; it scrolls when taller than the screen."""

    BINDINGS = [
        Binding("escape,enter", "close", "Close", id="read.close"),
        Binding("c", "copy", "Copy", id="read.copy"),
    ]
    DEFAULT_CSS = (
        DIALOG_CSS.format(name="ReadDialog") + "ReadDialog > Vertical { overflow-y: auto; }\n"
    )

    def __init__(self, title: str, lines: list[tuple[str, str]]) -> None:
        super().__init__()
        self.title_text = title
        self.lines = [(label, value) for label, value in lines if value]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(safe_text(self.title_text, 70, style="bold"))
            for label, value in self.lines:
                line = Text(f"{label}: ", style="dim")
                line.append_text(safe_text(value, multiline=True))
                yield Static(line)
            yield Static(Text("c copies it · enter or esc closes"), classes="hint")

    def text(self) -> str:
        return "\n".join(f"{label}: {value}" for label, value in self.lines)

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.text())
        self.notify("Copied.")

    def action_close(self) -> None:
        self.dismiss(None)
