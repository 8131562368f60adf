"""`tracetui serve` as a user runs it: it answers until Ctrl-C, then stops cleanly, on a SQLite
file or a PostgreSQL database; a PostgreSQL password never shows in anything it prints."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx

from tests.support.otlp import new_span_id, new_trace_id, post, request, root_client, span
from tests.support.postgres import PostgresServer
from tests.support.serve import run_tracetui, serving
from tests.support.service import wait_for

WRONG_PASSWORD = "Not-The-Right-0ne"


def test_serve_answers_until_interrupted_then_exits_cleanly(fresh_database: str) -> None:
    with serving(fresh_database) as served:
        key, url = served.key, served.base_url  # a new database: its key is printed once
        assert key, "serve printed no key"
        response = httpx.get(f"{url}/projects", headers={"Authorization": f"Bearer {key}"})
        assert response.status_code == 200 and response.json() == {"data": []}
        assert served.interrupt() == 0
        assert "Traceback" not in served.errors()


def test_sigusr1_writes_every_threads_stack_and_serve_goes_on(tmp_path: Path) -> None:
    """What a service that will not stop is doing: its threads' stacks on stderr, on demand."""
    with serving(tmp_path / "stacks.sqlite3") as served:
        served.send(signal.SIGUSR1)
        # "Current thread 0x…" first, then "Thread 0x…" for each other thread, if any yet.
        wait_for(lambda: "(most recent call first)" in served.stderr.text(), what="the stacks")
        assert "serve" in served.stderr.text()  # the main thread, in tui/server/run.py
        response = httpx.get(
            f"{served.base_url}/projects", headers={"Authorization": f"Bearer {served.key}"}
        )
        assert response.status_code == 200
        assert served.interrupt() == 0


def test_a_postgresql_password_never_shows_in_what_serve_prints(
    postgres_server: PostgresServer, postgres_db: str
) -> None:
    """The deployed form, over TCP with a password: given by TRACETUI_DB, then by --db (the
    banner's hints must not echo it either way), then wrong (a refused start)."""
    database = postgres_db.split("?")[0].rsplit("/", 1)[1]
    url = postgres_server.tcp_url(database)
    password = postgres_server.password
    printed = []
    with serving(None, env={"TRACETUI_DB": url}) as served:
        key = served.key
        assert key, "serve printed no key for a new database"
        assert f"tracetui:***@127.0.0.1:{postgres_server.port}/{database}" in "".join(served.banner)
        with root_client(served.otlp_endpoint, key) as client:
            # Through an ingest worker process, which opens the database by itself.
            project = client.post("/v1/projects", json={"name": "secretive"}).json()["id"]
            trace = new_trace_id()
            resource = {"tracetui.project": project}
            assert post(client, request(span(trace, new_span_id()), resource=resource)).is_success
            wait_for(
                lambda: client.get(f"/v1/traces/{trace.hex()}").status_code == 200,
                what="the span sent to be readable",
            )
        assert served.interrupt() == 0
        printed.append(served.stdout.text() + served.errors())
    # A database with a key already: serve hints how to make one, without the password.
    with serving(url) as served:
        assert served.key is None
        hint = "".join(served.banner)
        assert "keys create --workspace" in hint and "TRACETUI_DB" in hint
        # Answering: serve is past its start, where Ctrl-C stops it cleanly.
        assert httpx.get(f"{served.base_url}/projects").status_code == 401
        assert served.interrupt() == 0
        printed.append(served.stdout.text() + served.errors())
    refused = run_tracetui("serve", "--db", url.replace(password, WRONG_PASSWORD), "--port", "0")
    assert refused.returncode != 0
    assert "password authentication failed" in refused.stderr
    printed.append(refused.stdout + refused.stderr)
    for output in printed:
        assert password not in output and WRONG_PASSWORD not in output, output
        assert "Traceback" not in output, output


def test_the_demo_listens_on_loopback_only(tmp_path: Path) -> None:
    """The demo's keys are the same in every demo: never offered to other machines."""
    every_interface = "0.0.0.0"  # noqa: S104 - refused before anything listens
    done = run_tracetui(
        "serve", "--demo", "--host", every_interface, "--db", str(tmp_path / "d.db")
    )
    assert done.returncode == 2 and "loopback only" in done.stderr, done.stderr
    assert not (tmp_path / "d.db").exists()


def test_the_demo_never_fills_a_postgresql_database_that_holds_other_data(
    postgres_db: str,
) -> None:
    from tui.server.store.opening import open_store

    store = open_store(postgres_db)
    try:
        with store.transaction() as db:
            store.insert_project(db, "team data", None, 30)
    finally:
        store.close()
    done = run_tracetui("serve", "--demo", "--db", postgres_db)
    assert done.returncode == 2 and "holds other data" in done.stderr, done.stderr
