"""The command palette's entries (ctrl+p): open a trace, switch project, a project's settings,
set the time range, switch profile, the API log. Project names and ids come from servers: never markup."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.markup import escape

from tui.model.text import safe_text, visible
from tui.model.timerange import PRESETS, TimeRange

if TYPE_CHECKING:
    from tui.ui.app import TraceTuiApp

# Project names and ids are cut to this: the palette wraps a hit whole.
PALETTE_NAME_CHARS = 80


def workspace_keys_offered(app: TraceTuiApp) -> bool:
    """Whether the server offers workspace keys (as learnt: the projects screen asks)."""
    try:
        return bool(app.client.offers_workspace_keys)
    except RuntimeError:  # the client is still loading
        return False


def open_workspace_keys(app: TraceTuiApp) -> None:
    app.open_workspace_keys()


class TraceTuiCommands(Provider):
    """Palette entries: open a trace, switch project, set the time range, the API log."""

    def _commands(self) -> list[tuple[str, Callable[[], Any], str]]:
        app: TraceTuiApp = self.app  # type: ignore[assignment]
        commands: list[tuple[str, Callable[[], Any], str]] = [
            ("Open trace by id…", app.action_open_trace, "Jump straight to one trace"),
            ("API log", app.action_api_log, "Requests, statuses, timings, rate-limit headers"),
        ]
        # Switching comes first, settings after: switching is what the palette is most used for.
        named = [
            (
                project.id,
                project.name,
                safe_text(project.name or project.id, PALETTE_NAME_CHARS).plain,
            )
            for project in app.projects
            if project.id
        ]
        for project_id, raw_name, name in named:
            commands.append(
                (
                    f"Switch project: {name}",
                    partial(app.open_traces, project_id, raw_name),
                    safe_text(project_id, PALETTE_NAME_CHARS).plain,
                )
            )
        for project_id, raw_name, name in named:
            commands.append(
                (
                    f"Project settings: {name}",
                    partial(app.open_project_settings, project_id, raw_name),
                    "Name, description, retention, keys",
                )
            )
        if workspace_keys_offered(app):
            commands.append(
                ("Workspace keys", partial(open_workspace_keys, app), "List, make, revoke")
            )
        # Sessions (each project's) and, over the trace list, its optional columns.
        from tui.ui.screens.sessions import search_commands

        commands += search_commands(app, self.screen)
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
            # The help is matched too: a project is found by its id as well as by its name.
            score = max(matcher.match(name), matcher.match(help_text) * 0.9)
            if score > 0:
                # highlight() parses its argument as markup: names come from servers.
                yield Hit(
                    score, matcher.highlight(escape(name)), run, help=escape(visible(help_text))
                )
