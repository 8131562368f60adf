"""The app's trace filters (TraceFilter) as the query of Phoenix's trace list
(`GET /v1/projects/{id}/traces`): `session_identifier` for a session's traces, `sort` by start
time or latency, `order`, and Phoenix's filter expressions (`error_count > 0`,
`latency_ms >= N`) for errors and latency. Phoenix's expressions know neither a trace's name nor
its user, model, cost or text, so those filters are not offered (OFFERED_FILTERS is what
`discover_offers` says: the app filters the loaded rows for the rest), and asked for anyway
they raise an ApiError that says so rather than list every trace."""

from __future__ import annotations

from typing import Any

from tui.api.errors import ApiError
from tui.api.models import TraceFilter

OFFERED_FILTERS = frozenset({"session_id", "status", "min_latency_ms", "max_latency_ms"})
SORTS = {"started_at": "start_time", "duration_ms": "latency_ms"}


def trace_filter_params(filters: TraceFilter, server_name: str = "Phoenix") -> dict[str, Any]:
    """The query parameters of Phoenix's trace list for `filters`."""
    unknown = sorted(filters.parameter_names - OFFERED_FILTERS - {"sort", "order"})
    if filters.sort is not None and filters.sort not in SORTS:
        unknown.append(f"sort {filters.sort}")
    if unknown:
        raise ApiError(
            f"This {server_name} server cannot filter or sort traces by {', '.join(unknown)}.",
            None,
        )
    params: dict[str, Any] = {}
    if filters.session_id:
        params["session_identifier"] = filters.session_id
    if filters.sort is not None:
        params["sort"] = SORTS[filters.sort]
    if filters.order in ("asc", "desc"):
        params["order"] = filters.order
    conditions = []
    if filters.status == "error":
        conditions.append("error_count > 0")
    elif filters.status == "ok":
        conditions.append("error_count == 0")
    if filters.min_latency_ms is not None:
        conditions.append(f"latency_ms >= {float(filters.min_latency_ms)!r}")
    if filters.max_latency_ms is not None:
        conditions.append(f"latency_ms <= {float(filters.max_latency_ms)!r}")
    if conditions:
        params["filter"] = " and ".join(conditions)
    return params
