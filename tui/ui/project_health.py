"""Every project's health for the projects screen (no Textual): in one request from a server that
offers it (`offers_project_health`), else read the ways any server allows, bounded: for each of
the first MAX_PROJECTS projects, one page of its last hour's traces (PAGE at most, so a busy
project's is counted from those only, and says so) and its alerts, a few projects at a time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from tui.api import ApiError, Project, TraceSource
from tui.model.health import BUCKETS, WINDOW, WINDOW_SPAN, Health, from_report, from_rows

MAX_PROJECTS = 20  # projects read one by one from a server without the health summary
PAGE = 500  # traces of a project's hour read (one page of the spec's largest)
AT_ONCE = 4  # projects read at the same time


@dataclass(frozen=True)
class HealthView:
    """The projects' health as loaded, and how it was read."""

    health: dict[str, Health] = field(default_factory=dict)
    by_server: bool = True  # from the server's summary; else counted from each project's list
    unread: int = 0  # projects past MAX_PROJECTS, not read
    failed: int = 0  # projects whose traces or alerts could not be read

    def note(self) -> str:
        """What the header says of how health was read (empty: by the server, all of it)."""
        if self.by_server:
            return ""
        parts = [f"health read per project, ≤{PAGE} traces each"]
        if self.unread:
            parts.append(f"first {MAX_PROJECTS} projects only")
        if self.failed:
            parts.append(f"{self.failed} could not be read")
        return " · ".join(parts)


async def load_health(
    client: TraceSource, projects: Sequence[Project], now: datetime
) -> HealthView:
    """The projects' health over the last WINDOW, ending `now`."""
    await client.discover_offers()
    if client.offers_project_health:
        report = await client.project_health(WINDOW, BUCKETS)
        return HealthView(from_report(report.projects))
    start = now - WINDOW_SPAN
    reading = [p for p in projects if p.id][:MAX_PROJECTS]
    gate = asyncio.Semaphore(AT_ONCE)

    async def one(project_id: str) -> Health | None:
        async with gate:
            try:
                page = await client.list_traces(project_id, start=start, end=now, limit=PAGE)
                alerts = await client.list_alerts(project_id) if client.has_alerts else None
            except ApiError:
                return None
        capped = page.next_page is not None and bool(page.items)
        return from_rows(page.items, alerts, start, now, BUCKETS, capped)

    ids = [project.id for project in reading if project.id]
    found = await asyncio.gather(*(one(project_id) for project_id in ids))
    health = {pid: h for pid, h in zip(ids, found, strict=True) if h is not None}
    return HealthView(
        health,
        by_server=False,
        unread=max(0, len([p for p in projects if p.id]) - len(ids)),
        failed=len(ids) - len(health),
    )
