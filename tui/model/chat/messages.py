"""The conversation one span records: messages made of parts (text, tool calls, tool results,
anything else kept as sent), retrieved documents and plain input and output values; and Found,
what the convention readers have found so far while they build one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TextPart:
    text: str
    kind: str = "text"  # "text", or "reasoning" for a model's thinking


@dataclass(frozen=True)
class ToolCall:
    name: str | None
    arguments: Any  # parsed JSON when it was JSON, else as sent (None: not sent)
    id: str | None = None


@dataclass(frozen=True)
class ToolResult:
    content: Any  # text, or parsed JSON when it was JSON
    id: str | None = None
    name: str | None = None


@dataclass(frozen=True)
class OtherPart:
    """A part of a kind not shown as text (an image, a file, a blob...): kept as sent."""

    kind: str
    value: Any


Part = TextPart | ToolCall | ToolResult | OtherPart


@dataclass(frozen=True)
class Message:
    role: str
    parts: tuple[Part, ...]
    name: str | None = None
    finish_reason: str | None = None


@dataclass(frozen=True)
class Document:
    content: str | None
    id: str | None = None
    score: float | None = None
    metadata: Any = None


@dataclass(frozen=True)
class Conversation:
    """What one span says it did: a model call's messages, a tool's call, a retriever's
    documents, or plain input and output values; any of them may be empty."""

    system: tuple[Part, ...] = ()
    tools: tuple[Any, ...] = ()  # tool definitions, as sent
    input: tuple[Message, ...] = ()
    output: tuple[Message, ...] = ()
    finish_reasons: tuple[str, ...] = ()
    tool_call: ToolCall | None = None  # a tool span: what it was called with
    tool_result: ToolResult | None = None  # ... and what it returned
    query: str | None = None  # a retrieval span's query
    documents: tuple[Document, ...] = ()
    input_value: Any = None  # an input that is not messages (None: none)
    output_value: Any = None
    conventions: tuple[str, ...] = ()  # the spellings it was read from, for the reader
    truncated: bool = False  # a list was longer than MAX_ITEMS: the rest is in the fields view

    @property
    def messages(self) -> tuple[Message, ...]:
        return self.input + self.output


class Found:
    """What one extraction found so far: the first convention to give a field wins it, so the
    readers run in order of preference and each simply offers what it read."""

    def __init__(self) -> None:
        self.fields: dict[str, Any] = {}
        self.conventions: list[str] = []

    def take(self, name: str, value: Any, convention: str) -> None:
        if name in self.fields or value is None or (isinstance(value, (list, str)) and not value):
            return
        self.fields[name] = value
        if convention and convention not in self.conventions:
            self.conventions.append(convention)

    def __contains__(self, name: str) -> bool:
        return name in self.fields
