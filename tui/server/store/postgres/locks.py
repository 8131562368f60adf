"""The advisory locks of the PostgreSQL store, all transaction-level (released at commit or
rollback, so a replica that dies mid-transaction holds none; and they work behind PgBouncer in
transaction mode, where session locks do not).

- A trace: a bigint key from its (project, id). Ingest takes the keys of every trace it
  touches before writing, then recomputes each trace's row from all its spans, so two
  transactions writing the same trace (two replicas, two ingest workers) take turns and the
  second sums the first's spans too: no lost update. Retention takes the same keys before it
  deletes. Keys are taken in ascending order in one statement, so two transactions wanting
  overlapping sets never wait on each other in a cycle.
- Everything else: the two-int form (NAMESPACE, what), a key space the bigint keys never meet:
  the creation of a project by name (two replicas ingesting for a project not yet made make
  it once), one Idempotency-Key's use, an alert round, the annotations of a session, the
  alerts created in a project (counted against --alerts-per-project),
  migrations (see `migrations`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import psycopg

NAMESPACE = 0x7472_6163  # "trac"
ROUNDS = 2  # record_round: one alert round stored at a time
PROJECT_NAMES = 3  # ingest creating a project for a name
IDEMPOTENCY = 4  # one Idempotency-Key's look-up, insert and remembering
ANNOTATED_SESSIONS = 5  # annotations written on one session (its bound, its identifiers)
PROJECT_ALERTS = 6  # an alert created in one project (counted against its bound)


def _int64(*parts: str) -> int:
    digest = hashlib.blake2b("\x00".join(parts).encode("utf-8", "replace"), digest_size=8)
    return int.from_bytes(digest.digest(), "big", signed=True)


def _int32(*parts: str) -> int:
    return _int64(*parts) >> 32


def trace_key(project_id: str, trace_id: str) -> int:
    return _int64(project_id, trace_id)


def lock_traces(connection: psycopg.Connection[Any], traces: Iterable[tuple[str, str]]) -> None:
    """Take the locks of these (project_id, trace_id) traces, in ascending key order."""
    keys = sorted({trace_key(project_id, trace_id) for project_id, trace_id in set(traces)})
    if keys:
        # unnest yields the array in order and the aggregate takes each lock as it comes.
        connection.execute(
            "SELECT count(pg_advisory_xact_lock(k)) FROM unnest(%s::bigint[]) AS k", (keys,)
        )


def lock_names(
    connection: psycopg.Connection[Any], what: int, names: Iterable[tuple[str, ...]]
) -> None:
    """Take the locks of several names within `what`, in ascending key order (one statement)."""
    keys = sorted({_int32(str(what), *name) for name in names})
    if keys:
        connection.execute(
            "SELECT count(pg_advisory_xact_lock(%s, k)) FROM unnest(%s::int[]) AS k",
            (NAMESPACE, keys),
        )


def lock_name(connection: psycopg.Connection[Any], what: int, *name: str) -> None:
    """Take the lock of `name` within `what` (PROJECT_NAMES, IDEMPOTENCY), or of `what` alone."""
    key = _int32(str(what), *name) if name else what
    connection.execute("SELECT pg_advisory_xact_lock(%s, %s)", (NAMESPACE, key))
