"""The PostgreSQL store's half of search: the filtered listing and a project's sessions and
users (queries' SQL, with %s placeholders), and the merge of a stored trace's extras at ingest.
The text is traces.search_text, under a pg_trgm GIN index (postgres.migrations, version 4).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from tui.server.search.filters import TraceFilters
from tui.server.search.stored import Extras, merged
from tui.server.store.rows import TraceSummary, TraceSums
from tui.server.store.search import (
    POSTGRES,
    GroupPosition,
    SearchPosition,
    group_page,
    latest_users,
    trace_page,
)

GroupRow = tuple[Any, ...]
# Traces a text search walks in order before it asks the trigram index (~2 us each).
SCAN = 5_000


def update_stored(connection: Any, project_id: str, sums: Sequence[TraceSums]) -> None:
    """Stored traces' extras merged with those of their newly arrived spans (the caller holds
    the traces' locks, as ingest does)."""
    for t in sums:
        row = connection.execute(
            "SELECT user_id, session_id, tags, output_preview, models, search_text FROM traces"
            " WHERE project_id = %s AND id = %s",
            (project_id, t.id),
        ).fetchone()
        if row is None:
            continue
        new = merged(Extras(*row), t)
        connection.execute(
            "UPDATE traces SET user_id = %s, session_id = %s, tags = %s, output_preview = %s,"
            " models = %s, search_text = %s WHERE project_id = %s AND id = %s",
            (*new, project_id, t.id),
        )


class SearchTables:
    """PostgresStore's search methods (see search.sqlite for the other store's)."""

    def _reading(self) -> AbstractContextManager[Any]:
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
        """See search.sqlite.SearchTables.search_traces. A text search first walks the next
        SCAN traces in order (few are needed when the words are common, where the trigram
        index would fetch every match to order them), then, if they did not fill the page,
        asks the trigram index."""
        page = functools.partial(
            trace_page, POSTGRES, project_id, filters, start, end, limit, after, kept_since
        )
        with self._reading() as db:
            if filters.terms:
                sql, args = page(common_text=True, scan=SCAN)
                rows = list(map(TraceSummary._make, db.execute(sql.encode(), args)))
                if len(rows) > limit:
                    return rows[:limit], True
            sql, args = page()
            rows = list(map(TraceSummary._make, db.execute(sql.encode(), args)))
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
        """See search.sqlite.SearchTables.list_groups."""
        sql, args = group_page(
            POSTGRES, column, project_id, start, end, limit, after, kept_since, user_id
        )
        with self._reading() as db:
            rows = [tuple(row) for row in db.execute(sql.encode(), args)]
            more = len(rows) > limit
            rows = rows[:limit]
            if column == "session_id" and rows:
                query, query_args = latest_users(POSTGRES, project_id, [r[0] for r in rows])
                users = db.execute(query.encode(), query_args).fetchall()
                rows = [(*row, user[0]) for row, user in zip(rows, users, strict=True)]
        return rows, more
