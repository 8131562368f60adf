"""The footer of keys every screen shows: Textual's Footer, rebuilt only when what it shows changes.

Textual's Footer rebuilds itself (a widget per key) after every bindings update of its screen,
once per update: opening the trace list makes four of them (the screen stack twice, the focus,
and the first rows enabling their keys), and each rebuild took 15-25 ms of the event loop on a
small machine, in the moments the list's first rows were waiting to be drawn. Here the updates
of one refresh make one rebuild at most, and none when the keys shown, their labels and their
enabled state are what the footer already shows.

After the screen's own keys, the footer offers keys kept out of it (show=False) as far as the
width allows: the app's FOOTER_WHEN_ROOM (tui/ui/keymap.py), then the screen's own
FOOTER_WHEN_ROOM (a class attribute of binding ids), each in its order.
"""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from tui.ui.keymap import FOOTER_WHEN_ROOM


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
        keys = tuple(
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
            for binding, enabled, tooltip in self._active()
            if binding.show or binding.id in self._when_room()
        )
        return (*keys, self.app.size.width)  # the width: how many of FOOTER_WHEN_ROOM fit

    def _active(self) -> list[tuple[Binding, bool, str]]:
        """The screen's active keys, in order. Where a widget's own key without an id (a
        table's enter, which selects the row) hides the screen's binding of the same key, the
        screen's is taken: it is what the key does there ("⏎ Open"), and it has an id."""
        screen = self.screen
        found = []
        for key, (_, binding, enabled, tooltip) in screen.active_bindings.items():
            if not binding.id:
                for own in screen._bindings.key_to_bindings.get(key, ()):
                    state = screen.check_action(own.action, ()) if own.id else False
                    if state is not False:
                        binding, enabled, tooltip = own, state is not None, own.tooltip or ""
                        break
            found.append((binding, enabled, tooltip))
        return found

    def compose(self) -> ComposeResult:
        """Textual's footer (one key per action, in order), from `_active`."""
        if not self._bindings_ready:
            return
        self._shown = self._keys_shown()  # read with what this build draws
        shown: dict[str, tuple[Binding, bool, str]] = {}
        for binding, enabled, tooltip in self._active():
            if binding.show:
                shown.setdefault(binding.action, (binding, enabled, tooltip))
        self.styles.grid_size_columns = len(shown)
        for binding, enabled, tooltip in shown.values():
            yield FooterKey(
                binding.key,
                self.app.get_key_display(binding),
                binding.description,
                binding.action,
                disabled=not enabled,
                tooltip=tooltip,
            ).data_bind(compact=Footer.compact)
        yield from self._keys_when_room()

    def _when_room(self) -> tuple[str, ...]:
        """The ids of the keys offered when there is room: the app's, then the screen's."""
        return (*FOOTER_WHEN_ROOM, *getattr(self.screen, "FOOTER_WHEN_ROOM", ()))

    def _keys_when_room(self) -> ComposeResult:
        """The keys of `_when_room` that the screen has but keeps out of its footer, after
        its own keys, as many as fit in the width (never pushing its own off the line)."""
        active = self._active()
        shown = {b.action: b for b, _, _ in active if b.show}
        used = sum(self._width_of(binding) for binding in shown.values())
        room = (self.app.size.width or 80) - used
        extra = {b.id: (b, enabled, tip) for b, enabled, tip in active if not b.show and b.id}
        actions = set(shown)
        for binding_id in self._when_room():
            if binding_id not in extra:
                continue
            binding, enabled, tooltip = extra[binding_id]
            need = self._width_of(binding)
            if binding.action in actions or need > room:
                continue
            room -= need
            actions.add(binding.action)
            # The footer is a grid of one column per key: one more for this one.
            self.styles.grid_size_columns = len(actions)
            yield FooterKey(
                binding.key,
                self.app.get_key_display(binding),
                binding.description,
                binding.action,
                disabled=not enabled,
                tooltip=tooltip or binding.tooltip,
            ).data_bind(compact=Footer.compact)

    def _width_of(self, binding: Binding) -> int:
        # A compact key: its key, a space, its description, and a space after it.
        return cell_len(self.app.get_key_display(binding)) + len(binding.description) + 2

    async def _rebuild_if_changed(self) -> None:
        self._rebuild_due = False
        if self.is_attached and self._keys_shown() != self._shown:
            await self.recompose()
