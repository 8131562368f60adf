"""The projects screen: the workspace's projects; Enter opens traces, `a` alerts, `n` creates."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from tui.api import ApiError, Project
from tui.text import safe_text, visible
from tui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from tui.app import TraceTuiApp


class ProjectsScreen(Screen[None]):
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

    @property
    def tui(self) -> TraceTuiApp:
        return self.app  # type: ignore[return-value]

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

    @work(exclusive=True, group="projects", exit_on_error=False)
    async def action_refresh(self) -> None:
        header = self.query_one("#header", Static)
        header.update(Text("Projects · loading…", style="bold"))
        try:
            projects = await self.tui.client.list_projects()
        except ApiError as error:
            header.update(safe_text(f"Projects · {error.title}", style="bold red"))
            self.tui.report_error(error, retry=self.action_refresh)
            return
        self.projects = [p for p in projects if p.id]
        self.tui.projects = self.projects
        self.tui.mark_refreshed()
        self.fill()
        header.update(Text(f"Projects · {len(self.projects)}", style="bold"))

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
            from tui.screens.alerts import AlertsScreen

            self.app.push_screen(AlertsScreen(project.id, project.name or project.id))

    def action_new(self) -> None:
        from tui.screens.forms import ProjectForm

        def created(project: Project | None) -> None:
            if project is not None:
                self.notify(visible(f"Project {project.name} created."), markup=False)
                self.action_refresh()

        self.app.push_screen(ProjectForm(), created)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()
