"""What several services sharing one store (replicas on one PostgreSQL database) share the work
through, on both stores: leases, so that one replica at a time runs a periodic task, and
request counts, so that a key's rate limit holds across replicas (ReplicaStore).

A lease is a row (name, holder, expires_at) taken or renewed by one conditional upsert: the
insert, or the update of a row that is the holder's own or has expired, else nothing. Two
replicas upserting at once take turns on the row's lock, and the second sees the first's row:
one of them holds the lease. A row with an expiry, not a session's advisory lock: a replica
killed mid-round leaves a row that expires by itself, whatever became of its connection. Each
store says whose clock a lease is timed by (`take_lease`): PostgreSQL's, as the replicas' own
clocks may disagree; on SQLite one process holds every lease, by its machine's clock.

Request counts: a row per (bucket, window), one upsert per request that returns the total
across replicas (about 0.1 ms on the test machine: see docs/postgres-notes.md). On SQLite the
rate limiter counts in memory (`is_shared` is False), but the same code runs there too.
"""

from __future__ import annotations

from tui.server.store.tables import Tables

COUNT_REQUESTS = (
    "INSERT INTO rate_counts (bucket, window_start, hits) VALUES (?, ?, ?) "
    "ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_counts.hits + excluded.hits "
    "RETURNING hits"
)
# The lease `name` for `holder` until `expires` ({now}: the store's clock, in epoch ms).
TAKE_LEASE = """
INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, {now} + ?)
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
WHERE leases.holder = excluded.holder OR leases.expires_at <= {now}
RETURNING holder
"""


class ReplicaTables(Tables):
    """Leases and request counts over the store's connections."""

    SHARED = False  # whether other services may use this store at the same time

    def is_shared(self) -> bool:
        """See ReplicaStore.is_shared."""
        return self.SHARED

    def release_lease(self, name: str, holder: str) -> None:
        with self._write_one() as db:
            db.execute(
                self._sql("DELETE FROM leases WHERE name = ? AND holder = ?"), (name, holder)
            )

    def count_requests(self, bucket: str, window_start: int, hits: int = 1) -> int:
        with self._write_one() as db:
            row = db.execute(self._sql(COUNT_REQUESTS), (bucket, window_start, hits)).fetchone()
        return int(row[0]) if row is not None else hits

    def forget_request_counts(self, before: int | None = None) -> int:
        with self._write_one() as db:
            if before is None:
                gone = db.execute("DELETE FROM rate_counts")
            else:
                gone = db.execute(
                    self._sql("DELETE FROM rate_counts WHERE window_start < ?"), (before,)
                )
        return int(gone.rowcount)
