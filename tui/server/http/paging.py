"""Cursors of the keyset-paged listings (traces, an alert's events): one way to write them and
one way to read them back.

A cursor is opaque to clients: URL-safe base64 (unpadded) of a small JSON object whose fields
each listing chooses: integers, times, finite numbers, short texts, and objects (a listing's
filters, which the listing checks again as it reads them back: see search.filters). Reading one
back checks everything a crafted cursor could get wrong (not base64, not JSON, not an object, a
field missing or of the wrong type, a number outside SQLite's 64-bit integers, a time outside
what `from` and `to` take or a window that ends before it starts, a text too long or that is no
text, a lone surrogate) and answers each with the same 400 `invalid_cursor`, so that nothing a
client sends as a cursor reaches the store unchecked: each value is as the query parameter it
stands for would be.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from tui.server.http.errors import ServiceError

# Above what this service issues: the widest filters a trace listing accepts (search/filters.py:
# about 9,700 characters with the annotation filters', the span conditions and input/output
# text, each up to 4 bytes of UTF-8) in base64, 52,400 characters; bounds decoding. A request
# with it stays within the head's 64 KiB (serve's max_header_bytes).
MAX_CURSOR_CHARS = 57_344
MAX_TEXT_CHARS = 256  # a trace id is 32
INT_MIN, INT_MAX = -(2**63), 2**63 - 1  # what SQLite stores in an INTEGER
# The epoch ms that `from` and `to` can be (years 1 to 9999, with any UTC offset), so that a
# window's bounds, and a bound minus one, stay within INT_MIN..INT_MAX.
EARLIEST_MS = int(datetime.min.replace(tzinfo=timezone.utc).timestamp() * 1000) - 86_400_000
LATEST_MS = int(datetime.max.replace(tzinfo=timezone.utc).timestamp() * 1000) + 86_400_000


class Time(int):
    """A field kind: a time in epoch ms, within EARLIEST_MS..LATEST_MS."""


Fields = Mapping[str, type]  # int, Time, float, str or dict


def encode_cursor(values: Mapping[str, Any]) -> str:
    """The cursor for `values` (ints, finite floats, short texts, objects)."""
    # UTF-8, not \u escapes: an escaped emoji takes 12 bytes, its UTF-8 4.
    raw = json.dumps(dict(values), separators=(",", ":"), ensure_ascii=False).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, fields: Fields, optional: Fields | None = None) -> dict[str, Any]:
    """The values encode_cursor wrote, each of the type `fields` names, and those of `optional`
    that it holds (None when absent); ServiceError 400 for any cursor this service would not
    have issued."""
    try:
        if len(cursor) > MAX_CURSOR_CHARS:
            raise ValueError("too long")
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data = json.loads(raw)
        # JSON's escapes can make lone surrogates, which are no text: neither store takes them.
        json.dumps(data, ensure_ascii=False).encode()
    except (ValueError, binascii.Error, RecursionError) as error:  # UnicodeError is a ValueError
        raise invalid_cursor() from error
    if not isinstance(data, dict):
        raise invalid_cursor()
    values: dict[str, Any] = {}
    for name, kind in {**fields, **(optional or {})}.items():
        value = data.get(name)
        if value is None and optional and name in optional:
            values[name] = None
            continue
        if kind is int:
            # bool is an int to Python, never in a cursor of this service.
            ok = type(value) is int and INT_MIN <= value <= INT_MAX
        elif kind is Time:
            ok = type(value) is int and EARLIEST_MS <= value <= LATEST_MS
        elif kind is float:
            ok = (type(value) is int and INT_MIN <= value <= INT_MAX) or (
                type(value) is float and math.isfinite(value)
            )
        elif kind is dict:
            ok = type(value) is dict
        else:
            ok = type(value) is str and len(value) <= MAX_TEXT_CHARS
        if not ok:
            raise invalid_cursor()
        values[name] = value
    return values


def decode_window(values: Mapping[str, Any]) -> tuple[int, int]:
    """The first page's window a cursor carries as "f" and "u" (decoded as Time): 400 if it
    ends before it starts, as `from` after `to` is refused."""
    start, end = values["f"], values["u"]
    if start > end:
        raise invalid_cursor()
    return start, end


def invalid_cursor() -> ServiceError:
    return ServiceError(
        400,
        "invalid_cursor",
        "The cursor is not one this service issued; start again without a cursor.",
        [{"field": "cursor", "message": "not a valid cursor"}],
    )
