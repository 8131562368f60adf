"""The binding ids a user may remap in the config's `[keymap]` table, and which ones are unknown.

Textual ignores a keymap entry whose id no binding has, so a typo would silently do nothing; the
app reports such ids at start instead.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Iterable

from textual.binding import Binding

import tui.ui.screens
import tui.ui.widgets

# Where the app's bindings are declared: the app itself, every screen and every widget.
_PACKAGES = (tui.ui.screens, tui.ui.widgets)

# Keys kept out of a screen's own footer (show=False) that the footer offers all the same when
# there is room left after the screen's keys (tui/ui/widgets/key_footer.py): the ones a newcomer
# looks for first, in the order offered. At 80 columns the trace detail has room for one more
# key after its own: y on the tree, e on the detail pane (whose y is its own); D (compare with
# the last good one), N, r and Y follow on wider terminals, and all are in `?`.
FOOTER_WHEN_ROOM = (
    "detail.copy",
    "detail.export",
    "detail.diff",
    "tree.previous_error",
    "detail.reload",
    "detail.copy_trace",
)


def _ids_of(bindings: Iterable[object]) -> set[str]:
    return {b.id for b in bindings if isinstance(b, Binding) and b.id}


def binding_ids(app_bindings: Iterable[object] = ()) -> set[str]:
    """Every binding id declared by the app (its BINDINGS, passed in: the app imports this
    module, not the other way round), its screens and its widgets."""
    ids = _ids_of(app_bindings)
    for package in _PACKAGES:
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for _, cls in inspect.getmembers(module, inspect.isclass):
                if cls.__module__ == module.__name__:
                    ids |= _ids_of(cls.__dict__.get("BINDINGS", ()))
    return ids


def unknown_ids(keymap: Iterable[str], app_bindings: Iterable[object] = ()) -> list[str]:
    """The ids of `keymap` that no binding has, in the order given."""
    known = binding_ids(app_bindings)
    return [binding_id for binding_id in keymap if binding_id not in known]
