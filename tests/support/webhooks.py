"""A real webhook receiver on loopback for the alert tests, and the clock and data they share.

The receiver is an HTTP server in a thread. It records every request it gets and verifies each
with the `standardwebhooks` package (someone else's implementation of the spec the service
signs by) when it knows the alert's secret. What it answers is scripted: a list of statuses
taken one per request (then 204), or a misbehaviour: hang, redirect, or a 10 MB answer.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from standardwebhooks import Webhook

from tests.support.service import local_service
from tui.server.run import LocalService
from tui.server.store.rows import TraceRow, now_ms
from tui.server.store.sqlite.store import Store

MINUTE = 60_000
HOUR = 60 * MINUTE
WORKSPACE_KEY = "tt_ws_alert_tests"


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def event(self) -> dict[str, Any]:
        parsed: dict[str, Any] = json.loads(self.body)
        return parsed

    @property
    def webhook_id(self) -> str:
        return self.headers["webhook-id"]


@dataclass
class Receiver:
    """Scripted: `statuses` are answered first, one per request; `mode` then decides."""

    statuses: list[int] = field(default_factory=list)
    mode: str = "ok"  # ok, hang, redirect, huge
    received: list[Received] = field(default_factory=list)
    secrets: dict[str, str] = field(default_factory=dict)  # alert id -> whsec_
    huge_sent_whole: bool | None = None
    release: threading.Event = field(default_factory=threading.Event)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/hooks/alerts"

    def verified(self) -> list[dict[str, Any]]:
        """Every event received, each verified with standardwebhooks against its alert's
        secret (raises WebhookVerificationError if one does not verify)."""
        events = []
        for item in list(self.received):
            alert_id = item.event["data"]["alert"]["id"]
            events.append(Webhook(self.secrets[alert_id]).verify(item.body, item.headers))
        return events

    def types(self) -> list[str]:
        return [event["type"] for event in self.verified()]

    def wait_for(self, count: int, seconds: float = 30.0) -> list[Received]:
        deadline = time.monotonic() + seconds
        while len(self.received) < count:
            assert time.monotonic() < deadline, f"got {len(self.received)} of {count} webhooks"
            time.sleep(0.01)
        return list(self.received)


def handler_for(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            body = self.rfile.read(length)
            headers = {k.lower(): v for k, v in self.headers.items()}
            receiver.received.append(Received(self.path, headers, body))
            if receiver.statuses:
                self.answer(receiver.statuses.pop(0))
            elif receiver.mode == "hang":
                receiver.release.wait(30)
            elif receiver.mode == "redirect":
                self.send_response(307)
                self.send_header("Location", receiver.url.replace("/hooks/", "/elsewhere/"))
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif receiver.mode == "huge":
                self.send_huge()
            else:
                self.answer(204)

        def answer(self, status: int) -> None:
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def send_huge(self, size: int = 10 * 1024 * 1024) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            chunk = b"x" * 65536
            try:
                for _ in range(size // len(chunk)):
                    self.wfile.write(chunk)
                self.wfile.flush()
                receiver.huge_sent_whole = True
            except OSError:
                receiver.huge_sent_whole = False

    return Handler


@contextmanager
def receiving(**script: Any) -> Iterator[Receiver]:
    receiver = Receiver(**script)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(receiver))
    server.daemon_threads = True
    receiver.server = server
    thread = threading.Thread(target=server.serve_forever, name="test-receiver", daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        receiver.release.set()
        server.shutdown()
        server.server_close()


class Clock:
    """The service's clock, moved by the test (epoch ms)."""

    def __init__(self, start: int | None = None) -> None:
        # A whole minute, so windows in the tests are easy to read.
        self.now = (start if start is not None else now_ms()) // MINUTE * MINUTE

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


def new_store(path: Path, project_id: str = "proj_alerts") -> Store:
    store = Store(path)
    with store.transaction() as db:
        store.insert_project(db, "alert tests", None, 30, project_id=project_id)
    store.add_key(WORKSPACE_KEY, None, "workspace")
    return store


def add_traces(
    store: Store,
    project_id: str,
    rows: list[tuple[int, int, bool, float]],
    prefix: str = "t",
) -> list[str]:
    """Traces (started_at, duration_ms, errored, cost) as the store keeps them; their ids."""
    ids = []
    traces = []
    for n, (start, duration, errored, cost) in enumerate(rows):
        trace_id = f"{prefix}{start:x}{n:06d}"
        ids.append(trace_id)
        traces.append(
            TraceRow(
                trace_id,
                project_id,
                "run",
                start,
                duration,
                1,
                10,
                5,
                cost,
                "error" if errored else "ok",
                int(errored),
                "{}",
            )
        )
    with store.transaction() as db:
        store.insert_traces(db, traces)
    return ids


def service(store: Store, clock: Callable[[], int], **options: Any) -> LocalService:
    options.setdefault("allow_private_webhooks", True)
    options.setdefault("webhook_timeout_s", 2.0)
    return local_service(store, rate_limit=100_000, clock=clock, **options)


def api(running: LocalService) -> httpx.Client:
    return httpx.Client(
        base_url=running.base_url + "/",
        headers={"Authorization": f"Bearer {WORKSPACE_KEY}"},
        timeout=30,
    )


def create_alert(
    client: httpx.Client, project_id: str, receiver: Receiver | None = None, **fields: Any
) -> dict[str, Any]:
    body = {
        "name": "alert",
        "metric": "latency_ms_5m",
        "condition": "gt",
        "threshold": 1000,
        "webhook_url": receiver.url if receiver else "http://127.0.0.1:9/unused",
        **fields,
    }
    response = client.post(f"projects/{project_id}/alerts", json=body)
    assert response.status_code == 201, response.text
    alert: dict[str, Any] = response.json()
    if receiver is not None:
        receiver.secrets[alert["id"]] = alert["webhook_secret"]
    return alert


def events(client: httpx.Client, project_id: str, alert_id: str) -> list[dict[str, Any]]:
    """An alert's whole history, newest first, through every page."""
    out: list[dict[str, Any]] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 2}
        if cursor:
            params["cursor"] = cursor
        response = client.get(f"projects/{project_id}/alerts/{alert_id}/events", params=params)
        assert response.status_code == 200, response.text
        page = response.json()
        out += page["data"]
        cursor = page["next_cursor"]
        if not page["has_more"]:
            assert cursor is None
            return out


def attempts_of(
    client: httpx.Client, alert_id: str, project_id: str = "proj_alerts"
) -> list[dict[str, Any]]:
    """An alert's delivery attempts, oldest first."""
    return [e for e in events(client, project_id, alert_id) if e["kind"] == "delivery"][::-1]


def wait_until(condition: Callable[[], bool], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


def deliver_due(running: LocalService) -> None:
    """Have the delivery worker read the outbox now and wait until that read, and every
    attempt it started, has ended: afterwards, whatever was due has been sent, and what was
    not sent was not due."""
    worker = running.alerts.delivery
    begun = worker.reads_begun
    running.alerts.wake()
    wait_until(lambda: worker.reads_begun > begun)
    read = worker.reads_begun  # begun after the wake was asked for: it saw every change before
    wait_until(lambda: worker.reads_ended >= read and worker.in_flight() == 0)
