"""How the trace listing finds the traces its annotation filters keep, on both stores.

Each annotation filter is an EXISTS on the trace's annotations (annotations.annotation_clauses),
exact wherever it stands. But walking a project's traces in order and asking each whether it is
annotated costs a look-up per trace walked: a page of a label that 1 trace in 700 has walks
70,000. So one annotation filter (a label's first, else a score's, else a name's) drives: the
traces it names are read from the annotations' own indexes, which keep each trace's listed_at
(annotations_by_label, annotations_by_name), and only those are read from traces, where every
filter (that one's EXISTS included) is applied as ever.

- Ordered by listed_at (the default), the candidates come in the list's own order, in chunks:
  the first as long as the page, then four times longer each time, until the page is full or
  the candidates run out. A chunk's traces that pass every filter are the next rows of the page,
  in order, so the page is exact, and its cost grows with the page, not with the matches.
- Ordered by another column (duration, cost, tokens), the candidates are read whole, up to the
  store's `common` of them, and sorted; that many or more, and the plain statement runs: the
  traces walked in that order, each asked (past that many matches a page needs few steps of
  the walk). PostgreSQL's planner, which knows how common a label is, does better with the
  plain statement from the first candidate (`common` 0: none are read); SQLite's cannot tell.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from tui.server.search.filters import TraceFilters
from tui.server.store.dialect import Dialect
from tui.server.store.rows import SearchPosition, TraceSummary

MAX_CHUNK = 20_000
Rows = Callable[[Callable[..., tuple[str, list[Any]]]], list[TraceSummary]]


def driver(filters: TraceFilters) -> tuple[str, list[Any]] | None:
    """The condition (on annotations `a`) of the annotation filter that drives, or None."""
    if filters.labels:
        name, label = filters.labels[0]
        return "a.name = ? AND a.label = ?", [name, label]
    if filters.min_scores:
        name, bound = filters.min_scores[0]
        return "a.name = ? AND a.score >= ?", [name, bound]
    if filters.max_scores:
        name, bound = filters.max_scores[0]
        return "a.name = ? AND a.score <= ?", [name, bound]
    if filters.annotations:
        return "a.name = ?", [filters.annotations[0]]
    return None


def candidates(
    dialect: Dialect,
    project_id: str,
    condition: tuple[str, list[Any]],
    start: int,
    end: int,
    descending: bool,
    after: SearchPosition | None,
    size: int,
) -> tuple[str, list[Any]]:
    """The next `size` traces (listed_at, id) the driving filter names in [start, end), in the
    list's order past `after` (a listed_at and id): from one of the annotations' indexes alone."""
    where, args = condition
    sql = (
        "SELECT DISTINCT a.listed_at, a.trace_id FROM annotations a WHERE a.project_id = ?"
        f" AND {where} AND a.listed_at >= ? AND a.listed_at <= ?"
    )
    values: list[Any] = [project_id, *args, start, end - 1]
    if after is not None:
        sql += f" AND (a.listed_at, a.trace_id) {'<' if descending else '>'} (?, ?)"
        values += [int(after.value), after.trace_id]
    way = "DESC" if descending else "ASC"
    sql += f" ORDER BY a.listed_at {way}, a.trace_id {way} LIMIT ?"
    return dialect.sql(sql), [*values, size]


def annotated_rows(
    db: Any,
    dialect: Dialect,
    project_id: str,
    filters: TraceFilters,
    start: int,
    end: int,
    limit: int,
    after: SearchPosition | None,
    page: Callable[..., tuple[str, list[Any]]],
    rows_of: Rows,
    common: int,
) -> list[TraceSummary] | None:
    """The page's rows (one beyond `limit` if more follow) found from the driving annotation
    filter; None when there is none, or when the walk (`page` as it is) is the better plan.
    `page(among=ids, ...)` makes the page's statement over these traces only; `rows_of(page)`
    runs a statement the store's way; `common`: the candidates read whole at most under
    another order than listed_at."""
    condition = driver(filters)
    if condition is None:
        return None
    descending = filters.order == "desc"
    if filters.sort_key != "listed_at":
        if common <= 0:
            return None
        found = db.execute(
            *candidates(dialect, project_id, condition, start, end, descending, None, common)
        ).fetchall()
        if len(found) >= common:
            return None
        ids = [row[1] for row in found]
        return rows_of(functools.partial(page, among=ids)) if ids else []
    rows: list[TraceSummary] = []
    position = after
    size = limit + 1
    while True:
        found = db.execute(
            *candidates(dialect, project_id, condition, start, end, descending, position, size)
        ).fetchall()
        if found:
            ids = [row[1] for row in found]
            rows += rows_of(functools.partial(page, among=ids))
        if len(rows) > limit or len(found) < size:
            return rows[: limit + 1]
        position = SearchPosition(found[-1][0], found[-1][1])
        size = min(size * 4, MAX_CHUNK)
