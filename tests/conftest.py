"""Shared fixtures: the local service on a free loopback port over a small demo database, and
the tests' PostgreSQL (one server per test process, a fresh database per module).

`backend_service` runs a module's API tests on both stores: a module that wants it names it
as its `service`:

    @pytest.fixture(scope="module")
    def service(backend_service: RunningService) -> RunningService:
        return backend_service
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.postgres import postgres_database_fixture, postgres_server_fixture
from tests.support.service import RunningService, start_service, wait_for

# The Phoenix virtualenv's build, started by the controlling process (pytest_sessionstart).
PHOENIX_BUILD = pytest.StashKey[subprocess.Popen[bytes]]()
EMITTERS_BUILD = pytest.StashKey[subprocess.Popen[bytes]]()  # the Python stacks' virtualenv

BACKENDS = ["sqlite", "postgres"]

# One PostgreSQL per test process (each xdist worker starts its own, once, when a test first
# asks for it), and an empty database of its own per module that asks for one: its URL over
# the server's Unix socket. The store's migrations run when a store opens it.
postgres_server = postgres_server_fixture()
postgres_db = postgres_database_fixture()


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningService]:
    """One service for the session; tests that write make their own projects."""
    running = start_service(tmp_path_factory.mktemp("service") / "demo.sqlite3")
    yield running
    running.service.stop()


@pytest.fixture(scope="module", params=BACKENDS)
def api_backend(request: pytest.FixtureRequest) -> str:
    """The store a module's API tests run on, each in turn: "sqlite", then "postgres"."""
    return str(request.param)


@pytest.fixture(scope="module")
def backend_service(api_backend: str, request: pytest.FixtureRequest) -> Iterator[RunningService]:
    """The session's SQLite `service`, or a service like it on this module's PostgreSQL
    database (its own demo data: tests that write make their own projects)."""
    if api_backend == "sqlite":
        yield request.getfixturevalue("service")
        return
    # A schema of its own: set up again (tests reordered), it starts empty all the same.
    running = start_service(new_schema(request.getfixturevalue("postgres_db")))
    try:
        yield running
    finally:
        running.service.stop()
        running.store.close()


@pytest.fixture
def fresh_database(api_backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database of this test's own on the module's backend: a SQLite file, or a new
    schema in the module's PostgreSQL database (its URL names the schema as the search path,
    so the store's tables are made there; milliseconds, where a database takes ~0.5 s)."""
    if api_backend == "sqlite":
        return str(tmp_path / "fresh.sqlite3")
    return new_schema(request.getfixturevalue("postgres_db"))


def new_schema(database_url: str) -> str:
    """`database_url` (a PostgreSQL URL with a query) with a new, empty schema as its search
    path."""
    import psycopg

    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}".encode())
    return f"{database_url}&options=-csearch_path%3D{schema}"


@pytest.fixture(scope="session")
def pooled_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningService]:
    """A service whose OTLP bodies are ingested by a worker process (ingest.processes), as
    `tracetui serve` does; returned once the worker is up."""
    running = start_service(
        tmp_path_factory.mktemp("pooled") / "demo.sqlite3", scale=0.02, ingest_processes=1
    )
    processes = running.service.app.state.ingest.processes
    wait_for(lambda: processes.ready, what="the ingest worker process")
    yield running
    running.service.stop()


@pytest.fixture
def api(service: RunningService) -> Iterator[httpx.Client]:
    with service.client() as client:
        yield client


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C and hang-ups reach what the tests start, whoever started the tests: a shell's
    background job (`make test &`, nohup, some CI runners) begins with SIGINT and SIGHUP
    ignored, every child inherits that, and the tests that stop `serve` with Ctrl-C or hang up
    the app's terminal would wait for a process that never hears them."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _selects_phoenix_tests(config: pytest.Config) -> bool:
    """Whether this run may collect tests/phoenix: no paths given (testpaths), or one that holds it."""
    paths = [arg.split("::")[0].rstrip("/") for arg in config.args if not arg.startswith("-")]
    return not paths or any(
        "tests/phoenix".startswith(path) or path.startswith("tests/phoenix")
        for path in (os.path.relpath(p, config.rootpath) for p in paths)
    )


def pytest_sessionstart(session: pytest.Session) -> None:
    """Start building the Phoenix virtualenv (a minute or more, once per machine) beside the
    first tests, in the controlling process only: the Phoenix tests wait for it on its file
    lock instead of building it while everything else waits."""
    config = session.config
    if hasattr(config, "workerinput"):
        return
    _start_emitters_build(config)
    if not _selects_phoenix_tests(config):
        return
    from tests.support.phoenix import is_built, venv_dir

    if is_built(venv_dir()):
        return
    config.stash[PHOENIX_BUILD] = subprocess.Popen(
        [sys.executable, "-c", "from tests.support.phoenix import ensure_venv; ensure_venv()"],
        cwd=config.rootpath,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _start_emitters_build(config: pytest.Config) -> None:
    """Start building the Python stacks' virtualenv (tests/support/emitters_venv.py, two to
    three minutes cold) the same way, when the run may collect tests/ingest/test_python_stacks*."""
    paths = [arg.split("::")[0].rstrip("/") for arg in config.args if not arg.startswith("-")]
    stacks = "tests/ingest/test_python_stacks"
    if paths and not any(
        stacks.startswith(path) or path.startswith(stacks)
        for path in (os.path.relpath(p, config.rootpath) for p in paths)
    ):
        return
    from tests.support.emitters_venv import is_built, venv_dir

    if is_built(venv_dir()):
        return
    config.stash[EMITTERS_BUILD] = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from tests.support.emitters_venv import ensure_venv; ensure_venv()",
        ],
        cwd=config.rootpath,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The builds started above end with the run (a run cut short leaves no pip behind; the
    next build starts over what it left)."""
    for key in (PHOENIX_BUILD, EMITTERS_BUILD):
        build = session.config.stash.get(key, None)
        if build is not None and build.poll() is None:
            build.terminate()
            build.wait(30)
