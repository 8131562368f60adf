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

import tui.screens
import tui.widgets

# Where the app's bindings are declared: the app itself, every screen and every widget.
_PACKAGES = (tui.screens, tui.widgets)


def _ids_of(bindings: Iterable[object]) -> set[str]:
    return {b.id for b in bindings if isinstance(b, Binding) and b.id}


def binding_ids() -> set[str]:
    """Every binding id declared by the app, its screens and its widgets."""
    from tui.app import TraceTuiApp

    ids = _ids_of(TraceTuiApp.BINDINGS)
    for package in _PACKAGES:
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for _, cls in inspect.getmembers(module, inspect.isclass):
                if cls.__module__ == module.__name__:
                    ids |= _ids_of(cls.__dict__.get("BINDINGS", ()))
    return ids


def unknown_ids(keymap: Iterable[str]) -> list[str]:
    """The ids of `keymap` that no binding has, in the order given."""
    known = binding_ids()
    return [binding_id for binding_id in keymap if binding_id not in known]
