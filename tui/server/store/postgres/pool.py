"""Connections of the PostgreSQL store: a psycopg_pool.ConnectionPool, transactions, and what a
driver error means to the service.

The pool: `pool_size` connections at most (10 by default: a request holds one for a single
store call, 0.3-0.5 ms for most reads, so 10 serve far more concurrent requests), 2 kept open
when idle. Connections are in autocommit mode: a read is one round trip, and writes open a
transaction explicitly (`Connections.transaction`).

Each connection is checked when it is taken, without a round trip (`hung_up`): an idle
connection has nothing to read, so a socket that is readable (PostgreSQL restarted, or an
admin ended the session: the server said FATAL and closed it) is checked with an empty query,
which fails, and the pool replaces it. So after a restart no request fails on a connection of
before, and the pool reconnects by itself. What the look at the socket cannot see (a host
gone silent, a connection cut by a firewall without a word) fails the request's query
instead: that is StoreUnavailable (503 with Retry-After, which clients and exporters retry),
the broken connection is dropped by the pool when it is given back, and the next call gets
a new one. An empty query on every checkout (psycopg_pool's check_connection) would catch no
more of those (it would wait on the silent host just as long) and costs a round trip on every
store call: a request of the service makes three or four.

Errors, mapped at the edge of every store call (`Connections.guarded`):
- the server unreachable, restarting, shutting down (admin shutdown), or no connection free
  within POOL_WAIT_S: StoreUnavailable (the route answers 503 with Retry-After);
- a lock waited for past LOCK_TIMEOUT, a serialization failure or a deadlock: StoreBusy (503,
  retried sooner). The transaction is rolled back whole either way: nothing half-written.
Opening the store (`connect_once`) turns a refused first connection (server down, login
refused, no such database) into StoreUnreachable: one line naming the URL without its
password, and never the password itself.
"""

from __future__ import annotations

import select
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.abc import Buffer
from psycopg.conninfo import conninfo_to_dict
from psycopg.pq import TransactionStatus
from psycopg.types.string import StrDumperUnknown
from psycopg_pool import ConnectionPool, PoolTimeout

from tui.server.store.errors import StoreBusy, StoreUnavailable, StoreUnreachable
from tui.server.store.postgres.sql import CREATE_INGEST_TABLE
from tui.server.store.reads import ReadGuard
from tui.server.store.url import HIDDEN

Connection = psycopg.Connection[tuple[Any, ...]]

DEFAULT_POOL_SIZE = 10
MIN_IDLE_CONNECTIONS = 2
POOL_WAIT_S = 3.0  # a call waits this long for a connection, then answers 503
CONNECT_TIMEOUT_S = 5  # libpq's connect_timeout: a host that does not answer
LOCK_TIMEOUT = "5s"  # a lock (a trace being written by another replica) waited for at most
RECONNECT_TIMEOUT_S = 30.0  # the pool's reconnection attempts back off up to this long
# Once PostgreSQL was found unreachable, calls in the next second are refused at once (503)
# instead of each waiting POOL_WAIT_S for a connection: during an outage the service answers
# quickly and its threads are not all held waiting; a call after that tries again.
FAIL_FAST_S = 1.0

# SQLSTATEs of a transaction that lost a race or waited too long: try again shortly.
BUSY_STATES = frozenset(
    {
        "40001",  # serialization_failure
        "40P01",  # deadlock_detected
        "55P03",  # lock_not_available (lock_timeout)
        "57014",  # query_canceled (statement_timeout)
    }
)


def scrubbed(message: str, url: str) -> str:
    """`message` (a driver's) on one line, without the password `url` may hold."""
    line = " ".join(part.strip() for part in message.strip().splitlines() if part.strip())
    try:
        password = conninfo_to_dict(url).get("password")
    except psycopg.Error:
        password = None
    if password:
        line = line.replace(str(password), HIDDEN)
    return line


def refusal_of(error: psycopg.Error) -> StoreBusy | None:
    """The StoreBusy (or StoreUnavailable) a driver error means; None for any other error (a
    bug or bad data: it propagates as it is)."""
    if error.sqlstate in BUSY_STATES:
        return StoreBusy("PostgreSQL: the write waited too long for another writer")
    if isinstance(error, PoolTimeout):
        return StoreUnavailable("PostgreSQL: no connection could be had in time")
    if isinstance(error, (psycopg.OperationalError, psycopg.InterfaceError)):
        return StoreUnavailable("PostgreSQL is unreachable for now")
    return None


class NulFreeStrDumper(StrDumperUnknown):
    """Strings as psycopg sends them, with U+0000 (which PostgreSQL's text cannot hold, and
    SQLite's can) as U+FFFD: a name or an id carrying one is stored, or looked up and not
    found, as with SQLite, instead of failing the request. Parameters only: binary COPY keeps
    psycopg's own (C) dumper, and ingest cleans what it copies (ingest.without_nul)."""

    def dump(self, obj: str) -> Buffer | None:
        return super().dump(obj.replace("\x00", "\ufffd") if "\x00" in obj else obj)


def _configure(connection: Connection) -> None:
    """A new connection's session: strings without U+0000 (NulFreeStrDumper); lock_timeout, so a transaction waiting on another's lock
    gives up (StoreBusy) instead of holding a request for ever; and ingest's temporary table
    (sql.INGEST_TABLE), made once per session."""
    connection.adapters.register_dumper(str, NulFreeStrDumper)
    connection.execute(f"SET lock_timeout = '{LOCK_TIMEOUT}'")
    connection.execute(CREATE_INGEST_TABLE)


def hung_up(connection: Connection) -> None:
    """The pool's check of a connection it is about to give out (see the module's docstring):
    raises if the server has hung up on it; one poll of the socket, no round trip while the
    connection is idle as it should be."""
    socket = connection.pgconn.socket
    readable, _, _ = select.select([socket], [], [], 0)
    if readable:  # the server spoke first: a FATAL and EOF, or a message we never asked for
        ConnectionPool.check_connection(connection)


def connect_once(url: str, location: str) -> Connection:
    """One connection outside the pool (migrations run on it), or StoreUnreachable."""
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.Error as error:
        reason = scrubbed(str(error), url) or type(error).__name__
        raise StoreUnreachable(f"Cannot open the database {location}: {reason}") from None


class Connections:
    """The store's pool and the guarded ways to use it."""

    def __init__(self, url: str, pool_size: int = DEFAULT_POOL_SIZE) -> None:
        self.pool: ConnectionPool[Connection] = ConnectionPool(
            url,
            min_size=min(MIN_IDLE_CONNECTIONS, pool_size),
            max_size=pool_size,
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S},
            configure=_configure,
            check=hung_up,
            timeout=POOL_WAIT_S,
            reconnect_timeout=RECONNECT_TIMEOUT_S,
            name="tracetui",
            open=False,
        )
        self.pool.open(wait=False)
        self._unreachable_until = 0.0  # time.monotonic(): refused at once until then

    def close(self) -> None:
        self.pool.close()

    @contextmanager
    def guarded(self) -> Iterator[None]:
        """Driver errors that mean "not now" raised as StoreBusy / StoreUnavailable; for a
        second after PostgreSQL was found unreachable, StoreUnavailable at once."""
        if time.monotonic() < self._unreachable_until:
            raise StoreUnavailable("PostgreSQL is unreachable for now")
        try:
            yield
        except psycopg.Error as error:
            refusal = refusal_of(error)
            if refusal is None:
                raise
            if isinstance(refusal, StoreUnavailable):
                self._unreachable_until = time.monotonic() + FAIL_FAST_S
            raise refusal from None

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        """A connection for reads (autocommit: each statement sees the latest commits)."""
        with self.guarded(), self.pool.connection() as connection:
            yield connection

    @contextmanager
    def bounded(self, guard: ReadGuard) -> Iterator[Connection]:
        """A connection for reads within `guard` (reads.py): a read-only transaction whose
        statements time out with what is left of its budget, and which `guard.cancel` cancels;
        either raises QueryStopped. A connection a cancel was sent on is closed, not reused."""
        with self.guarded(), self.pool.connection() as connection:
            # One round trip for all three (the simple protocol takes several statements). A
            # lock (a migration's) is waited for within the budget too, not for LOCK_TIMEOUT.
            budget_ms = guard.remaining_ms()
            connection.execute(
                f"BEGIN READ ONLY; SET LOCAL statement_timeout = {budget_ms};"
                f" SET LOCAL lock_timeout = {budget_ms}".encode()
            )
            try:
                with guard.watching(connection.cancel_safe):
                    if guard.cancelled:  # before it could be sent a cancel
                        raise guard.error()
                    yield connection
                connection.execute(b"COMMIT")
            except (psycopg.errors.QueryCanceled, psycopg.errors.LockNotAvailable):
                connection.execute(b"ROLLBACK")
                raise guard.error() from None
            except BaseException:
                if connection.info.transaction_status != TransactionStatus.IDLE:
                    connection.execute(b"ROLLBACK")
                raise
            finally:
                if guard.cancel_sent:
                    connection.close()  # the pool drops it and opens another

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """A connection in a transaction, committed at the end, rolled back whole on any error."""
        with self.guarded(), self.pool.connection() as connection, connection.transaction():
            yield connection

    @contextmanager
    def snapshot(self) -> Iterator[Connection]:
        """A read-only transaction whose queries all see one state of the database."""
        with self.guarded(), self.pool.connection() as connection, connection.transaction():
            connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            yield connection
