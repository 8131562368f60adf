"""`tracetui keys create|list|revoke` against a database a running service reads: a SQLite file
or a PostgreSQL URL (`fresh_database` gives each test one of each, in turn)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.otlp import new_span_id, new_trace_id, post, request, root_client, span
from tests.support.postgres import PostgresServer
from tests.support.serve import run_tracetui
from tui.cli import main
from tui.server.api_keys import hash_key
from tui.server.run import LocalService
from tui.server.store.opening import open_store


@contextmanager
def opened(database: str) -> Iterator[Any]:
    store: Any = open_store(database)
    try:
        yield store
    finally:
        store.close()


@pytest.fixture
def db(fresh_database: str) -> str:
    with opened(fresh_database) as store, store.transaction() as conn:
        store.insert_project(conn, "shop", None, 30, project_id="proj_shop")
        store.insert_project(conn, "docs", None, 30, project_id="proj_docs")
    return fresh_database


def keys(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui", "keys", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_create_prints_the_key_alone_and_it_works_for_its_project_only(db: str) -> None:
    made = keys("create", "--project", "proj_shop", "--label", "ci", "--db", str(db))
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    assert made.stdout == key + "\n" and key.startswith("tt_pk_")  # nothing else on stdout
    assert "shown this once" in made.stderr and key not in made.stderr
    with (
        opened(db) as store,
        LocalService(store) as service,
        root_client(service.base_url, key) as client,
    ):
        assert store.key_scope(key) is not None
        projects = client.get("/v1/projects").json()["data"]
        assert [p["id"] for p in projects] == ["proj_shop"]
        trace = new_trace_id()
        resource = {"tracetui.project": "proj_docs"}  # a project key ignores it
        assert post(client, request(span(trace, new_span_id()), resource=resource)).is_success
        assert client.get(f"/v1/traces/{trace.hex()}").json()["project_id"] == "proj_shop"


def test_list_shows_ids_projects_times_labels_never_keys(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["keys", "create", "--project", "proj_docs", "--db", str(db)]) == 0
    docs_key = capsys.readouterr().out.strip()
    assert main(["keys", "create", "--workspace", "--label", "ops\x1b[2J", "--db", str(db)]) == 0
    ws_key = capsys.readouterr().out.strip()
    assert main(["keys", "list", "--db", str(db)]) == 0
    listing = capsys.readouterr().out
    assert docs_key not in listing and ws_key not in listing
    assert hash_key(docs_key) not in listing  # not the whole hash either
    assert hash_key(docs_key)[:12] in listing and hash_key(ws_key)[:12] in listing
    assert "proj_docs" in listing and "(workspace)" in listing
    assert "\x1b" not in listing and "ops?[2J" in listing  # a label cannot drive the terminal
    assert "proj_docs key 20" in listing  # the default label: project and date


def test_revoke_by_id_prefix_or_label_takes_effect_at_once(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with opened(db) as store, LocalService(store) as service:
        made = []
        for label in ("a", "b", "twin", "twin"):
            assert (
                main(
                    ["keys", "create", "--project", "proj_shop", "--label", label, "--db", str(db)]
                )
                == 0
            )
            made.append(capsys.readouterr().out.strip())

        def status(key: str) -> int:
            with httpx.Client(headers={"Authorization": f"Bearer {key}"}) as client:
                return client.get(f"{service.base_url}/projects").status_code

        assert [status(k) for k in made] == [200, 200, 200, 200]
        assert main(["keys", "revoke", hash_key(made[0])[:8], "--db", str(db)]) == 0
        assert main(["keys", "revoke", "b", "--db", str(db)]) == 0
        assert status(made[0]) == 401 and status(made[1]) == 401 and status(made[2]) == 200
        capsys.readouterr()
        assert main(["keys", "revoke", "twin", "--db", str(db)]) == 2  # ambiguous: says which
        assert hash_key(made[2])[:12] in capsys.readouterr().err
        assert main(["keys", "revoke", "nobody", "--db", str(db)]) == 1
        assert status(made[2]) == 200 and status(made[3]) == 200


def test_mistakes_are_explained_not_tracebacks(tmp_path: Path, db: str) -> None:
    missing = keys("list", "--db", str(tmp_path / "nope.sqlite3"))
    assert missing.returncode == 2 and "no database" in missing.stderr
    assert not (tmp_path / "nope.sqlite3").exists()  # not created by looking
    unknown = keys("create", "--project", "proj_nope", "--db", str(db))
    assert unknown.returncode == 2 and "proj_shop" in unknown.stderr and unknown.stdout == ""
    both = keys("create", "--db", str(db))
    assert both.returncode == 2 and "Traceback" not in both.stderr


def test_an_unreachable_postgresql_is_one_line_without_its_password(
    postgres_server: PostgresServer,
) -> None:
    wrong = postgres_server.tcp_url("postgres").replace(
        postgres_server.password, "Wr0ng-Secret-Pass"
    )
    for url in (wrong, postgres_server.tcp_url("no_such_database")):
        refused = run_tracetui("keys", "list", "--db", url)
        assert refused.returncode == 2 and refused.stdout == ""
        assert refused.stderr.startswith("tracetui: ") and refused.stderr.count("\n") == 1
        assert "Traceback" not in refused.stderr
        for secret in (postgres_server.password, "Wr0ng-Secret-Pass"):
            assert secret not in refused.stderr
