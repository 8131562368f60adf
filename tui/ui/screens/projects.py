"""The projects screen: the workspace's projects, each with its health over the last hour (its
firing alerts, error rate and traffic: tui/ui/project_health.py reads it, tui/model/health.py
draws it); `u` lists the unhealthy first. Enter opens traces, `a` alerts, `s` settings and keys,
`n` creates, `w` the workspace keys (on a server that offers them).

The health is read again while the screen is shown (an on-call engineer leaves it open): every
HEALTH_EVERY_S from a server that tells it in one request, every HEALTH_PER_PROJECT_EVERY_S
where it costs a request or two per project; a screen beneath another reads it as it comes
back, if it is due by then."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.timer import Timer
from textual.widgets import Static

from tui.api import ApiError, Project
from tui.model import health as health_cells
from tui.model.formatting import counted
from tui.model.text import notice, safe_text
from tui.ui.messages import ProjectsLoaded
from tui.ui.project_health import HealthView, load_health
from tui.ui.screens.base import AppScreen
from tui.ui.widgets.key_footer import KeyFooter
from tui.ui.widgets.status_bar import StatusBar
from tui.ui.widgets.table import Column, Drawn, Table

# At 80 columns the health columns keep their room and the description gives way first; the
# ID and description are left out before a name or a firing alert is cut to nothing.
COLUMNS = (
    Column("Name", least=12, most=60, share=1),
    Column("Alerts", least=16, most=40, share=1),
    Column("Errors 1h", least=9),
    Column("Traffic 1h", least=10, most=20, share=1),
    Column("ID", least=10, most=40, share=2, optional=True),
    Column("Description", least=12, most=200, share=8, optional=True),
    Column("Retention", least=9, optional=True),
)

# In place of rows when there are none: what to do next (n is always on this screen).
EMPTY = Text("No projects yet: press n to create one.")
NOT_KNOWN = Text("–", style="dim")

HEALTH_EVERY_S = 15.0  # from a server's one-request summary
HEALTH_PER_PROJECT_EVERY_S = 60.0  # read per project: fewer requests of a far server


class ProjectsScreen(AppScreen):
    BINDINGS = [
        Binding("enter", "open", "Traces", id="projects.open"),
        Binding("a", "alerts", "Alerts", id="projects.alerts"),
        Binding("o", "overview", "Overview", id="projects.overview"),
        Binding("s", "settings", "Settings", id="projects.settings", tooltip="Edit, keys, delete"),
        Binding("n", "new", "New", id="projects.new", tooltip="A new project"),
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
        Binding(
            "f",
            "firing_alert",
            "Firing alert",
            id="projects.firing_alert",
            show=False,
            tooltip="The project's alert that has fired longest",
        ),
        Binding(
            "u",
            "unhealthy_first",
            # Short: at 80 columns the footer holds nine keys, "⏎ Traces" among them.
            "Worst",
            id="projects.unhealthy_first",
            tooltip="List first the projects with firing alerts, then by error rate (again: as"
            " listed)",
        ),
        Binding("r", "refresh", "Refresh", id="projects.refresh"),
    ]
    # At 80 columns the footer has no room for f, which the header names while any project's
    # alert is firing; wider, the footer shows it too. Both are in `?`.
    FOOTER_WHEN_ROOM = ("projects.firing_alert",)
    DEFAULT_CSS = """
    ProjectsScreen #header { height: 1; background: $boost; padding: 0 1; }
    ProjectsScreen Table { height: 1fr; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.projects: list[Project] = []  # as shown
        self.listed: list[Project] = []  # as the server listed them
        self.health: HealthView | None = None  # None: loading
        self.health_error: str | None = None
        self.unhealthy_first = False
        self.go_to: str | None = None  # a project just created: the cursor goes to it
        self.health_asked = False  # for the projects listed last
        self.health_due = False  # read again when the screen is next on top
        self.health_timer: Timer | None = None

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
        self.health, self.health_error = None, None
        self.call_api(
            lambda client: client.list_projects(),
            self._loaded,
            group="projects",
            failed=self._failed,
            retry=self.action_refresh,
        )

    def _header(self, text: Text) -> None:
        self.query_one("#header", Static).update(text)

    def _say(self) -> None:
        """The header: how many projects, over which window, in which order, and how their
        health was read (or that it is loading, or failed)."""
        text = Text(f"Projects · {len(self.projects)}", no_wrap=True, overflow="ellipsis")
        text.stylize("bold")
        text.append(f" · last {health_cells.WINDOW}")
        if self.unhealthy_first:
            text.append(" · unhealthy first", style="bold")
        known = self.health.health.values() if self.health is not None else ()
        on_fire = sum(1 for health in known if health.firing)
        if on_fire:
            text.append(" · ")
            text.append(f"▲ {counted(on_fire, 'project')} firing", style="bold red")
            text.append(" (u lists first, f opens)")
        if self.health_error is not None:
            text.append(" · ")
            text.append_text(safe_text(f"health: {self.health_error}", 80, style="red"))
        elif self.health is None:
            text.append(" · health loading…", style="italic")
        elif self.health.note():
            text.append(" · ")
            text.append(self.health.note(), style="yellow")
        self._header(text)

    def _load_health(self) -> None:
        projects = list(self.listed)
        self.call_api(
            lambda client: load_health(client, projects, self.tui.now()),
            self._health_loaded,
            group="health",
            failed=self._health_failed,
            quiet=True,
        )

    def _health_loaded(self, view: HealthView) -> None:
        self.health, self.health_error = view, None
        self.fill()
        self._say()
        self._read_health_again(HEALTH_EVERY_S if view.by_server else HEALTH_PER_PROJECT_EVERY_S)

    def _health_failed(self, error: ApiError) -> bool:
        self.health_error = error.title
        self._say()
        self._read_health_again(HEALTH_PER_PROJECT_EVERY_S)
        return True

    def action_unhealthy_first(self) -> None:
        self.unhealthy_first = not self.unhealthy_first
        self.fill()
        if self.projects:
            self.query_one(Table).move_cursor(row=0)
        self._say()

    def _failed(self, error: ApiError) -> None:
        self._header(safe_text(f"Projects · {error.title}", style="bold red"))

    def _loaded(self, projects: list[Project]) -> None:
        self.listed = [p for p in projects if p.id]
        self.post_message(ProjectsLoaded(self.listed))
        self.fill()
        table = self.query_one(Table)
        ids = [project.id for project in self.projects]
        if self.go_to in ids:
            table.move_cursor(row=ids.index(self.go_to))
        self.go_to = None
        table.empty_text = EMPTY
        self._say()
        if not self.listed:
            self.health = HealthView()
        self.health_asked = False
        self._load_health_when_shown()

    def on_screen_resume(self) -> None:
        if self.health_due and self.listed and self.health is not None:
            self.health_due = False
            self._load_health()
        self._load_health_when_shown()

    def _read_health_again(self, every_s: float) -> None:
        """The health read again in `every_s` seconds, or when the screen is next on top."""
        if self.health_timer is not None:
            self.health_timer.stop()
        self.health_timer = self.set_timer(every_s, self._health_is_due, name="health")

    def _health_is_due(self) -> None:
        self.health_timer = None
        if self.is_active:
            self._load_health()
        else:
            self.health_due = True

    def _load_health_when_shown(self) -> None:
        """Read the listed projects' health once, when the screen is on top: an app started at
        a project's traces (this screen beneath them) reads it when the user comes back here,
        not on its way there, where it cost a far server a request or two per project."""
        if self.listed and self.health is None and not self.health_asked and self.is_active:
            self.health_asked = True
            self._load_health()

    def fill(self) -> None:
        known = self.health.health if self.health is not None else {}
        self.projects = health_cells.ordered(self.listed, known, self.unhealthy_first)
        now = self.tui.now()
        # Each row's key is its id: a refresh keeps the cursor on its project.
        self.query_one(Table).set_rows(
            [(self._cells(project, now), project.id) for project in self.projects]
        )

    def _cells(self, project: Project, now: datetime) -> tuple[str | Text | Drawn, ...]:
        described = (
            project.id or "",
            project.description or "",
            f"{project.retention_days} d" if project.retention_days is not None else "–",
        )
        health = self.health.health.get(project.id or "") if self.health is not None else None
        if self.health is not None and health is None:
            # Loaded for the others, not for this one (not read, or it failed): not known.
            return (project.name or "(no name)", NOT_KNOWN, NOT_KNOWN, NOT_KNOWN, *described)
        return (
            project.name or "(no name)",
            health_cells.alerts_cell(health, now),
            health_cells.errors_cell(health),
            Drawn(
                lambda width: health_cells.traffic_cell(health, width),
                width=health_cells.traffic_width(health),
            ),
            *described,
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

    def action_firing_alert(self) -> None:
        project = self.selected()
        if project is None or not project.id:
            return
        health = self.health.health.get(project.id) if self.health is not None else None
        if health is None:
            self.notify("The projects' health is not loaded yet.", timeout=3)
        elif not health.firing:
            name = notice(project.name or project.id)
            self.notify(f"No alert of {name} is firing.", timeout=3)
        else:
            self.tui.open_alert(project.id, health.firing[0].alert)

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
