"""A project's settings: its name, description and retention (`e` edits them), its API keys
(`n` makes one, shown once with the lines to paste; `d` revokes the one under the cursor), and
`x` deletes the project after its name is typed. Each key is there only when the server offers
the action; a server that offers none of them says so in place of the keys."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from tui.model.formatting import counted
from tui.model.text import safe_text
from tui.ui.screens.base import AppScreen
from tui.ui.widgets.key_footer import KeyFooter
from tui.ui.widgets.key_rows import KEY_COLUMNS, key_row
from tui.ui.widgets.status_bar import StatusBar
from tui.ui.widgets.table import Table

if TYPE_CHECKING:
    from tui.api import ApiError, KeyInfo, Project, TraceSource
    from tui.api.offers import Offers

OFFERED_BY = {
    "edit": "offers_project_edit",
    "delete_project": "offers_project_delete",
    "new_key": "offers_key_management",
    "revoke_key": "offers_key_management",
}


def otel_lines(base_url: str, key: str) -> tuple[str, str]:
    """The two lines an instrumented app's shell needs (the OTLP/HTTP endpoint is the API's
    root, without /v1)."""
    root = base_url.removesuffix("/v1")
    return (
        f"export OTEL_EXPORTER_OTLP_ENDPOINT={root}",
        f'export OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer {key}"',
    )


# In place of the keys when there are none, where the server makes them (n is then on).
NO_KEYS = Text("No keys yet: press n to make one for this project's apps.")


class ProjectSettingsScreen(AppScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="settings.back"),
        Binding("e", "edit", "Edit", id="settings.edit", tooltip="Name, description, retention"),
        Binding("n", "new_key", "New key", id="settings.new_key"),
        Binding("d", "revoke_key", "Revoke key", id="settings.revoke_key"),
        Binding("x", "delete_project", "Delete project", id="settings.delete"),
        Binding("r", "refresh", "Refresh", id="settings.refresh"),
    ]
    DEFAULT_CSS = """
    ProjectSettingsScreen #header { height: 1; background: $boost; padding: 0 1; }
    ProjectSettingsScreen #facts { height: auto; padding: 0 1; }
    ProjectSettingsScreen #keys-title { height: auto; padding: 0 1; color: $text-muted; text-style: bold; }
    ProjectSettingsScreen Table { height: 1fr; }
    """

    def __init__(self, project_id: str, project_name: str | None) -> None:
        super().__init__()
        self.project_id = project_id
        self.project_name = project_name or project_id
        self.project: Project | None = None
        self.keys: list[KeyInfo] = []

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        yield Static(id="facts")
        yield Static("Keys", id="keys-title")
        yield Table(KEY_COLUMNS)
        yield StatusBar()
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(Table).focus()
        self.header(" · loading…")
        self.action_refresh()
        self.keep_ages_current(self._redraw_ages)

    def _redraw_ages(self) -> None:
        """The keys' "last used 3m ago" keeps counting, drawn from the keys held."""
        if any(key.last_used_at for key in self.keys):
            self.show_keys()

    def header(self, note: str = "") -> None:
        text = safe_text(self.project_name, 40, style="bold")
        text.append(" · settings" + note)
        self.query_one("#header", Static).update(text)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        flag = OFFERED_BY.get(action)
        if flag is None:
            return super().check_action(action, parameters)
        try:
            offered = bool(getattr(self.tui.client, flag, False))
        except RuntimeError:
            return False
        if action == "revoke_key":
            return offered and bool(self.keys)
        if action in ("edit", "delete_project"):
            return offered and self.project is not None
        return offered

    # -- loading ---------------------------------------------------------------------------------

    def action_refresh(self) -> None:
        self.call_api(
            self._load,
            self._loaded,
            group="settings",
            failed=lambda error: self.header(f" · {error.title}"),
            retry=self.action_refresh,
        )

    async def _load(self, client: TraceSource) -> tuple[Project | None, list[KeyInfo] | None]:
        offers: Offers = await client.discover_offers()
        project = next((p for p in await client.list_projects() if p.id == self.project_id), None)
        keys = await client.list_keys(self.project_id) if offers.key_management else None
        return project, keys

    def _loaded(self, loaded: tuple[Project | None, list[KeyInfo] | None]) -> None:
        project, keys = loaded
        self.project = project
        if project is not None and project.name:
            self.project_name = project.name
        self.header("" if project is not None else " · no such project on this server")
        self.show_facts()
        if keys is None:
            server = getattr(self.tui.client, "server_name", "tracing")
            self.query_one("#keys-title", Static).update(
                Text(f"Keys: this {server} server does not offer managing keys from the app.")
            )
            self.keys = []
        else:
            self.keys = keys
        self.show_keys()
        self.refresh_bindings()

    def show_facts(self) -> None:
        project = self.project
        if project is None:
            self.query_one("#facts", Static).update("")
            return
        facts = Text("Name: ", style="dim")
        facts.append_text(safe_text(project.name or "(no name)", 60))
        facts.append("\nID: ", style="dim")
        facts.append_text(safe_text(project.id or "", 60))
        facts.append("\nDescription: ", style="dim")
        facts.append_text(safe_text(project.description or "–", 120))
        facts.append("\nRetention: ", style="dim")
        facts.append(
            "–" if project.retention_days is None else counted(project.retention_days, "day")
        )
        self.query_one("#facts", Static).update(facts)

    def show_keys(self) -> None:
        now = self.tui.now()
        table = self.query_one(Table)
        # Each row's key is the key's id: a refresh keeps the cursor on its key.
        table.set_rows([(key_row(key, now), key.id) for key in self.keys])
        if self.tui.client.offers_key_management:
            table.empty_text = NO_KEYS
            self.query_one("#keys-title", Static).update(
                Text(f"Keys · {len(self.keys)} (the keys themselves are never shown again)")
            )

    # -- actions ---------------------------------------------------------------------------------

    def action_back(self) -> None:
        self.dismiss()

    def action_edit(self) -> None:
        if self.project is None:
            return
        from tui.ui.screens.edit_forms import ProjectEditForm

        def saved(project: Project | None) -> None:
            if project is not None:
                self.project = project
                self.project_name = project.name or self.project_name
                self.header()
                self.show_facts()
                self.notify(f"Saved {project.name or self.project_id}.")

        self.tui.push_screen(ProjectEditForm(self.project), saved)

    def action_new_key(self) -> None:
        from tui.ui.screens.edit_forms import KeyLabelForm

        def created(key: KeyInfo | None) -> None:
            if key is None or key.key is None:
                return
            self.keys.append(key.model_copy(update={"key": None}))
            self.show_keys()
            self.refresh_bindings()
            self.show_key_once(key)

        self.tui.push_screen(KeyLabelForm(self.project_id, self.project_name), created)

    def show_key_once(self, key: KeyInfo) -> None:
        from tui.ui.screens.dialogs import SecretDialog

        assert key.key is not None
        lines = otel_lines(self.tui.client.base_url, key.key.get_secret_value())
        self.tui.push_screen(
            SecretDialog(
                f"New key {key.label or ''} for {self.project_name}",
                key.key,
                "key",
                (
                    "It works at once: for this project's traces (OTLP) and its API calls. "
                    "Revoke it here (d) when it is no longer needed.",
                ),
                lines,
            )
        )

    def selected_key(self) -> KeyInfo | None:
        row = self.query_one(Table).cursor_row
        return self.keys[row] if 0 <= row < len(self.keys) else None

    def action_revoke_key(self) -> None:
        key = self.selected_key()
        if key is None or not key.id:
            return
        from tui.ui.screens.dialogs import ConfirmDialog

        key_id = key.id
        question = Text("Revoke the key ", style="bold")
        question.append_text(safe_text(key.label or key_id, 50, style="bold"))
        question.append(f" ({safe_text(key.prefix or '', 14).plain}…)?")

        async def revoke(client: TraceSource) -> None:
            await client.revoke_key(self.project_id, key_id)

        def revoked(_: None) -> None:
            self.keys = [k for k in self.keys if k.id != key_id]
            self.show_keys()
            self.refresh_bindings()
            self.notify(f"Revoked {key.label or key_id}: it fails from now on.")

        def answered(yes: bool | None) -> None:
            if yes:
                self.call_api(revoke, revoked, group="settings-action")

        self.tui.push_screen(
            ConfirmDialog(question, "Whatever uses it is refused from the next request on."),
            answered,
        )

    def action_delete_project(self) -> None:
        if self.project is None:
            return
        from tui.ui.screens.dialogs import TypeNameDialog

        name = self.project.name or self.project_id

        async def delete(client: TraceSource) -> None:
            await client.delete_project(self.project_id)

        def deleted(_: None) -> None:
            self.notify(f"Deleted the project {name}.")
            self.dismiss()

        def failed(error: ApiError) -> bool:
            self.header(f" · not deleted: {error.title}")
            return False

        def answered(yes: bool | None) -> None:
            if yes:
                self.call_api(delete, deleted, group="settings-action", failed=failed)

        self.tui.push_screen(
            TypeNameDialog(
                "the project",
                name,
                "Its traces, spans, alerts (with their history) and keys are deleted with it. "
                "This cannot be undone.",
            ),
            answered,
        )
