"""A crash prints a traceback when the app exits; no key may be in it (Textual's default
prints every frame's local variables)."""

from __future__ import annotations

import io

import httpx
import pytest
from pydantic import SecretStr
from rich.console import Console
from textual import work

from tests.support.app import settled, wait_for
from tests.support.helpers import KEY
from tui.api import ApiClient
from tui.model.text import NOTICE_MAX_CHARS
from tui.ui.app import StartAt, TraceTuiApp


class CrashingApp(TraceTuiApp):
    printed: list[object]

    def _print_error_renderables(self) -> None:
        self.printed = list(self._exit_renderables)  # what is about to be printed
        super()._print_error_renderables()

    def action_crash(self) -> None:
        plain_key = KEY  # as a frame building a header, or reading the key prompt, would hold
        raise RuntimeError(f"boom near a key of length {len(plain_key)}")


async def test_a_crash_report_never_shows_a_key() -> None:
    transport = httpx.MockTransport(lambda r: httpx.Response(200, json={"data": []}))
    async with ApiClient("http://x.example/v1", SecretStr(KEY), transport=transport) as client:
        app = CrashingApp(client, StartAt())
        with pytest.raises(RuntimeError, match="boom"):
            async with app.run_test(size=(80, 24)) as pilot:
                await pilot.pause()
                app.call_later(app.run_action, "crash")
                await pilot.pause(0.2)
    console = Console(file=io.StringIO(), width=200, record=True)
    for renderable in app.printed:
        console.print(renderable)
    report = console.export_text()
    assert "RuntimeError" in report and "boom near a key" in report  # the crash is reported
    assert KEY not in report


class AppWithABuggyWorker(TraceTuiApp):
    @work(exit_on_error=False)
    async def buggy(self) -> None:
        raise RuntimeError(f"bad header Bearer {KEY} " + "x" * 1_000_000)


async def test_a_failed_worker_is_reported_without_the_key_and_cut() -> None:
    transport = httpx.MockTransport(lambda r: httpx.Response(200, json={"data": []}))
    async with ApiClient("http://x.example/v1", SecretStr(KEY), transport=transport) as client:
        app = AppWithABuggyWorker(client, StartAt())
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            app.buggy()
            await wait_for(pilot, lambda: bool(app._notifications), what="the bug reported")
            await settled(pilot)  # a second report would be up by now
            notes = [(n.title, n.message) for n in app._notifications]
            assert app.is_running
    assert len(notes) == 1
    title, message = notes[0]
    assert title == "tracetui bug" and "RuntimeError: bad header Bearer [redacted]" in message
    assert KEY not in message and len(message) <= NOTICE_MAX_CHARS
