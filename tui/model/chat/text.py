"""A conversation as plain text, for span search and one-line previews: a tool call as its name
and arguments, a result or any other value as compact JSON. Nothing here is markup: what
reaches the screen goes through tui/model/text.py."""

from __future__ import annotations

import json
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
