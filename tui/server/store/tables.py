"""What the statements written once need of a store: its dialect, its connections, and the
places where the two stores take locks.

Each store (sqlite.store.Store, postgres.store.PostgresStore) is the tables' mixins (traces,
keys, admin, alerts, logs, search, annotations) over this base, which it fills in. A connection
is a DB-API one (sqlite3's, psycopg's): `execute(sql, args)` returns a cursor that is iterated
or read with fetchone / fetchall, and tells its rowcount.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from tui.server.store.dialect import Dialect

PROJECTS_KEPT = "SELECT id FROM projects WHERE id = ANY(?)"


class Tables:
    """A store's connections and locks, as the shared tables' code uses them."""

    # A class's own, but for a PostgreSQL store whose text index is pg_trgm's (its instance's:
    # postgres.store.PostgresStore).
    dialect: Dialect

    def _read(self) -> AbstractContextManager[Any]:
        """A connection to read from: each statement sees the latest commits."""
        raise NotImplementedError

    def _write(self) -> AbstractContextManager[Any]:
        """A write transaction, undone whole on any error; a store that cannot write now
        raises StoreBusy or StoreUnavailable."""
        raise NotImplementedError

    def _write_one(self) -> AbstractContextManager[Any]:
        """A connection for a write of one statement (atomic by itself): PostgreSQL runs it
        without a transaction around it, which costs two round trips more."""
        return self._write()

    def _sql(self, text: str) -> str:
        """A shared statement (`?` placeholders) as this store takes it."""
        return self.dialect.sql(text)

    def _execute_many(self, db: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """`sql` once per row of `rows`, in the caller's transaction."""
        raise NotImplementedError

    def _project_named(self, db: Any, name: str | None) -> str:
        """The project a resource names, made if there is none (traces.TraceTables)."""
        raise NotImplementedError

    # Where replicas on one database take turns (PostgreSQL, by advisory locks); a SQLite
    # write transaction already excludes every other writer, so there these do nothing.

    def _lock_traces(self, db: Any, traces: Iterable[tuple[str, str]]) -> None:
        """Hold off other writers of these (project_id, trace_id) traces until the
        transaction ends."""

    def _lock_project_name(self, db: Any, name: str) -> None:
        """Hold off others making a project of this name until the transaction ends."""

    def _lock_idempotency_key(self, db: Any, key_hash: str, idempotency_key: str) -> None:
        """Hold off others using this key's Idempotency-Key until the transaction ends."""

    def _lock_sessions(self, db: Any, sessions: Iterable[tuple[str, str]]) -> None:
        """Hold off other annotation writes on these (project_id, session_id) sessions until
        the transaction ends."""

    def _lock_project_alerts(self, db: Any, project_id: str) -> None:
        """Hold off others creating an alert in this project until the transaction ends."""

    def _lock_rounds(self, db: Any) -> None:
        """Hold off other alert rounds being stored until the transaction ends."""

    def _hold_project_writes(self, db: Any) -> None:
        """Hold off other writes of the projects table (never its readers) until the
        transaction ends."""

    def _hold_project(self, db: Any, project_id: str) -> None:
        """Hold off writers of this project's traces (ingest: _projects_kept) until the
        transaction ends, which deletes the project."""

    def _projects_kept(self, db: Any, project_ids: Iterable[str]) -> set[str]:
        """Which of these projects exist, kept from being deleted until the transaction ends:
        a deletion under way (_hold_project) is waited for, and a project it deleted is not
        among them."""
        ids = sorted(set(project_ids))
        if not ids:
            return set()
        rows = db.execute(self._sql(PROJECTS_KEPT), (self.dialect.values(ids),)).fetchall()
        return {str(row[0]) for row in rows}
