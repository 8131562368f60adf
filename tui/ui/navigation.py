"""The app's navigation: screens never open each other (tests/architecture checks it), they ask
the app to open the next one, so each screen's module is imported only when it is first shown.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import suppress
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.screen import ModalScreen

if TYPE_CHECKING:
    from tui.api import Alert, Project, Trace
    from tui.api.annotation_records import Annotation
    from tui.api.models import Session
    from tui.model.session_query import SessionQuery
    from tui.model.timerange import TimeRange
    from tui.model.trace_list import SessionsOf
    from tui.ui.messages import DiffMark, DiffRequested
    from tui.ui.screens.annotation_actions import AnnotationsOf
    from tui.ui.trace_pages import Collected


def default_export_path(trace_id: str, now: float | None = None) -> Path:
    """Where an export goes unless the user says otherwise:
    ~/tracetui/exports/trace-ID-2026-11-21_093015.json (the id cut and made safe for a file
    name; the local time, readable, with no colon for the file systems that refuse one)."""
    safe_id = "".join(c if c.isalnum() or c in "-_" else "_" for c in trace_id)[:80]
    moment = datetime.fromtimestamp(time.time() if now is None else now).astimezone()
    stamp = moment.strftime("%Y-%m-%d_%H%M%S")
    return Path.home() / "tracetui" / "exports" / f"trace-{safe_id}-{stamp}.json"


def shown_path(path: Path) -> str:
    """A path as a field shows it: under the home folder as ~/… (shorter, and read back by
    expanduser)."""
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)


def narrow_trace_list(screen: Any, time_range: TimeRange | None, query: str | None) -> None:
    """Give a trace list just opened a range and a query, as `t` and `/` give them."""
    from tui.model.query import QueryError

    state = screen.state
    if time_range is not None:
        state = state.ranged(time_range)
    # A query of the app's own making that does not read: the list opens unfiltered.
    with suppress(QueryError):
        state = state.submitted(query) if query else state
    screen.state = state
    screen.refresh_bindings()
    screen.reload(keep=False)  # the range's rows (a new call replaces the first range's)
    if state.query_text:
        screen.requery()  # the server's filtered rows of the range, where it filters


class Navigation(App[str | None]):
    """Opening and closing the app's screens; TraceTuiApp is built on it."""

    def open_traces(
        self,
        project_id: str,
        name: str | None,
        time_range: TimeRange | None = None,
        query: str | None = None,
    ) -> None:
        """A project's traces; `time_range` and `query` (the query line's words, e.g. "error")
        narrow them, as `t` and `/` would (the overview opens a spike's failing traces so)."""
        from tui.ui.screens.traces import TracesScreen

        screen = TracesScreen(project_id, name)
        self.push_screen(screen)
        if time_range is not None or query:
            # The trace list is made without a range or a query: they are given once it is
            # mounted, through what `t` and `/` call.
            screen.call_after_refresh(narrow_trace_list, screen, time_range, query)

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

    # -- diffs: the trace list marks A (`m`) and asks for a diff (`D`); a trace asks for one
    # against its last good trace; the diff screen picks another A.

    # The trace marked as A: (trace id, project id, how it is named to the user).
    diff_mark: tuple[str, str, str] | None = None

    def open_diff(self, b_id: str, project_id: str | None = None, a_id: str | None = None) -> None:
        """The diff of trace `b_id` against `a_id`, or against its last good trace."""
        from tui.ui.screens.diff import DiffScreen

        self.push_screen(DiffScreen(b_id, project_id, a_id))

    def on_diff_mark(self, message: DiffMark) -> None:
        self.diff_mark = (message.trace_id, message.project_id, message.label)
        self.notify(
            f"Marked {message.label} as A. On another trace, D shows what differs from it.",
            title="Marked for a diff",
            timeout=6,
        )

    def on_diff_requested(self, message: DiffRequested) -> None:
        mark = self.diff_mark
        if mark is not None and mark[1] == message.project_id and mark[0] == message.trace_id:
            self.notify("This is the marked trace: D on another one diffs it against this.")
            return
        if mark is not None and mark[1] == message.project_id:
            self.open_diff(message.trace_id, message.project_id, mark[0])
        else:  # nothing marked here: against its last good one
            self.open_diff(message.trace_id, message.project_id)

    def pick_diff_base(
        self,
        b_id: str,
        b: Trace | None,
        candidates: list[Trace],
        project_id: str | None,
        chosen: Callable[[str | None], None],
    ) -> None:
        """The dialog that picks another A for the diff of `b_id`."""
        from tui.ui.screens.diff_pick import PickDiffBase

        mark = self.diff_mark
        marked = (mark[0], mark[2]) if mark is not None and mark[1] == project_id else None
        self.push_screen(PickDiffBase(b_id, b, candidates, marked), chosen)

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
        self,
        project_id: str,
        name: str | None,
        query: SessionQuery | None = None,
        of: SessionsOf | None = None,
    ) -> None:
        """A project's sessions, each read as one conversation; `query`: only those of a user,
        a time or a text; `of`: only those of a filtered trace list (its user's, or its
        traces')."""
        from tui.ui.screens.sessions import SessionsScreen

        self.push_screen(SessionsScreen(project_id, name, query, of))

    def open_session(self, project_id: str, session: Session) -> None:
        """One session's traces in order, read as one conversation."""
        from tui.ui.screens.session import SessionScreen

        self.push_screen(SessionScreen(project_id, session))

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

        default = shown_path(default_export_path(trace_id))
        self.push_screen(ExportPrompt(f"trace {trace_id[:32]}", default), chosen)

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
