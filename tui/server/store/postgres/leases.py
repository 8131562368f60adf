"""What replicas of the service on one PostgreSQL database share the work through: leases and
request counts (`backend.ReplicaStore`). A part of the store's AlertTables (which inherits it).

A lease is a row (name, holder, expires_at) taken or renewed by one conditional upsert: the
insert, or the update of a row that is the holder's own or has expired, else nothing. Two
replicas upserting at once take turns on the row's lock, and the second sees the first's row:
one of them holds the lease. A row with an expiry, not a session's advisory lock: a replica
killed mid-round leaves a row that expires by itself, whatever became of its connection, and
the same protocol runs on SQLite. Times are the database's clock (clock_timestamp()), so the
replicas' own clocks may disagree.

Request counts: a row per (bucket, window), one upsert per request that returns the total
across replicas (about 0.1 ms on the test machine: see docs/postgres-notes.md).
"""

from __future__ import annotations

from tui.server.store.postgres.pool import Connections

NOW_MS = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint"

TAKE_LEASE = f"""
INSERT INTO leases (name, holder, expires_at) VALUES (%(name)s, %(holder)s, {NOW_MS} + %(ttl)s)
ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
WHERE leases.holder = EXCLUDED.holder OR leases.expires_at <= {NOW_MS}
RETURNING holder
"""

COUNT_REQUESTS = """
INSERT INTO rate_counts (bucket, window_start, hits) VALUES (%s, %s, %s)
ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_counts.hits + EXCLUDED.hits
RETURNING hits
"""


class ReplicaTables:
    """Leases and request counts over the store's `Connections`."""

    _db: Connections

    def is_shared(self) -> bool:
        """See ReplicaStore.is_shared: any number of services may use one database."""
        return True

    def take_lease(self, name: str, holder: str, ttl_ms: int) -> bool:
        with self._db.connection() as db:
            taken = db.execute(
                TAKE_LEASE, {"name": name, "holder": holder, "ttl": ttl_ms}
            ).fetchone()
        return taken is not None

    def release_lease(self, name: str, holder: str) -> None:
        with self._db.connection() as db:
            db.execute("DELETE FROM leases WHERE name = %s AND holder = %s", (name, holder))

    def count_requests(self, bucket: str, window_start: int, hits: int = 1) -> int:
        with self._db.connection() as db:
            row = db.execute(COUNT_REQUESTS, (bucket, window_start, hits)).fetchone()
        return int(row[0]) if row is not None else hits

    def forget_request_counts(self, before: int | None = None) -> int:
        with self._db.connection() as db:
            if before is None:
                gone = db.execute("DELETE FROM rate_counts")
            else:
                gone = db.execute("DELETE FROM rate_counts WHERE window_start < %s", (before,))
        return gone.rowcount
