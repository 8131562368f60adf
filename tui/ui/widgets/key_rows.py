"""The rows of an API key list (a project's keys, the workspace keys): label, prefix, created,
last used; never the key itself."""

from __future__ import annotations

from datetime import datetime

from tui.api import KeyInfo
from tui.model import formatting as fmt
from tui.ui.widgets.table import Column

KEY_COLUMNS = (
    Column("Label", least=10, most=40, share=2),
    Column("Starts with", least=12, most=14),
    Column("Created", least=11, most=16),
    Column("Last used", least=11, most=16),
)


def key_row(key: KeyInfo, now: datetime) -> tuple[str, str, str, str]:
    """A key's cells: label, prefix, created, last used (never the key)."""
    return (
        key.label or "(no label)",
        (key.prefix or "") + "…",
        fmt.local_time(key.created_at, seconds=False) if key.created_at else "–",
        fmt.ago(key.last_used_at, now) if key.last_used_at else "never",
    )
