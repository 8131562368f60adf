"""Small raw HTTP servers on loopback that misbehave the way a hostile or broken server does: a
body that never ends, an answer that trickles a byte at a time, plain HTTP where TLS is
expected. Each runs an asyncio server in a thread of its own (so that both the async client and
the command line's blocking checks can be pointed at it), counts what it sent, and is bounded:
it stops sending at `limit` bytes, and everything stops when the `with` block ends."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Awaitable, Callable
from types import TracebackType

Answer = Callable[["LoopbackServer", asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
START_SECONDS = 30.0  # generous: a loaded machine starts a thread slowly


class LoopbackServer:
    """`answer(server, reader, writer)` handles each connection; `sent` counts body bytes."""

    def __init__(self, answer: Answer, limit: int = 256 * 1024 * 1024) -> None:
        self.answer = answer
        self.limit = limit
        self.sent = 0
        self.connections = 0
        self.port = 0
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._stop: asyncio.Event | None = None
        self._answering: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _run(self) -> None:
        self._loop.run_until_complete(self._serve())
        self._loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()
        server.close()
        # Answers still sending are ended here, in their loop: left to the collector, they
        # would be closed later in another thread, on a loop already closed.
        for task in self._answering:
            task.cancel()
        await asyncio.gather(*self._answering, return_exceptions=True)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        task = asyncio.current_task()
        assert task is not None
        self._answering.add(task)
        try:
            await self.answer(self, reader, writer)
        except (ConnectionError, OSError):
            pass  # the client hung up: what it is for
        finally:
            writer.close()
            self._answering.discard(task)

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        if not self._ready.wait(START_SECONDS):
            raise AssertionError("the loopback server did not start")
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(START_SECONDS)


async def read_head(reader: asyncio.StreamReader) -> bytes:
    """The request's head (its body, if any, is left unread: these servers never need it)."""
    return await reader.readuntil(b"\r\n\r\n")


async def endless_chunks(
    server: LoopbackServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """200 with a chunked JSON body that goes on until the client hangs up (or `limit`)."""
    await read_head(reader)
    writer.write(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    piece = b'{"data": [' + b'{"id": "x"},' * 5000
    while server.sent < server.limit:
        writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        await writer.drain()
        server.sent += len(piece)


def trickling(interval: float) -> Answer:
    """200 whose body comes one byte every `interval` seconds, never ending (until `limit`)."""

    async def answer(
        server: LoopbackServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await read_head(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n")
        await writer.drain()
        while server.sent < server.limit:
            writer.write(b" ")
            await writer.drain()
            server.sent += 1
            await asyncio.sleep(interval)

    return answer


def trickling_head(interval: float) -> Answer:
    """An answer whose status line and headers come one byte every `interval` seconds."""

    async def answer(
        server: LoopbackServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await read_head(reader)
        head = b"HTTP/1.1 200 OK\r\nx-padding: "
        while server.sent < server.limit:
            writer.write(head[server.sent : server.sent + 1] or b"a")
            await writer.drain()
            server.sent += 1
            await asyncio.sleep(interval)

    return answer


async def plain_http(
    server: LoopbackServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Plain HTTP whatever was sent: what a TLS client meets at an http:// port."""
    await reader.read(1024)
    writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
    await writer.drain()


def closed_port() -> int:
    """A loopback port that nothing listens on (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
