"""A trace listing's conditions on one span (the `span_` filters: search/filters.py), written once
for both stores: the trace has a span that meets them all.

Two plans, picked as a text search's are, by how many spans match:
- few (a failed span of some model, some duration): the spans_failed index (project_id,
  lower(model), duration_ms, trace_id) WHERE status = 'error' (both stores' migrations) finds
  them, their traces are read by key and ordered: the cost grows with the matches. Only a
  condition on a failed span has an index: failures are few, so that index costs ingest
  little, where one over every span would cost every span's write.
- many: the traces are walked in the list's order and each is asked whether one of its spans
  meets them (an EXISTS on the spans_by_trace_time index): the cost grows with the traces
  walked past, few when many match.

Either way the trace's own columns narrow the walk first, with what the span's conditions
imply of its trace: a failed span fails its trace, a span's model is among its trace's
models, and no span lasts longer than its trace (from its first start to its last end).
"""

from __future__ import annotations

from typing import Any

from tui.server.search.filters import TraceFilters
from tui.server.store.dialect import Dialect

# Below this many matching failed spans in the project, the index finds them; counted up to
# here only. Where the two plans cost the same, measured on 1,000,000 traces (tests/perf/
# bench_span_search.py, docs/benchmarks.md): at 977 failed spans the index took 0.3-0.7 times
# the walk's time on both stores, at 1,570 it took 1.6-2.3 times.
RARE_SPANS = 1_200


def span_conditions(filters: TraceFilters, status: str = "s.status = ?") -> tuple[str, list[Any]]:
    """The conditions on span `s`, ANDed (`status`: how its status is compared)."""
    found: list[str] = []
    args: list[Any] = []
    if filters.span_model is not None:
        found.append("lower(s.model) = ?")
        args.append(filters.span_model.lower())
    if filters.span_name is not None:
        found.append("lower(s.name) = lower(?)")
        args.append(filters.span_name)
    if filters.span_kind is not None:
        found.append("s.kind = ?")
        args.append(filters.span_kind)
    if filters.span_status is not None:
        found.append(status)
        if "?" in status:
            args.append(filters.span_status)
    if filters.span_min_latency_ms is not None:
        found.append("s.duration_ms >= ?")
        args.append(filters.span_min_latency_ms)
    if filters.span_max_latency_ms is not None:
        found.append("s.duration_ms <= ?")
        args.append(filters.span_max_latency_ms)
    return " AND ".join(found), args


def failed_spans(filters: TraceFilters) -> tuple[str, list[Any]]:
    """The matching failed spans of a project (its id the first argument), as the
    spans_failed index reads them: the literal status is what makes that index usable."""
    conditions, args = span_conditions(filters, "s.status = 'error'")
    return f"FROM spans s WHERE s.project_id = ? AND {conditions}", args


def count_failed(dialect: Dialect, project_id: str, filters: TraceFilters) -> tuple[str, list[Any]]:
    """How many matching failed spans the project has, counted up to RARE_SPANS."""
    source, args = failed_spans(filters)
    sql = f"SELECT count(*) FROM (SELECT 1 {source} LIMIT ?) AS found"
    return dialect.sql(sql), [project_id, *args, RARE_SPANS]


def span_clauses(
    dialect: Dialect, filters: TraceFilters, rare_in: str | None = None
) -> list[tuple[str, list[Any]]]:
    """The listing's clauses for the span conditions: what they imply of the trace, then the
    span itself (`rare_in`: a project's id, whose failed spans the index finds first)."""
    if not filters.has_span:
        return []
    found: list[tuple[str, list[Any]]] = []
    if filters.span_status == "error":
        found.append(("status = ?", ["error"]))
    if filters.span_min_latency_ms is not None:
        found.append(("duration_ms >= ?", [filters.span_min_latency_ms]))
    if filters.span_model is not None:
        found.append(dialect.contains("models", filters.span_model.lower()))
    if rare_in is not None:
        source, args = failed_spans(filters)
        found.append(
            (f"(project_id, id) IN (SELECT s.project_id, s.trace_id {source})", [rare_in, *args])
        )
    else:
        # Asked of each trace walked, as written: OFFSET keeps PostgreSQL from making the
        # EXISTS a join, which its planner (no statistics of lower(model), nor of a span's
        # conditions together) takes for rare and plans by reading every matching span and
        # sorting their traces (1.6 s for a model's calls over 2 s on 1,000,000 traces,
        # tests/perf/bench_span_search.py); the status as an expression keeps it from probing
        # each trace through the failed spans' index, whose model prefix holds thousands
        # (the trace's own few spans are the spans_by_trace_time prefix).
        conditions, args = span_conditions(filters, "(s.status || '') = ?")
        found.append(
            (
                "EXISTS (SELECT 1 FROM spans s WHERE s.project_id = traces.project_id"
                f" AND s.trace_id = traces.id AND {conditions} LIMIT 1 OFFSET 0)",
                args,
            )
        )
    return found


def is_rare(db: Any, dialect: Dialect, project_id: str, filters: TraceFilters) -> bool:
    """Whether the span conditions are best met from the failed spans' index: they ask for a
    failed span, and the project has fewer than RARE_SPANS that match."""
    if filters.span_status != "error":
        return False
    sql, args = count_failed(dialect, project_id, filters)
    row = db.execute(sql, args).fetchone()
    return bool(row) and int(row[0]) < RARE_SPANS
