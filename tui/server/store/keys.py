"""API keys (stored hashed, shown by an id from the hash: api_keys.py) and the answers remembered
per Idempotency-Key, on both stores.

A create with an Idempotency-Key looks the key up, inserts and remembers its answer in one
transaction, holding the key's lock (PostgreSQL: replicas too), so two racing requests with one
key never both insert: the second waits and finds the first's answer. A change (PATCH, DELETE,
rotate-secret, a key's revocation) does the same with `answered_before` and `remember` around
its own statements, in its own transaction.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tui.server.api_keys import (
    KEY_ID_LENGTH,
    KEY_USE_RESOLUTION_MS,
    LAST_WORKSPACE_KEY,
    NO_SUCH_KEY,
    REVOKED,
    hash_key,
    key_info,
    key_prefix,
)
from tui.server.store.alert_rows import AlertRow, AlertSecretRow, DeliveryRow
from tui.server.store.errors import AlreadyAnswered, NameTaken, TooManyAlerts
from tui.server.store.replicas import COUNT_REQUESTS
from tui.server.store.rows import (
    ApiKeyRow,
    IdempotencyRow,
    KeyInfo,
    KeyScope,
    Once,
    ProjectRow,
    Remembered,
    Reply,
    now_ms,
)
from tui.server.store.sql import INSERT, columns, updated
from tui.server.store.tables import Tables

# A key made again (the same key, from `tracetui keys` or a test) replaces its row.
UPSERT_KEY = (
    f"{INSERT[ApiKeyRow]} ON CONFLICT (key_hash) DO UPDATE SET {updated(ApiKeyRow._fields[1:])}"
)
KEEP_RESPONSE = f"{INSERT[IdempotencyRow]} ON CONFLICT (key_hash, idempotency_key) DO NOTHING"
REMEMBERED = (
    "SELECT request_hash, status, body FROM idempotency WHERE key_hash = ? AND idempotency_key = ?"
)


def remembered(tables: Tables, db: Any, key_hash: str, idempotency_key: str) -> Remembered | None:
    """The answer stored for this key's Idempotency-Key, if any."""
    row = db.execute(tables._sql(REMEMBERED), (key_hash, idempotency_key)).fetchone()
    return None if row is None else Remembered(row[0], row[1], json.loads(row[2]))


def answered_before(tables: Tables, db: Any, reply: Reply | None) -> None:
    """First in a change's transaction: hold its Idempotency-Key's lock until the transaction
    ends (a racing repeat waits here), then AlreadyAnswered if the key has an answer already,
    which undoes the transaction with nothing changed."""
    if reply is None:
        return
    tables._lock_idempotency_key(db, reply.once.key_hash, reply.once.idempotency_key)
    seen = remembered(tables, db, reply.once.key_hash, reply.once.idempotency_key)
    if seen is not None:
        raise AlreadyAnswered(seen)


def remember(tables: Tables, db: Any, reply: Reply | None) -> None:
    """Last in a change's transaction: its answer, which the key's repeats will get."""
    if reply is not None:
        row = IdempotencyRow(*reply.once, reply.status, json.dumps(reply.body), now_ms())
        db.execute(tables._sql(INSERT[IdempotencyRow]), row)


class KeyTables(Tables):
    """Keys and Idempotency-Keys over the store's connections."""

    # -- keys ----------------------------------------------------------------------------------

    def add_key(self, api_key: str, project_id: str | None, label: str) -> KeyInfo:
        row = ApiKeyRow(hash_key(api_key), project_id, label, now_ms(), key_prefix(api_key))
        with self._write() as db:
            db.execute(self._sql(UPSERT_KEY), row)
        return key_info(row)

    def list_keys(self) -> list[KeyInfo]:
        """Every key, oldest first, as `keys list` shows it (no key, no whole hash)."""
        sql = f"SELECT {columns(ApiKeyRow)} FROM api_keys ORDER BY created_at, key_hash"
        with self._read() as db:
            rows = db.execute(sql).fetchall()
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
        """Delete the key whose id is `key_id` (whole), whoever's it is; True if there was one
        (`tracetui keys revoke`: the routes go through remove_key)."""
        if len(key_id) != KEY_ID_LENGTH:
            return False
        with self._write() as db:
            cursor = db.execute(
                self._sql("DELETE FROM api_keys WHERE substr(key_hash, 1, ?) = ?"),
                (KEY_ID_LENGTH, key_id),
            )
        return bool(cursor.rowcount > 0)

    def remove_key(self, key_id: str, project_id: str | None, reply: Reply | None = None) -> str:
        """Revoke the key whose id is `key_id` (whole) if it is `project_id`'s (None: a
        workspace key): REVOKED, NO_SUCH_KEY, or LAST_WORKSPACE_KEY (refused: nobody could
        manage the service through the API any more). One transaction, so two racing
        revocations never remove the last two workspace keys; with `reply`, the answer to
        remember when revoked (AlreadyAnswered if its Idempotency-Key has one)."""
        if len(key_id) != KEY_ID_LENGTH:
            return NO_SUCH_KEY
        owner = "project_id IS NULL" if project_id is None else "project_id = ?"
        args: tuple[Any, ...] = (KEY_ID_LENGTH, key_id)
        if project_id is not None:
            args += (project_id,)
        with self._write() as db:
            answered_before(self, db, reply)
            found = db.execute(
                self._sql(
                    f"SELECT key_hash FROM api_keys WHERE substr(key_hash, 1, ?) = ? AND {owner}"
                ),
                args,
            ).fetchall()
            if len(found) != 1:
                return NO_SUCH_KEY
            if project_id is None:
                workspace = db.execute(
                    "SELECT count(*) FROM api_keys WHERE project_id IS NULL"
                ).fetchone()
                if int(workspace[0]) <= 1:
                    return LAST_WORKSPACE_KEY
            db.execute(self._sql("DELETE FROM api_keys WHERE key_hash = ?"), (found[0][0],))
            remember(self, db, reply)
        return REVOKED

    def has_workspace_key(self) -> bool:
        with self._read() as db:
            row = db.execute("SELECT 1 FROM api_keys WHERE project_id IS NULL LIMIT 1").fetchone()
        return row is not None

    def key_scope(self, api_key: str) -> KeyScope | None:
        key_hash = hash_key(api_key)
        with self._read() as db:
            row = db.execute(
                self._sql("SELECT project_id FROM api_keys WHERE key_hash = ?"), (key_hash,)
            ).fetchone()
        return None if row is None else KeyScope(key_hash, row[0])

    def key_scope_counted(
        self, api_key: str, bucket: str, window_start: int
    ) -> tuple[KeyScope, int] | None:
        """See TraceStore.key_scope_counted: the look-up and the count in one transaction."""
        key_hash = hash_key(api_key)
        with self._write() as db:
            row = db.execute(
                self._sql("SELECT project_id FROM api_keys WHERE key_hash = ?"), (key_hash,)
            ).fetchone()
            if row is None:
                return None
            hits = db.execute(self._sql(COUNT_REQUESTS), (bucket, window_start, 1)).fetchone()
        return KeyScope(key_hash, row[0]), int(hits[0])

    def note_key_used(self, key_hash: str, now: int | None = None) -> None:
        """Note that the key was used at `now`, unless a use under a minute ago is noted."""
        now = now_ms() if now is None else now
        with self._write() as db:
            db.execute(
                self._sql(
                    "UPDATE api_keys SET last_used_at = ? WHERE key_hash = ? "
                    "AND (last_used_at IS NULL OR last_used_at <= ?)"
                ),
                (now, key_hash, now - KEY_USE_RESOLUTION_MS),
            )

    # -- idempotency ---------------------------------------------------------------------------

    def create_once(
        self,
        row: ProjectRow | AlertRow | DeliveryRow | ApiKeyRow,
        once: Once | None,
        status: int,
        body: object,
        also: Sequence[AlertSecretRow] = (),
        alerts_at_most: int | None = None,
    ) -> Remembered | None:
        """See TraceStore.create_once: the look-up, the insert and the remembering are one
        transaction, under the lock of the Idempotency-Key, so two racing requests with one key
        (at two replicas too) never both insert: the second waits and finds the first's. An
        alert's project is counted under its own lock in the same transaction, so racing
        creates (at two replicas too) never take it past `alerts_at_most`."""
        with self._write() as db:
            if once is not None:
                self._lock_idempotency_key(db, once.key_hash, once.idempotency_key)
                seen = remembered(self, db, once.key_hash, once.idempotency_key)
                if seen is not None:
                    return seen
            if isinstance(row, ProjectRow):
                # Other writers of the table wait until this transaction ends: two racing
                # creates (at two replicas too) never both take one name.
                self._hold_project_writes(db)
                if db.execute(
                    self._sql("SELECT 1 FROM projects WHERE name = ?"), (row.name,)
                ).fetchone():
                    raise NameTaken(row.name)
            if isinstance(row, AlertRow) and alerts_at_most is not None:
                self._lock_project_alerts(db, row.project_id)
                count = db.execute(
                    self._sql("SELECT count(*) FROM alerts WHERE project_id = ?"),
                    (row.project_id,),
                ).fetchone()[0]
                if count >= alerts_at_most:
                    raise TooManyAlerts(alerts_at_most)
            db.execute(self._sql(INSERT[type(row)]), row)
            for extra in also:
                db.execute(self._sql(INSERT[type(extra)]), extra)
            remember(self, db, None if once is None else Reply(once, status, body))
        return None

    def recall_response(self, key_hash: str, idempotency_key: str) -> Remembered | None:
        """The answer remembered for this key's Idempotency-Key, if any."""
        with self._read() as db:
            return remembered(self, db, key_hash, idempotency_key)

    def keep_response(
        self, key_hash: str, idempotency_key: str, request_hash: str, status: int, body: object
    ) -> None:
        """Remember an answer for this key's Idempotency-Key (the first one stays)."""
        row = IdempotencyRow(
            key_hash, idempotency_key, request_hash, status, json.dumps(body), now_ms()
        )
        with self._write() as db:
            db.execute(self._sql(KEEP_RESPONSE), row)

    def forget_responses(self, created_before: int) -> int:
        with self._write() as db:
            cursor = db.execute(
                self._sql("DELETE FROM idempotency WHERE created_at < ?"), (created_before,)
            )
        return int(cursor.rowcount)
