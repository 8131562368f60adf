"""Finding a project's sessions for the sessions screen's query (tui/model/session_query.py).

The user and the time go to the sessions listing itself (`user_id`, `from`/`to`: documented in
docs/api.md's sessions extension). Sessions carry no text, so the text goes to the server's
trace search when it has one (`q` on GET /v1/traces): the sessions of the matching traces are
those kept from the listing. A server without trace search, or a word too short for it, gets
the text applied to the loaded rows' id and user instead, and the screen says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from tui.api import NextPage
from tui.api.models import Session, TraceFilter
from tui.model.session_query import SessionQuery

if TYPE_CHECKING:
    from tui.api import TraceSource
    from tui.api.offers import Offers

PAGE_SIZE = 100
# Matching traces read for their sessions, at most (the screen says when this cut the search).
MATCHED_TRACES_MAX = 1000
# Listing pages read in one go while looking for the matched sessions, at most: the next go
# starts when the cursor nears the end.
PAGES_PER_LOOK = 10
# The sessions listing's own window when the query names none (docs/api.md: its default).
DEFAULT_WINDOW = timedelta(hours=24)


@dataclass
class Matched:
    """The sessions whose traces say the query's text (their ids), and whether the search
    stopped at MATCHED_TRACES_MAX traces."""

    ids: set[str] = field(default_factory=set)
    cut: bool = False


def searches_text(query: SessionQuery, offers: Offers) -> bool:
    """Whether the server's trace search takes the query's text (else: the loaded rows)."""
    return query.text_searchable and "q" in offers.trace_filters


async def matched_sessions(
    client: TraceSource, project_id: str, query: SessionQuery, offers: Offers, now: datetime
) -> Matched:
    """The sessions of the traces (of the query's window) that say the query's text."""
    start, end = query.bounds(now)
    trace_filter = TraceFilter(q=query.trace_q)
    if query.user_id is not None and "user_id" in offers.trace_filters:
        trace_filter = TraceFilter(q=query.trace_q, user_id=query.user_id)
    matched = Matched()
    after: NextPage | None = None
    read = 0
    while True:
        page = await client.list_traces(
            project_id,
            start=start or now - DEFAULT_WINDOW,
            end=end or now,
            limit=PAGE_SIZE,
            after=after,
            filters=trace_filter,
        )
        read += len(page.items)
        matched.ids |= {t.session_id for t in page.items if t.session_id}
        after = page.next_page
        if after is None or not page.items:
            return matched
        if read >= MATCHED_TRACES_MAX:
            matched.cut = True
            return matched


@dataclass
class Look:
    """What one look through the listing found: the sessions kept, where the listing goes on
    (None: its end), and how many sessions it listed."""

    kept: list[Session]
    next_page: NextPage | None
    listed: int


async def look_for_sessions(
    client: TraceSource,
    project_id: str,
    query: SessionQuery,
    now: datetime,
    after: NextPage | None,
    wanted: set[str] | None,
    bounds: tuple[datetime, datetime] | None = None,
) -> Look:
    """Pages of the listing (the query's user, and its window unless `bounds` gives one),
    keeping the sessions in `wanted` (None: every one): pages until one holds a kept session,
    the listing ends, or PAGES_PER_LOOK pages are read."""
    start, end = bounds if bounds is not None else query.bounds(now)
    kept: list[Session] = []
    listed = 0
    for _ in range(PAGES_PER_LOOK):
        page = await client.list_sessions(
            project_id, start=start, end=end, limit=PAGE_SIZE, after=after, user_id=query.user_id
        )
        listed += len(page.items)
        sessions = [s for s in page.items if s.id]
        kept += sessions if wanted is None else [s for s in sessions if s.id in wanted]
        # A server that filters a page after reading it (by user) may answer an empty
        # page with a cursor: the next one is read, within PAGES_PER_LOOK.
        after = page.next_page
        if after is None:
            break
        if kept:
            break
    return Look(kept, after, listed)
