"""`?` lists every key of the screen, `enter` included where a list's own enter hides the
screen's binding of it (projects, sessions), and writes every key one way: `ctrl+r`, as the
footer and the docs do, never `^r` beside `ctrl+p`."""

from __future__ import annotations

import io

from rich.console import Console

from tests.support.app import running_app, showing, wait_for
from tests.support.service import RunningService
from tui.ui.screens.help import HelpScreen, keys_table
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.sessions import SessionsScreen


def help_text(screen: object) -> str:
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(keys_table(screen))  # type: ignore[arg-type]
    return console.export_text()


async def test_enter_and_one_key_notation_on_projects_and_sessions(
    service: RunningService,
) -> None:
    async with running_app(service, size=(120, 40)) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, ProjectsScreen) and bool(app.projects))
        shown = help_text(app.screen)
        assert "projects.open" in shown and "⏎" in shown, shown
        assert "ctrl+r" in shown and "ctrl+p" in shown and "^" not in shown, shown
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: showing(app, HelpScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        app.open_sessions("proj_support", "support-chatbot")
        await wait_for(pilot, lambda: showing(app, SessionsScreen))
        shown = help_text(app.screen)
        assert "sessions.open" in shown and "sessions.filter" in shown, shown
        assert "^" not in shown
