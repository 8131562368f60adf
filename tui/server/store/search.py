"""The SQL of the filtered and sorted trace listing, and of a project's sessions and users, for
both stores: written once with `?` placeholders, and the few parts that differ (text, tags and
models) by each store's Dialect. Every value is bound, never spliced; the only names spliced
in are the sort's, from filters.SORTS.

Keyset paging: traces are ordered by (sort key, id), either way, and a page starts past the
previous page's last (value, id), compared as a row value, which both databases seek on their
(project_id, key, id) indexes. Sessions and users are ordered by (last_seen, id), newest
first. Every listing is bounded by the time window of its first page (on listed_at, the
trace's first-stored start, which never changes), so a trace that arrives later with a newer
start is never seen by a walk that began before it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from tui.server.search.filters import TraceFilters
from tui.server.store.rows import TraceSummary

NEWEST_SPAN_END = "started_at + duration_ms"  # as store_sql's: what retention keeps by


class SearchPosition(NamedTuple):
    """The last row of the previous page: its sort value and id."""

    value: float | int
    trace_id: str


class GroupPosition(NamedTuple):
    """The last session or user of the previous page: its last_seen and id."""

    last_seen: int
    id: str


@dataclass(frozen=True)
class Dialect:
    """What differs between the stores' SQL."""

    # (every term, whether they are common): (clause, args)
    text: Callable[[tuple[str, ...], bool], tuple[str, list[Any]]]
    contains: Callable[[str, str], tuple[str, list[Any]]]  # (column, value): (clause, args)
    placeholder: str = "?"
    # Put before a column to keep the planner from using its index (SQLite's unary +): the
    # window's bound on listed_at, when the traces are ordered by another column, so that the
    # order's index is walked instead of sorting the whole window.
    unindexed: str = ""

    def finish(self, sql: str) -> str:
        return sql if self.placeholder == "?" else sql.replace("?", self.placeholder)


def fts_match(terms: tuple[str, ...]) -> str:
    """FTS5 trigram: every term a quoted phrase (a substring, case-insensitive)."""
    return " ".join('"' + term.replace('"', '""') + '"' for term in terms)


def sqlite_text(terms: tuple[str, ...], common: bool) -> tuple[str, list[Any]]:
    """Rare terms: the traces the index finds, then ordered (the cost grows with the matches).
    Common ones: the traces in order, each looked up in the index until the page is full
    (the cost grows with the rows walked past, few when most rows match)."""
    if common:
        return (
            "EXISTS (SELECT 1 FROM trace_text_keys k JOIN trace_texts f ON f.rowid = k.id"
            " WHERE k.project_id = traces.project_id AND k.trace_id = traces.id"
            " AND trace_texts MATCH ?)",
            [fts_match(terms)],
        )
    return (
        "(project_id, id) IN (SELECT k.project_id, k.trace_id FROM trace_texts f"
        " JOIN trace_text_keys k ON k.id = f.rowid WHERE trace_texts MATCH ?)",
        [fts_match(terms)],
    )


def sqlite_contains(column: str, value: str) -> tuple[str, list[Any]]:
    return f"EXISTS (SELECT 1 FROM json_each(traces.{column}) WHERE value = ?)", [value]


def like_pattern(term: str) -> str:
    """`term` as an ILIKE substring pattern, its own %, _ and \\ taken literally."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def postgres_text(terms: tuple[str, ...], common: bool = False) -> tuple[str, list[Any]]:
    """The terms' trigrams, all held by the trace's (its GIN index), then ILIKE per term;
    `common`: ILIKE alone (rows walked in order, no index)."""
    if common:
        return (
            " AND ".join(["search_text ILIKE ?"] * len(terms)),
            [like_pattern(term) for term in terms],
        )
    each = "tracetui_grams(search_text) @> tracetui_grams(?) AND search_text ILIKE ?"
    args: list[Any] = []
    for term in terms:
        args += [term, like_pattern(term)]
    return " AND ".join([each] * len(terms)), args


def postgres_contains(column: str, value: str) -> tuple[str, list[Any]]:
    return f"({column}::jsonb) @> ?::jsonb", [json.dumps([value])]


SQLITE = Dialect(sqlite_text, sqlite_contains, unindexed="+")
POSTGRES = Dialect(postgres_text, postgres_contains, placeholder="%s")

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
) -> tuple[str, list[Any]]:
    """One page of a project's traces with start <= listed_at < end, past `after`, reading
    one row beyond `limit` (to know whether more follow). `common_text`: the text's terms
    match many traces (see sqlite_text). With `scan`, only the next `scan` traces in order
    are filtered: a page it fills is the page (the first matches in order lie among them);
    one it does not fill says nothing, and the caller asks without `scan`."""
    key = filters.sort_key
    descending = filters.order == "desc"
    lower, upper = start, end - 1
    if after is not None and key == "listed_at":
        # The window and the cursor on the same column: one bound, the tighter (a seek).
        if descending:
            upper = min(upper, int(after.value))
        else:
            lower = max(lower, int(after.value))
    window = "listed_at" if key == "listed_at" else dialect.unindexed + "listed_at"
    where = ["project_id = ?", f"{window} >= ?", f"{window} <= ?"]
    args: list[Any] = [project_id, lower, upper]
    if kept_since is not None:
        where.append(f"{NEWEST_SPAN_END} >= ?")
        args.append(kept_since)
    if after is not None:
        where.append(f"({key}, id) {'<' if descending else '>'} (?, ?)")
        args += [after.value, after.trace_id]
    way = "DESC" if descending else "ASC"
    order = f"ORDER BY {key} {way}, id {way}"
    source = "traces"
    if scan is not None:
        source = f"(SELECT * FROM traces WHERE {' AND '.join(where)} {order} LIMIT ?) AS traces"
        args.append(scan)
        where, args = [], [*args]
    for clause, more in filter_clauses(dialect, filters, common_text):
        where.append(clause)
        args += more
    condition = f" WHERE {' AND '.join(where)}" if where else ""
    sql = f"SELECT {SUMMARY_COLUMNS} FROM {source}{condition} {order} LIMIT ?"
    return dialect.finish(sql), [*args, limit + 1]


def filter_clauses(
    dialect: Dialect, filters: TraceFilters, common_text: bool = False
) -> list[tuple[str, list[Any]]]:
    found: list[tuple[str, list[Any]]] = []
    if filters.terms:
        found.append(dialect.text(filters.terms, common_text))
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
    return found


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
    return dialect.finish(sql), args


def latest_users(
    dialect: Dialect, project_id: str, session_ids: list[str]
) -> tuple[str, list[Any]]:
    """One statement: the user of each session's most recent trace, a row per session in the
    order of `session_ids` (at least one). VALUES names its columns column1, column2 on both
    stores; each look-up is a seek on traces_by_project_session."""
    values = ", ".join(["(?, ?)"] * len(session_ids))
    sql = dialect.finish(
        "SELECT (SELECT user_id FROM traces WHERE project_id = ? AND session_id = s.column1"
        f" ORDER BY listed_at DESC, id DESC LIMIT 1) FROM (VALUES {values}) AS s"
        " ORDER BY s.column2"
    )
    return sql, [project_id, *(v for n, session in enumerate(session_ids) for v in (session, n))]
