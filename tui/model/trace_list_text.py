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
QUERY_MOST = 200  # ... and shows no more than this, however wide
ERROR_LEAST = 14  # a failure's words, likewise (what it is: "Server error:…")
DEFAULT_RANGE = "24h"
GONE = "⚠ project gone from the server"
PROJECT_LEAST = 10  # the project's name is cut to no fewer cells than this, last of all
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
    for room. A part that can be said shorter has `cut` (the piece again in at most so many
    cells, not fewer than `least`) and `gives` (the lower, the sooner it is cut)."""

    text: Text
    rank: int
    cut: Callable[[int], Text] | None = None
    least: int = 0
    gives: int = 0
    sep: str = ""  # the style of the separator before it

    @property
    def cells(self) -> int:
        return self.text.cell_len

    @property
    def least_cells(self) -> int:
        return min(self.cells, self.least) if self.cut is not None else self.cells

    def cut_to(self, cells: int) -> Part:
        assert self.cut is not None
        cut = self.cut(max(self.least, cells))
        return Part(cut, self.rank, self.cut, self.least, self.gives, self.sep)


def _said(words: str, rank: int, style: str = "") -> Part:
    """Words of the app's own, the separator before them in their style."""
    return Part(Text(words, style=style), rank, sep=style)


def judged_note(fields: tuple[str, ...]) -> str:
    """ "model: not judged": the conditions the loaded rows cannot judge, by their query words;
    a span(…) group, which they judge by its trace only, "span(…) judged per trace"."""
    said = []
    others = [field for field in fields if field != "span"]
    if others:
        said.append(", ".join(LABELS.get(field, field) for field in others) + " not judged")
    if "span" in fields:
        said.append("span(…) judged per trace")
    return ", ".join(said)


def _cut_before(
    words: str, style: str, hint: str, hint_style: str = "dim"
) -> Callable[[int], Text]:
    """A piece of untrusted `words` and a `hint` that stays whole: cut to so many cells."""

    def cut(cells: int) -> Text:
        text = safe_text(words, max(1, cells - cell_len(hint)), style=style)
        text.append(hint, style=hint_style)
        return text

    return cut


def _query_part(state: TraceListState) -> Part:
    hint = " (x clears)"
    cut = _cut_before(state.query_text, "bold italic", hint)
    return Part(cut(QUERY_MOST + len(hint)), 1, cut, QUERY_LEAST + len(hint), gives=1)


def _count_part(full: str, short: str, style: str = "") -> Part:
    """A count, said `short` where there is no room for it in `full`."""
    whole = Text(full, style=style)
    return Part(
        whole,
        0,
        lambda cells: whole if cells >= whole.cell_len else Text(short, style=style),
        least=cell_len(short),
        gives=2,
        sep=style,
    )


def header_parts(
    state: TraceListState, project: str, shown: Shown, loaded: int, fetching: bool
) -> list[Part]:
    """The header's pieces in the order they are read, each with its rank."""
    paging = state.paging
    name = _cut_before(project, "bold", "")
    parts = [Part(name(40), 0, name, PROJECT_LEAST, gives=3)]
    parts.append(Part(Text(state.time_range.label), 2 if _moved_range(state) else 3))
    parts.append(Part(Text(state.sort_label), 4 if state.sort == NEWEST else 2))
    if state.query_text:
        parts.append(_query_part(state))
    if state.errors_only:
        parts.append(_said("✗ errors only", 1, "bold red"))
    kept = f"{shown.kept:,} of {loaded:,}"
    if state.query_here is not None:
        parts.append(_count_part(f"filtering loaded rows: {kept}", f"{kept} loaded", "bold"))
    elif state.found_by_server:
        parts.append(_said(f"{shown.kept:,} found", 0, "bold"))
    elif state.query_text or state.errors_only:
        parts.append(_count_part(f"{kept} loaded", kept))
    if shown.unjudged:
        parts.append(_said(judged_note(shown.unjudged), 2, "yellow"))
    if paging.dropped:
        parts.append(_said(f"{paging.dropped:,} unreadable skipped", 4, "dim"))
    if state.live:
        parts.append(_said("● live", 1, "bold green"))
    parts += _progress(state, loaded, fetching)
    return parts


def _moved_range(state: TraceListState) -> bool:
    return state.time_range.preset != DEFAULT_RANGE


def _progress(state: TraceListState, loaded: int, fetching: bool) -> list[Part]:
    """How loading goes: a failure, a ranking paging in, loading, or all loaded."""
    paging = state.paging
    if paging.gone:
        hint = " (esc)"
        cut = _cut_before(GONE, "bold red", hint, "bold red")
        return [Part(cut(len(GONE) + len(hint)), 0, cut, ERROR_LEAST + len(hint), gives=4)]
    if paging.error:
        hint = " (ctrl+r retries)"
        cut = _cut_before(paging.error, "bold red", hint, "")
        return [Part(cut(60 + len(hint)), 0, cut, ERROR_LEAST + len(hint), gives=0)]
    if state.ranks_here and not paging.ended:
        doing = "ranking" if state.ranking_here else "finding errors in"
        if paging.loading_all:
            words = f"{doing} all: {loaded:,} loaded, more coming (esc stops)"
            return [_said(words, 1, "italic")]
        what = "ranked" if state.ranking_here else "errors"
        words = f"{what} among the {loaded:,} loaded only (r loads all)"
        return [_said(words, 1, "bold")]
    if fetching:
        return [_said("loading…", 2, "italic")]
    if paging.ended:
        nothing = "nothing matches" if state.asked is not None else "no traces in this range"
        return [_said("all loaded" if loaded else nothing, 4, "dim")]
    return []


def _cells(parts: list[Part], least: bool = False) -> int:
    cells = sum(part.least_cells if least else part.cells for part in parts)
    return cells + cell_len(SEPARATOR) * (len(parts) - 1)


def _leave_out(parts: list[Part], rank: int, width: int, least: bool = False) -> list[Part]:
    """Parts of `rank` left out, the last first, until the rest fit in `width` (with the
    parts that can be cut at their least, if `least`)."""
    while _cells(parts, least) > width:
        found = [i for i, part in enumerate(parts) if part.rank == rank]
        if not found:
            break
        del parts[found[-1]]
    return parts


def fit(parts: list[Part], width: int | None) -> Text:
    """The parts on one line of `width` cells: the least needed left out first (rank 4, then
    3); then, if cutting what can be cut does not make room, ranks 2 and 1; then what can be
    cut is cut (a failure's words first, then the query, a count said short, the project's
    name) only as much as needed. What is still too long is cut with an ellipsis. No width: every part,
    cut by whoever draws it."""
    parts = list(parts)
    if width:
        for rank in (4, 3):
            parts = _leave_out(parts, rank, width)
        for rank in (2, 1):
            parts = _leave_out(parts, rank, width, least=True)
        cuttable = sorted((p.gives, i) for i, p in enumerate(parts) if p.cut is not None)
        for _, i in cuttable:
            excess = _cells(parts) - width
            if excess > 0:
                parts[i] = parts[i].cut_to(parts[i].cells - excess)
    line = Text(no_wrap=True, overflow="ellipsis", end="")
    for i, part in enumerate(parts):
        if i and part.sep and part.text.style == part.sep and not part.text.spans:
            line.append(SEPARATOR + part.text.plain, style=part.sep)  # one run, one style
            continue
        if i:
            line.append(SEPARATOR, style=part.sep)
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
