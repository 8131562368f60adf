"""The Textual app: global keys, the palette, and the one place API errors become what users see."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any

from rich.segment import Segments
from rich.text import Text
from textual.app import App
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.markup import escape
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from tui.api import (
    ApiClient,
    ApiError,
    ConnectionFailed,
    Forbidden,
    Project,
    RateLimited,
    TimedOut,
    Unauthorized,
)
from tui.hangup import watch_for_hangup
from tui.text import safe_text, visible
from tui.timerange import PRESETS, TimeRange
from tui.widgets.status_bar import StatusBar

MIN_WIDTH, MIN_HEIGHT = 80, 24


# A server's error message is shown up to this length: a toast wrapping a megabyte freezes the app.
NOTIFY_MAX_CHARS = 500
# Project names and ids in the palette are cut to this: it wraps a hit whole.
PALETTE_NAME_CHARS = 80


@dataclass(frozen=True)
class StartAt:
    """Where the app opens: the projects, one project's traces, or one trace."""

    project_id: str | None = None
    trace_id: str | None = None


class TooSmallScreen(ModalScreen[None]):
    DEFAULT_CSS = "TooSmallScreen { align: center middle; } TooSmallScreen Static { width: auto; }"

    def compose(self) -> Any:
        yield Static(Text(f"Terminal too small: tracetui needs at least {MIN_WIDTH}x{MIN_HEIGHT}."))

    def on_resize(self) -> None:
        if self.app.size.width >= MIN_WIDTH and self.app.size.height >= MIN_HEIGHT:
            self.dismiss(None)


class TraceTuiCommands(Provider):
    """Palette entries: open a trace, switch project, set the time range, the API log."""

    def _commands(self) -> list[tuple[str, Callable[[], Any], str]]:
        app: TraceTuiApp = self.app  # type: ignore[assignment]
        commands: list[tuple[str, Callable[[], Any], str]] = [
            ("Open trace by id…", app.action_open_trace, "Jump straight to one trace"),
            ("API log", app.action_api_log, "Requests, statuses, timings, rate-limit headers"),
        ]
        for project in app.projects:
            if project.id:
                name = safe_text(project.name or project.id, PALETTE_NAME_CHARS).plain
                commands.append(
                    (
                        f"Switch project: {name}",
                        partial(app.open_traces, project.id, project.name),
                        safe_text(project.id, PALETTE_NAME_CHARS).plain,
                    )
                )
        for preset in PRESETS:
            commands.append(
                (f"Time range: last {preset}", partial(app.set_time_range, TimeRange(preset)), "")
            )
        for profile in app.profiles:
            commands.append(
                (
                    f"Switch profile: {profile}",
                    partial(app.switch_profile, profile),
                    "Restarts on that profile",
                )
            )
        return commands

    async def discover(self) -> Hits:
        for name, run, help_text in self._commands():
            # Textual parses a str prompt and the help as markup: both can hold server strings.
            yield DiscoveryHit(Text(name), run, text=name, help=escape(visible(help_text)))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, run, help_text in self._commands():
            score = matcher.match(name)
            if score > 0:
                # highlight() parses its argument as markup: names come from servers.
                yield Hit(
                    score, matcher.highlight(escape(name)), run, help=escape(visible(help_text))
                )


class TraceTuiApp(App[str | None]):
    TITLE = "tracetui"
    BINDINGS = [
        Binding("question_mark", "help", "Keys", id="app.help"),
        Binding(
            "ctrl+r", "retry", "Retry", show=False, id="app.retry", tooltip="Retry what failed"
        ),
        Binding("ctrl+o", "api_log", "API log", show=False, id="app.api_log"),
        Binding("q", "quit", "Quit", id="app.quit"),
    ]
    COMMANDS = App.COMMANDS | {TraceTuiCommands}

    def __init__(
        self,
        client: ApiClient,
        start: StartAt | None = None,
        profile: str = "default",
        profiles: Iterable[str] = (),
        keymap: dict[str, str] | None = None,
        config_path: Path | None = None,
    ) -> None:
        super().__init__()
        self.client = client
        self.start = start or StartAt()
        self.profile = profile
        self.profiles = tuple(profiles)
        self.keymap = keymap or {}
        self.config_path = config_path
        self.projects: list[Project] = []
        self.last_refresh: float | None = None
        self.problem: str | None = None
        self.rate_limited_until: float | None = None
        self._retry: Callable[[], Any] | None = None
        self._ticker: Timer | None = None
        self.prompting_key_for: str | None = None
        # Tests and screenshots fix these; the app itself uses the real clock and host.
        self.now: Callable[[], datetime] = lambda: datetime.now(timezone.utc)
        self.server_label = client.host

    def on_mount(self) -> None:
        if self.keymap:
            self.set_keymap(self.keymap)
        from tui.screens.projects import ProjectsScreen

        self.push_screen(ProjectsScreen())
        if self.start.project_id:
            self.open_traces(self.start.project_id, None)
        if self.start.trace_id:
            self.open_trace(self.start.trace_id, self.start.project_id)
        self.check_size()
        watch_for_hangup(self)

    def on_resize(self) -> None:
        self.check_size()

    def check_size(self) -> None:
        small = self.size.width < MIN_WIDTH or self.size.height < MIN_HEIGHT
        if small and not isinstance(self.screen, TooSmallScreen):
            self.push_screen(TooSmallScreen())

    # -- navigation ------------------------------------------------------------------------------

    def open_traces(self, project_id: str, name: str | None) -> None:
        from tui.screens.traces import TracesScreen

        self.push_screen(TracesScreen(project_id, name))

    def open_trace(self, trace_id: str, project_id: str | None = None) -> None:
        from tui.screens.trace_detail import TraceDetailScreen

        self.push_screen(TraceDetailScreen(trace_id, project_id))

    def action_open_trace(self) -> None:
        from tui.screens.prompts import TraceIdPrompt

        def chosen(value: object) -> None:
            if isinstance(value, str):
                self.open_trace(value)

        self.push_screen(TraceIdPrompt(), chosen)

    def set_time_range(self, value: TimeRange) -> None:
        from tui.screens.traces import TracesScreen

        if isinstance(self.screen, TracesScreen):
            self.screen.set_range(value)
        else:
            self.notify("Open a project's traces first; the range applies there.", timeout=4)

    def switch_profile(self, profile: str) -> None:
        self.exit(result=f"profile:{profile}")

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen

        if not isinstance(self.screen, ModalScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_api_log(self) -> None:
        from tui.screens.api_log import ApiLogScreen

        self.push_screen(ApiLogScreen())

    # -- errors, the one place ----------------------------------------------------------------

    def _fatal_error(self) -> None:
        """Textual's crash report, without local variables: its default prints every frame's
        locals, and a frame can hold an API key in plain text (a header being built, the key
        prompt's value). Overrides App._fatal_error, checked by tests/adversarial."""
        from rich.traceback import Traceback

        self.bell()
        traceback = Traceback(show_locals=False, width=None)
        self._exit_renderables.append(
            Segments(self.console.render(traceback, self.console.options))
        )
        self._close_messages_no_wait()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that failed with anything but an API error is a bug: say so, never hide it."""
        if event.state == WorkerState.ERROR and not isinstance(event.worker.error, ApiError):
            error = event.worker.error
            # A bug's message can hold anything, a key among it: redacted, cut, made visible.
            message = self.client.redact(
                f"Internal error in {event.worker.name}: {type(error).__name__}: {error}"
            )[:NOTIFY_MAX_CHARS]
            self.log.error(message)
            self.notify(
                visible(message),
                title="tracetui bug",
                severity="error",
                timeout=15,
                markup=False,
            )

    def report_error(
        self,
        error: ApiError,
        retry: Callable[[], Any] | None = None,
        project_id: str | None = None,
        quiet: bool = False,
    ) -> None:
        """Show an API error the way its kind calls for; keep `retry` for ctrl+r or the timer."""
        self._retry = retry
        if isinstance(error, RateLimited):
            self.rate_limited_until = time.time() + error.retry_after
            self._start_ticker()
        elif isinstance(error, (ConnectionFailed, TimedOut)):
            self.problem = f"⚠ {error.title} — ctrl+r retries; what is on screen stays"
        elif isinstance(error, (Unauthorized, Forbidden)) and project_id and not quiet:
            self.ask_for_key(project_id, error)
        elif not quiet:
            self.notify(
                visible(error.message[:NOTIFY_MAX_CHARS]),
                title=error.title,
                severity="error",
                timeout=8,
                markup=False,
            )
        self.refresh_status()

    def problem_text(self) -> Text | None:
        if self.rate_limited_until is not None:
            left = max(0, round(self.rate_limited_until - time.time()))
            return Text(f"⏳ rate limited: retrying in {left}s", style="bold")
        if self.problem is not None:
            return safe_text(self.problem, style="bold")
        return None

    def _start_ticker(self) -> None:
        if self._ticker is None:
            self._ticker = self.set_interval(1.0, self._tick)

    def _tick(self) -> None:
        if self.rate_limited_until is not None and time.time() >= self.rate_limited_until:
            self.rate_limited_until = None
            if self._ticker is not None:
                self._ticker.stop()
                self._ticker = None
            self.action_retry()
        self.refresh_status()

    def action_retry(self) -> None:
        retry, self._retry = self._retry, None
        self.problem = None
        self.refresh_status()
        if retry is not None:
            retry()

    def mark_refreshed(self) -> None:
        self.last_refresh = self.now().timestamp()
        self.problem = None
        self.refresh_status()

    def refresh_status(self) -> None:
        for bar in self.screen.query(StatusBar):
            bar.update_status()

    def ask_for_key(self, project_id: str, error: ApiError) -> None:
        if self.prompting_key_for == project_id:
            return
        from tui.screens.prompts import KeyAnswer, KeyPrompt

        self.prompting_key_for = project_id
        retry = self._retry

        def answered(answer: object) -> None:
            self.prompting_key_for = None
            if not isinstance(answer, KeyAnswer):
                return
            self.client.set_project_key(project_id, answer.key)
            if answer.save and self.config_path is not None:
                from tui.config import save_project_key

                try:
                    save_project_key(self.config_path, self.profile, project_id, answer.key)
                    self.notify(f"Key saved to {self.config_path} (mode 0600).", markup=False)
                except (OSError, ApiError) as exc:
                    self.notify(
                        f"Could not save the key: {type(exc).__name__}",
                        severity="error",
                        markup=False,
                    )
            if retry is not None:
                retry()

        reason = f"{error.title}: {error.message}"
        self.push_screen(
            KeyPrompt(project_id, reason, str(self.config_path or "the config file")), answered
        )

    # -- clipboard -------------------------------------------------------------------------------

    def copy_text(self, text: str, what: str) -> None:
        """Copy by OSC 52 (works over SSH in most terminals); say how to fall back if not."""
        self.copy_to_clipboard(text)
        self.notify(
            f"Copied the {what} as JSON ({len(text):,} characters) via OSC 52. If nothing arrived, "
            "your terminal blocks OSC 52: press e to export the trace to a file instead.",
            timeout=6,
            markup=False,
        )
