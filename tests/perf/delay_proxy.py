"""A far-away server for the benchmarks: a TCP proxy on loopback that delays every byte by the
same time each way, and a new connection by one round trip (its TCP handshake), as a link to a
server across a VPN would. Latency only: bytes are passed on as fast as they come.

`python -m tests.perf.delay_proxy UPSTREAM_PORT DELAY_SECONDS` listens on a free loopback port,
prints it, and forwards to 127.0.0.1:UPSTREAM_PORT until its standard input closes (the
benchmark ends) or an hour has passed, whichever comes first.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections import deque

LOOPBACK = "127.0.0.1"
CHUNK = 256 * 1024
LIFETIME = 3600.0  # stops by itself, whatever happens to the benchmark


async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    """Copy `reader` to `writer`, each chunk `delay` seconds after it was read, in order."""
    loop = asyncio.get_running_loop()
    pending: deque[tuple[float, bytes]] = deque()
    arrived = asyncio.Event()
    done = False

    async def deliver() -> None:
        while pending or not done:
            if not pending:
                arrived.clear()
                await arrived.wait()
                continue
            due, data = pending.popleft()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()

    delivering = asyncio.create_task(deliver())
    try:
        while data := await reader.read(CHUNK):
            pending.append((loop.time() + delay, data))
            arrived.set()
    except ConnectionError:
        pass
    done = True
    arrived.set()
    with contextlib.suppress(ConnectionError):
        await delivering


async def handle(
    client_reader: asyncio.StreamReader,
    client_writer: asyncio.StreamWriter,
    upstream_port: int,
    delay: float,
) -> None:
    try:
        upstream_reader, upstream_writer = await asyncio.open_connection(LOOPBACK, upstream_port)
    except OSError:
        client_writer.close()
        return
    try:
        # The handshake: nothing the client sends reaches the server before one round trip.
        await asyncio.sleep(2 * delay)
        await asyncio.gather(
            pump(client_reader, upstream_writer, delay),
            pump(upstream_reader, client_writer, delay),
        )
    except asyncio.CancelledError:
        pass  # the proxy is stopping: connections end with it
    finally:
        for writer in (client_writer, upstream_writer):
            writer.close()


async def serve(upstream_port: int, delay: float) -> None:
    server = await asyncio.start_server(
        lambda r, w: handle(r, w, upstream_port, delay), LOOPBACK, 0
    )
    print(server.sockets[0].getsockname()[1], flush=True)
    loop = asyncio.get_running_loop()
    stdin_closed = loop.run_in_executor(None, sys.stdin.read)
    async with server:
        await asyncio.wait([stdin_closed], timeout=LIFETIME)


def start_command(upstream_port: int, delay: float) -> list[str]:
    return [sys.executable, "-m", "tests.perf.delay_proxy", str(upstream_port), str(delay)]


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]), float(sys.argv[2])))
