"""Each call of the client is bounded (tui/api/transport.py): an answer is read as it streams and
dropped past a size cap, with a typed error that says the answer was too big; and the whole call
(connecting, each attempt, reading, the waits between) ends within an overall deadline, with a
typed error too, however slowly a server trickles. Against real loopback servers that stream
forever or a byte at a time (tests/client/hostile_servers.py) and httpx.MockTransport. Nothing
here is timed: the deadline tests set a short deadline and wait for its error; what the client
read is measured by what it kept and by the memory the call allocated."""

from __future__ import annotations

import gzip
import tracemalloc
from collections.abc import AsyncIterator

import httpx
import pytest

from tests.client.hostile_servers import (
    Answer,
    LoopbackServer,
    endless_chunks,
    trickling,
    trickling_head,
)
from tests.support.helpers import Sleeps, json_response, mock_client
from tui.api import ApiClient, DeadlinePassed, RateLimited, ResponseTooLarge, TimedOut
from tui.api.phoenix.probe import probe_address
from tui.api.transport import DEADLINE_SECONDS, MAX_BODY_BYTES

MIB = 1024 * 1024
DEMO_100K_TRACE_BYTES = 54_026_616  # the demo's 100,000-span trace, as the service answers it


async def test_an_endless_body_stops_at_the_cap_with_an_error_that_says_so() -> None:
    """A server that streams a chunked body forever: the client stops at its cap, and only
    about the cap is ever held (the server sends what the socket buffers take, then no more)."""
    with LoopbackServer(endless_chunks, limit=64 * MIB) as server:
        async with ApiClient(f"{server.url}/v1", max_body_bytes=MIB, max_retries=0) as client:
            tracemalloc.start()
            try:
                with pytest.raises(ResponseTooLarge) as caught:
                    await client.list_projects()
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
    error = caught.value
    assert "over 1 MiB" in error.message and "stopped reading" in error.message
    assert error.status == 200 and error.limit == MIB and error.title == "The answer was too big"
    assert peak < 8 * MIB, peak  # before the cap: the whole 64 MiB, held twice
    assert server.sent < 32 * MIB, server.sent  # the client let go; the server stopped
    assert client.log[-1].error == error.message and client.log[-1].status == 200


async def test_a_body_at_the_cap_is_read_and_one_byte_more_is_not() -> None:
    body = b'{"data": [], "pad": "' + b"x" * 1000 + b'"}'

    async with mock_client(
        lambda r: httpx.Response(200, content=body), max_body_bytes=len(body)
    ) as c:
        assert await c.list_projects() == []
    small = len(body) - 1
    async with mock_client(lambda r: httpx.Response(200, content=body), max_body_bytes=small) as c:
        with pytest.raises(ResponseTooLarge):
            await c.list_projects()


async def test_a_declared_length_over_the_cap_is_refused_before_reading() -> None:
    read: list[int] = []

    async def body() -> AsyncIterator[bytes]:
        read.append(1)
        yield b"{}"

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-length": str(10 * MIB)}, content=body())

    async with mock_client(handler, max_body_bytes=MIB) as client:
        with pytest.raises(ResponseTooLarge):
            await client.list_projects()
    assert read == []


async def test_the_cap_counts_the_decompressed_bytes() -> None:
    """A gzip bomb: 64 KiB on the wire, 16 MiB once inflated."""
    bomb = gzip.compress(b'{"data": [' + b" " * (16 * MIB) + b"]}")
    assert len(bomb) < 64 * 1024

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-encoding": "gzip"}, content=bomb)

    async with mock_client(handler, max_body_bytes=MIB) as client:
        with pytest.raises(ResponseTooLarge):
            await client.list_projects()


async def test_a_create_whose_answer_is_too_big_has_an_unknown_outcome() -> None:
    huge = json_response({"id": "p1", "name": "x", "pad": "y" * 4096}, 201)
    async with mock_client(lambda r: huge, max_body_bytes=1024) as client:
        with pytest.raises(ResponseTooLarge) as caught:
            await client.create_project("x")
    assert caught.value.outcome_unknown


async def test_the_default_cap_reads_an_answer_as_big_as_a_100k_span_trace() -> None:
    """The demo's 100,000-span trace is 54 MB as the service answers it: an answer of that
    size, streamed, is read whole by a client with the default cap, which has room for four."""
    assert MAX_BODY_BYTES >= 4 * DEMO_100K_TRACE_BYTES
    pad = DEMO_100K_TRACE_BYTES

    async def body() -> AsyncIterator[bytes]:
        yield b'{"data": [], "pad": "'
        for _ in range(pad // MIB):
            yield b"x" * MIB
        yield b"x" * (pad % MIB) + b'"}'

    async with mock_client(lambda r: httpx.Response(200, content=body())) as client:
        assert await client.list_projects() == []
    assert client.log[-1].status == 200


async def test_an_answer_that_trickles_ends_at_the_deadline() -> None:
    """A byte every 50 ms never trips httpx's timeout of a read; the call's deadline ends it.
    Before the deadline the client read on until the server's limit, then failed on the JSON."""
    with LoopbackServer(trickling(0.05), limit=400) as server:
        async with ApiClient(f"{server.url}/v1", deadline=1.0, max_retries=0) as client:
            with pytest.raises(DeadlinePassed) as caught:
                await client.list_projects()
    error = caught.value
    assert isinstance(error, TimedOut) and error.title == "The call took too long"
    assert "had not finished answering after 1 s" in error.message
    assert server.sent < server.limit  # it stopped before the server did
    assert client.log[-1].error == error.message


async def test_a_head_that_trickles_ends_at_the_deadline_and_a_create_is_of_unknown_outcome() -> (
    None
):
    with LoopbackServer(trickling_head(0.05), limit=400) as server:
        async with ApiClient(f"{server.url}/v1", deadline=1.0, max_retries=0) as client:
            with pytest.raises(DeadlinePassed) as caught:
                await client.create_project("x")
    assert caught.value.outcome_unknown  # it was sent: the server may have made it
    assert server.connections == 1  # a POST whose outcome is unknown is not sent again


async def test_no_wait_is_started_that_would_end_past_the_deadline() -> None:
    """A 429 asking for 30 s when the call has 5 left: the error at once, no wait."""
    sleeps = Sleeps()
    limited = json_response({"message": "slow down"}, 429, **{"retry-after": "30"})
    async with mock_client(lambda r: limited, sleeps, deadline=5.0) as client:
        with pytest.raises(RateLimited):
            await client.list_projects()
    assert sleeps.delays == []
    async with mock_client(lambda r: limited, sleeps, max_rate_limit_retries=1) as client:
        with pytest.raises(RateLimited):
            await client.list_projects()
    assert sleeps.delays == [30.0]  # within the default deadline, it is waited out


def test_the_default_deadline_holds_a_capped_retry_after() -> None:
    assert DEADLINE_SECONDS > 60.0  # the longest Retry-After the client waits


# -- the command line's question to an address: is it a Phoenix? --------------------------------


@pytest.mark.parametrize(
    ("answer", "limit"),
    [(trickling(0.05), 400), (trickling_head(0.05), 400), (endless_chunks, 64 * MIB)],
    ids=["body-trickles", "head-trickles", "body-never-ends"],
)
def test_asking_whether_an_address_is_a_phoenix_is_bounded(answer: Answer, limit: int) -> None:
    with LoopbackServer(answer, limit=limit) as server:
        found = probe_address(server.url, timeout=1.0)
    assert found.root is None
    assert server.sent < server.limit
