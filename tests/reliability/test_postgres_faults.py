"""`tracetui serve` on PostgreSQL when PostgreSQL fails: a server that is down or refuses the
password stops the start with one clear line (never the password), and a PostgreSQL that stops
and comes back under a running service makes requests answer 503 with Retry-After meanwhile,
after which the service answers again by itself, without a restart, and keeps every span it
acknowledged."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest

from tests.support.otlp import new_span_id, new_trace_id, post, request, root_client, span
from tests.support.postgres import PostgresServer
from tests.support.serve import run_tracetui, serving
from tests.support.service import wait_for

WRONG_PASSWORD = "Not-The-Right-0ne"


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def refused_start(database: str) -> str:
    """What `tracetui serve --db DATABASE` printed on stderr when it refused to start."""
    result = run_tracetui("serve", "--db", database, "--port", "0")
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert result.stdout == ""
    assert result.stderr.startswith("tracetui: Cannot open the database ")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    return result.stderr


def test_serve_with_postgresql_down_exits_with_one_line(tmp_path: object) -> None:
    port = closed_port()
    over_tcp = refused_start(f"postgresql://tracetui:{WRONG_PASSWORD}@127.0.0.1:{port}/traces")
    assert f"127.0.0.1:{port}" in over_tcp and WRONG_PASSWORD not in over_tcp
    over_socket = refused_start("postgresql://tracetui@/traces?host=/nonexistent/pg&port=5432")
    assert "/nonexistent/pg" in over_socket


def test_serve_with_a_wrong_password_exits_with_one_line(
    postgres_server: PostgresServer,
) -> None:
    url = postgres_server.tcp_url("postgres")
    refused = refused_start(url.replace(postgres_server.password, WRONG_PASSWORD))
    assert "password authentication failed" in refused
    assert WRONG_PASSWORD not in refused and postgres_server.password not in refused


@pytest.fixture
def restartable(postgres_server: PostgresServer) -> Iterator[PostgresServer]:
    """The session's PostgreSQL, running again after the test whatever it did to it."""
    yield postgres_server
    if not postgres_server.running:
        postgres_server.start()


def answered(client: httpx.Client, path: str) -> httpx.Response | None:
    try:
        return client.get(path)
    except httpx.TransportError:
        return None


def test_postgresql_restarting_under_serve_is_503_then_recovers_by_itself(
    restartable: PostgresServer, postgres_db: str
) -> None:
    with serving(postgres_db, "--ingest-processes", "1") as served:
        key = served.key
        assert key
        with root_client(served.otlp_endpoint, key) as client:
            project = client.post("/v1/projects", json={"name": "restarts"}).json()["id"]
            resource = {"tracetui.project": project}
            before, during = new_trace_id(), new_trace_id()
            assert post(client, request(span(before, new_span_id()), resource=resource)).is_success

            restartable.stop("fast")
            listing = answered(client, "/v1/projects")
            assert listing is not None and listing.status_code == 503, listing
            assert listing.headers.get("retry-after", "").isdigit()
            refused = post(client, request(span(during, new_span_id()), resource=resource))
            assert refused.status_code == 503 and refused.headers["retry-after"].isdigit()

            restartable.start()
            wait_for(
                lambda: (
                    (r := answered(client, "/v1/projects")) is not None and r.status_code == 200
                ),
                what="the service to answer again after PostgreSQL came back",
            )
            # The exporter's retry of the refused span is taken now, through the worker too.
            wait_for(
                lambda: (
                    post(client, request(span(during, new_span_id()), resource=resource)).is_success
                ),
                what="the ingest worker to write again",
            )
            for trace in (before, during):
                found = client.get(f"/v1/traces/{trace.hex()}")
                assert found.status_code == 200, found.text

            # A crash (immediate shutdown): the pool's connections are broken, not closed.
            restartable.restart("immediate")
            wait_for(
                lambda: (
                    (r := answered(client, "/v1/projects")) is not None and r.status_code == 200
                ),
                what="the service to answer again after PostgreSQL crashed and restarted",
            )
            assert client.get(f"/v1/traces/{before.hex()}").status_code == 200
        assert served.interrupt() == 0
        errors = served.errors()
        assert "Traceback" not in errors, errors
