"""The SQLite store's API keys (stored hashed, shown by an id from the hash) and the answers
remembered per Idempotency-Key. A part of `store.Store` (which mixes it in), kept apart so that
store.py stays about projects and traces."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager

from tui.server.api_keys import KEY_ID_LENGTH, hash_key, key_info, key_prefix
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
from tui.server.store.sql import INSERT, columns, insert_sql


class KeyTables:
    """Keys and Idempotency-Keys over the connection and transactions that `Store` provides."""

    def _connection(self) -> sqlite3.Connection:
        raise NotImplementedError

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    # -- keys ----------------------------------------------------------------------------------

    def add_key(self, api_key: str, project_id: str | None, label: str) -> KeyInfo:
        row = ApiKeyRow(hash_key(api_key), project_id, label, now_ms(), key_prefix(api_key))
        with self.transaction() as db:
            db.execute(insert_sql(ApiKeyRow, "INSERT OR REPLACE"), row)
        return key_info(row)

    def list_keys(self) -> list[KeyInfo]:
        """Every key, oldest first, as `keys list` shows it (no key, no whole hash)."""
        rows = self._connection().execute(
            f"SELECT {columns(ApiKeyRow)} FROM api_keys ORDER BY created_at, key_hash"
        )
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
        with self.transaction() as db:
            cursor = db.execute(
                "DELETE FROM api_keys WHERE substr(key_hash, 1, ?) = ?", (KEY_ID_LENGTH, key_id)
            )
        return cursor.rowcount > 0

    def has_workspace_key(self) -> bool:
        row = (
            self._connection()
            .execute("SELECT 1 FROM api_keys WHERE project_id IS NULL LIMIT 1")
            .fetchone()
        )
        return row is not None

    def key_scope(self, api_key: str) -> KeyScope | None:
        key_hash = hash_key(api_key)
        row = (
            self._connection()
            .execute("SELECT project_id FROM api_keys WHERE key_hash = ?", (key_hash,))
            .fetchone()
        )
        return None if row is None else KeyScope(key_hash, row[0])

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
        transaction, so two racing requests with one Idempotency-Key never both insert."""
        with self.transaction() as db:
            if once is not None:
                seen = self.remembered_response(db, once.key_hash, once.idempotency_key)
                if seen is not None:
                    return seen
            if (
                isinstance(row, ProjectRow)
                and db.execute("SELECT 1 FROM projects WHERE name = ?", (row.name,)).fetchone()
            ):
                # In the insert's transaction (BEGIN IMMEDIATE: one writer), so two racing
                # creates never both take one name.
                from tui.server.store.admin import NameTaken

                raise NameTaken(row.name)
            db.execute(INSERT[type(row)], row)
            for extra in also:
                db.execute(INSERT[type(extra)], extra)
            if once is not None:
                self.remember_response(db, *once, status, body)
        return None

    def remembered_response(
        self, db: sqlite3.Connection, key_hash: str, idempotency_key: str
    ) -> Remembered | None:
        """The answer stored for this key's Idempotency-Key, if any."""
        row = db.execute(
            "SELECT request_hash, status, body FROM idempotency "
            "WHERE key_hash = ? AND idempotency_key = ?",
            (key_hash, idempotency_key),
        ).fetchone()
        if row is None:
            return None
        return Remembered(row[0], row[1], json.loads(row[2]))

    def remember_response(
        self,
        db: sqlite3.Connection,
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
        with self.transaction() as db:
            cursor = db.execute("DELETE FROM idempotency WHERE created_at < ?", (created_before,))
        return cursor.rowcount
