"""The footer of keys every screen shows: Textual's Footer, rebuilt only when what it shows changes.

Textual's Footer rebuilds itself (a widget per key) after every bindings update of its screen,
once per update: opening the trace list makes four of them (the screen stack twice, the focus,
and the first rows enabling their keys), and each rebuild took 15-25 ms of the event loop on a
small machine, in the moments the list's first rows were waiting to be drawn. Here the updates
of one refresh make one rebuild at most, and none when the keys shown, their labels and their
enabled state are what the footer already shows.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer


class KeyFooter(Footer):
    """A Footer that rebuilds only when its keys change; compact, without the palette's key."""

    def __init__(self) -> None:
        super().__init__(compact=True, show_command_palette=False)
        self._shown: tuple[Any, ...] | None = None  # what the last rebuild showed
        self._rebuild_due = False

    def bindings_changed(self, screen: Screen[Any]) -> None:
        # Textual's, but one rebuild per refresh at most, and only when needed.
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._rebuild_due:
            self._rebuild_due = True
            self.call_after_refresh(self._rebuild_if_changed)

    def _keys_shown(self) -> tuple[Any, ...]:
        """Everything of the screen's bindings that the footer's compose reads."""
        return tuple(
            (
                binding.key,
                binding.key_display,
                binding.description,
                binding.action,
                binding.group,
                enabled,
                tooltip,
                binding.tooltip,
            )
            for _, binding, enabled, tooltip in self.screen.active_bindings.values()
            if binding.show
        )

    def compose(self) -> ComposeResult:
        if self._bindings_ready:
            self._shown = self._keys_shown()  # read with what this build draws
        yield from super().compose()

    async def _rebuild_if_changed(self) -> None:
        self._rebuild_due = False
        if self.is_attached and self._keys_shown() != self._shown:
            await self.recompose()
