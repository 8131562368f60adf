"""One message or part in any provider's shape: OTel GenAI parts, OpenAI (chat completions and
responses), Anthropic, Gemini and Genkit content blocks, LangChain's serialised messages and
OpenInference's wrapped ones. `messages_in` finds the messages in a raw input or output value (a
Langfuse observation's, OpenInference's `input.value`): a list, `{"messages": [...]}`, one
message or a whole chat completion.

Every list is read through the reader (at most MAX_ITEMS items) and every message keeps at most
MAX_PARTS parts, so a hostile value costs bounded work.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tui.model.attributes import Node, Reader, at, leaf
from tui.model.chat.messages import Message, OtherPart, Part, TextPart, ToolCall, ToolResult
from tui.model.chat.text import dump

MAX_PARTS = 500  # parts read from one message

_ROLES = {
    "human": "user",
    "humanmessage": "user",
    "user": "user",
    "ai": "assistant",
    "aimessage": "assistant",
    "aimessagechunk": "assistant",
    "assistant": "assistant",
    "model": "assistant",
    "bot": "assistant",
    "system": "system",
    "systemmessage": "system",
    "developer": "developer",
    "tool": "tool",
    "toolmessage": "tool",
    "function": "tool",
    "functionmessage": "tool",
    "ipython": "tool",
}
_KNOWN_ROLES = frozenset(_ROLES.values())
_TEXT_TYPES = frozenset(["text", "input_text", "output_text"])
_REASONING_TYPES = frozenset(["reasoning", "thinking", "redacted_thinking"])
_CALL_TYPES = frozenset(
    [
        "tool_call",
        "tool-call",
        "tool_use",
        "server_tool_call",
        "server_tool_use",
        "function_call",
        "function",
    ]
)
_RESULT_TYPES = frozenset(
    [
        "tool_call_response",
        "tool-result",
        "tool_result",
        "server_tool_call_response",
        "function_call_output",
        "function_response",
    ]
)
_CALL_ID = ("id", "toolCallId", "call_id", "tool_call_id", "tool_use_id", "ref")


def _role(raw: str | None) -> str | None:
    if raw is None:
        return None
    return _ROLES.get(raw.strip().lower(), raw)


def _text_of(reader: Reader, value: Any) -> str | None:
    """Text that may be sent as a list of text blocks ([{"type": "text", "text": ...}])."""
    value = leaf(value)
    if isinstance(value, str):
        return value
    if not isinstance(value, (list, Node)):
        return None
    texts = []
    for item in reader.items(value):
        item = leaf(item)
        text = (
            item if isinstance(item, str) else reader.string(reader.node(item), "text", "content")
        )
        if text is None:
            return None  # not only text: keep the value as it is
        texts.append(text)
    return "\n".join(texts) if texts else None


def tool_content(reader: Reader, value: Any) -> Any:
    """A tool result's content: its text (parsed when it is JSON), or the value as sent."""
    value = reader.raw(value) if isinstance(value, Node) else value
    text = _text_of(reader, value) if isinstance(value, list) else None
    return reader.json(text if text is not None else value)


def _call(reader: Reader, node: Node) -> ToolCall:
    return ToolCall(
        reader.string(node, "name", "toolName", "function.name"),
        reader.json(reader.first(node, "arguments", "input", "args", "function.arguments")),
        reader.string(node, *_CALL_ID),
    )


def _result(reader: Reader, node: Node) -> ToolResult:
    content = reader.first(node, "response", "result", "output", "content")
    # The Vercel AI SDK wraps a result's value with its type: {"type": "json", "value": ...}.
    wrapped = reader.node(content) if isinstance(content, dict) else None
    if wrapped is not None and {"type", "value"} == wrapped.children.keys():
        content = reader.value(wrapped, "value")
    return ToolResult(
        tool_content(reader, content),
        reader.string(node, *_CALL_ID),
        reader.string(node, "name", "toolName"),
    )


def read_part(reader: Reader, item: Any) -> Part | None:
    """One part of a message, in any of the common shapes (GenAI parts, OpenAI, Anthropic,
    Gemini and OpenInference content blocks)."""
    item = leaf(item)
    if isinstance(item, str):
        return TextPart(item)
    node = reader.node(item)
    if node is None:
        return None if item is None else OtherPart("value", item)
    wrapped = at(node, "message_content")  # OpenInference: contents.M.message_content.*
    if wrapped is not None and at(node, "tool_call") is not None:
        return _tool_call(reader, node)  # its anthropic instrumentation's tool_use block
    if wrapped is not None:
        node = reader.node(wrapped) or node
    kind = (reader.string(node, "type") or "").strip().lower()
    if not kind:
        for key, reads in (
            ("functionCall", _call),  # Gemini
            ("toolRequest", _call),  # Genkit
            ("functionResponse", _result),
            ("toolResponse", _result),
        ):
            inner = reader.node(at(node, key))
            if inner is not None:
                return reads(reader, inner)
    if kind in _REASONING_TYPES:
        text = reader.string(node, "content", "thinking", "text", "reasoning")
        return TextPart(text or "", "reasoning")
    if kind in _CALL_TYPES:
        return _call(reader, node)
    if kind in _RESULT_TYPES:
        return _result(reader, node)
    text = reader.string(node, "content", "text")
    if text is not None and (kind in _TEXT_TYPES or not kind):
        return TextPart(text)
    if not kind and len(node.children) == 1:
        kind = next(iter(node.children))  # {"image_url": {...}}: name it by its one key
    return OtherPart(kind or "value", reader.raw(node))


def _tool_call(reader: Reader, item: Any) -> ToolCall | None:
    """One entry of a message's tool_calls: OpenAI ({id, function: {name, arguments}}),
    OpenInference ({tool_call: {id, function: {...}}}), flattened GenAI ({id, name,
    arguments}) or LangChain ({id, name, args})."""
    node = reader.node(item)
    if node is None:
        return None
    inner = at(node, "tool_call")
    if inner is not None:
        node = reader.node(inner) or node
    return _call(reader, node)


def content_parts(reader: Reader, content: Any) -> list[Part]:
    """A message's content: text, or a list of content blocks (also sent as a JSON string,
    as OpenLLMetry does for multimodal content)."""
    content = leaf(content)
    if isinstance(content, str):
        parsed = reader.json(content)
        if not (
            isinstance(parsed, list)
            and parsed
            and all(isinstance(i, dict) and "type" in i for i in parsed)
        ):
            return [TextPart(content)]
        content = parsed
    if isinstance(content, (list, Node)):
        parts = [read_part(reader, entry) for entry in reader.items(content)[:MAX_PARTS]]
        return [p for p in parts if p is not None]
    if isinstance(content, dict):
        part = read_part(reader, content)
        return [part] if part is not None else []
    return []


def read_message(reader: Reader, item: Any, default_role: str) -> Message | None:
    """One message in any common shape; None if `item` is no message at all."""
    item = leaf(item)
    if isinstance(item, str):
        parsed = reader.json(item)
        if not isinstance(parsed, dict):
            return Message(default_role, (TextPart(item),))
        item = parsed
    outer = reader.node(item)
    if outer is None:
        return None
    node = outer
    # OpenInference wraps each message ({"message": {...}}); LangChain keeps the fields in
    # kwargs (serialised) or data (messages_to_dict).
    for wrapper in ("message", "kwargs", "data"):
        inner = at(node, wrapper)
        if inner is not None and not ({"role", "content", "parts"} & node.children.keys()):
            node = reader.node(inner) or node
            break
    role = _role(reader.string(node, "role", "author"))
    if role is None:
        typed = _role(reader.string(node, "type") or reader.string(outer, "type"))
        role = typed if typed in _KNOWN_ROLES else None
    if role is None:
        ident = reader.value(outer, "id")  # LangChain: ["langchain", ..., "HumanMessage"]
        if isinstance(ident, list) and ident and isinstance(ident[-1], str):
            role = _ROLES.get(ident[-1].lower())
    parts: list[Part] = []
    for entry in reader.items(at(node, "parts"))[:MAX_PARTS]:
        part = read_part(reader, entry)
        if part is not None:
            parts.append(part)
    content = at(node, "content")
    tool_call_id = reader.string(node, "tool_call_id", "toolCallId")
    if content is not None and not parts:
        if role == "tool" or tool_call_id:
            raw = reader.raw(content)
            # Results sent as typed parts (the Vercel AI SDK's `tool-result`) are read as
            # parts; any other content is the one result's, as sent.
            blocks = content_parts(reader, raw) if isinstance(reader.json(raw), list) else []
            if blocks and all(isinstance(part, ToolResult) for part in blocks):
                parts += blocks
            elif raw is not None:
                parts.append(
                    ToolResult(tool_content(reader, raw), tool_call_id, reader.string(node, "name"))
                )
        else:
            parts += content_parts(reader, content)
    # OpenInference's multimodal contents; its openai-agents instrumentation sends the same text
    # as `content` too, which then wins (the answer is shown once).
    said = any(not isinstance(p, TextPart) or p.text for p in parts)
    for entry in [] if said else reader.items(at(node, "contents"))[:MAX_PARTS]:
        part = read_part(reader, entry)
        if part is not None:
            parts.append(part)
    if content is None and not parts:
        text = reader.string(node, "text")
        if text is not None:
            parts.append(TextPart(text))
    for entry in reader.items(at(node, "tool_calls"))[:MAX_PARTS]:
        call = _tool_call(reader, entry)
        if call is not None:
            parts.append(call)
    legacy = reader.node(at(node, "function_call"))  # OpenAI's function calling before tools
    if legacy is not None:
        parts.append(_call(reader, legacy))
    if role is None and not parts:
        return None
    if len(parts) > 1:
        parts = _said_once(parts)
    return Message(
        role or default_role,
        tuple(parts[:MAX_PARTS]),
        None if role == "tool" else reader.string(node, "name"),
        reader.string(node, "finish_reason", "finishReason", "stop_reason")
        or reader.string(outer, "finish_reason"),
    )


def _said_once(parts: list[Part]) -> list[Part]:
    """The parts without empty text beside others (LangChain's AIMessage that only calls a
    tool) and without a tool call sent twice (OpenInference's anthropic instrumentation sends
    each in the message's `tool_calls` and again in its `contents`)."""
    kept: list[Part] = []
    calls: set[tuple[str | None, str | None, str]] = set()
    for part in parts:
        if isinstance(part, TextPart) and not part.text:
            continue
        if isinstance(part, ToolCall):
            key = (part.id, part.name, dump(part.arguments))
            if key in calls:
                continue
            calls.add(key)
        kept.append(part)
    return kept or parts[:1]


def read_messages(reader: Reader, value: Any, default_role: str) -> list[Message]:
    messages = []
    for item in reader.items(value):
        message = read_message(reader, item, default_role)
        if message is not None:
            messages.append(message)
    return messages


def _looks_like_messages(reader: Reader, items: list[Any]) -> bool:
    """Whether a list is one of messages (its first items have a role, parts or a wrapper)."""
    if not items:
        return False
    for item in items[:3]:
        node = reader.node(item)
        if node is None:
            return False
        if {"role", "parts", "message", "kwargs"} & node.children.keys():
            continue
        if _role(reader.string(node, "type")) not in _KNOWN_ROLES:
            return False
    return True


@dataclass
class Exchange:
    """Messages found in a raw input or output value (Langfuse's, OpenInference's input.value)."""

    messages: list[Message] = field(default_factory=list)
    system: list[Part] = field(default_factory=list)
    tools: list[Any] = field(default_factory=list)
    finish_reasons: list[str] = field(default_factory=list)


def messages_in(reader: Reader, value: Any, default_role: str) -> Exchange | None:
    """The messages in a raw value: a list of messages, {"messages": [...]} (with "system" and
    "tools"), one message, or an OpenAI chat completion. None if it holds none."""
    value = reader.json(leaf(value))
    if isinstance(value, list):
        return (
            Exchange(read_messages(reader, value, default_role))
            if _looks_like_messages(reader, value)
            else None
        )
    node = reader.node(value)
    if node is None:
        return None
    children = node.children
    if "messages" in children:
        found = Exchange(read_messages(reader, children["messages"], default_role))
        system = children.get("system")
        if system is not None:
            found.system = content_parts(reader, reader.raw(system))
        found.tools = list(reader.items(children.get("tools")))
        return found if found.messages or found.system else None
    if "choices" in children:  # an OpenAI chat completion
        found = Exchange()
        for choice in reader.items(children["choices"]):
            choice_node = reader.node(choice)
            message = read_message(reader, at(choice_node, "message"), default_role)
            if message is not None:
                found.messages.append(message)
            reason = reader.string(choice_node, "finish_reason")
            if reason:
                found.finish_reasons.append(reason)
        return found if found.messages else None
    if {"role", "parts"} & children.keys():
        message = read_message(reader, node, default_role)
        if message is not None:
            return Exchange([message])
    return None
