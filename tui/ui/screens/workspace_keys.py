"""The workspace keys (the keys that read and manage every project): listed with their label,
prefix, creation and last use; `n` makes one, shown once with a copy action; `d` revokes the one
under the cursor after a confirmation. The last workspace key is never revoked (the service
refuses it too): without one nobody could manage the service through the API. Reached from the
projects screen and the palette, only on a server that offers workspace keys."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from tui.model.text import safe_text
from tui.ui.screens.base import AppScreen
from tui.ui.widgets.key_footer import KeyFooter
from tui.ui.widgets.key_rows import KEY_COLUMNS, key_row
from tui.ui.widgets.status_bar import StatusBar
from tui.ui.widgets.table import Table

if TYPE_CHECKING:
    from tui.api import KeyInfo, TraceSource

LAST_KEY_TEXT = (
    "The last workspace key cannot be revoked: without one nobody could manage this service. "
    "Make another (n) first."
)
# In place of the keys when there are none (n is on once they are loaded).
NO_KEYS = Text("No workspace keys yet: press n to make one.")


class WorkspaceKeysScreen(AppScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="workspace_keys.back"),
        Binding("n", "new_key", "New key", id="workspace_keys.new_key"),
        Binding("d", "revoke_key", "Revoke key", id="workspace_keys.revoke_key"),
        Binding("r", "refresh", "Refresh", id="workspace_keys.refresh"),
    ]
    DEFAULT_CSS = """
    WorkspaceKeysScreen #header { height: 1; background: $boost; padding: 0 1; }
    WorkspaceKeysScreen #about { height: auto; padding: 0 1; color: $text-muted; }
    WorkspaceKeysScreen Table { height: 1fr; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.keys: list[KeyInfo] = []
        self.loaded = False

    def compose(self) -> ComposeResult:

        yield Static(id="header")
        yield Static(
            Text(
                "Workspace keys read and manage every project (keys, settings, alerts). "
                "A project's own keys are in its settings (s on the projects screen)."
            ),
            id="about",
        )
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
        text = Text("Workspace keys", style="bold")
        text.append_text(safe_text(note, 70))
        self.query_one("#header", Static).update(text)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action not in ("new_key", "revoke_key"):
            return super().check_action(action, parameters)
        try:
            offered = bool(self.tui.client.offers_workspace_keys)
        except RuntimeError:  # the client is still loading
            return False
        if action == "revoke_key":
            return offered and bool(self.keys)
        return offered and self.loaded

    # -- loading ---------------------------------------------------------------------------------

    def action_refresh(self) -> None:
        self.call_api(
            self._load,
            self._loaded,
            group="workspace-keys",
            failed=lambda error: self.header(f" · {error.title}"),
            retry=self.action_refresh,
        )

    async def _load(self, client: TraceSource) -> list[KeyInfo] | None:
        offers = await client.discover_offers()
        return await client.list_keys(None) if offers.workspace_keys else None

    def _loaded(self, keys: list[KeyInfo] | None) -> None:
        if keys is None:
            server = getattr(self.tui.client, "server_name", "tracing")
            self.header(f" · this {server} server does not offer managing them from the app")
            self.keys = []
        else:
            self.keys = keys
            self.loaded = True
        self.show_keys()
        self.refresh_bindings()

    def show_keys(self) -> None:

        now = self.tui.now()
        table = self.query_one(Table)
        # Each row's key is the key's id: a refresh keeps the cursor on its key.
        table.set_rows([(key_row(key, now), key.id) for key in self.keys])
        if self.loaded:
            table.empty_text = NO_KEYS
            self.header(f" · {len(self.keys)} (the keys themselves are never shown again)")

    # -- actions ---------------------------------------------------------------------------------

    def action_back(self) -> None:
        self.dismiss()

    def action_new_key(self) -> None:
        from tui.ui.screens.edit_forms import KeyLabelForm

        def created(key: KeyInfo | None) -> None:
            if key is None or key.key is None:
                return
            self.keys.append(key.model_copy(update={"key": None}))
            self.show_keys()
            self.refresh_bindings()
            self.show_key_once(key)

        self.tui.push_screen(KeyLabelForm(None, "the workspace"), created)

    def show_key_once(self, key: KeyInfo) -> None:
        from tui.ui.screens.dialogs import SecretDialog

        assert key.key is not None
        self.tui.push_screen(
            SecretDialog(
                f"New workspace key {key.label or ''}",
                key.key,
                "key",
                (
                    "It works at once and reads and manages every project: keep it out of "
                    "apps that only send traces (they take a project's key). Revoke it here (d).",
                ),
                (f"export TRACETUI_API_KEY={shlex.quote(key.key.get_secret_value())}",),
            )
        )

    def selected_key(self) -> KeyInfo | None:
        row = self.query_one(Table).cursor_row
        return self.keys[row] if 0 <= row < len(self.keys) else None

    def action_revoke_key(self) -> None:
        key = self.selected_key()
        if key is None or not key.id:
            return
        if len(self.keys) <= 1:
            self.notify(LAST_KEY_TEXT, severity="warning", timeout=8)
            return
        from tui.ui.screens.dialogs import ConfirmDialog

        key_id = key.id
        question = Text("Revoke the workspace key ", style="bold")
        question.append_text(safe_text(key.label or key_id, 50, style="bold"))
        question.append(f" ({safe_text(key.prefix or '', 14).plain}…)?")

        async def revoke(client: TraceSource) -> None:
            await client.revoke_key(None, key_id)

        def revoked(_: None) -> None:
            self.keys = [k for k in self.keys if k.id != key_id]
            self.show_keys()
            self.refresh_bindings()
            self.notify(f"Revoked {key.label or key_id}: it fails from now on.")

        def answered(yes: bool | None) -> None:
            if yes:
                self.call_api(revoke, revoked, group="workspace-keys-action")

        self.tui.push_screen(
            ConfirmDialog(
                question,
                "Whatever uses it is refused from the next request on (this app too, if it "
                "runs on it).",
            ),
            answered,
        )
