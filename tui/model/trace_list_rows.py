"""The trace list's state applied to its loaded rows (pure): what the server did not filter or
sort is done here, the way the server would (tui/model/query.py's `matches` and `sort_rows`)."""

from __future__ import annotations

from collections.abc import Sequence

from tui.api.models import Trace
from tui.model.query import loaded_row_text, matches, sort_rows
from tui.model.trace_list import TraceListState


def row_texts(traces: Sequence[Trace]) -> list[str]:
    """Each loaded row's searchable text, kept beside the rows so a query typed does not
    rebuild it for every row on every key."""
    return [loaded_row_text(trace) for trace in traces]


def shown_rows(state: TraceListState, traces: Sequence[Trace], texts: Sequence[str]) -> list[Trace]:
    """The loaded rows as the list shows them: filtered by what the server did not filter by,
    in the list's order. `texts`: row_texts of `traces`."""
    query = state.query_here
    if query is not None and not query.is_empty:
        strict = state.typed is None
        rows = [
            trace
            for trace, text in zip(traces, texts, strict=True)
            if matches(trace, query, text, strict=strict)
        ]
    else:
        rows = list(traces)
    if state.errors_here:
        rows = [trace for trace in rows if trace.is_error]
    order = state.sort_here
    if order is not None:
        rows = sort_rows(rows, order.key, order.order)
    return rows
