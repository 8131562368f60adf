"""The projects screen: the workspace's projects; Enter opens traces, `a` alerts, `n` creates."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Static

from tui.api import ApiError, Project
from tui.messages import ProjectsLoaded
from tui.screens.base import AppScreen
from tui.text import safe_text
from tui.widgets.status_bar import StatusBar


class ProjectsScreen(AppScreen):
    BINDINGS = [
        Binding("enter", "open", "Traces", id="projects.open"),
        Binding("a", "alerts", "Alerts", id="projects.alerts"),
        Binding("n", "new", "New project", id="projects.new"),
        Binding("r", "refresh", "Refresh", id="projects.refresh"),
    ]
    DEFAULT_CSS = """
    ProjectsScreen #header { height: 1; background: $boost; padding: 0 1; }
    ProjectsScreen DataTable { height: 1fr; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.projects: list[Project] = []

    def compose(self) -> ComposeResult:
        yield Static(Text("Projects", style="bold"), id="header")
        yield DataTable(cursor_type="row", zebra_stripes=True)
        yield StatusBar()
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("Name", key="name")
        table.add_column("ID", key="id")
        table.add_column("Description", key="description")
        table.add_column("Retention", key="retention")
        table.focus()
        self.action_refresh()

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
        self._header(Text(f"Projects · {len(self.projects)}", style="bold"))

    def fill(self) -> None:
        table = self.query_one(DataTable)
        wide = self.size.width >= 120
        table.clear()
        for project in self.projects:
            table.add_row(
                safe_text(project.name or "(no name)", 40 if wide else 24),
                safe_text(project.id, 36 if wide else 16),
                safe_text(project.description or "", 60 if wide else 24),
                f"{project.retention_days} d" if project.retention_days is not None else "–",
                key=project.id,
            )

    def selected(self) -> Project | None:
        table = self.query_one(DataTable)
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

    def action_new(self) -> None:
        def created(project: Project | None) -> None:
            if project is not None:
                self.notify(f"Project {project.name} created.")
                self.action_refresh()

        self.tui.new_project(created)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()
