"""Which store a `--db` value names, and how to show a database URL without its password.

A value that starts with `postgresql://` or `postgres://` (libpq's URL forms, a Unix socket
given as `?host=/dir` included) names a PostgreSQL database; anything else is the path of a
SQLite file. A URL may carry a password: whatever is printed, logged or put in an error goes
through `redacted` first.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

POSTGRES_SCHEMES = ("postgresql", "postgres")
HIDDEN = "***"
# Query parameters of a libpq URL that may hold a secret (the password, and the client key's
# passphrase).
SECRET_PARAMETERS = frozenset({"password", "sslpassword"})


def is_postgres(database: str) -> bool:
    """True when `database` is a PostgreSQL URL rather than a SQLite file's path."""
    scheme, _, rest = database.partition("://")
    return bool(rest) and scheme.lower() in POSTGRES_SCHEMES


def redacted(database: str) -> str:
    """`database` as it may be shown: a URL's password (in its user part or its query) replaced
    by ***; a path as it is. A URL that cannot be parsed is shown as its scheme only."""
    if not is_postgres(database):
        return database
    try:
        parts = urlsplit(database)
        netloc = parts.netloc
        if "@" in netloc:
            user, _, host = netloc.rpartition("@")
            if ":" in user:
                user = f"{user.split(':', 1)[0]}:{HIDDEN}"
            netloc = f"{user}@{host}"
        query = urlencode(
            [
                (name, HIDDEN if name.lower() in SECRET_PARAMETERS else value)
                for name, value in parse_qsl(parts.query, keep_blank_values=True)
            ],
            safe="/*",
        )
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:
        return f"{database.partition('://')[0]}://{HIDDEN}"
