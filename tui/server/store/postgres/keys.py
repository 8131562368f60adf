"""The PostgreSQL store's API keys (stored hashed, shown by an id from the hash) and the answers
remembered per Idempotency-Key: `store_keys.KeyTables` of the SQLite store, on PostgreSQL. A
part of `store.PostgresStore` (which mixes it in)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import psycopg

from tui.server.api_keys import KEY_ID_LENGTH, hash_key, key_info, key_prefix
from tui.server.store.postgres import locks
from tui.server.store.postgres.pool import Connections
from tui.server.store.postgres.sql import INSERT
from tui.server.store.rows import (
    AlertRow,
    AlertSecretRow,
    ApiKeyRow,
    DeliveryRow,
    IdempotencyRow,
    KeyInfo,
    KeyScope,
    Once,
    ProjectRow,
    Remembered,
    now_ms,
)
from tui.server.store.sql import columns

# The key looked up and, if it is known, its request added to the bucket's window (as
# leases.COUNT_REQUESTS): one statement, so one round trip and one atomic step.
KEY_SCOPE_COUNTED = """
WITH known AS (SELECT project_id FROM api_keys WHERE key_hash = %(hash)s),
counted AS (
    INSERT INTO rate_counts (bucket, window_start, hits)
    SELECT %(bucket)s, %(window)s, 1 FROM known
    ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_counts.hits + EXCLUDED.hits
    RETURNING hits
)
SELECT known.project_id, counted.hits FROM known CROSS JOIN counted
"""


class KeyTables:
    """Keys and Idempotency-Keys over the store's `Connections`."""

    _db: Connections

    # -- keys ----------------------------------------------------------------------------------

    def add_key(self, api_key: str, project_id: str | None, label: str) -> KeyInfo:
        row = ApiKeyRow(hash_key(api_key), project_id, label, now_ms(), key_prefix(api_key))
        with self._db.transaction() as db:
            db.execute(
                INSERT[ApiKeyRow] + " ON CONFLICT (key_hash) DO UPDATE SET "
                "project_id = excluded.project_id, label = excluded.label, "
                "created_at = excluded.created_at, prefix = excluded.prefix, "
                "last_used_at = excluded.last_used_at",
                row,
            )
        return key_info(row)

    def list_keys(self) -> list[KeyInfo]:
        """Every key, oldest first, as `keys list` shows it (no key, no whole hash)."""
        with self._db.connection() as db:
            rows = db.execute(
                f"SELECT {columns(ApiKeyRow)} FROM api_keys ORDER BY created_at, key_hash"
            ).fetchall()
        return [key_info(ApiKeyRow._make(row)) for row in rows]

    def find_keys(self, ref: str) -> list[KeyInfo]:
        """The keys `ref` names: a key id (or a prefix of one, 6 hex digits at least), else a
        label. More than one means `ref` is ambiguous."""
        keys = self.list_keys()
        ref_lower = ref.strip().lower()
        if len(ref_lower) >= 6 and all(c in "0123456789abcdef" for c in ref_lower):
            by_id = [k for k in keys if k.key_id.startswith(ref_lower)]
            if by_id:
                return by_id
        return [k for k in keys if k.label == ref]

    def revoke_key(self, key_id: str) -> bool:
        """Delete the key whose id is `key_id` (whole); True if there was one."""
        if len(key_id) != KEY_ID_LENGTH:
            return False
        with self._db.transaction() as db:
            cursor = db.execute(
                "DELETE FROM api_keys WHERE substr(key_hash, 1, %s) = %s", (KEY_ID_LENGTH, key_id)
            )
        return cursor.rowcount > 0

    def has_workspace_key(self) -> bool:
        with self._db.connection() as db:
            row = db.execute("SELECT 1 FROM api_keys WHERE project_id IS NULL LIMIT 1").fetchone()
        return row is not None

    def key_scope(self, api_key: str) -> KeyScope | None:
        key_hash = hash_key(api_key)
        with self._db.connection() as db:
            row = db.execute(
                "SELECT project_id FROM api_keys WHERE key_hash = %s", (key_hash,)
            ).fetchone()
        return None if row is None else KeyScope(key_hash, row[0])

    def key_scope_counted(
        self, api_key: str, bucket: str, window_start: int
    ) -> tuple[KeyScope, int] | None:
        """The key's scope and the request counted, in one statement: None if the key is not
        known (nothing is counted), else its scope and the total of `bucket`'s window starting
        at `window_start` (epoch ms) across replicas, this request included (the rate
        limiter's look-up and count, ratelimit.IdentifyCounted, in one round trip)."""
        key_hash = hash_key(api_key)
        with self._db.connection() as db:
            row = db.execute(
                KEY_SCOPE_COUNTED, {"hash": key_hash, "bucket": bucket, "window": window_start}
            ).fetchone()
        return None if row is None else (KeyScope(key_hash, row[0]), int(row[1]))

    # -- idempotency ---------------------------------------------------------------------------

    def create_once(
        self,
        row: ProjectRow | AlertRow | DeliveryRow | ApiKeyRow,
        once: Once | None,
        status: int,
        body: object,
        also: Sequence[AlertSecretRow] = (),
    ) -> Remembered | None:
        """See TraceStore.create_once: the look-up, the insert and the remembering are one
        transaction, under the lock of the Idempotency-Key, so two racing requests with one key
        (at two replicas too) never both insert: the second waits and finds the first's."""
        with self._db.transaction() as db:
            if once is not None:
                locks.lock_name(db, locks.IDEMPOTENCY, once.key_hash, once.idempotency_key)
                seen = self.remembered_response(db, once.key_hash, once.idempotency_key)
                if seen is not None:
                    return seen
            if isinstance(row, ProjectRow):
                # Other writers of the table wait until this transaction ends: two racing
                # creates (at two replicas too) never both take one name.
                db.execute("LOCK TABLE projects IN SHARE ROW EXCLUSIVE MODE")
                if db.execute("SELECT 1 FROM projects WHERE name = %s", (row.name,)).fetchone():
                    from tui.server.store.admin import NameTaken

                    raise NameTaken(row.name)
            db.execute(INSERT[type(row)], row)
            for extra in also:
                db.execute(INSERT[type(extra)], extra)
            if once is not None:
                self.remember_response(db, *once, status, body)
        return None

    def remembered_response(
        self, db: psycopg.Connection[Any], key_hash: str, idempotency_key: str
    ) -> Remembered | None:
        """The answer stored for this key's Idempotency-Key, if any."""
        row = db.execute(
            "SELECT request_hash, status, body FROM idempotency "
            "WHERE key_hash = %s AND idempotency_key = %s",
            (key_hash, idempotency_key),
        ).fetchone()
        if row is None:
            return None
        return Remembered(row[0], row[1], json.loads(row[2]))

    def remember_response(
        self,
        db: psycopg.Connection[Any],
        key_hash: str,
        idempotency_key: str,
        request_hash: str,
        status: int,
        body: object,
    ) -> None:
        row = IdempotencyRow(
            key_hash, idempotency_key, request_hash, status, json.dumps(body), now_ms()
        )
        db.execute(INSERT[IdempotencyRow], row)

    def forget_responses(self, created_before: int) -> int:
        with self._db.transaction() as db:
            cursor = db.execute("DELETE FROM idempotency WHERE created_at < %s", (created_before,))
        return cursor.rowcount
