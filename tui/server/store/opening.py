"""Opening the store a `--db` value names: a PostgreSQL URL opens the PostgreSQL store, anything
else (a file's path) the SQLite one. `tracetui serve` and `tracetui keys` open their database
here and nowhere else.

The PostgreSQL store is imported only when a URL asks for it: psycopg is an optional
dependency (`pip install 'tracetui[postgres]'`), and SQLite users never load it.
"""

from __future__ import annotations

from tui.server.store.errors import StoreUnreachable
from tui.server.store.protocol import TraceStore
from tui.server.store.url import is_postgres, redacted

POSTGRES_EXTRA = "pip install 'tracetui[postgres]'"


def open_store(database: str, *, pool_size: int | None = None) -> TraceStore:
    """The store at `database`: a PostgreSQL URL (postgresql://...; at most `pool_size`
    connections, the store's default if None) or a SQLite file's path.

    Raises StoreUnreachable (one line, no password) when a PostgreSQL database cannot be
    reached or psycopg is not installed, SchemaTooNew when the database is newer than this
    tracetui."""
    if not is_postgres(database):
        from tui.server.store.sqlite.store import Store

        return Store(database)
    try:
        from tui.server.store.postgres.store import PostgresStore
    except ImportError:
        raise StoreUnreachable(
            f"Cannot open the database {redacted(database)}: PostgreSQL support is not "
            f"installed ({POSTGRES_EXTRA})"
        ) from None
    if pool_size is None:
        return PostgresStore(database)
    return PostgresStore(database, pool_size=pool_size)
