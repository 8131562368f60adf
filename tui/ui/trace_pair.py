"""Pure (no Textual): the two traces of a diff, fetched through any server's client, and B's last
good one found when no A is given (the rules are tui/model/diff/last_good.py's).

Used by the diff screen (in its worker) and by `tracetui diff` alike, through the calls every
TraceSource has: get_trace, list_traces with a TraceFilter (only the filters the server says it
offers), discover_offers.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui.api import ApiError, NotFound, Trace
from tui.model.diff import TraceDiff, diff_trees
from tui.model.diff.last_good import MAX_LOOKED_AT, Found, search_for
from tui.model.spans import TraceTree, build_tree

if TYPE_CHECKING:
    from tui.api.source import TraceSource

PAGE = 500


class NotComparable(ApiError):
    """The two traces cannot be diffed (they belong to different projects)."""

    title = "Cannot compare"


class NoLastGood(ApiError):
    """B has no earlier trace of its name without an error (within the search's bounds)."""

    title = "No trace to compare with"

    def __init__(self, found: Found | None, message: str) -> None:
        super().__init__(message)
        self.found = found


@dataclass
class LoadedPair:
    """Two traces and their trees, diffed; `found`: how A was found, when it was looked for."""

    a: Trace
    b: Trace
    a_tree: TraceTree
    b_tree: TraceTree
    diff: TraceDiff
    found: Found | None = None


def root_name(trace: Trace) -> str | None:
    """B's root name: the trace's own, else its first root span's."""
    if trace.name:
        return trace.name
    for span in trace.spans:
        if not span.parent_id and span.name:
            return span.name
    return None


async def find_last_good(client: TraceSource, b: Trace, project_id: str | None) -> Found | None:
    """B's last good trace (see last_good.py); None when B has no name or start to go by."""
    name = root_name(b)
    project = b.project_id or project_id
    if name is None or project is None:
        return None
    offers = await client.discover_offers()
    search = search_for(b, name, offers.trace_filters)
    if search is None:
        return None
    found = Found(search)
    for start, end in search.windows():
        found.window = search.before - start
        after = None
        while True:
            room = MAX_LOOKED_AT - found.looked_at
            if room <= 0:  # the bound: what is left of the range is not looked at
                found.complete = False
                break
            page = await client.list_traces(
                project,
                start=start,
                end=end,
                limit=min(PAGE, room),
                after=after,
                filters=search.filters,
            )
            found.take(page.items, b)
            after = page.next_page
            if after is None or not page.items:
                break
        if found.choose() is not None or not found.complete:
            break
    return found


async def get_trace(client: TraceSource, trace_id: str, project_id: str | None) -> Trace:
    """One trace; a 404 says which trace was not found."""
    try:
        return await client.get_trace(trace_id, project_id)
    except NotFound as error:
        where = f" in project {project_id}" if project_id else ""
        raise NotFound(f"No trace {trace_id}{where} (HTTP {error.status})", error.status) from None


async def load_pair(
    client: TraceSource, b_id: str, a_id: str | None, project_id: str | None
) -> LoadedPair:
    """B, and A (or B's last good trace when `a_id` is None), fetched and diffed. Raises
    NotComparable for traces of two projects, NoLastGood when there is no A to be found."""
    found: Found | None = None
    if a_id is not None:
        a, b = await asyncio.gather(
            get_trace(client, a_id, project_id), get_trace(client, b_id, project_id)
        )
    else:
        b = await get_trace(client, b_id, project_id)
        found = await find_last_good(client, b, project_id)
        if found is None or found.chosen is None or found.chosen.id is None:
            name = root_name(b)
            message = (
                found.sentence()
                if found is not None
                else f"Trace {b_id} has no root name or start time to find an earlier one by"
                if name is None or b.started_at is None
                else f"Trace {b_id} has no project to look in"
            )
            raise NoLastGood(found, message)
        a = await get_trace(client, found.chosen.id, b.project_id or project_id)
    if a.project_id and b.project_id and a.project_id != b.project_id:
        raise NotComparable(
            f"The two traces are in different projects ({a.project_id} and {b.project_id}): "
            "a diff compares two traces of one project"
        )
    a_tree, b_tree = build_tree(a.spans), build_tree(b.spans)
    return LoadedPair(a, b, a_tree, b_tree, diff_trees(a_tree, b_tree), found)
