"""The trace list's state applied to its loaded rows (pure): what the server did not filter or
sort is done here, the way the server would (tui/model/query_rows.py's `matches` and
`sort_rows`),
and what is typed in the open query line is previewed on them, saying over which rows, what
it cannot judge there, and what Enter will do."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from tui.api.models import SPAN_CONDITIONS, Trace, TraceFilter
from tui.model import annotation_query
from tui.model.query import format_query, text_terms
from tui.model.query_rows import loaded_row_text, matcher, sort_rows, unjudged
from tui.model.trace_list import TraceListState


def row_texts(traces: Sequence[Trace]) -> list[str]:
    """Each loaded row's searchable text, kept beside the rows so a query typed does not
    rebuild it for every row on every key."""
    return [loaded_row_text(trace) for trace in traces]


# The conditions that hold one value each (text and tags are lists of them).
SINGLE_CONDITIONS = (
    "status",
    "model",
    "name",
    "user_id",
    "session_id",
    "min_latency_ms",
    "max_latency_ms",
    "min_cost_usd",
    *SPAN_CONDITIONS,
)


def keeps_within(narrow: TraceFilter, wide: TraceFilter) -> bool:
    """Whether every trace `narrow` keeps is one `wide` keeps too (the sort aside): then the
    rows loaded for `wide` hold all of `narrow`'s among them."""
    for name in ("status", "user_id", "session_id"):
        if getattr(wide, name) is not None and getattr(narrow, name) != getattr(wide, name):
            return False
    for name in ("model", "name"):
        value = getattr(wide, name)
        if value is not None and (getattr(narrow, name) or "").casefold() != value.casefold():
            return False
    if not set(wide.tags) <= set(narrow.tags) or not annotation_query.within(narrow, wide):
        return False
    for low, high in (
        (narrow.min_latency_ms, wide.min_latency_ms),
        (narrow.min_cost_usd, wide.min_cost_usd),
    ):
        if high is not None and (low is None or low < high):
            return False
    if wide.max_latency_ms is not None and (
        narrow.max_latency_ms is None or narrow.max_latency_ms > wide.max_latency_ms
    ):
        return False
    if not span_within(narrow, wide):
        return False
    # A trace holding a narrow word holds each word that is part of it ("refunds": "refund").
    pairs = [(text_terms(narrow.q), text_terms(wide.q))]
    pairs += [(list(narrow.inputs), list(wide.inputs)), (list(narrow.outputs), list(wide.outputs))]
    for narrow_words, wide_words in pairs:
        words = [term.casefold() for term in narrow_words]
        if not all(any(term.casefold() in word for word in words) for term in wide_words):
            return False
    return True


def span_within(narrow: TraceFilter, wide: TraceFilter) -> bool:
    """Whether a span meeting `narrow`'s span(…) group meets `wide`'s too: each of wide's
    conditions is one of narrow's, or narrower."""
    for name in ("span_model", "span_name", "span_kind", "span_status"):
        value = getattr(wide, name)
        if value is not None and (getattr(narrow, name) or "").casefold() != value.casefold():
            return False
    low, high = wide.span_min_latency_ms, wide.span_max_latency_ms
    if low is not None and (narrow.span_min_latency_ms is None or narrow.span_min_latency_ms < low):
        return False
    return high is None or (
        narrow.span_max_latency_ms is not None and narrow.span_max_latency_ms <= high
    )


def left_to_do(narrow: TraceFilter, done: TraceFilter) -> TraceFilter:
    """The conditions of `narrow` that `done` (a filter the server applied) did not apply
    already, exactly: applying one again here could only lose rows (the server searches the
    whole trace's text, a loaded row carries a little of it)."""
    same: dict[str, Any] = {
        field: None for field in SINGLE_CONDITIONS if getattr(narrow, field) == getattr(done, field)
    }
    tags = tuple(tag for tag in narrow.tags if tag not in done.tags)
    done_words = {term.casefold() for term in text_terms(done.q)}
    words = [term for term in text_terms(narrow.q) if term.casefold() not in done_words]
    q = " ".join(f'"{word}"' if any(c.isspace() for c in word) else word for word in words)
    inputs = tuple(
        t for t in narrow.inputs if t.casefold() not in {d.casefold() for d in done.inputs}
    )
    outputs = tuple(
        t for t in narrow.outputs if t.casefold() not in {d.casefold() for d in done.outputs}
    )
    annotated = annotation_query.left_to_do(narrow, done)
    return replace(
        narrow,
        **same,
        **annotated,
        tags=tags,
        q=q or None,
        inputs=inputs,
        outputs=outputs,
        sort=None,
        order=None,
    )


@dataclass(frozen=True)
class Preview:
    """What the open query line says of what is typed, and the rows it previews."""

    error: str | None = None  # what is typed does not read: why (the list stays as it was)
    # The loaded rows are those the server found for this (a query line): they cannot preview
    # what is typed, which may keep traces they do not hold (the list stays as it was).
    loaded_for: str | None = None
    rows: list[Trace] | None = None  # the loaded rows what is typed keeps, in its order
    loaded: int = 0  # ... of how many
    unjudged: tuple[str, ...] = ()  # conditions the loaded rows cannot judge (TraceFilter fields)
    enter: str = "nothing"  # what Enter does: TraceListState.enter_does


@dataclass(frozen=True)
class Shown:
    """The list as the table shows it."""

    rows: list[Trace]  # the preview's rows while one applies, else `kept`
    kept: int  # how many rows the submitted query, sort and errors-only keep (the header's)
    unjudged: tuple[str, ...]  # conditions of the submitted query the loaded rows cannot judge
    preview: Preview | None  # while the query line is open


def filtered(
    traces: Sequence[Trace], texts: Sequence[str], query: TraceFilter | None
) -> tuple[list[Trace], tuple[str, ...]]:
    """The rows `query` keeps, every condition the rows can judge applied; and the conditions
    they cannot judge (not applied)."""
    if query is None or replace(query, sort=None, order=None).is_empty:
        return list(traces), ()
    skip = unjudged(query, traces)
    keeps = matcher(query, skip)
    return [t for t, text in zip(traces, texts, strict=True) if keeps(t, text)], skip


def show(
    state: TraceListState,
    traces: Sequence[Trace],
    texts: Sequence[str],
    offered: frozenset[str] | None = None,
) -> Shown:
    """The loaded rows as the list shows them, and the preview of what is typed. `texts`:
    row_texts of `traces`; `offered`: the trace filters the server offers, when known."""
    rows, skip = filtered(traces, texts, state.query_here)
    if state.errors_here:
        rows = [trace for trace in rows if trace.is_error]
    order = state.sort_here
    if order is not None:
        rows = sort_rows(rows, order.key, order.order)
    preview = None if state.typing is None else typed_preview(state, traces, texts, offered)
    shown = rows if preview is None or preview.rows is None else preview.rows
    return Shown(shown, len(rows), skip, preview)


def typed_preview(
    state: TraceListState,
    traces: Sequence[Trace],
    texts: Sequence[str],
    offered: frozenset[str] | None,
) -> Preview:
    """What is typed, over the loaded rows: every condition they can judge applied, the rest
    named; none at all when they are not the rows it would keep (loaded for another query)."""
    typing, typed, wanted = state.typing, state.as_typed, state.typed_filter
    enter = state.enter_does(offered)
    if typing is None or typed is None or wanted is None:
        return Preview(error=typing.error if typing else None, enter=enter)
    done = state.asked
    if done is not None and not keeps_within(wanted, done):
        loaded_for = format_query(replace(done, sort=None, order=None))
        return Preview(loaded_for=loaded_for, loaded=len(traces), enter=enter)
    rows, skip = filtered(traces, texts, wanted if done is None else left_to_do(wanted, done))
    order = typed.sort_here
    if order is not None:
        rows = sort_rows(rows, order.key, order.order)
    return Preview(rows=rows, loaded=len(traces), unjudged=skip, enter=enter)
