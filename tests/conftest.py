"""Shared fixtures: the local service on a free loopback port over a small demo database."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support.service import RunningService, start_service, wait_for


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningService]:
    """One service for the session; tests that write make their own projects."""
    running = start_service(tmp_path_factory.mktemp("service") / "demo.sqlite3")
    yield running
    running.service.stop()


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
