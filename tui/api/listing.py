"""A page of a project's list as a screen asks for it: the Window (time range, size, where it
begins) that `list_traces` and `list_sessions` take as keywords, and the Listing each source
reads it from (source.py): written once, for every source and both lists."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from tui.api.models import TraceFilter
    from tui.api.pagination import NextPage


class Window(TypedDict, total=False):
    """Which page of a list: its time range (`start`, `end`), its size (`limit`: 100 unless
    given; None sends none) and where it begins (`after`: the previous page's `next_page`)."""

    start: datetime | None
    end: datetime | None
    limit: int | None
    after: NextPage | None


@dataclass(frozen=True)
class Listing:
    """A page of a project's list as asked for (see Window)."""

    project_id: str
    start: datetime | None = None
    end: datetime | None = None
    limit: int | None = 100
    after: NextPage | None = None


def window_fields(window: Window) -> dict[str, Any]:
    """A Window's fields for a Listing: a page of 100 unless `limit` is given."""
    return {"limit": 100, **window}


@dataclass(frozen=True)
class TraceListing(Listing):
    include: str | None = None
    filters: TraceFilter | None = None


@dataclass(frozen=True)
class SessionListing(Listing):
    user_id: str | None = None
