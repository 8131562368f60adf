"""Abuse of the front door, over real HTTP: the Authorization header read one way (RFC 7235)
by the limiter and the routes, made-up keys sharing their address's budget in a bounded table,
and JSON bodies refused before they are read: 401 without a known key, 413 past the limit,
whatever the body's length claims or however it streams."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.service import RunningService, start_service
from tui.server.http.auth import Malformed, bearer_token
from tui.server.http.ratelimit import MAX_API_BODY_BYTES, RateLimiter


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[RunningService]:
    running = start_service(tmp_path / "limited.sqlite3", rate_limit=6, scale=0.01)
    yield running
    running.service.stop()


@pytest.mark.parametrize(
    "spelling", ["Bearer {k}", "bearer {k}", "BEARER  {k}", "Bearer\t{k}", " Bearer {k} "]
)
def test_every_spelling_of_bearer_reads_the_same_key(spelling: str) -> None:
    assert bearer_token(spelling.format(k="tt_ws_abc123")) == "tt_ws_abc123"


@pytest.mark.parametrize(
    "header", ["Basic dXNlcg==", "Bearer", "Bearer a b", "Bearer a,b", "Bearer\n"]
)
def test_what_is_not_a_bearer_token_is_malformed(header: str) -> None:
    with pytest.raises(Malformed) as caught:
        bearer_token(header)
    assert header.strip() not in str(caught.value) or header.strip() == "Bearer"


def test_spellings_of_one_key_share_one_budget(limited: RunningService) -> None:
    key = limited.keys.workspace
    spellings = [f"Bearer {key}", f"bearer {key}", f"BEARER   {key}", f"Bearer\t{key}"]
    statuses = []
    for i in range(8):
        headers = {"Authorization": spellings[i % len(spellings)]}
        statuses.append(httpx.get(f"{limited.base_url}/projects", headers=headers).status_code)
    assert statuses[:6] == [200] * 6, statuses
    assert statuses[6:] == [429, 429], statuses


def test_made_up_keys_share_their_address_budget_and_leave_real_keys_alone(
    limited: RunningService,
) -> None:
    statuses = [
        httpx.get(
            f"{limited.base_url}/projects", headers={"Authorization": f"Bearer made-up-{i}"}
        ).status_code
        for i in range(10)
    ]
    assert statuses[:6] == [401] * 6 and statuses[6:] == [429] * 4, statuses
    real = {"Authorization": f"Bearer {limited.keys.workspace}"}
    assert httpx.get(f"{limited.base_url}/projects", headers=real).status_code == 200


def test_the_limiters_table_is_bounded() -> None:
    limiter = RateLimiter(5, 60, clock=lambda: 1000.0, max_buckets=100)
    for i in range(5_000):
        limiter.hit(f"ip:10.0.{i // 256}.{i % 256}")
    assert len(limiter) == 100
    assert limiter.hit("ip:10.0.19.135").remaining == 3  # recent callers keep their count


def raw_request(service: RunningService, head: str, body: bytes = b"", more: int = 0) -> str:
    """Sends `head` and `body` over a plain socket, then up to `more` further bytes of body in
    64 KiB pieces while no answer has come, and returns the status line of the answer."""
    host, port = service.service.host, service.service.port
    with socket.create_connection((host, port), timeout=30) as sock:
        sock.sendall(head.encode("latin-1") + b"\r\n" + body)
        sock.settimeout(0.05)
        answer = b""
        piece = b"x" * 65536
        sent = 0
        while b"\r\n" not in answer:
            try:
                answer += sock.recv(4096)
                continue
            except TimeoutError:
                pass
            assert sent < more or more == 0 or b"\r\n" in answer, "no answer to the body"
            if sent < more:
                sock.sendall(piece)
                sent += len(piece)
            else:
                sock.settimeout(30)
        return answer.split(b"\r\n", 1)[0].decode()


def post_head(service: RunningService, key: str | None, length: str | None) -> str:
    lines = ["POST /v1/projects HTTP/1.1", f"Host: {service.service.host}"]
    lines.append("Content-Type: application/json")
    if key is not None:
        lines.append(f"Authorization: Bearer {key}")
    lines.append(f"Content-Length: {length}" if length else "Transfer-Encoding: chunked")
    return "\r\n".join(lines) + "\r\n"


def test_a_100_mb_body_without_a_key_is_refused_before_it_is_read(service: RunningService) -> None:
    status = raw_request(service, post_head(service, None, str(100 * 1024 * 1024)), b"{")
    assert status.endswith("401 Unauthorized"), status


def test_a_body_that_says_it_is_too_big_is_refused_at_once(service: RunningService) -> None:
    head = post_head(service, service.keys.workspace, str(MAX_API_BODY_BYTES + 1))
    status = raw_request(service, head, b"{")
    assert status.endswith("413 Request Entity Too Large") or " 413 " in status, status


def test_a_streamed_body_is_refused_as_soon_as_it_passes_the_limit(
    service: RunningService,
) -> None:
    # Chunked, no length: the limit is found as the body arrives; far less than 100 MB is sent.
    head = post_head(service, service.keys.workspace, None)
    chunk = b"10000\r\n" + b"x" * 65536 + b"\r\n"
    host, port = service.service.host, service.service.port
    with socket.create_connection((host, port), timeout=30) as sock:
        sock.sendall(head.encode() + b"\r\n")
        sent = 0
        answer = b""
        sock.settimeout(0.05)
        while b"\r\n" not in answer:
            try:
                answer += sock.recv(4096)
            except TimeoutError:
                assert sent < 100 * 1024 * 1024, "sent 100 MB without an answer"
                try:
                    sock.sendall(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    sock.settimeout(30)
                sent += 65536
    assert b" 413 " in answer.split(b"\r\n", 1)[0], answer[:100]
    assert sent <= 2 * MAX_API_BODY_BYTES + 65536 * 16


def test_a_small_body_with_a_key_still_goes_through(api: httpx.Client) -> None:
    response = api.post("projects", json={"name": "a small body"})
    assert response.status_code == 201, response.text
