"""Reading an OTLP body within its limits: content type, gzip, and the size after inflating.

The body is read as it streams in and refused with 413 as soon as it passes MAX_BODY_BYTES,
compressed or not. A gzip (or deflate: the OTel Python SDK offers both) body is inflated in
pieces (zlib.decompressobj with max_length), so a small body that would inflate to gigabytes is
refused after MAX_BODY_BYTES of output, never inflated whole.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator

MAX_BODY_BYTES = 16 * 1024 * 1024  # after decompression; OTLP exporters send ~1 MB at most

# zlib's window bits for each Content-Encoding (None: not compressed).
WBITS = {"identity": None, "gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


class BodyError(Exception):
    """A body this service will not read: status, code and message for the answer."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def too_large() -> BodyError:
    return BodyError(
        413,
        "payload_too_large",
        f"The body is over {MAX_BODY_BYTES // (1024 * 1024)} MiB (after decompression).",
    )


def media_type(content_type: str | None) -> str:
    """PROTOBUF or JSON from a Content-Type header; 415 for anything else."""
    kind = (content_type or "").split(";")[0].strip().lower()
    if kind in (PROTOBUF, "application/protobuf"):
        return PROTOBUF
    if kind == JSON:
        return JSON
    raise BodyError(
        415,
        "unsupported_media_type",
        "Send OTLP as application/x-protobuf or application/json.",
    )


def encoding(content_encoding: str | None) -> str:
    value = (content_encoding or "identity").strip().lower()
    if value not in WBITS:
        raise BodyError(
            415, "unsupported_encoding", "Content-Encoding must be gzip, deflate or absent."
        )
    return value


async def read_body(
    chunks: AsyncIterator[bytes], content_encoding: str, limit: int = MAX_BODY_BYTES
) -> bytes:
    """The whole body, inflated if compressed; BodyError 413 past `limit`, 400 if the
    compressed stream is bad."""
    wbits = WBITS[content_encoding]
    inflater = None if wbits is None else zlib.decompressobj(wbits)
    out = bytearray()
    received = 0
    async for chunk in chunks:
        received += len(chunk)
        if received > limit:
            raise too_large()
        if inflater is None:
            out += chunk
            continue
        data = chunk
        while data:
            try:
                piece = inflater.decompress(data, limit + 1 - len(out))
            except zlib.error:
                raise BodyError(
                    400, "invalid_compression", f"The body is not valid {content_encoding}."
                ) from None
            out += piece
            if len(out) > limit:
                raise too_large()
            data = inflater.unconsumed_tail
            if inflater.eof:
                break
    if inflater is not None and not inflater.eof:
        raise BodyError(400, "invalid_compression", f"The {content_encoding} body ends early.")
    return bytes(out)
