"""The base of every screen: typed access to the app, and the one way to call the API.

`call_api` runs a call in an exclusive worker of the screen, sends any API error through the
app's one error mapping (`TraceTuiApp.report_error`), marks the refresh on success, and hands the
result to the screen, unless the screen has gone in the meantime: a late answer is dropped,
never shown on a screen the user has left.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar, cast

from textual.screen import ModalScreen, Screen
from textual.worker import Worker

if TYPE_CHECKING:
    from tui.api import ApiError, TraceSource
    from tui.ui.app import TraceTuiApp

T = TypeVar("T")

# How often a screen redraws its relative ages ("4m ago", "firing for 12m") from what it holds:
# the same pace as the trace list's age column (tui/ui/widgets/trace_table.py), no request.
AGE_TICK_S = 15.0


class ApiCalls:
    """What every screen shares; mixed into Screen and ModalScreen below."""

    @property
    def _screen(self) -> Screen[Any]:
        return cast("Screen[Any]", self)

    @property
    def still_open(self) -> bool:
        """Whether the screen is still in the app's stack (not closed or being closed)."""
        screen = self._screen
        return screen.is_attached and screen in screen.app.screen_stack

    @property
    def tui(self) -> TraceTuiApp:
        """The app, typed."""
        return cast("TraceTuiApp", self._screen.app)

    def call_api(
        self,
        call: Callable[[TraceSource], Awaitable[T]],
        done: Callable[[T], object],
        *,
        group: str,
        failed: Callable[[ApiError], bool | None] | None = None,
        retry: Callable[[], object] | None = None,
        project_id: str | None = None,
        quiet: bool = False,
    ) -> Worker[None]:
        """Run `call(client)` in the worker group `group` (a new call replaces a running one).

        On success: the refresh is marked and `done(result)` runs (awaited if it is async). On
        an API error: `failed` runs (for what the screen shows in place: a header, a form), then
        the app reports it as its kind calls for, keeping `retry` for ctrl+r, unless `failed`
        returned True (it said all there is to say); `quiet` leaves toasts and key prompts out
        (the screen shows the error itself). Anything else is a bug, which the app reports.
        """

        def retry_if_still_here() -> None:
            # ctrl+r or the rate-limit timer may come after the user has left this screen.
            if retry is not None and self.still_open:
                retry()

        from tui.api import ApiError  # here: the first frame is drawn before the client loads

        async def run() -> None:
            asked = time.monotonic()  # an answer clears only a problem that came before it
            try:
                result = await call(self.tui.client)
            except ApiError as error:
                if not self.still_open:
                    return
                if error.status is not None:  # an answer, if not the one wanted
                    self.tui.server_answered(asked)
                if failed is not None and failed(error):
                    return
                self.tui.report_error(
                    error,
                    retry=retry_if_still_here if retry is not None else None,
                    project_id=project_id,
                    quiet=quiet,
                    screen=self._screen,
                )
                return
            if not self.still_open:
                return
            self.tui.mark_refreshed(asked)
            outcome = done(result)
            if inspect.isawaitable(outcome):
                await outcome

        return self._screen.run_worker(
            run(), name=group, group=group, exclusive=True, exit_on_error=False
        )

    def ask_now(
        self, call: Callable[[TraceSource], Coroutine[Any, Any, T]]
    ) -> asyncio.Task[T] | None:
        """Start `call` at once, from the screen's __init__: before the screen is built and
        drawn (20-50 ms), which far from the server would add to the answer's time. The task
        is then given to `call_api` (`lambda client: task`), whose worker awaits it; if none
        ever does, its outcome is dropped. None when there is no app or client yet."""
        try:
            loop = asyncio.get_running_loop()
            client = self.tui.client
        except (RuntimeError, LookupError):
            return None
        task = loop.create_task(call(client))
        task.add_done_callback(lambda done: done.cancelled() or done.exception())
        return task

    def keep_ages_current(self, redraw: Callable[[], object]) -> None:
        """Run `redraw` every AGE_TICK_S seconds while the screen is in view, so its relative
        ages keep counting; `redraw` draws from what the screen holds and asks nothing."""

        def tick() -> None:
            if self._screen.is_current:
                redraw()

        self._screen.set_interval(AGE_TICK_S, tick, name="ages")

    def on_screen_resume(self) -> None:
        # What the status line shows may have changed while another screen was on top.
        self.tui.refresh_status()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Keys for what the server does not offer (alerts) are left out: not in the footer,
        not run. The screens ask the client what it offers, never which server it is."""
        if action == "alerts":
            try:
                return bool(self.tui.client.has_alerts)
            except RuntimeError:  # the client is still loading: nothing to ask yet
                return True
        return True


def error_line(error: ApiError) -> str:
    """An API error in one line, for a screen's header or a form: `title: message`."""
    return f"{error.title}: {error.message}"


class AppScreenOf(ApiCalls, Screen[T]):
    """A full screen of the app that is dismissed with a result of type T (the annotations
    screen gives back what changed)."""


class AppScreen(AppScreenOf[None]):
    """A full screen of the app."""


class AppModal(ApiCalls, ModalScreen[T]):
    """A dialog of the app, dismissed with a result of type T."""
