"""The Textual app. For now a projects screen read through the API client (the full app is next)."""

from __future__ import annotations

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Header, Static

from tui.api.client import ApiClient
from tui.api.errors import ApiError
from tui.text import safe_text


class TraceTuiApp(App[None]):
    """Lists the workspace's projects."""

    TITLE = "tracetui"
    BINDINGS = [
        Binding("r", "refresh", "Refresh", id="app.refresh"),
        Binding("q", "quit", "Quit", id="app.quit"),
    ]
    CSS = """
    #status { height: 1; background: $panel; padding: 0 1; }
    """

    def __init__(self, client: ApiClient) -> None:
        super().__init__()
        self.client = client

    def compose(self) -> ComposeResult:
        yield Header()
        yield DataTable(id="projects", cursor_type="row", zebra_stripes=True)
        yield Static("", id="status")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("Name", "ID", "Description", "Retention")
        self.action_refresh()

    @work(exclusive=True, group="projects", exit_on_error=False)
    async def action_refresh(self) -> None:
        status = self.query_one("#status", Static)
        status.update(f"loading projects from {self.client.host}…")
        try:
            projects = await self.client.list_projects()
        except ApiError as error:
            status.update(safe_text(error.message))
            return
        table = self.query_one(DataTable)
        table.clear()
        for project in projects:
            table.add_row(
                safe_text(project.name, 40),
                safe_text(project.id, 24),
                safe_text(project.description or "", 30),
                f"{project.retention_days} d" if project.retention_days is not None else "",
                key=project.id,
            )
        status.update(safe_text(f"{len(projects)} projects · {self.client.host}"))
