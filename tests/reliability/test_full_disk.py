"""A full disk, for real: the store on a small tmpfs that the test fills. Every write is refused
with 503 and Retry-After (the API's JSON writes and OTLP ingest, which exporters then retry),
reads go on, nothing half-written is counted, and the service writes again by itself once there
is room. Mounting needs root, which is how `make test` runs in CI."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.otlp import new_span_id, new_trace_id, post, request, root_client, span
from tests.support.service import local_service, wait_for
from tui.server.api_keys import new_api_key
from tui.server.store.sqlite.store import Store


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0:
        pytest.skip(
            "LOUD: mounting a small tmpfs needs root; run as root (as CI does) to test a full disk"
        )
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(disk)], check=True)
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def fill(disk: Path) -> Path:
    """Writes a file until the filesystem has no room left, to the last byte; returns it."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        for size in (65536, 4096, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)
    return filler


def one_trace(name: str) -> bytes:
    trace_id = new_trace_id()
    return request(span(trace_id, new_span_id(), name=name)).SerializeToString()


@pytest.mark.parametrize("processes", [0, 1], ids=["threads", "worker process"])
def test_a_full_disk_refuses_writes_with_503_keeps_reads_and_recovers(
    small_disk: Path, processes: int
) -> None:
    store = Store(small_disk / "full.sqlite3")
    key = new_api_key("ws")
    store.add_key(key, None, "workspace key")
    with local_service(store, ingest_processes=processes) as service:
        pool = service.app.state.ingest.processes
        wait_for(lambda: processes == 0 or pool.ready, what="the ingest worker")
        api = httpx.Client(
            base_url=service.base_url + "/", headers={"Authorization": f"Bearer {key}"}, timeout=30
        )
        otlp = root_client(service.base_url, key)
        assert api.post("projects", json={"name": "before"}).status_code == 201
        assert (
            otlp.post("/v1/traces", content=one_trace("stored"), headers=PROTOBUF).status_code
            == 200
        )

        # The log emptied first: a write that fits in log space already on disk needs no room.
        with sqlite3.connect(small_disk / "full.sqlite3") as db:
            assert db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
        filler = fill(small_disk)
        refused = api.post("projects", json={"name": "while full"})
        assert refused.status_code == 503, refused.text
        assert int(refused.headers["Retry-After"]) >= 1
        assert refused.json()["error"]["code"] == "unavailable"
        big = request(*[span(new_trace_id(), new_span_id(), name="lost?") for _ in range(200)])
        ingest = post(otlp, big)
        assert ingest.status_code == 503, ingest.status_code
        assert int(ingest.headers["Retry-After"]) >= 1

        listed = api.get("projects")  # reads go on
        assert listed.status_code == 200
        names = {p["name"] for p in listed.json()["data"]}
        assert "before" in names and "while full" not in names

        filler.unlink()  # room again: the service writes by itself, no restart
        assert api.post("projects", json={"name": "after"}).status_code == 201
        assert post(otlp, big).status_code == 200
        names = {p["name"] for p in api.get("projects").json()["data"]}
        assert "after" in names and "while full" not in names
    # Nothing half-written: the refused batch's 200 spans came in once, when it was accepted.
    assert store.count("spans") == 1 + 200


PROTOBUF = {"Content-Type": "application/x-protobuf"}
