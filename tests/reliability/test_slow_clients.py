"""Slow clients, huge headers and many connections, over raw sockets (tui/server/http/limits.py):
300 connections trickling their headers in neither stop other clients' answers nor stay open
past the header timeout; a head over the limit is answered 431 and closed, its memory never
held (measured on a real `tracetui serve`); an idle connection is closed; and past the bound
on connections the one waiting longest for a request makes room.

Latencies are printed (run with -s to see them), never asserted."""

from __future__ import annotations

import json
import socket
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, closing
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.support.otlp import new_span_id, new_trace_id, post, request, root_client, span
from tests.support.procfs import peak_rss_kb
from tests.support.serve import serving
from tests.support.service import local_service, wait_for
from tui.server.api_keys import new_api_key
from tui.server.run import LocalService
from tui.server.store.sqlite.store import Store

SLOW_CLIENTS = 300
ANSWERS = 40  # to other clients while the slow ones are open
HEADER_TIMEOUT = 3.0  # short, so that the slow connections are cut within the test
PARTIAL_HEAD = b"GET /v1/projects HTTP/1.1\r\nHost: slow\r\nX-Slow: "


class Running:
    """A LocalService with its own limits, a workspace key, and its address for raw sockets."""

    def __init__(self, service: LocalService, key: str) -> None:
        self.service = service
        self.key = key
        self.address = (service.host, service.port)

    def get(self, path: str = "/projects", **headers: str) -> httpx.Response:
        auth = {"Authorization": f"Bearer {self.key}"}
        return httpx.get(f"{self.service.base_url}{path}", headers=auth | headers, timeout=30)

    def connect(self) -> Peer:
        return Peer(self.address)


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Any]:
    """Starts a service with the given ServerConfig fields; stops every one on the way out."""
    with ExitStack() as stack:

        def started(**config: Any) -> Running:
            store = Store(tmp_path / f"slow-{len(config)}-{time.monotonic_ns()}.sqlite3")
            key = new_api_key("ws")
            store.add_key(key, None, "slow clients")
            service = stack.enter_context(local_service(store, **config))
            return Running(service, key)

        yield started


class Peer:
    """A raw client connection, and what the server has sent on it so far."""

    def __init__(self, address: tuple[str, int]) -> None:
        self.sock = socket.create_connection(address, timeout=30)
        self.received = b""

    def closed_by_server(self) -> bool:
        """Whether the server has closed the connection (EOF or reset); reads what it sent."""
        self.sock.setblocking(False)
        try:
            while chunk := self.sock.recv(65536):
                self.received += chunk
            return True
        except BlockingIOError:
            return False
        except OSError:  # reset
            return True

    def close(self) -> None:
        self.sock.close()


def answer(sock: socket.socket, timeout: float = 30.0) -> bytes:
    """Everything the server sends on `sock` until it closes it (fails after `timeout` s)."""
    sock.settimeout(timeout)
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def status_of(raw: bytes) -> int:
    return int(raw.split(b" ", 2)[1])


def head(key: str, size: int, connection: str = "close") -> bytes:
    """A GET of /v1/projects whose line and headers are exactly `size` bytes."""
    start = f"GET /v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n"
    start += f"Connection: {connection}\r\nX-Pad: "
    end = b"\r\n\r\n"
    return start.encode() + b"p" * (size - len(start) - len(end)) + end


def send_ignoring_close(sock: socket.socket, *blocks: bytes) -> None:
    try:
        for block in blocks:
            sock.sendall(block)
    except OSError:  # closed by the server once it has refused
        pass


class Trickle:
    """Sends one more byte of a header on every open connection, every 0.2 s, until stopped."""

    def __init__(self, peers: list[Peer]) -> None:
        self.peers = peers
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        live = [peer.sock for peer in self.peers]
        while live and not self.stopped.wait(0.2):
            for sock in list(live):
                try:
                    sock.send(b"x")
                except OSError:  # closed by the server: what the test waits for
                    live.remove(sock)

    def __enter__(self) -> Trickle:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped.set()
        self.thread.join(10)


def test_300_slow_clients_neither_stop_answers_nor_outstay_the_header_timeout(
    start: Any,
) -> None:
    running = start(header_timeout_s=HEADER_TIMEOUT)
    with ExitStack() as stack:
        slow = []
        for _ in range(SLOW_CLIENTS):
            peer = stack.enter_context(closing(running.connect()))
            peer.sock.sendall(PARTIAL_HEAD)
            slow.append(peer)
        latencies = []
        with Trickle(slow):
            for _ in range(ANSWERS):
                began = time.perf_counter()
                response = running.get()  # a new connection each time, as a new client's
                latencies.append(time.perf_counter() - began)
                assert response.status_code == 200, response.text
            still_open = sum(not peer.closed_by_server() for peer in slow)
            wait_for(
                lambda: all(peer.closed_by_server() for peer in slow),
                what="the server to close every slow connection",
            )
        print(
            f"\n{SLOW_CLIENTS} slow clients: {ANSWERS} answers to others, p50 "
            f"{statistics.median(latencies) * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms;"
            f" {still_open} slow connections still open after the last answer"
        )
        assert all(peer.received == b"" or status_of(peer.received) == 408 for peer in slow)


def test_a_connection_that_sends_nothing_is_closed_after_the_header_timeout(start: Any) -> None:
    running = start(header_timeout_s=1.0)
    with closing(running.connect()) as silent:
        wait_for(silent.closed_by_server, what="the silent connection to be closed")
        assert silent.received == b""


def test_a_1_mb_header_is_answered_431_and_the_connection_closed(start: Any) -> None:
    running = start()
    with closing(running.connect()) as peer:
        big = PARTIAL_HEAD + b"a" * (1024 * 1024) + b"\r\n\r\n"
        sender = threading.Thread(target=send_ignoring_close, args=(peer.sock, big), daemon=True)
        sender.start()
        raw = answer(peer.sock)  # returns once the server has closed the connection
        sender.join(30)
    assert status_of(raw) == 431, raw[:200]
    body = json.loads(raw.split(b"\r\n\r\n", 1)[1])
    assert body["error"]["code"] == "headers_too_large"
    assert running.get().status_code == 200  # and the service answers afterwards


def test_a_head_of_exactly_the_limit_is_answered_and_one_byte_more_is_431(start: Any) -> None:
    running = start(max_header_bytes=16 * 1024)
    for size, status in [(16 * 1024, 200), (16 * 1024 + 1, 431)]:
        with closing(running.connect()) as peer:
            peer.sock.sendall(head(running.key, size))
            assert status_of(answer(peer.sock)) == status, size


def test_large_but_allowed_headers_still_work(start: Any) -> None:
    running = start()
    headers = {f"X-Large-{i}": "v" * 8000 for i in range(6)}  # 48 KB of the 64 KiB allowed
    response = running.get(**headers)
    assert response.status_code == 200, response.text


def test_an_idle_connection_is_closed_after_the_idle_timeout(start: Any) -> None:
    running = start(idle_timeout_s=1.0)
    with closing(running.connect()) as peer:
        peer.sock.sendall(head(running.key, 1024, connection="keep-alive"))
        first = peer.sock.recv(65536)
        assert status_of(first) == 200 and b"connection: close" not in first.lower()
        wait_for(peer.closed_by_server, what="the idle connection to be closed")


def test_past_the_bound_the_connection_waiting_longest_makes_room(start: Any) -> None:
    running = start(max_connections=20, header_timeout_s=60.0)
    with ExitStack() as stack:
        waiting = [stack.enter_context(closing(running.connect())) for _ in range(20)]
        waiting[0].sock.sendall(PARTIAL_HEAD)  # the oldest: a slow head
        # An answer on the newest proves that the service has accepted all twenty.
        waiting[-1].sock.sendall(head(running.key, 1024, connection="keep-alive"))
        assert status_of(waiting[-1].sock.recv(65536)) == 200
        assert running.get().status_code == 200  # the 21st
        wait_for(waiting[0].closed_by_server, what="the oldest connection to make room")
        assert not any(peer.closed_by_server() for peer in waiting[1:])


def test_past_the_bound_with_every_connection_answering_the_new_one_is_closed(
    start: Any,
) -> None:
    running = start(max_connections=5, header_timeout_s=60.0)
    post = (
        "POST /v1/projects HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {running.key}\r\nContent-Length: 100\r\n"
        "Expect: 100-continue\r\n\r\n"
    ).encode()
    with ExitStack() as stack:
        for _ in range(5):  # requests under way: each waits for a body that does not come
            peer = stack.enter_context(closing(running.connect()))
            peer.sock.sendall(post)
            assert peer.sock.recv(65536).startswith(b"HTTP/1.1 100"), "its body is awaited"
        with pytest.raises(httpx.TransportError):
            running.get()


def test_a_64_mb_header_leaves_the_services_memory_where_it_was(tmp_path: Path) -> None:
    with serving(tmp_path / "big.sqlite3", "--ingest-processes", "0", "--no-access-log") as served:
        url = urlsplit(served.base_url)
        assert url.hostname and url.port
        httpx.get(f"{served.base_url}/projects", timeout=30)  # what a first request loads
        # And the price table, which loads in the background as the service starts (tens of
        # MB): a span that needs a cost estimate waits for it, so it is counted in `before`.
        priced = {"gen_ai.request.model": "gpt-4o-mini", "gen_ai.usage.input_tokens": 10}
        with root_client(served.base_url, served.key) as client:
            sent = post(client, request(span(new_trace_id(), new_span_id(), attributes=priced)))
            assert sent.status_code == 200, sent.text
        before = peak_rss_kb(served.process.pid)
        with closing(socket.create_connection((url.hostname, url.port), timeout=60)) as sock:
            blocks = [PARTIAL_HEAD, *[b"a" * (1024 * 1024)] * 64, b"\r\n\r\n"]
            sender = threading.Thread(target=send_ignoring_close, args=(sock, *blocks), daemon=True)
            sender.start()
            raw = answer(sock, timeout=60)
            sender.join(60)
        grown_mb = (peak_rss_kb(served.process.pid) - before) / 1024
        print(f"\na 64 MB header: the service's peak memory grew by {grown_mb:.1f} MB")
        assert status_of(raw) == 431, raw[:200]
        assert grown_mb < 16, f"the service's peak memory grew by {grown_mb:.0f} MB"
