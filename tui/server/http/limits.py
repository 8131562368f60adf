"""What one client may hold of the service, below FastAPI: a request's line and headers (its
head) bounded in size and in time, an idle connection closed, and a bound on open connections.

uvicorn's httptools protocol takes a head of any size (httptools builds each header by
concatenation and has no limit of its own: a 64 MB header is held whole) and waits for it for
ever. `BoundedHttpProtocol` counts a head's bytes before the parser sees them and answers 431
past `max_header_bytes`; it gives the head `header_timeout_s` from the connection (or from the
first byte of a later request), then answers 408 and closes; and it closes a connection idle
for `idle_timeout_s` after an answer (uvicorn's keep-alive timer).

Past `max_connections` open connections, a new one makes room by closing the connection that
has waited longest for a request head (slow or idle: it has nothing under way to lose); when
every connection has a request under way, the new one is closed instead. This keeps the service
answering: a plain 503 past the bound (uvicorn's limit_concurrency) would let slow clients hold
every slot until their timeout while real clients are turned away, and it counts only the
connections that have sent a head, so open sockets would still grow up to the process's file
limit, where accepting stops for everyone.
"""

from __future__ import annotations

import asyncio
import http
from typing import Any, ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from tui.server.config import ServerConfig
from tui.server.http.errors import error_json

# After a refusal, what the client still sends is read and dropped this long at most: closing a
# socket with unread data resets the connection, and the reset can reach the client before it
# has read the answer.
LINGER_SECONDS = 5.0


class BoundedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the limits above; `bounded_http_protocol` makes one
    class per service, whose class attributes hold that service's limits and connections."""

    max_header_bytes: ClassVar[int] = ServerConfig().max_header_bytes
    header_timeout_s: ClassVar[float] = ServerConfig().header_timeout_s
    idle_timeout_s: ClassVar[float] = ServerConfig().idle_timeout_s
    max_connections: ClassVar[int] = ServerConfig().max_connections
    # The connections waiting for a request head, the longest-waiting first (a dict keeps the
    # order of insertion): the first to go when the connections are over their bound.
    waiting: ClassVar[dict[BoundedHttpProtocol, None]] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # uvicorn types its keep-alive timeout as whole seconds; call_later takes any.
        self.timeout_keep_alive = self.idle_timeout_s  # type: ignore[assignment]
        self.head_bytes = 0  # of the head being read
        self.in_head = True  # the next bytes are a request's head (not a body)
        self.head_timer: asyncio.TimerHandle | None = None
        self.refused = False  # answered and closing: what still comes is read and dropped

    # The connection

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.waiting[self] = None
        self.head_timer = self.loop.call_later(self.header_timeout_s, self.head_too_slow)
        if len(self.connections) > self.max_connections:
            self.make_room()

    def connection_lost(self, exc: Exception | None) -> None:
        self.waiting.pop(self, None)
        self.cancel_head_timer()
        super().connection_lost(exc)

    def make_room(self) -> None:
        """Close the connection that has waited longest for a head and has no answer under
        way; this new one if there is none."""
        for connection in self.waiting:
            if connection is not self and not connection.answering:
                connection.transport.close()
                self.waiting.pop(connection)
                return
        self.logger.warning("Over %d connections, all busy: one closed.", self.max_connections)
        self.refused = True
        self.transport.close()

    @property
    def answering(self) -> bool:
        """Whether a request of this connection is being answered."""
        return self.cycle is not None and not self.cycle.response_complete

    # Reading

    def data_received(self, data: bytes) -> None:
        if self.refused:
            return
        while self.in_head and data:
            if self.head_timer is None:  # the first byte of a later request
                self.head_timer = self.loop.call_later(self.header_timeout_s, self.head_too_slow)
            room = self.max_header_bytes - self.head_bytes
            if room <= 0:
                self.logger.warning("Request head over %d bytes: 431.", self.max_header_bytes)
                self.refuse(431, "headers_too_large", "The request's headers are too large.")
                return
            # The parser is fed no more than the room left, so that it never holds more than
            # the limit. The piece may end the head and go on into a body, or (pipelined) into
            # the next request's head, which then starts counting after it: at most one piece
            # past the limit.
            piece, data = data[:room], data[room:]
            self.head_bytes += len(piece)
            super().data_received(piece)
            if self.refused or self.transport.is_closing():  # a parse error was answered 400
                return
        if data:
            super().data_received(data)

    def on_headers_complete(self) -> None:
        self.in_head = False
        self.waiting.pop(self, None)
        self.cancel_head_timer()
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self.in_head = True
        self.head_bytes = 0
        self.waiting[self] = None

    # Refusing

    def cancel_head_timer(self) -> None:
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None

    def head_too_slow(self) -> None:
        self.head_timer = None
        if self.refused or self.transport.is_closing():
            return
        if self.head_bytes == 0:  # a connection that never said anything: nothing to answer
            self.refused = True
            self.transport.close()
            return
        self.refuse(408, "request_timeout", "The request's headers took too long to arrive.")

    def refuse(self, status: int, code: str, message: str) -> None:
        """Answer `status` and close, reading and dropping what still comes for a while."""
        self.refused = True
        self.cancel_head_timer()
        if self.answering:  # an answer to an earlier request is being written: none can follow
            self.transport.close()
            return
        body = error_json(status, code, message)
        lines = [f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}".encode()]
        lines += [name + b": " + value for name, value in self.server_state.default_headers]
        lines += [
            b"content-type: application/json",
            b"content-length: " + str(len(body)).encode(),
            b"connection: close",
        ]
        self.transport.write(b"\r\n".join(lines) + b"\r\n\r\n" + body)
        if self.transport.can_write_eof():
            self.transport.write_eof()  # the answer is complete; the client's EOF closes
            self.loop.call_later(LINGER_SECONDS, self.transport.close)
        else:
            self.transport.close()


def bounded_http_protocol(config: ServerConfig) -> type[BoundedHttpProtocol]:
    """The protocol class for one service (uvicorn.Config's `http`), with `config`'s limits
    and a table of waiting connections of its own."""

    class ServiceHttpProtocol(BoundedHttpProtocol):
        max_header_bytes = config.max_header_bytes
        header_timeout_s = config.header_timeout_s
        idle_timeout_s = config.idle_timeout_s
        max_connections = config.max_connections
        waiting = {}

    return ServiceHttpProtocol
