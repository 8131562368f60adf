"""The Textual app: global keys, start-up, the status line, and the one place API errors become
what users see. Opening and closing screens is tui/ui/navigation.py, which the app is built on."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from rich.segment import Segments
from rich.text import Text
from textual import events
from textual.await_complete import AwaitComplete
from textual.binding import Binding
from textual.geometry import Size
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.timer import Timer
from textual.worker import Worker, WorkerState

from tui.core.gcpause import hold_start_up, let_go_of_start_up
from tui.model.formatting import byte_size
from tui.model.text import NOTICE_MAX_CHARS, notice, safe_text
from tui.model.verdicts import DEFAULT_VERDICTS, Verdict
from tui.ui.hangup import watch_for_hangup
from tui.ui.navigation import Navigation
from tui.ui.start import StartAt as StartAt  # named beside the app by those who start it
from tui.ui.widgets.status_bar import Status, StatusBar

if TYPE_CHECKING:
    # The client's modules (httpx, pydantic) load after the first frame: see `on_mount`.
    # The palette's, the time range's and the too-small notice's load when first needed.
    from textual.command import Provider

    from tui.api import ApiError, Project, TraceSource, Waiting
    from tui.ui.messages import ProjectsLoaded

# Below this size the app shows a notice instead of its screens (tui.ui.screens.too_small).
MIN_WIDTH, MIN_HEIGHT = 80, 24

# Either a client, or how to make one: made in a thread once the first frame is drawn.
ClientOrFactory = Union["TraceSource", Callable[[], "TraceSource"]]

# The most text copied by OSC 52: base64 makes it 1,000,000 bytes, under tmux's limit of one
# escape sequence (1 MiB: INPUT_BUF_LIMIT in its input.c), which drops longer ones silently.
COPY_MAX_BYTES = 750_000

# A toast's title is cut to this many characters of a server string.
TITLE_MAX_CHARS = 60
# The same toast again within this many seconds is not shown again.
SAME_TOAST_SECONDS = 5.0


def palette_commands() -> type[Provider]:
    """The app's entries of the command palette: loaded when the palette first opens."""
    from tui.ui.palette import TraceTuiCommands

    return TraceTuiCommands


class StartFailed(Exception):
    """Raised by a client factory that cannot start (the demo's database is from a newer
    tracetui): the app ends, and `start_failure` holds the message for its caller to print."""


class TraceTuiApp(Navigation):
    TITLE = "tracetui"
    BINDINGS = [
        Binding("question_mark", "help", "Keys", id="app.help"),
        Binding(
            "ctrl+r", "retry", "Retry", show=False, id="app.retry", tooltip="Retry what failed"
        ),
        Binding("ctrl+o", "api_log", "API log", show=False, id="app.api_log"),
        Binding("q", "quit", "Quit", id="app.quit"),
    ]
    # The app's entries only: Textual's own (themes, screenshots, its Quit) are not tracetui's.
    COMMANDS = {palette_commands}

    def __init__(
        self,
        client: ClientOrFactory,
        start: StartAt | None = None,
        profile: str = "default",
        profiles: Iterable[str] = (),
        keymap: dict[str, str] | None = None,
        config_path: Path | None = None,
        server_label: str | None = None,
        verdicts: Sequence[Verdict] | None = None,
    ) -> None:
        super().__init__()
        self._client: TraceSource | None = None
        self._make_client: Callable[[], TraceSource] | None = None
        self._first_frame_drawn = threading.Event()
        if callable(client):
            self._make_client = client
        else:
            self._use_client(client)
        self.start = start or StartAt()
        self.profile = profile
        self.profiles = tuple(profiles)
        self.keymap = keymap or {}
        self.config_path = config_path
        # The annotate form's quick verdicts, by digit (the config's [verdicts]).
        self.verdicts: tuple[Verdict, ...] = (
            DEFAULT_VERDICTS if verdicts is None else tuple(verdicts)
        )
        self.projects: list[Project] = []
        self.last_refresh: float | None = None
        self.problem: str | None = None
        self.problem_at = 0.0  # time.monotonic() when the problem came
        self.rate_limited_until: float | None = None
        # A wait inside the client (a retry's backoff, a 429, pacing), counted down on screen.
        self.waiting: Waiting | None = None
        self.waiting_until: float | None = None
        self._recent_toasts: dict[tuple[str, str], float] = {}
        self._retry: Callable[[], Any] | None = None
        # Each screen's last failure, so ctrl+r retries what the screen in view failed to load
        # (two screens failing at once, the trace and the projects beneath it, keep theirs).
        self._retry_on: dict[Screen[Any], Callable[[], Any]] = {}
        self._ticker: Timer | None = None
        self.prompting_key_for: str | None = None
        # Tests and screenshots fix these; the app itself uses the real clock and host.
        self.now: Callable[[], datetime] = lambda: datetime.now(timezone.utc)
        self.server_label = server_label or (self._client.host if self._client else "")
        self.start_failure: str | None = None

    @property
    def client(self) -> TraceSource:
        """The API client (the screens that use it open once it is ready)."""
        if self._client is None:
            raise RuntimeError("the client is still loading")
        return self._client

    def _use_client(self, client: TraceSource) -> None:
        self._client = client
        client.on_wait = self.client_waiting

    async def close_client(self) -> None:
        """Close the client if it was made (the app made it from its factory)."""
        if self._client is not None:
            await self._client.aclose()

    def get_default_screen(self) -> Screen[Any]:
        """The first frame, when the client is still to be made: the screen at the bottom of
        the stack says what is loading (a screen pushed over an empty default one would cost a
        second layout and paint before anything useful is drawn)."""
        if self._make_client is None:
            return super().get_default_screen()
        from tui.ui.screens.starting import StartingScreen

        return StartingScreen(self.server_label)

    def on_mount(self) -> None:
        if self.keymap:
            self.set_keymap(self.keymap)
        if self._make_client is None:
            self._open_start()
        else:
            # The first frame at once (the default screen: StartingScreen); the client's
            # imports (~150 ms) in a thread meanwhile. The thread waits for the frame to be
            # drawn: importing during it would hold the GIL.
            self.call_after_refresh(self._first_frame_drawn.set)
            self.run_worker(self._load_client, thread=True, name="client", exit_on_error=False)
        self.check_size()
        watch_for_hangup(self)

    def _load_client(self) -> None:
        assert self._make_client is not None
        self._first_frame_drawn.wait(timeout=1.0)
        try:
            client = self._make_client()
        except StartFailed as failure:
            self.start_failure = str(failure)
            self.call_from_thread(self.exit, None, 2)
            return
        self.call_from_thread(self._client_ready, client)

    def show_progress(self, text: str) -> None:
        """What start-up is doing (a client factory that takes a while: the demo's), on the
        starting screen."""
        from tui.ui.screens.starting import StartingScreen

        for screen in self.screen_stack:
            if isinstance(screen, StartingScreen):
                screen.say(text)

    def _client_ready(self, client: TraceSource) -> None:
        self._use_client(client)
        self.server_label = self.server_label or client.host
        self._open_start()  # over the starting screen, which stays at the bottom unseen
        # The kind of server recognised at an address given without a kind (open_source asked
        # it in the loading thread): said once the first screen is up.
        if client.recognised_note:
            self.notify(client.recognised_note, title="Server recognised", timeout=12)

    def _open_start(self) -> None:
        from tui.ui.screens.projects import ProjectsScreen

        # Start-up's objects live as long as the app: out of the collector's full walks, else
        # the first one (some 50 ms) lands on the first trace list's first frame (tui/core/gcpause.py).
        hold_start_up()
        self.push_screen(ProjectsScreen())
        if self.start.project_id:
            self.open_traces(self.start.project_id, None)
        if self.start.trace_id:
            self.open_trace(self.start.trace_id, self.start.project_id)
        if self.keymap:
            # Checked once the first screen is up: it imports every screen to know their ids.
            self.call_after_refresh(self._check_keymap)
        self.check_size()

    def on_unmount(self) -> None:
        let_go_of_start_up()  # tests run many apps in one process

    def _check_keymap(self) -> None:
        from tui.ui.keymap import unknown_ids

        unknown = unknown_ids(self.keymap, self.BINDINGS)
        if unknown:
            self.notify(
                f"The config's [keymap] names binding ids that do not exist: {', '.join(unknown)}."
                " Those entries are ignored (ids look like traces.filter or app.quit).",
                title="Unknown key binding ids",
                severity="warning",
                timeout=12,
            )

    def on_resize(self, event: events.Resize) -> None:
        # The event's size: this runs before App's own handler stores it in self.size.
        self.check_size(event.size)

    def check_size(self, size: Size | None = None) -> None:
        """Show the too-small notice below 80x24, and take it away (only it) at 80x24 or more."""
        size = size or self.size
        small = size.width < MIN_WIDTH or size.height < MIN_HEIGHT
        if small:
            from tui.ui.screens.too_small import TooSmallScreen

            stack = self.screen_stack
            if stack and isinstance(stack[-1], TooSmallScreen):
                stack[-1].show_size(size)  # it says the size there is
            else:
                notice = TooSmallScreen(MIN_WIDTH, MIN_HEIGHT)
                notice.show_size(size)
                super().push_screen(notice)
        elif self._notice_on_top():
            super().pop_screen()

    def _notice_on_top(self) -> bool:
        from tui.ui.screens.too_small import TooSmallScreen

        stack = self.screen_stack
        return bool(stack) and isinstance(stack[-1], TooSmallScreen)

    # The notice stays on top of the stack while it shows: a screen opened meanwhile (a key
    # prompt, the API log, the palette) goes beneath it, and a screen closed meanwhile (a dialog
    # whose save finished) is the one under it. So taking the notice away never closes anything.

    def push_screen(self, screen: Any, *args: Any, **kwargs: Any) -> Any:
        if not self._notice_on_top():
            return super().push_screen(screen, *args, **kwargs)
        super().pop_screen()
        pushed = super().push_screen(screen, *args, **kwargs)
        self.check_size()
        return pushed

    def pop_screen(self) -> AwaitComplete:
        if not self._notice_on_top():
            return super().pop_screen()
        super().pop_screen()
        popped = super().pop_screen()
        self.check_size()
        return popped

    def get_key_display(self, binding: Binding) -> str:
        """A key as the footer, `?` and the docs all write it: `ctrl+r`, never `^r`."""
        shown = super().get_key_display(binding)
        if binding.key_display:
            return shown
        return "+".join(
            f"ctrl+{part[1:]}" if part.startswith("^") else part for part in shown.split("+")
        )

    def on_projects_loaded(self, message: ProjectsLoaded) -> None:
        self.projects = message.projects

    # -- what users see: toasts, the status line, errors (the one place) ----------------------

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Every toast of the app: its text is never markup, made visible and cut (server
        strings reach toasts, and a toast wrapping a megabyte freezes the app). The same toast
        twice within a few seconds (two screens failing on one bad key) shows once."""
        message, title = notice(message), notice(title, TITLE_MAX_CHARS)
        now = time.monotonic()
        self._recent_toasts = {
            k: at for k, at in self._recent_toasts.items() if now - at < SAME_TOAST_SECONDS
        }
        if (title, message) in self._recent_toasts:
            return
        self._recent_toasts[(title, message)] = now
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def _fatal_error(self) -> None:
        """Textual's crash report, without local variables: its default prints every frame's
        locals, and a frame can hold an API key in plain text (a header being built, the key
        prompt's value). Overrides App._fatal_error, checked by tests/app/test_crash_secrets.py."""
        from rich.traceback import Traceback

        self.bell()
        traceback = Traceback(show_locals=False, width=None)
        self._exit_renderables.append(
            Segments(self.console.render(traceback, self.console.options))
        )
        self._close_messages_no_wait()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that failed with anything but an API error is a bug: say so, never hide it."""
        if event.state != WorkerState.ERROR:
            # Every worker's every change comes here, the client loader's among them, before the
            # first frame: importing tui.api (httpx) for those would delay it by 130 ms.
            return
        from tui.api import ApiError

        if not isinstance(event.worker.error, ApiError):
            error = event.worker.error
            # A bug's message can hold anything, a key among it: redacted, cut, made visible.
            text = f"Internal error in {event.worker.name}: {type(error).__name__}: {error}"
            redact = self._client.redact if self._client is not None else str
            message = redact(text)[:NOTICE_MAX_CHARS]
            self.log.error(message)
            self.notify(message, title="tracetui bug", severity="error", timeout=15)

    def report_error(
        self,
        error: ApiError,
        retry: Callable[[], Any] | None = None,
        project_id: str | None = None,
        quiet: bool = False,
        screen: Screen[Any] | None = None,
    ) -> None:
        """Show an API error the way its kind calls for; keep `retry` for ctrl+r or the timer
        (`screen`: the screen that failed, whose retry ctrl+r runs while it is in view)."""
        from tui.api import ConnectionFailed, Forbidden, RateLimited, TimedOut, Unauthorized

        self._retry = retry
        if screen is not None and retry is not None:
            self._retry_on[screen] = retry
        self.waiting = self.waiting_until = None  # the client has given up waiting
        if isinstance(error, RateLimited):
            self.rate_limited_until = time.time() + error.retry_after
            self._start_ticker()
        elif isinstance(error, (ConnectionFailed, TimedOut)):
            self.problem = f"⚠ {error.title} · ctrl+r retries"
            self.problem_at = time.monotonic()
        elif isinstance(error, (Unauthorized, Forbidden)) and project_id and not quiet:
            self.ask_for_key(project_id, error)
        elif isinstance(error, Unauthorized) and not quiet:
            self.notify(
                f"{error.message}. {self.where_the_key_comes_from()}",
                title=error.title,
                severity="error",
                timeout=15,
            )
        elif not quiet:
            self.notify(error.message, title=error.title, severity="error", timeout=8)
        self.refresh_status()

    def where_the_key_comes_from(self) -> str:
        """Where the workspace key is set, for a 401 that no project key can answer."""
        where = str(self.config_path) if self.config_path is not None else "the config file"
        return (
            "The key comes from TRACETUI_API_KEY, or from api_key, api_key_env or "
            f"api_key_command in profile “{self.profile}” of {where}"
        )

    def client_waiting(self, waiting: Waiting) -> None:
        """The client waits before a request: count it down in the status line."""
        self.waiting = waiting
        self.waiting_until = time.time() + waiting.seconds
        self._start_ticker()
        self.refresh_status()

    def problem_text(self) -> Text | None:
        if self.rate_limited_until is not None:
            left = max(0, round(self.rate_limited_until - time.time()))
            return Text(f"⏳ rate limited: retrying in {left}s", style="bold")
        if self.waiting is not None and self.waiting_until is not None:
            left = max(0, round(self.waiting_until - time.time()))
            return Text(waiting_text(self.waiting, left), style="bold")
        if self.problem is not None:
            return safe_text(self.problem, style="bold")
        return None

    def _start_ticker(self) -> None:
        if self._ticker is None:
            self._ticker = self.set_interval(1.0, self._tick)

    def _tick(self) -> None:
        now = time.time()
        if self.waiting_until is not None and now >= self.waiting_until:
            self.waiting = self.waiting_until = None
        if self.rate_limited_until is not None and now >= self.rate_limited_until:
            self.rate_limited_until = None
            self.action_retry()
        if self.rate_limited_until is None and self.waiting_until is None and self._ticker:
            self._ticker.stop()
            self._ticker = None
        self.refresh_status()

    def action_retry(self) -> None:
        self._retry_on = {s: r for s, r in self._retry_on.items() if s in self.screen_stack}
        retry = self._retry_on.pop(self.screen, None)
        if retry is None or retry is self._retry:
            retry, self._retry = retry or self._retry, None
        self.problem = None
        self.refresh_status()
        if retry is not None:
            retry()

    def server_answered(self, asked: float) -> None:
        """An HTTP answer came, if an error, to a request made at `asked` (time.monotonic()):
        made after the connection problem the status line says, it shows that problem over
        (an answer to an older request, slow to come, does not)."""
        if self.problem is not None and asked >= self.problem_at:
            self.problem = None
            self.refresh_status()

    def mark_refreshed(self, asked: float) -> None:
        """A call made at `asked` (time.monotonic()) succeeded."""
        self.last_refresh = self.now().timestamp()
        if asked >= self.problem_at:
            self.problem = None
        self.waiting = self.waiting_until = None
        self.refresh_status()

    def status(self) -> Status:
        """What the status line says now."""
        budget = self._client.latest_budget if self._client is not None else None
        return Status(
            server=self.server_label,
            profile=self.profile,
            rate_remaining=budget.remaining if budget is not None else None,
            rate_limit=budget.limit if budget is not None else None,
            refreshed_at=self.last_refresh,
            problem=self.problem_text(),
        )

    def refresh_status(self) -> None:
        """Feed the status line of the screen in view."""
        bars = self.screen.query(StatusBar)
        if bars:
            status = self.status()
            for bar in bars:
                bar.show(status)

    def ask_for_key(self, project_id: str, error: ApiError) -> None:
        if self.prompting_key_for == project_id:
            return
        from tui.ui.screens.base import error_line
        from tui.ui.screens.prompts import KeyAnswer, KeyPrompt

        self.prompting_key_for = project_id
        retry = self._retry

        def answered(answer: object) -> None:
            self.prompting_key_for = None
            if not isinstance(answer, KeyAnswer):
                return
            self.client.set_project_key(project_id, answer.key)
            if self.config_path is None:
                self.notify("The key is used until tracetui quits (no config file to save it in).")
            elif not answer.save:
                self.notify(
                    "The key is used until tracetui quits; it was not saved "
                    "(tick “Save it” next time to keep it)."
                )
            else:
                from tui.config import ConfigError, save_project_key

                try:
                    save_project_key(self.config_path, self.profile, project_id, answer.key)
                    self.notify(f"Key saved to {self.config_path} (mode 0600).")
                except (OSError, ConfigError) as exc:
                    self.notify(f"Could not save the key: {type(exc).__name__}", severity="error")
            if retry is not None:
                retry()

        reason = error_line(error)
        self.push_screen(
            KeyPrompt(project_id, reason, str(self.config_path or "the config file")), answered
        )

    # -- clipboard -------------------------------------------------------------------------------

    def copy_text(self, text: str, what: str) -> None:
        """Copy by OSC 52 (works over SSH in most terminals); say how to fall back if not.
        `what` names it for the toast: "span as JSON", "user message"... Text too big for the
        terminal to take (COPY_MAX_BYTES) is not sent: the toast says its size and the way
        out (a file)."""
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > COPY_MAX_BYTES:
            self.notify(
                f"The {what} is {byte_size(size)}: too big to copy through the terminal (OSC 52 "
                f"carries up to {byte_size(COPY_MAX_BYTES)} here; tmux drops longer ones). "
                "Press e to export the trace to a file instead.",
                title="Not copied",
                severity="warning",
                timeout=10,
            )
            return
        self.copy_to_clipboard(text)
        self.notify(
            f"Copied the {what} ({len(text):,} characters) via OSC 52. If nothing arrived, "
            "your terminal blocks OSC 52: press e to export the trace to a file instead.",
            timeout=6,
        )

    def copy_secret(self, text: str, what: str) -> None:
        """Copy a key, a secret or lines holding one by OSC 52; the toast never shows it."""
        self.copy_to_clipboard(text)
        self.notify(
            f"Copied the {what} via OSC 52. If nothing arrived, your terminal blocks OSC 52: "
            "select it on screen instead.",
            timeout=6,
        )


def waiting_text(waiting: Waiting, left: int) -> str:
    """A wait inside the client, as the status line counts it down."""
    if waiting.reason == "pacing":
        return f"⏳ server budget nearly spent: next request in {left}s"
    if waiting.reason == "rate_limit":
        return f"⏳ rate limited: retrying in {left}s"
    title = waiting.error.title if waiting.error is not None else "Request failed"
    return f"⟳ {title}: retrying in {left}s (try {waiting.next_try})"
