"""Running a project through the API, on both stores: keys revoked by their owner, projects
changed and deleted with everything of theirs, alerts changed, deleted and given a new secret,
a key's last use noted, and the answers of writes that are not creations remembered per
Idempotency-Key.

One implementation for SQLite (`store.Store`) and PostgreSQL (`postgres.store.PostgresStore`),
which mix it in: the statements are plain SQL both accept, written with `?` placeholders and
given `%s` ones on PostgreSQL (`_sql`); no statement holds a literal `?` or `%`.
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from typing import Any

from tui.server.api_keys import (
    KEY_ID_LENGTH,
    KEY_USE_RESOLUTION_MS,
    LAST_WORKSPACE_KEY,
    NO_SUCH_KEY,
    REVOKED,
)
from tui.server.store.rows import AlertRow, ProjectRow, Remembered, now_ms

ALERT_CHILDREN = ("alert_events", "webhook_deliveries", "alert_states", "alert_secrets")


class NameTaken(Exception):
    """Another project has this name: two projects of one name could not be told apart in a
    list, a palette or an ingest routed by name."""


class AdminTables:
    """The statements of `store_admin` over the store's own connections."""

    PLACEHOLDER = "?"

    def _admin_write(self) -> AbstractContextManager[Any]:
        """A write transaction, undone whole on error."""
        raise NotImplementedError

    def _admin_read(self) -> AbstractContextManager[Any]:
        """A connection to read from."""
        raise NotImplementedError

    def _sql(self, text: str) -> str:
        return text if self.PLACEHOLDER == "?" else text.replace("?", self.PLACEHOLDER)

    # -- keys ----------------------------------------------------------------------------------

    def remove_key(self, key_id: str, project_id: str | None) -> str:
        """Revoke the key whose id is `key_id` (whole) if it is `project_id`'s (None: a
        workspace key): REVOKED, NO_SUCH_KEY, or LAST_WORKSPACE_KEY (refused: nobody could
        manage the service through the API any more). One transaction, so two racing
        revocations never remove the last two workspace keys."""
        if len(key_id) != KEY_ID_LENGTH:
            return NO_SUCH_KEY
        owner = "project_id IS NULL" if project_id is None else "project_id = ?"
        args: tuple[Any, ...] = (KEY_ID_LENGTH, key_id)
        if project_id is not None:
            args += (project_id,)
        with self._admin_write() as db:
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
        return REVOKED

    def note_key_used(self, key_hash: str, now: int | None = None) -> None:
        """Note that the key was used at `now`, unless a use under a minute ago is noted."""
        now = now_ms() if now is None else now
        with self._admin_write() as db:
            db.execute(
                self._sql(
                    "UPDATE api_keys SET last_used_at = ? WHERE key_hash = ? "
                    "AND (last_used_at IS NULL OR last_used_at <= ?)"
                ),
                (now, key_hash, now - KEY_USE_RESOLUTION_MS),
            )

    # -- projects ------------------------------------------------------------------------------

    def update_project(self, row: ProjectRow) -> None:
        """Store the project's name, description and retention as `row` has them; NameTaken
        (nothing stored) if another project has its name. The look and the write are one
        transaction, with project writes held off meanwhile, so two racing renames never both
        take one name."""
        with self._admin_write() as db:
            self._hold_project_writes(db)
            other = db.execute(
                self._sql("SELECT 1 FROM projects WHERE name = ? AND id <> ?"), (row.name, row.id)
            ).fetchone()
            if other is not None:
                raise NameTaken(row.name)
            db.execute(
                self._sql(
                    "UPDATE projects SET name = ?, description = ?, retention_days = ? WHERE id = ?"
                ),
                (row.name, row.description, row.retention_days, row.id),
            )

    def _hold_project_writes(self, db: Any) -> None:
        """Hold off other writes of the projects table until this transaction ends. SQLite's
        write transaction already excludes every other writer; PostgreSQL takes a lock that
        only other writers of the table wait on (readers never do)."""
        if self.PLACEHOLDER != "?":
            db.execute("LOCK TABLE projects IN SHARE ROW EXCLUSIVE MODE")

    def count_traces_ending_before(self, project_id: str, cutoff: int) -> int:
        """How many of the project's traces have their newest span ending before `cutoff`:
        those a retention starting at `cutoff` deletes."""
        with self._admin_read() as db:
            row = db.execute(
                self._sql(
                    "SELECT count(*) FROM traces WHERE project_id = ? AND started_at < ? "
                    "AND started_at + duration_ms < ?"
                ),
                (project_id, cutoff, cutoff),
            ).fetchone()
        return int(row[0])

    def delete_project(self, project_id: str) -> bool:
        """Delete the project with its traces, spans, alerts (their secrets, states, events
        and webhooks), keys and the answers remembered for its keys, in one transaction; True
        if there was one."""
        alerts = "SELECT id FROM alerts WHERE project_id = ?"
        keys = "SELECT key_hash FROM api_keys WHERE project_id = ?"
        statements = [
            "DELETE FROM spans WHERE project_id = ?",
            "DELETE FROM traces WHERE project_id = ?",
            *(f"DELETE FROM {table} WHERE alert_id IN ({alerts})" for table in ALERT_CHILDREN),
            "DELETE FROM alerts WHERE project_id = ?",
            f"DELETE FROM idempotency WHERE key_hash IN ({keys})",
            "DELETE FROM api_keys WHERE project_id = ?",
        ]
        with self._admin_write() as db:
            for statement in statements:
                db.execute(self._sql(statement), (project_id,))
            gone = db.execute(self._sql("DELETE FROM projects WHERE id = ?"), (project_id,))
        return bool(gone.rowcount)

    # -- alerts ----------------------------------------------------------------------------------

    def update_alert(self, row: AlertRow) -> None:
        """Store every field of `row` but its id, project and creation time."""
        with self._admin_write() as db:
            db.execute(
                self._sql(
                    "UPDATE alerts SET name = ?, metric = ?, condition = ?, threshold = ?, "
                    "webhook_url = ?, paused = ?, muted_until = ? WHERE id = ?"
                ),
                (
                    row.name,
                    row.metric,
                    row.condition,
                    row.threshold,
                    row.webhook_url,
                    bool(row.paused),
                    row.muted_until,
                    row.id,
                ),
            )

    def delete_alert(self, alert_id: str) -> bool:
        """Delete the alert with its secret, state, events and webhooks (pending ones too: a
        deleted alert sends nothing more); True if there was one."""
        with self._admin_write() as db:
            for table in ALERT_CHILDREN:
                db.execute(self._sql(f"DELETE FROM {table} WHERE alert_id = ?"), (alert_id,))
            gone = db.execute(self._sql("DELETE FROM alerts WHERE id = ?"), (alert_id,))
        return bool(gone.rowcount)

    def rotate_secret(self, alert_id: str, secret: str, previous_valid_until: int) -> bool:
        """Make `secret` the alert's signing secret; the one it replaces still signs until
        `previous_valid_until` (a secret replaced before, still in its grace, stops now).
        True if the alert had a secret."""
        with self._admin_write() as db:
            done = db.execute(
                self._sql(
                    "UPDATE alert_secrets SET previous_secret = secret, "
                    "previous_valid_until = ?, secret = ? WHERE alert_id = ?"
                ),
                (previous_valid_until, secret, alert_id),
            )
        return bool(done.rowcount)

    # -- answers remembered per Idempotency-Key -------------------------------------------------

    def recall_response(self, key_hash: str, idempotency_key: str) -> Remembered | None:
        """The answer remembered for this key's Idempotency-Key, if any."""
        with self._admin_read() as db:
            row = db.execute(
                self._sql(
                    "SELECT request_hash, status, body FROM idempotency "
                    "WHERE key_hash = ? AND idempotency_key = ?"
                ),
                (key_hash, idempotency_key),
            ).fetchone()
        return None if row is None else Remembered(row[0], row[1], json.loads(row[2]))

    def keep_response(
        self, key_hash: str, idempotency_key: str, request_hash: str, status: int, body: object
    ) -> None:
        """Remember an answer for this key's Idempotency-Key (the first one stays)."""
        with self._admin_write() as db:
            db.execute(
                self._sql(
                    "INSERT INTO idempotency (key_hash, idempotency_key, request_hash, status, "
                    "body, created_at) VALUES (?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (key_hash, idempotency_key) DO NOTHING"
                ),
                (key_hash, idempotency_key, request_hash, status, json.dumps(body), now_ms()),
            )
