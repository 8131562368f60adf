"""The projects screen: the workspace's projects; Enter opens traces, `a` alerts, `s` settings
and keys, `n` creates, `w` the workspace keys (on a server that offers them)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from tui.api import ApiError, Project
from tui.model.text import safe_text
from tui.ui.messages import ProjectsLoaded
from tui.ui.screens.base import AppScreen
from tui.ui.widgets.key_footer import KeyFooter
from tui.ui.widgets.status_bar import StatusBar
from tui.ui.widgets.table import Column, Table

COLUMNS = (
    Column("Name", least=12, most=60, share=3),
    Column("ID", least=10, most=40, share=1),
    Column("Description", least=12, most=200, share=4),
    Column("Retention", least=9),
)

# In place of rows when there are none: what to do next (n is always on this screen).
EMPTY = Text("No projects yet: press n to create one.")


class ProjectsScreen(AppScreen):
    BINDINGS = [
        Binding("enter", "open", "Traces", id="projects.open"),
        Binding("a", "alerts", "Alerts", id="projects.alerts"),
        Binding("o", "overview", "Overview", id="projects.overview"),
        Binding("s", "settings", "Settings", id="projects.settings", tooltip="Edit, keys, delete"),
        Binding("n", "new", "New project", id="projects.new"),
        Binding(
            "w",
            "workspace_keys",
            "Workspace keys",
            id="projects.workspace_keys",
            show=False,
            tooltip="The keys that manage every project",
        ),
        Binding(
            "S",
            "sessions",
            "Sessions",
            id="projects.sessions",
            show=False,
            tooltip="The project's sessions, each read as one conversation",
        ),
        Binding("r", "refresh", "Refresh", id="projects.refresh"),
    ]
    DEFAULT_CSS = """
    ProjectsScreen #header { height: 1; background: $boost; padding: 0 1; }
    ProjectsScreen Table { height: 1fr; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.projects: list[Project] = []
        self.go_to: str | None = None  # a project just created: the cursor goes to it

    def compose(self) -> ComposeResult:
        yield Static(Text("Projects", style="bold"), id="header")
        yield Table(COLUMNS)
        yield StatusBar()
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(Table).focus()
        self.action_refresh()
        # What the server offers decides whether the workspace keys' key is there.
        self.call_api(
            lambda client: client.discover_offers(),
            lambda _offers: self.refresh_bindings(),
            group="offers",
            failed=lambda _error: True,  # the key stays hidden; nothing else is wrong
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "workspace_keys":
            try:
                return bool(self.tui.client.offers_workspace_keys)
            except RuntimeError:  # the client is still loading
                return False
        return super().check_action(action, parameters)

    def action_workspace_keys(self) -> None:

        self.tui.open_workspace_keys()

    def action_refresh(self) -> None:
        self._header(Text("Projects · loading…", style="bold"))
        self.call_api(
            lambda client: client.list_projects(),
            self._loaded,
            group="projects",
            failed=self._failed,
            retry=self.action_refresh,
        )

    def _header(self, text: Text) -> None:
        self.query_one("#header", Static).update(text)

    def _failed(self, error: ApiError) -> None:
        self._header(safe_text(f"Projects · {error.title}", style="bold red"))

    def _loaded(self, projects: list[Project]) -> None:
        self.projects = [p for p in projects if p.id]
        self.post_message(ProjectsLoaded(self.projects))
        self.fill()
        table = self.query_one(Table)
        ids = [project.id for project in self.projects]
        if self.go_to in ids:
            table.move_cursor(row=ids.index(self.go_to))
        self.go_to = None
        table.empty_text = EMPTY
        self._header(Text(f"Projects · {len(self.projects)}", style="bold"))

    def fill(self) -> None:
        # Each row's key is its id: a refresh keeps the cursor on its project.
        self.query_one(Table).set_rows(
            [
                (
                    (
                        project.name or "(no name)",
                        project.id or "",
                        project.description or "",
                        f"{project.retention_days} d"
                        if project.retention_days is not None
                        else "–",
                    ),
                    project.id,
                )
                for project in self.projects
            ]
        )

    def selected(self) -> Project | None:
        table = self.query_one(Table)
        if not self.projects or table.cursor_row >= len(self.projects):
            return None
        return self.projects[table.cursor_row]

    def action_open(self) -> None:
        project = self.selected()
        if project is not None and project.id:
            self.tui.open_traces(project.id, project.name)

    def action_alerts(self) -> None:
        project = self.selected()
        if project is not None and project.id:
            self.tui.open_alerts(project.id, project.name)

    def action_overview(self) -> None:
        project = self.selected()
        if project is not None and project.id:
            self.tui.open_overview(project.id, project.name)

    def action_sessions(self) -> None:
        project = self.selected()
        if project is not None and project.id:
            self.tui.open_sessions(project.id, project.name)

    def action_settings(self) -> None:
        project = self.selected()
        if project is not None and project.id:
            self.tui.open_project_settings(project.id, project.name, self._settings_closed)

    def _settings_closed(self, _: None) -> None:
        if self.still_open:  # the project may have been renamed or deleted there
            self.action_refresh()

    def action_new(self) -> None:
        def created(project: Project | None) -> None:
            if project is not None:
                self.notify(f"Project {project.name} created.")
                self.go_to = project.id
                self.action_refresh()

        self.tui.new_project(created)

    def on_data_table_row_selected(self, event: Table.RowSelected) -> None:
        self.action_open()
