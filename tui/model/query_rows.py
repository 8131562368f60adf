"""The trace list's query applied to loaded rows, for a server that does not filter (or not by
every condition): whether a row passes (`matches`), which conditions no row carries what it
takes to judge (`unjudged`), and the rows in a sort's order (`sort_rows`), the way the server
would. The query itself is read by tui/model/query.py; the annotation terms are judged on each
row's annotations' summary by tui/model/annotation_query.py."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from tui.api.models import TraceFilter
from tui.model.annotation_query import judged
from tui.model.annotations import summary_of
from tui.model.query import text_terms
from tui.model.span_query import fits_trace


def loaded_row_text(trace: Any) -> str:
    """The text a loaded list row offers a text search, casefolded: its name, id, status, error
    and previews (the server searches the whole trace's text; a row carries only these)."""
    fields = (
        trace.name,
        trace.id,
        trace.status,
        trace.error_message,
        trace.input_preview,
        getattr(trace, "output_preview", None),
    )
    return " ".join(str(value) for value in fields if value).casefold()


def _models_of(trace: Any) -> set[str]:
    models = getattr(trace, "models", None)
    names: Iterable[Any] = models if isinstance(models, (dict, list)) else ()
    return {name.casefold() for name in names if isinstance(name, str)}


# What a loaded row must carry for a condition on it to be judged: a server that never sends a
# row's models (the local service lists them only when asked) or users cannot have its rows
# judged by them, only its own filter can.
def _summarised(trace: Any) -> bool:
    return isinstance(getattr(trace, "annotations", None), dict)


CARRIED: dict[str, Callable[[Any], bool]] = {
    "model": lambda trace: getattr(trace, "models", None) is not None,
    "user_id": lambda trace: getattr(trace, "user_id", None) is not None,
    "session_id": lambda trace: getattr(trace, "session_id", None) is not None,
    "tags": lambda trace: bool(getattr(trace, "tags", None)),
    "inputs": lambda trace: getattr(trace, "input_preview", None) is not None,
    "outputs": lambda trace: getattr(trace, "output_preview", None) is not None,
    # A server that keeps no annotations sends no summary: its rows cannot be judged by them.
    "annotations": _summarised,
    "labels": _summarised,
    "scores": _summarised,
}
ANNOTATION_FIELDS = ("annotations", "labels", "scores")


def unjudged(query: TraceFilter, rows: Sequence[Any]) -> tuple[str, ...]:
    """The conditions of `query` (TraceFilter fields) that no row of `rows` carries what it
    takes to judge; () when there are no rows. "span": a span(…) group, which rows (no spans)
    judge only by what it implies of the trace (span_query.fits_trace)."""
    if not rows:
        return ()
    asked = [field for field in CARRIED if getattr(query, field)]
    found = tuple(field for field in asked if not any(map(CARRIED[field], rows)))
    return (*found, "span") if query.has_span else found


def matches(
    trace: Any, query: TraceFilter, text: str | None = None, skip: Collection[str] = ()
) -> bool:
    """Whether a loaded trace passes the filter (the sort aside), the conditions named in `skip`
    (TraceFilter fields, see `unjudged`) aside. `text`: its loaded_row_text, when the caller
    keeps one."""
    if query.status is not None and trace.is_error != (query.status == "error"):
        return False
    if query.name is not None and (trace.name or "").casefold() != query.name.casefold():
        return False
    if (
        query.model is not None
        and "model" not in skip
        and query.model.casefold() not in _models_of(trace)
    ):
        return False
    if (
        query.user_id is not None
        and "user_id" not in skip
        and getattr(trace, "user_id", None) != query.user_id
    ):
        return False
    if (
        query.session_id is not None
        and "session_id" not in skip
        and getattr(trace, "session_id", None) != query.session_id
    ):
        return False
    if (
        query.tags
        and "tags" not in skip
        and not set(query.tags) <= set(getattr(trace, "tags", None) or ())
    ):
        return False
    if query.has_span and not fits_trace(trace, query):
        return False
    for field, preview in (("inputs", "input_preview"), ("outputs", "output_preview")):
        wanted = getattr(query, field)
        if wanted and field not in skip:
            # A row carries the start of one input and one output: the server searches them all.
            shown = (getattr(trace, preview, None) or "").casefold()
            if not all(text.casefold() in shown for text in wanted):
                return False
    duration = trace.duration_ms
    if query.min_latency_ms is not None and (duration is None or duration < query.min_latency_ms):
        return False
    if query.max_latency_ms is not None and (duration is None or duration > query.max_latency_ms):
        return False
    cost = trace.total_cost_usd
    if query.min_cost_usd is not None and (cost is None or cost < query.min_cost_usd):
        return False
    # The three annotation terms are carried alike (CARRIED): judged together, or not at all.
    if (
        query.has_annotation_terms
        and not any(field in skip for field in ANNOTATION_FIELDS)
        and not judged(query, summary_of(trace))
    ):
        return False
    if query.q:
        haystack = text if text is not None else loaded_row_text(trace)
        return all(term in haystack for term in _folded_terms(query.q))
    return True


@functools.lru_cache(maxsize=64)
def _folded_terms(q: str) -> tuple[str, ...]:
    """A `q`'s terms, casefolded: read once for the rows a filter is matched against, not once
    a row (50,000 rows: 0.3 s of it)."""
    return tuple(term.casefold() for term in text_terms(q))


def _started(trace: Any) -> float | None:
    return trace.started_at.timestamp() if trace.started_at else None


_SORT_VALUES: dict[str, Callable[[Any], float | None]] = {
    "started_at": _started,
    "duration_ms": lambda t: t.duration_ms,
    "total_cost_usd": lambda t: t.total_cost_usd,
    "total_tokens": lambda t: t.total_tokens,
}


def sort_rows(rows: Sequence[Any], sort: str, order: str | None) -> list[Any]:
    """Rows ordered by a sort key, as the server would (ties by id); rows without the value
    last either way."""
    value_of = _SORT_VALUES.get(sort, _SORT_VALUES["started_at"])
    sign = -1 if (order or "desc") == "desc" else 1
    known = [(value_of(row), row) for row in rows]
    present = [(value, row) for value, row in known if value is not None]
    present.sort(key=lambda pair: (sign * pair[0], pair[1].id or ""))
    return [row for _, row in present] + [row for value, row in known if value is None]
