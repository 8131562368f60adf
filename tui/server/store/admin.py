"""Running a project through the API, on both stores: projects changed and deleted with
everything of theirs, alerts changed, deleted and given a new secret.

Each change takes the `reply` to remember for its Idempotency-Key (None without one), stored in
the change's own transaction after the key's lock and look-up (keys.answered_before): repeats
that race the first apply nothing and get its answer (AlreadyAnswered), on either store and
across replicas."""

from __future__ import annotations

from tui.server.store.alert_rows import AlertRow
from tui.server.store.errors import NameTaken
from tui.server.store.keys import answered_before, remember
from tui.server.store.rows import ProjectRow, Reply
from tui.server.store.tables import Tables

ALERT_CHILDREN = ("alert_events", "webhook_deliveries", "alert_states", "alert_secrets")


class AdminTables(Tables):
    """Project and alert changes over the store's connections."""

    # -- projects ------------------------------------------------------------------------------

    def update_project(self, row: ProjectRow, reply: Reply | None = None) -> None:
        """Store the project's name, description and retention as `row` has them; NameTaken
        (nothing stored) if another project has its name. The look and the write are one
        transaction, with project writes held off meanwhile, so two racing renames never both
        take one name."""
        with self._write() as db:
            answered_before(self, db, reply)
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
            remember(self, db, reply)

    def count_traces_ending_before(self, project_id: str, cutoff: int) -> int:
        """How many of the project's traces have their newest span ending before `cutoff`:
        those a retention starting at `cutoff` deletes."""
        with self._read() as db:
            row = db.execute(
                self._sql(
                    "SELECT count(*) FROM traces WHERE project_id = ? AND started_at < ? "
                    "AND started_at + duration_ms < ?"
                ),
                (project_id, cutoff, cutoff),
            ).fetchone()
        return int(row[0])

    def delete_project(self, project_id: str, reply: Reply | None = None) -> bool:
        """Delete the project with its traces, spans, annotations, alerts (their secrets, states, events
        and webhooks), keys and the answers remembered for its keys, in one transaction; True
        if there was one. The project is held first: an ingest writing to it commits before
        (and what it wrote is deleted here) or waits and then writes nothing (_projects_kept)."""
        alerts = "SELECT id FROM alerts WHERE project_id = ?"
        keys = "SELECT key_hash FROM api_keys WHERE project_id = ?"
        statements = [
            "DELETE FROM annotations WHERE project_id = ?",
            "DELETE FROM spans WHERE project_id = ?",
            "DELETE FROM traces WHERE project_id = ?",
            *(f"DELETE FROM {table} WHERE alert_id IN ({alerts})" for table in ALERT_CHILDREN),
            "DELETE FROM alerts WHERE project_id = ?",
            f"DELETE FROM idempotency WHERE key_hash IN ({keys})",
            "DELETE FROM api_keys WHERE project_id = ?",
        ]
        with self._write() as db:
            answered_before(self, db, reply)
            self._hold_project(db, project_id)
            for statement in statements:
                db.execute(self._sql(statement), (project_id,))
            gone = db.execute(self._sql("DELETE FROM projects WHERE id = ?"), (project_id,))
            if gone.rowcount:
                remember(self, db, reply)
        return bool(gone.rowcount)

    # -- alerts ----------------------------------------------------------------------------------

    def update_alert(self, row: AlertRow, reply: Reply | None = None) -> None:
        """Store every field of `row` but its id, project and creation time."""
        with self._write() as db:
            answered_before(self, db, reply)
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
            remember(self, db, reply)

    def delete_alert(self, alert_id: str, reply: Reply | None = None) -> bool:
        """Delete the alert with its secret, state, events and webhooks (pending ones too: a
        deleted alert sends nothing more); True if there was one."""
        with self._write() as db:
            answered_before(self, db, reply)
            for table in ALERT_CHILDREN:
                db.execute(self._sql(f"DELETE FROM {table} WHERE alert_id = ?"), (alert_id,))
            gone = db.execute(self._sql("DELETE FROM alerts WHERE id = ?"), (alert_id,))
            if gone.rowcount:
                remember(self, db, reply)
        return bool(gone.rowcount)

    def rotate_secret(
        self, alert_id: str, secret: str, previous_valid_until: int, reply: Reply | None = None
    ) -> bool:
        """Make `secret` the alert's signing secret; the one it replaces still signs until
        `previous_valid_until` (a secret replaced before, still in its grace, stops now).
        True if the alert had a secret."""
        with self._write() as db:
            answered_before(self, db, reply)
            done = db.execute(
                self._sql(
                    "UPDATE alert_secrets SET previous_secret = secret, "
                    "previous_valid_until = ?, secret = ? WHERE alert_id = ?"
                ),
                (previous_valid_until, secret, alert_id),
            )
            if done.rowcount:
                remember(self, db, reply)
        return bool(done.rowcount)
