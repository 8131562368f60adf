"""The one migration runner of both stores; each store keeps its schema's versions and its
version in its own way (`Schema`: SQLite's PRAGMA user_version, PostgreSQL's version table).

A store's MIGRATIONS are ordered: migration N brings a database from version N-1 to N. Each
runs in one transaction that also records its version, under the store's migration lock:
several processes (replicas) opening one database at once queue on the lock, and each reads the
version again once it holds it, so the schema is migrated once, and a failed migration leaves
the database as it was. A database at a version newer than the code knows is refused
(SchemaTooNew): its tables may mean something this code would corrupt. Never edit a released
migration; append a new one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from tui.server.store.errors import SchemaTooNew


@dataclass(frozen=True)
class Migration:
    version: int
    summary: str
    sql: str  # statements (none or more); no transaction control (the runner owns it)
    # Then, in the same transaction, what SQL cannot do (Python's case folding of stored
    # texts): called with the store's connection.
    rewrite: Callable[[Any], None] | None = None


class Schema(Protocol):
    """Where a database keeps its schema's version, and how a migration runs on it."""

    def version(self) -> int:
        """The database's version: 0 for a database no migration has run on."""
        ...

    def migrating(self) -> AbstractContextManager[None]:
        """A transaction holding the migration lock: committed at the end, undone whole on any
        error."""
        ...

    def statements(self, migration: Migration) -> Iterable[str]:
        """The statements of `migration`, one at a time."""
        ...

    def execute(self, statement: str) -> None: ...

    def rewrite(self, step: Callable[[Any], None]) -> None:
        """Run a migration's Python step on the connection (in its transaction)."""
        ...

    def record(self, migration: Migration) -> None:
        """Record that the database is at `migration`'s version (in its transaction)."""
        ...


def migrate(schema: Schema, location: str, migrations: Sequence[Migration]) -> int:
    """Bring the database up to the last of `migrations`; returns the version it was at.
    Raises SchemaTooNew, naming `location` (a path, or a URL without its password), for a
    database from a newer tracetui. A database at the latest version is only read."""
    latest = migrations[-1].version
    found = schema.version()
    refuse_newer(found, latest, location)
    for migration in migrations:
        if migration.version <= found:
            continue
        with schema.migrating():
            version = schema.version()  # another process may have got here first
            refuse_newer(version, latest, location)
            if version < migration.version:
                for statement in schema.statements(migration):
                    schema.execute(statement)
                if migration.rewrite is not None:
                    schema.rewrite(migration.rewrite)
                schema.record(migration)
    return found


def refuse_newer(version: int, latest: int, location: str) -> None:
    if version > latest:
        raise SchemaTooNew(
            f"The database {location} has schema version {version}, but this tracetui knows "
            f"versions up to {latest} only: it was written by a newer tracetui. Upgrade "
            "tracetui, or use another database."
        )
