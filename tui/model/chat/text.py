"""A conversation as plain text, for span search and one-line previews: a tool call as its name
and arguments, a result or any other value as compact JSON. Nothing here is markup: what
reaches the screen goes through tui/model/text.py."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from tui.model.chat.messages import Conversation, Message, Part, TextPart, ToolCall, ToolResult


def dump(value: Any) -> str:
    """Text as it is; anything else as JSON, or its str() when it is not JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, TypeError, RecursionError):
        return str(value)


def part_text(part: Part) -> str:
    """A part as text: the text, a tool call as its name and arguments, a result's content."""
    if isinstance(part, TextPart):
        return part.text
    if isinstance(part, ToolCall):
        arguments = "" if part.arguments is None else dump(part.arguments)
        return f"{part.name or ''}({arguments})"
    if isinstance(part, ToolResult):
        return dump(part.content)
    return dump(part.value)


def message_text(message: Message) -> str:
    return "\n\n".join(part_text(part) for part in message.parts)


def conversation_text(conv: Conversation) -> str:
    """Every text of a conversation in one string (what span search looks in)."""
    pieces = [part_text(p) for p in conv.system]
    pieces += [message_text(m) for m in conv.messages]
    for part in (conv.tool_call, conv.tool_result):
        if part is not None:
            pieces.append(part_text(part))
    if conv.query:
        pieces.append(conv.query)
    pieces += [d.content for d in conv.documents if d.content]
    pieces += [dump(v) for v in (conv.input_value, conv.output_value) if v is not None]
    return "\n".join(pieces)


def said_before(message: Message) -> tuple[str, str]:
    """What identifies a message already read: its role and its text (a reply's finish reason
    or id aside, which a later call's copy of it lacks)."""
    return message.role, message_text(message)


def only_what_is_new(conv: Conversation, read: set[tuple[str, str]]) -> tuple[Conversation, int]:
    """The conversation without the leading input messages already `read` (a chat app sends the
    whole conversation so far on every call: a session read in order shows each turn once),
    nor a system prompt already read; and how many messages were left out."""
    skip = 0
    while skip < len(conv.input) and said_before(conv.input[skip]) in read:
        skip += 1
    system = "\n\n".join(part_text(p) for p in conv.system)
    new = replace(
        conv,
        input=conv.input[skip:],
        system=() if ("system", system) in read else conv.system,
    )
    return new, skip


def remember(conv: Conversation, read: set[tuple[str, str]]) -> None:
    """Add what a conversation shows to `read`."""
    if conv.system:
        read.add(("system", "\n\n".join(part_text(p) for p in conv.system)))
    read.update(said_before(m) for m in conv.messages)
