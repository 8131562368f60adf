"""Text every store can hold: lone surrogates and NUL in an export become U+FFFD at decode.

Two kinds of character in an OTLP export cannot be stored as text: a lone UTF-16 surrogate
("\\ud83d", what JavaScript's JSON.stringify writes for a string cut mid-emoji, and what
protobuf.js encodes as its three bytes) has no UTF-8 encoding, so neither store takes it; and
U+0000 fits SQLite's text but not PostgreSQL's. Refused by the store, either one failed the
whole export. Both become U+FFFD, the replacement character (as undecodable bytes do): the
text keeps its length and shows where something was, and both stores give the same answers.
They are repaired once, where the body is decoded, so every later step (names, models,
previews, sessions, tags, search text, the stored JSON) sees only sound text.

- JSON: the body is read as UTF-8 with undecodable bytes replaced; then lone surrogates can
  come only from `\\uD800`-`\\uDFFF` escapes and NUL only from `\\u0000`. A body with neither
  escape (one scan at C speed) is used as parsed; otherwise every string of the parsed
  document, keys included, is repaired.
- Protobuf: the parser refuses a string that is not UTF-8. Such a body is parsed again with
  every string field read as bytes (the same wire format), those bytes are repaired, and the
  message is parsed as usual. NUL is valid UTF-8: the decoders replace it where they read each
  string (`without_nul`), a test as cheap as a string's length.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor, FileDescriptor
from google.protobuf.message import DecodeError, Message

REPLACEMENT = "\ufffd"
UNSOUND = re.compile("[\x00\ud800-\udfff]")
# What in a JSON text can decode to an unsound character (a false alarm, such as an escaped
# backslash before "u0000", costs only the repair pass).
UNSOUND_ESCAPES = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")

M = TypeVar("M", bound=Message)


def sound(text: str) -> str:
    """`text` with each lone surrogate and NUL as U+FFFD."""
    return UNSOUND.sub(REPLACEMENT, text) if UNSOUND.search(text) else text


def without_nul(text: str) -> str:
    """`text` with NUL as U+FFFD (protobuf strings are UTF-8, so NUL is all they can hold)."""
    return text.replace("\x00", REPLACEMENT) if "\x00" in text else text


# -- JSON -------------------------------------------------------------------------------------


def load_json(body: bytes) -> Any:
    """The parsed JSON document of `body`, every string in it sound. Raises ValueError (or
    RecursionError) as json.loads does for a body that is not JSON."""
    return loads_sound(body.decode(json.detect_encoding(body), "replace"))


def loads_sound(text: str) -> Any:
    """The parsed JSON of `text`, every string in it sound (its escapes may write a NUL or a
    lone surrogate that the text itself does not hold: a span's `metadata` attribute too)."""
    document = json.loads(text)
    return repaired(document) if UNSOUND_ESCAPES.search(text) else document


def repaired(document: Any) -> Any:
    """`document` (parsed JSON) with every string made sound, keys included: its lists and
    objects are changed in place. Iterative: a document as deep as the parser allows is fine."""
    if isinstance(document, str):
        return sound(document)
    stack = [document] if isinstance(document, (dict, list)) else []
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            for index, item in enumerate(node):
                if isinstance(item, str):
                    node[index] = sound(item)
                elif isinstance(item, (dict, list)):
                    stack.append(item)
            continue
        items = []
        for key, value in node.items():
            if isinstance(value, str):
                value = sound(value)
            elif isinstance(value, (dict, list)):
                stack.append(value)
            items.append((sound(key), value))
        node.clear()
        node.update(items)
    return document


# -- protobuf ---------------------------------------------------------------------------------


def parse_protobuf(kind: type[M], body: bytes) -> M:
    """`body` parsed as a `kind` message, its strings that are not UTF-8 repaired first (see
    the module's docstring). Raises DecodeError (or RecursionError, ValueError) as the parser
    does for a body that is not such a message."""
    try:
        return kind.FromString(body)
    except DecodeError:
        lenient, strings = lenient_class(kind)
        loose = lenient.FromString(body)  # DecodeError still: it is not such a message
        repair_strings(loose, strings)
        return kind.FromString(loose.SerializeToString())


LENIENT: dict[str, tuple[type[Message], frozenset[str]]] = {}  # by message name


def lenient_class(kind: type[Message]) -> tuple[type[Message], frozenset[str]]:
    """A class for `kind`'s wire format whose string fields are bytes, and the full names of
    those fields (made once per message type)."""
    name = kind.DESCRIPTOR.full_name
    if name not in LENIENT:
        LENIENT[name] = made_lenient(kind)
    return LENIENT[name]


def made_lenient(kind: type[Message]) -> tuple[type[Message], frozenset[str]]:
    pool = descriptor_pool.DescriptorPool()
    strings: set[str] = set()
    for file in files_of(kind.DESCRIPTOR.file):
        proto = descriptor_pb2.FileDescriptorProto.FromString(file.serialized_pb)
        prefix = f"{proto.package}." if proto.package else ""
        for message, name in messages_of(proto.message_type, prefix):
            for field in message.field:
                if field.type == descriptor_pb2.FieldDescriptorProto.TYPE_STRING:
                    field.type = descriptor_pb2.FieldDescriptorProto.TYPE_BYTES
                    strings.add(f"{name}.{field.name}")
        pool.Add(proto)
    found = pool.FindMessageTypeByName(kind.DESCRIPTOR.full_name)
    return message_factory.GetMessageClass(found), frozenset(strings)


def files_of(file: Any) -> list[FileDescriptor]:
    """`file` (a FileDescriptor) and every file it imports, each after those it imports."""
    ordered: list[FileDescriptor] = []
    stack: list[tuple[FileDescriptor, bool]] = [(file, False)]
    while stack:
        each, expanded = stack.pop()
        if each in ordered:
            continue
        if expanded:
            ordered.append(each)
            continue
        stack.append((each, True))
        stack.extend((dependency, False) for dependency in each.dependencies)
    return ordered


def messages_of(messages: Any, prefix: str) -> list[tuple[descriptor_pb2.DescriptorProto, str]]:
    """Every message type of a file (nested ones too), each with its full name."""
    found = []
    stack = [(message, prefix) for message in messages]
    while stack:
        message, outer = stack.pop()
        name = f"{outer}{message.name}"
        found.append((message, name))
        stack.extend((nested, f"{name}.") for nested in message.nested_type)
    return found


def repair_strings(message: Message, strings: frozenset[str]) -> None:
    """Each field of `message` (and of the messages inside it) named in `strings` as sound
    UTF-8."""
    stack = [message]
    while stack:
        node = stack.pop()
        for field, value in node.ListFields():
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                stack.extend(value if is_repeated(field) else [value])
            elif field.full_name in strings:
                if is_repeated(field):
                    value[:] = [sound_bytes(raw) for raw in value]
                else:
                    setattr(node, field.name, sound_bytes(value))


def is_repeated(field: FieldDescriptor) -> bool:
    if hasattr(field, "is_repeated"):  # protobuf 6.31 and later
        return bool(field.is_repeated)
    return bool(getattr(field, "label", None) == FieldDescriptor.LABEL_REPEATED)


def sound_bytes(raw: bytes) -> bytes:
    """`raw` as UTF-8 with each lone surrogate (as protobuf.js encodes one) and each
    undecodable byte as U+FFFD, NUL too."""
    try:
        text = raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", "replace")
    return sound(text).encode()
