"""What the trace list says of itself, as rich Text (pure): its header on one line, fitted to a
width by leaving out the least needed parts first and cutting the query (which `/` shows
whole); and the line over the open query line that says what its preview is."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text

from tui.model.query import LABELS
from tui.model.text import safe_text
from tui.model.trace_list import NEWEST, TraceListState
from tui.model.trace_list_rows import Preview, Shown

SEPARATOR = " · "
QUERY_LEAST = 12  # the query is cut to no fewer cells than this before more is left out
DEFAULT_RANGE = "24h"
ENTER = {
    "server": "enter asks the server",
    "here": "enter filters the loaded rows",
    "all": "enter shows every trace",
    "unknown": "enter applies it",
    "nothing": "enter says what is wrong",
}


@dataclass(frozen=True)
class Part:
    """A piece of the header: `rank` 0 is always there; the higher, the sooner it is left out
    for room. `cut`, for the query: the piece again in at most so many cells."""

    text: Text
    rank: int
    cut: Callable[[int], Text] | None = None


def judged_note(fields: tuple[str, ...]) -> str:
    """ "model: not judged": the conditions the loaded rows cannot judge, by their query words."""
    return ", ".join(LABELS.get(field, field) for field in fields) + " not judged"


def _query_part(state: TraceListState) -> Part:
    def cut(cells: int) -> Text:
        text = safe_text(state.query_text, max(1, cells), style="bold italic")
        text.append(" (x clears)", style="dim")
        return text

    return Part(cut(40 + len(" (x clears)")), 1, lambda cells: cut(cells - len(" (x clears)")))


def header_parts(
    state: TraceListState, project: str, shown: Shown, loaded: int, fetching: bool
) -> list[Part]:
    """The header's pieces in the order they are read, each with its rank."""
    paging = state.paging
    parts = [Part(safe_text(project, 40, style="bold"), 0)]
    parts.append(Part(Text(state.time_range.label), 2 if _moved_range(state) else 3))
    parts.append(Part(Text(state.sort_label), 4 if state.sort == NEWEST else 2))
    if state.query_text:
        parts.append(_query_part(state))
    if state.errors_only:
        parts.append(Part(Text("✗ errors only", style="bold red"), 1))
    if state.query_here is not None:
        count = f"filtering loaded rows: {shown.kept:,} of {loaded:,}"
        parts.append(Part(Text(count, style="bold"), 0))
    elif state.found_by_server:
        parts.append(Part(Text(f"{shown.kept:,} found", style="bold"), 0))
    elif state.query_text or state.errors_only:
        parts.append(Part(Text(f"{shown.kept:,} of {loaded:,} loaded"), 0))
    if shown.unjudged:
        parts.append(Part(Text(judged_note(shown.unjudged), style="yellow"), 2))
    if paging.dropped:
        parts.append(Part(Text(f"{paging.dropped:,} unreadable skipped", style="dim"), 4))
    if state.live:
        parts.append(Part(Text("● live", style="bold green"), 1))
    parts += _progress(state, loaded, fetching)
    return parts


def _moved_range(state: TraceListState) -> bool:
    return state.time_range.preset != DEFAULT_RANGE


def _progress(state: TraceListState, loaded: int, fetching: bool) -> list[Part]:
    """How loading goes: a failure, a ranking paging in, loading, or all loaded."""
    paging = state.paging
    if paging.error:
        text = safe_text(paging.error, 60, style="bold red")
        text.append(" (ctrl+r retries)")
        return [Part(text, 0)]
    if state.ranks_here and not paging.ended:
        doing = "ranking" if state.ranking_here else "finding errors in"
        if paging.loading_all:
            words = f"{doing} all: {loaded:,} loaded, more coming (esc stops)"
            return [Part(Text(words, style="italic"), 1)]
        what = "ranked" if state.ranking_here else "errors"
        words = f"{what} among the {loaded:,} loaded only (r loads all)"
        return [Part(Text(words, style="bold"), 1)]
    if fetching:
        return [Part(Text("loading…", style="italic"), 2)]
    if paging.ended:
        nothing = "nothing matches" if state.asked is not None else "no traces in this range"
        return [Part(Text("all loaded" if loaded else nothing, style="dim"), 4)]
    return []


def _cells(parts: list[Part]) -> int:
    return sum(part.text.cell_len for part in parts) + cell_len(SEPARATOR) * (len(parts) - 1)


def _leave_out(parts: list[Part], rank: int, width: int) -> list[Part]:
    """Parts of `rank` left out, the last first, until the rest fit in `width`."""
    while _cells(parts) > width:
        found = [i for i, part in enumerate(parts) if part.rank == rank]
        if not found:
            break
        del parts[found[-1]]
    return parts


def fit(parts: list[Part], width: int | None) -> Text:
    """The parts on one line of `width` cells: the least needed left out first (rank 4, then
    3), then the query cut, then ranks 2 and 1; what is still too long is cut with an
    ellipsis. No width: every part, cut by whoever draws it."""
    parts = list(parts)
    if width:
        for rank in (4, 3):
            parts = _leave_out(parts, rank, width)
        excess = _cells(parts) - width
        for i, part in enumerate(parts):
            if excess > 0 and part.cut is not None:
                room = max(QUERY_LEAST, part.text.cell_len - excess)
                parts[i] = Part(part.cut(room), part.rank, part.cut)
                excess = _cells(parts) - width
        for rank in (2, 1):
            parts = _leave_out(parts, rank, width)
    line = Text(no_wrap=True, overflow="ellipsis", end="")
    for i, part in enumerate(parts):
        if i:
            line.append(SEPARATOR)
        line.append_text(part.text)
    if width:
        line.truncate(width, overflow="ellipsis")
    return line


def header(
    state: TraceListState,
    project: str,
    shown: Shown,
    loaded: int,
    fetching: bool,
    width: int | None,
) -> Text:
    """The trace list's header: project, range, sort, query, counts and how loading goes."""
    return fit(header_parts(state, project, shown, loaded, fetching), width)


def preview_line(preview: Preview, width: int | None = None) -> Text:
    """What the preview of what is typed is: why it does not read, or over which rows it is,
    what it cannot judge there, and what Enter does (cut to `width` cells, if given)."""
    line = Text(no_wrap=True, overflow="ellipsis", end="")
    if preview.error is not None:
        line.append("✗ ", style="bold red")
        line.append_text(safe_text(preview.error, 300, style="red"))
    else:
        if preview.loaded_for is not None:
            line.append(f"no preview: the {preview.loaded:,} loaded rows are only those of ")
            line.append_text(safe_text(preview.loaded_for, 40, style="bold italic"))
        elif preview.rows is not None:
            line.append("preview: ", style="bold")
            line.append(f"{len(preview.rows):,} of {preview.loaded:,} loaded rows")
            if preview.unjudged:
                line.append(SEPARATOR)
                line.append(judged_note(preview.unjudged) + " here", style="yellow")
        line.append(SEPARATOR)
        line.append(ENTER.get(preview.enter, ""), style="dim")
    if width:
        line.truncate(width, overflow="ellipsis")
    return line
