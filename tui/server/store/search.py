"""Search on both stores: the SQL of the filtered and sorted trace listing and of a project's
sessions and users, written once with `?` placeholders (the few parts that differ, text, tags
and models, are the dialect's), and the listing's methods. Every value is bound, never spliced;
the only names spliced in are the sort's, from filters.SORTS.

Keyset paging: traces are ordered by (sort key, id), either way, and a page starts past the
previous page's last (value, id), compared as a row value, which both databases seek on their
(project_id, key, id) indexes. Sessions and users are ordered by (last_seen, id), newest
first. Every listing is bounded by the time window of its first page (on listed_at, the
trace's first-stored start, which never changes), so a trace that arrives later with a newer
start is never seen by a walk that began before it. Each store picks a text search's plan its
own way (`_search_rows`: sqlite.search, postgres.search).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ClassVar

from tui.server.search.filters import TraceFilters
from tui.server.search.text import INPUT, OUTPUT, folded
from tui.server.store.annotation_search import annotated_rows
from tui.server.store.annotations import annotation_clauses
from tui.server.store.dialect import Dialect, Parts
from tui.server.store.rows import GroupPosition, GroupRow, SearchPosition, TraceSummary
from tui.server.store.span_search import is_rare, span_clauses
from tui.server.store.sql import NEWEST_SPAN_END
from tui.server.store.tables import Tables

SUMMARY_COLUMNS = ", ".join(TraceSummary._fields)


def trace_page(
    dialect: Dialect,
    project_id: str,
    filters: TraceFilters,
    start: int,
    end: int,
    limit: int,
    after: SearchPosition | None,
    kept_since: int | None,
    common_text: bool = False,
    scan: int | None = None,
    rare_spans: bool = False,
    among: list[str] | None = None,
) -> tuple[str, list[Any]]:
    """One page of a project's traces with start <= listed_at < end, past `after`, reading
    one row beyond `limit` (to know whether more follow). `common_text`: the text's terms
    match many traces (see dialect.sqlite_text). With `scan`, only the next `scan` traces in order
    are filtered: a page it fills is the page (the first matches in order lie among them);
    one it does not fill says nothing, and the caller asks without `scan`. `rare_spans`: the
    span conditions are met from the failed spans' index (span_search.py). With `among`, only
    the traces of these ids (found by annotation_search), each read by its key, then ordered."""
    key = filters.sort_key
    descending = filters.order == "desc"
    lower, upper = start, end - 1
    if after is not None and key == "listed_at":
        # The window and the cursor on the same column: one bound, the tighter (a seek).
        if descending:
            upper = min(upper, int(after.value))
        else:
            lower = max(lower, int(after.value))
    window = (
        "listed_at" if key == "listed_at" and among is None else dialect.unindexed + "listed_at"
    )
    where = ["project_id = ?", f"{window} >= ?", f"{window} <= ?"]
    args: list[Any] = [project_id, lower, upper]
    if among is not None:
        where.append("id = ANY(?)")
        args.append(dialect.values(among))
    if kept_since is not None:
        where.append(f"{NEWEST_SPAN_END} >= ?")
        args.append(kept_since)
    if after is not None:
        where.append(f"({key}, id) {'<' if descending else '>'} (?, ?)")
        args += [after.value, after.trace_id]
    way = "DESC" if descending else "ASC"
    # Among a few traces read by their key, the order's index is not walked: they are sorted.
    ordered = key if among is None else dialect.unindexed + key
    order = f"ORDER BY {ordered} {way}, id {way}"
    source = "traces"
    if scan is not None:
        source = f"(SELECT * FROM traces WHERE {' AND '.join(where)} {order} LIMIT ?) AS traces"
        args.append(scan)
        where, args = [], [*args]
    for clause, more in filter_clauses(dialect, filters, common_text):
        where.append(clause)
        args += more
    for clause, more in span_clauses(dialect, filters, project_id if rare_spans else None):
        where.append(clause)
        args += more
    condition = f" WHERE {' AND '.join(where)}" if where else ""
    sql = f"SELECT {SUMMARY_COLUMNS} FROM {source}{condition} {order} LIMIT ?"
    return dialect.sql(sql), [*args, limit + 1]


def filter_clauses(
    dialect: Dialect, filters: TraceFilters, common_text: bool = False
) -> list[tuple[str, list[Any]]]:
    found: list[tuple[str, list[Any]]] = []
    if filters.has_text:
        found.append(dialect.text(filters.searched_terms, text_parts(filters), common_text))
    if filters.status is not None:
        found.append(("status = ?", [filters.status]))
    if filters.model is not None:
        found.append(dialect.contains("models", filters.model.lower()))
    if filters.name is not None:
        found.append(("lower(name) = lower(?)", [filters.name]))
    if filters.min_latency_ms is not None:
        found.append(("duration_ms >= ?", [filters.min_latency_ms]))
    if filters.max_latency_ms is not None:
        found.append(("duration_ms <= ?", [filters.max_latency_ms]))
    if filters.min_cost_usd is not None:
        found.append(("total_cost_usd >= ?", [filters.min_cost_usd]))
    if filters.user_id is not None:
        found.append(("user_id = ?", [filters.user_id]))
    if filters.session_id is not None:
        found.append(("session_id = ?", [filters.session_id]))
    for tag in filters.tags:
        found.append(dialect.contains("tags", tag))
    return found + annotation_clauses(filters)


def text_parts(filters: TraceFilters) -> Parts:
    """The terms of `input` and `output`, each with the mark of its kind of string, folded
    as the stored texts are."""
    return (
        *((INPUT, folded(term)) for term in filters.inputs),
        *((OUTPUT, folded(term)) for term in filters.outputs),
    )


def sort_value(row: TraceSummary, filters: TraceFilters) -> float | int:
    """The value a row is ordered by (what the next page's cursor carries)."""
    if filters.sort == "duration_ms":
        return row.duration_ms
    if filters.sort == "total_cost_usd":
        return float(row.total_cost_usd)
    if filters.sort == "total_tokens":
        return row.input_tokens + row.output_tokens
    return row.listed_at


# -- sessions and users ----------------------------------------------------------------------------

ERRORS = "sum(CASE WHEN status = 'error' THEN 1 ELSE 0 END)"


def group_page(
    dialect: Dialect,
    column: str,
    project_id: str,
    start: int,
    end: int,
    limit: int,
    after: GroupPosition | None,
    kept_since: int | None,
    user_id: str | None = None,
) -> tuple[str, list[Any]]:
    """One page of a project's sessions (`column` session_id) or users (user_id) whose last
    trace was listed in [start, end), newest first, each with its totals over all its kept
    traces. Only those with a trace in the window are summed (through the column's index)."""
    kept = ""
    kept_args: list[Any] = []
    if kept_since is not None:
        kept = f" AND {NEWEST_SPAN_END} >= ?"
        kept_args = [kept_since]
    only_user = ""
    user_args: list[Any] = []
    if user_id is not None:
        only_user = " AND user_id = ?"
        user_args = [user_id]
    upper = end - 1
    having = ["max(listed_at) >= ?", "max(listed_at) <= ?"]
    having_args: list[Any] = [start, upper]
    if after is not None:
        having.append(f"(max(listed_at) < ? OR (max(listed_at) = ? AND {column} < ?))")
        having_args += [after.last_seen, after.last_seen, after.id]
    sessions = ", count(DISTINCT session_id)" if column == "user_id" else ""
    sql = (
        f"SELECT {column}, min(listed_at), max(listed_at), count(*),"
        f" sum(input_tokens + output_tokens), sum(total_cost_usd), {ERRORS}{sessions}"
        f" FROM traces WHERE project_id = ? AND {column} IN ("
        f"SELECT {column} FROM traces WHERE project_id = ? AND {column} IS NOT NULL"
        f" AND listed_at >= ? AND listed_at <= ?{kept}{only_user})"
        f"{kept}{only_user}"
        f" GROUP BY {column} HAVING {' AND '.join(having)}"
        f" ORDER BY max(listed_at) DESC, {column} DESC LIMIT ?"
    )
    args = [
        project_id,
        project_id,
        start,
        upper,
        *kept_args,
        *user_args,
        *kept_args,
        *user_args,
        *having_args,
        limit + 1,
    ]
    return dialect.sql(sql), args


def latest_users(
    dialect: Dialect, project_id: str, session_ids: list[str]
) -> tuple[str, list[Any]]:
    """One statement: the user of each session's most recent trace, a row per session in the
    order of `session_ids` (at least one). VALUES names its columns column1, column2 on both
    stores; each look-up is a seek on traces_by_project_session."""
    values = ", ".join(["(?, ?)"] * len(session_ids))
    sql = dialect.sql(
        "SELECT (SELECT user_id FROM traces WHERE project_id = ? AND session_id = s.column1"
        f" ORDER BY listed_at DESC, id DESC LIMIT 1) FROM (VALUES {values}) AS s"
        " ORDER BY s.column2"
    )
    return sql, [project_id, *(v for n, session in enumerate(session_ids) for v in (session, n))]


class SearchTables(Tables):
    """The filtered listing and a project's sessions and users over the store's connections."""

    # Under an order other than listed_at, the traces an annotation filter keeps are read whole
    # and sorted when fewer than this, else the traces are walked (annotation_search).
    annotated_common: ClassVar[int] = 0

    def _search_rows(
        self,
        db: Any,
        filters: TraceFilters,
        limit: int,
        page: Callable[..., tuple[str, list[Any]]],
    ) -> list[TraceSummary]:
        """The rows of one page (`page(common_text=..., scan=...)` makes its statement), one
        beyond `limit` if more follow; each store picks a text search's plan its own way."""
        raise NotImplementedError

    def search_traces(
        self,
        project_id: str,
        filters: TraceFilters,
        start: int,
        end: int,
        limit: int,
        after: SearchPosition | None = None,
        kept_since: int | None = None,
    ) -> tuple[list[TraceSummary], bool]:
        """See SearchStore.search_traces."""
        with self._read() as db:
            rare = filters.has_span and is_rare(db, self.dialect, project_id, filters)
            page = functools.partial(
                trace_page,
                self.dialect,
                project_id,
                filters,
                start,
                end,
                limit,
                after,
                kept_since,
                rare_spans=rare,
            )
            rows = annotated_rows(
                db,
                self.dialect,
                project_id,
                filters,
                start,
                end,
                limit,
                after,
                page,
                lambda statement: self._search_rows(db, filters, limit, statement),
                self.annotated_common,
            )
            if rows is None:
                rows = self._search_rows(db, filters, limit, page)
        return rows[:limit], len(rows) > limit

    def list_groups(
        self,
        column: str,
        project_id: str,
        start: int,
        end: int,
        limit: int,
        after: GroupPosition | None = None,
        kept_since: int | None = None,
        user_id: str | None = None,
    ) -> tuple[list[GroupRow], bool]:
        """See SearchStore.list_groups."""
        sql, args = group_page(
            self.dialect, column, project_id, start, end, limit, after, kept_since, user_id
        )
        with self._read() as db:
            rows = [tuple(row) for row in db.execute(sql, args)]
            more = len(rows) > limit
            rows = rows[:limit]
            if column == "session_id" and rows:
                query, query_args = latest_users(self.dialect, project_id, [r[0] for r in rows])
                users = db.execute(query, query_args).fetchall()
                rows = [(*row, user[0]) for row, user in zip(rows, users, strict=True)]
        return rows, more
