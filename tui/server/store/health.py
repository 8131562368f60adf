"""Projects' traffic over a recent window, in time buckets, for GET /v1/projects/health: written
once for both stores.

One statement per call, for every project asked: the traces of each project whose start lies in
[start, end), counted with their errored ones per bucket of `bucket_ms`. It reads the index
traces_by_project_started (project_id, started_at, duration_ms, error_count, ...), which
covers everything it looks at, the retention's bound (started_at + duration_ms) included: a
window of a hundred thousand traces is one walk of that index per project, never of the table
(measured in tests/perf/bench_health.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from tui.server.store.alerts import ERRORED
from tui.server.store.sql import NEWEST_SPAN_END
from tui.server.store.tables import Tables

# Parameters: start, bucket_ms, project ids (a list), start, end, kept since. The bucket of a
# trace is how many whole buckets after `start` it began (integer division on both stores:
# started_at >= start, so it never rounds below 0).
TRAFFIC = f"""
SELECT project_id, (started_at - ?) / ? AS bucket, count(*),
    sum(CASE WHEN {ERRORED} THEN 1 ELSE 0 END)
FROM traces
WHERE project_id = ANY(?) AND started_at >= ? AND started_at < ? AND {NEWEST_SPAN_END} >= ?
GROUP BY project_id, bucket
"""


class HealthStore(Protocol):
    """Projects' recent traffic at a glance (store/health.py): GET /v1/projects/health."""

    def project_traffic(
        self,
        project_ids: Sequence[str],
        start: int,
        end: int,
        bucket_ms: int,
        kept_since: int,
    ) -> dict[str, list[tuple[int, int, int]]]:
        """For each of `project_ids` with traces started in [start, end) whose newest span ends
        at or after `kept_since` (the projects' retention): (bucket, traces, errored traces) of
        each bucket holding any, in order, the bucket being (started_at - start) // bucket_ms;
        projects without such traces are left out. One statement, on an index."""
        ...


class HealthTables(Tables):
    """Projects' recent traffic over the store's connections."""

    def project_traffic(
        self,
        project_ids: Sequence[str],
        start: int,
        end: int,
        bucket_ms: int,
        kept_since: int,
    ) -> dict[str, list[tuple[int, int, int]]]:
        """See HealthStore.project_traffic."""
        if not project_ids:
            return {}
        args: list[Any] = [
            start,
            bucket_ms,
            self.dialect.values(project_ids),
            start,
            end,
            kept_since,
        ]
        found: dict[str, list[tuple[int, int, int]]] = {}
        with self._read() as db:
            for project_id, bucket, traces, errors in db.execute(self._sql(TRAFFIC), args):
                found.setdefault(project_id, []).append((int(bucket), int(traces), int(errors)))
        for buckets in found.values():
            buckets.sort()
        return found
