"""The PostgreSQL store's own half of search (store/search.py): the merge of a stored trace's
extras at ingest, and how a text search picks its plan. The text is traces.search_text, under a
GIN index over its trigrams (postgres.migrations, version 4).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tui.server.search.filters import TraceFilters
from tui.server.search.stored import Extras, merged
from tui.server.store import reads
from tui.server.store.rows import TraceSummary, TraceSums
from tui.server.store.search import SearchTables
from tui.server.store.texts import INDEX_BATCH

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


class PostgresSearch(SearchTables):
    """How PostgreSQL runs a filtered listing: a text search first walks the next SCAN traces
    in order (few are needed when the words are common, where the trigram index would fetch
    every match to order them), then, if they did not fill the page, asks the trigram index.

    A listing's statement is never prepared (psycopg prepares one run 5 times on a connection),
    so each is planned for its own values: PostgreSQL's generic plan for a prepared one knows
    neither the bounds nor the status, and once it took over, a span condition with a trace
    filter at page 21 went from 15 ms to 4 s on 1,000,000 traces (tests/perf/
    bench_span_search.py). Planning costs a fraction of a millisecond."""

    def index_texts(self, limit: int = INDEX_BATCH) -> int:
        """See TraceStore.index_texts: PostgreSQL indexes a trace's text as ingest writes it
        (store/texts.py says why), so none ever waits."""
        return 0

    def _search_rows(
        self,
        db: Any,
        filters: TraceFilters,
        limit: int,
        page: Callable[..., tuple[str, list[Any]]],
    ) -> list[TraceSummary]:
        if filters.has_text:
            sql, args = page(common_text=True, scan=SCAN)
            rows = list(map(TraceSummary._make, db.execute(sql.encode(), args, prepare=False)))
            if len(rows) > limit:
                return rows
            guard = reads.current()
            if guard is not None:  # the second statement gets what the first left
                db.execute(f"SET LOCAL statement_timeout = {guard.remaining_ms()}".encode())
        sql, args = page()
        return list(map(TraceSummary._make, db.execute(sql.encode(), args, prepare=False)))
