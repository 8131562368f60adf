"""How much one OTLP export may hold, checked before it is decoded: spans (or log records) per
request, and values in all.

16 MiB of protobuf can hold 8.3 million empty spans (two bytes each): parsing them took 3.3 s
and 1.4 GB before any of this service's own work, and decoding them all 25 s, while the other
keys' exports waited. So the body's wire format is walked first, without parsing it: each
message's tag and length are read and the message skipped, the spans counted, and the walk
stops as soon as a count passes its bound (TooLarge: 413). A body too small to hold that many
messages (each takes at least two bytes) is not walked below its spans, so an SDK's usual batch
of 512 spans costs a few hundred steps. JSON is bounded alike: a body that could hold more
objects and arrays than MAX_VALUES is counted by its brackets (at C speed) before it is parsed,
and the spans of the parsed document are counted before any is decoded (`check_spans`).

MAX_SPANS is far above what exporters send at once (the OTel SDK's BatchSpanProcessor sends
512, the Collector's batch processor 8,192 by default); MAX_VALUES leaves room for 20,000 spans
of 20 attributes each.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from tui.server.ingest.types import TooLarge

MAX_SPANS = 20_000  # spans (or log records) in one export
MAX_VALUES = 1_000_000  # messages in one protobuf export; objects and arrays in a JSON one
MIN_MESSAGE_BYTES = 2  # a tag and a length: an empty message


def too_many_items(what: str) -> TooLarge:
    return TooLarge(
        f"The export holds more than {MAX_SPANS:,} {what}; send at most {MAX_SPANS:,} per "
        "request (OpenTelemetry's batch span processor sends 512)."
    )


def too_many_values() -> TooLarge:
    return TooLarge(
        f"The export holds more than {MAX_VALUES:,} values (messages, attributes, array "
        "items); send it in smaller requests."
    )


@dataclass(eq=False)
class Shape:
    """One message type as the walk sees it: its fields that are messages, by field number."""

    name: str
    children: dict[int, Shape] = field(default_factory=dict)


SHAPES: dict[str, Shape] = {}


def shape_of(descriptor: Any) -> Shape:
    """The walk's shape of a message type (types that hold each other, as AnyValue and
    ArrayValue do, share their shapes)."""
    found = SHAPES.get(descriptor.full_name)
    if found is not None:
        return found
    shape = SHAPES[descriptor.full_name] = Shape(descriptor.full_name)
    for each in descriptor.fields:
        if each.type == FieldDescriptor.TYPE_MESSAGE:
            shape.children[each.number] = shape_of(each.message_type)
    return shape


def check_protobuf(body: bytes, kind: type[Message], item: Any, what: str) -> None:
    """TooLarge if `body`, a `kind` message, holds more than MAX_SPANS messages of the type
    `item` describes (spans, log records; None: none counted) or more than MAX_VALUES messages
    in all. A body whose wire format is
    broken is left to the parser, which refuses it (400)."""
    root = shape_of(kind.DESCRIPTOR)
    counted = None if item is None else shape_of(item)
    deep = len(body) > MIN_MESSAGE_BYTES * MAX_VALUES
    try:
        walk(body, root, counted, deep, what)
    except IndexError:  # the body ends inside a tag or a length: the parser says so
        return


def walk(body: bytes, root: Shape, counted: Shape | None, deep: bool, what: str) -> None:
    """Count `counted` messages (not looking inside them unless `deep`) and all messages of
    `body`, raising TooLarge as soon as either count passes its bound."""
    items = messages = 0
    stack = [(0, len(body), root)]
    while stack:
        pos, end, shape = stack.pop()
        children = shape.children
        while pos < end:
            key = body[pos]
            pos += 1
            if key & 0x80:
                key, pos = varint(body, pos, key)
            wire = key & 7
            if wire == 2:  # length-delimited: a message, a string or bytes
                length = body[pos]
                pos += 1
                if length & 0x80:
                    length, pos = varint(body, pos, length)
                child = children.get(key >> 3)
                if child is not None:
                    messages += 1
                    if messages > MAX_VALUES:
                        raise too_many_values()
                    if child is counted:
                        items += 1
                        if items > MAX_SPANS:
                            raise too_many_items(what)
                        if deep and length:
                            stack.append((pos, min(pos + length, end), child))
                    elif length:  # an empty one holds nothing more
                        stack.append((pos, min(pos + length, end), child))
                pos += length
            elif wire == 0:  # varint
                while body[pos] & 0x80:
                    pos += 1
                pos += 1
            elif wire == 1:  # fixed64
                pos += 8
            elif wire == 5:  # fixed32
                pos += 4
            else:  # groups (unused by OTLP) or garbage: the parser decides
                return


def varint(body: bytes, pos: int, first: int) -> tuple[int, int]:
    """The rest of a varint whose first byte (`first`, read) had its high bit set."""
    value = first & 0x7F
    shift = 7
    while True:
        byte = body[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise IndexError("a varint longer than ten bytes")


def check_json(body: bytes) -> None:
    """TooLarge if `body` may hold more than MAX_VALUES objects and arrays: each bracket is
    counted, those inside strings too, so this is an upper bound."""
    big = len(body) > MIN_MESSAGE_BYTES * MAX_VALUES
    if big and body.count(b"{") + body.count(b"[") > MAX_VALUES:
        raise too_many_values()


def check_json_items(
    groups: Any, scopes: tuple[str, str], items: tuple[str, str], what: str
) -> None:
    """TooLarge if a parsed JSON export's `groups` (its resourceSpans or resourceLogs) hold more
    than MAX_SPANS items in all: the lists named `items` (camelCase, then snake_case) in the
    lists named `scopes`. Only counted: parts of the wrong shape count none here, and are
    refused as they are decoded."""
    total = 0
    for group in groups if isinstance(groups, list) else ():
        in_group = named(group, scopes)
        for scope in in_group if isinstance(in_group, list) else ():
            found = named(scope, items)
            total += len(found) if isinstance(found, list) else 0
    if total > MAX_SPANS:
        raise too_many_items(what)


def named(obj: Any, names: tuple[str, str]) -> Any:
    """A field of a JSON object by its camelCase name, else its snake_case one (otlp_json.get)."""
    if not isinstance(obj, dict):
        return None
    value = obj.get(names[0])
    return obj.get(names[1]) if value is None else value
