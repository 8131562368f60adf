"""The app's navigation: screens never open each other (tests/architecture checks it), they ask
the app to open the next one, so each screen's module is imported only when it is first shown.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import App
from textual.screen import ModalScreen

if TYPE_CHECKING:
    from tui.api import Alert, Project
    from tui.api.annotation_records import Annotation
    from tui.model.timerange import TimeRange
    from tui.model.trace_list import SessionsOf
    from tui.ui.screens.annotation_actions import AnnotationsOf
    from tui.ui.trace_pages import Collected


def default_export_path(trace_id: str, now: float | None = None) -> Path:
    """Where an export goes unless the user says otherwise: ~/tracetui/exports/trace-ID-TIME.json
    (the id cut and made safe for a file name)."""
    safe_id = "".join(c if c.isalnum() or c in "-_" else "_" for c in trace_id)[:80]
    moment = int(time.time() if now is None else now)
    return Path.home() / "tracetui" / "exports" / f"trace-{safe_id}-{moment}.json"


class Navigation(App[str | None]):
    """Opening and closing the app's screens; TraceTuiApp is built on it."""

    def open_traces(self, project_id: str, name: str | None) -> None:
        from tui.ui.screens.traces import TracesScreen

        self.push_screen(TracesScreen(project_id, name))

    def open_trace(self, trace_id: str, project_id: str | None = None) -> None:
        from tui.ui.screens.trace_detail import TraceDetailScreen

        self.push_screen(TraceDetailScreen(trace_id, project_id))

    def close_trace(self, project_id: str | None) -> None:
        """Leave a trace. Opened by its id (a link in an alert), it has no trace list beneath:
        going back lands on its project's traces rather than the list of projects."""
        from tui.ui.screens.projects import ProjectsScreen

        self.pop_screen()
        if project_id and isinstance(self.screen, ProjectsScreen):
            self.open_traces(project_id, None)

    def back_to_projects(self) -> None:
        """Back to the list of projects, listed again (a project has gone from the server)."""
        from tui.ui.screens.projects import ProjectsScreen

        projects = next((s for s in self.screen_stack if isinstance(s, ProjectsScreen)), None)
        if projects is None:  # the app always starts on them; a fresh list, should it not
            self.pop_screen()
            self.push_screen(ProjectsScreen())
            return
        while self.screen is not projects:
            self.pop_screen()
        projects.action_refresh()

    def open_alerts(self, project_id: str, name: str | None) -> None:
        from tui.ui.screens.alerts import AlertsScreen

        self.push_screen(AlertsScreen(project_id, name or project_id))

    def open_overview(
        self, project_id: str, name: str | None, time_range: TimeRange | None = None
    ) -> None:
        from tui.ui.screens.overview import OverviewScreen

        self.push_screen(OverviewScreen(project_id, name or project_id, time_range))

    def open_alert(self, project_id: str, alert: Alert, collected: Collected | None = None) -> None:
        """An alert's detail; `collected`: the last 24 h of traces, if already paged in."""
        from tui.ui.screens.alert_detail import AlertDetailScreen

        self.push_screen(AlertDetailScreen(project_id, alert, collected))

    def open_project_settings(
        self, project_id: str, name: str | None, closed: Callable[[None], None] | None = None
    ) -> None:
        """A project's settings and keys; `closed` runs when the user leaves them (the project
        may have changed or gone)."""
        from tui.ui.screens.project_settings import ProjectSettingsScreen

        self.push_screen(ProjectSettingsScreen(project_id, name), closed)

    def open_sessions(
        self, project_id: str, name: str | None, of: SessionsOf | None = None
    ) -> None:
        """A project's sessions, each read as one conversation; `of`: only those of a filtered
        trace list (its user's, or its traces')."""
        from tui.ui.screens.sessions import SessionsScreen

        self.push_screen(SessionsScreen(project_id, name, of))

    def open_annotations(
        self, of: AnnotationsOf, closed: Callable[[list[Annotation] | None], None]
    ) -> None:
        """The annotations of a trace (and its spans) or a session, to read whole, edit and
        delete; `closed` gets them as they are when any changed."""
        from tui.ui.screens.annotations import AnnotationsScreen

        self.push_screen(AnnotationsScreen(of), closed)

    def open_workspace_keys(self) -> None:
        """The keys that manage every project (when the server offers them)."""
        from tui.ui.screens.workspace_keys import WorkspaceKeysScreen

        self.push_screen(WorkspaceKeysScreen())

    def new_project(self, created: Callable[[Project | None], None]) -> None:
        from tui.ui.screens.forms import ProjectForm

        self.push_screen(ProjectForm(), created)

    def new_alert(
        self,
        project_id: str,
        project_name: str,
        created: Callable[[Alert | None], None],
        collected: Collected | None = None,
    ) -> None:
        """The alert form; `collected`: traces already paged in, for its preview."""
        from tui.ui.screens.forms import AlertForm

        self.push_screen(AlertForm(project_id, project_name, collected), created)

    def pick_time_range(
        self, current: TimeRange, chosen: Callable[[TimeRange | None], None]
    ) -> None:
        from tui.ui.screens.time_range import TimeRangeScreen

        self.push_screen(TimeRangeScreen(current), chosen)

    def action_open_trace(self) -> None:
        from tui.ui.screens.prompts import TraceIdPrompt

        def chosen(value: object) -> None:
            if isinstance(value, str):
                self.open_trace(value)

        self.push_screen(TraceIdPrompt(), chosen)

    def export_trace(self, trace_id: str, text: Callable[[], str]) -> None:
        """Ask where to write a trace's JSON (by default a new file under ~/tracetui/exports),
        write it there, and say the path; never into the working directory unasked."""
        from tui.ui.screens.prompts import ExportPrompt

        def chosen(answer: object) -> None:
            if isinstance(answer, str):
                self._write_export(Path(answer).expanduser(), text)

        default = default_export_path(trace_id)
        self.push_screen(ExportPrompt(f"trace {trace_id[:32]}", str(default)), chosen)

    def _write_export(self, path: Path, text: Callable[[], str]) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("x", encoding="utf-8") as out:  # never over an existing file
                out.write(text())
        except OSError as exc:
            reason = "it already exists" if isinstance(exc, FileExistsError) else exc.strerror
            self.notify(f"Could not write {path}: {reason}", severity="error", timeout=10)
            return
        self.notify(f"Trace exported to {path}", title="Exported", timeout=10)

    def set_time_range(self, value: TimeRange) -> None:
        from tui.ui.screens.traces import TracesScreen

        if isinstance(self.screen, TracesScreen):
            self.screen.set_range(value)
        else:
            self.notify("Open a project's traces first; the range applies there.", timeout=4)

    def switch_profile(self, profile: str) -> None:
        self.exit(result=f"profile:{profile}")

    def action_help(self) -> None:
        from tui.ui.screens.help import HelpScreen

        if not isinstance(self.screen, ModalScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_api_log(self) -> None:
        from tui.ui.screens.api_log import ApiLogScreen

        self.push_screen(ApiLogScreen())
