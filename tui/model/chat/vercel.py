"""The Vercel AI SDK's telemetry (`ai`, `experimental_telemetry`): its messages live in its own
attributes, beside the few `gen_ai.*` ones it also sets (model, usage, finish reasons).

- an operation span (`ai.generateText`, `ai.streamText`, ...): `ai.prompt`, the call's input
  as JSON `{system, prompt, messages}` (`prompt` a string or messages);
- a provider call (`ai.generateText.doGenerate`, `ai.streamText.doStream`, ...):
  `ai.prompt.messages` (the messages sent, in the SDK's own shape: content parts of type
  `text`, `tool-call`, `tool-result`), `ai.prompt.tools` (one JSON text per tool offered);
- both: `ai.response.text`, `ai.response.reasoning` and `ai.response.toolCalls` (JSON list of
  `{toolCallId, toolName, input}`), the answer, and `ai.response.finishReason`;
- a tool span (`ai.toolCall`): `ai.toolCall.name`, `.id`, `.args` and `.result`.

The span's kind comes from `ai.operationId` (VERCEL_OPERATIONS) when nothing else names it.
"""

from __future__ import annotations

from typing import Any

from tui.model.attributes import Node, Reader, at
from tui.model.chat.messages import Found, Message, Part, TextPart, ToolCall, ToolResult
from tui.model.chat.shapes import content_parts, read_messages, tool_content

VERCEL = "Vercel AI SDK"

# The span kinds the SDK's operation ids name: its provider calls are model calls, its tool
# executions tools; the operations around them (ai.generateText...) are chains of those.
CALL_SUFFIXES = (".doGenerate", ".doStream", ".doEmbed")
TOOL_OPERATIONS = frozenset(["ai.toolCall"])


def vercel_kind(operation: str | None) -> str:
    """The kind an `ai.operationId` names ("" when it is none of the SDK's)."""
    if not operation or not operation.startswith("ai."):
        return ""
    if operation in TOOL_OPERATIONS:
        return "tool"
    if operation.endswith(CALL_SUFFIXES):
        return "llm"
    return "chain"


def read_vercel_tool(reader: Reader, tree: Node, found: Found) -> None:
    """An `ai.toolCall` span's call and result."""
    call = at(tree, "ai.toolCall")
    if call is None:
        return
    name = reader.string(call, "name")
    call_id = reader.string(call, "id")
    arguments = reader.value(call, "args")
    if arguments is not None or name:
        found.take("tool_call", ToolCall(name, reader.json(arguments), call_id), VERCEL)
    result = reader.value(call, "result")
    if result is not None:
        found.take("tool_result", ToolResult(tool_content(reader, result), call_id, name), VERCEL)


def read_vercel_messages(reader: Reader, tree: Node, found: Found) -> None:
    """A model call's or an operation's messages, tools offered and answer."""
    prompt = at(tree, "ai.prompt")
    if prompt is None and at(tree, "ai.response") is None:
        return
    messages = read_messages(reader, at(prompt, "messages"), "user")
    if messages:
        found.take("input", messages, VERCEL)
    else:
        _read_prompt(reader, reader.raw(prompt), found)
    tools = [reader.json(item) for item in reader.items(at(prompt, "tools"))]
    found.take("tools", [t for t in tools if t is not None], VERCEL)
    answer = _answer(reader, at(tree, "ai.response"))
    if answer is not None:
        found.take("output", [answer], VERCEL)


def _read_prompt(reader: Reader, value: Any, found: Found) -> None:
    """`ai.prompt`: JSON `{system, prompt, messages}`; `prompt` is text or messages."""
    node = reader.node(value)
    if node is None:
        if isinstance(value, str) and value:
            found.take("input", [Message("user", (TextPart(value),))], VERCEL)
        return
    system = reader.raw(at(node, "system"))
    if system is not None:
        found.take("system", content_parts(reader, system), VERCEL)
    messages: list[Message] = []
    for key in ("messages", "prompt"):
        entry = reader.json(reader.value(node, key))
        if isinstance(entry, str) and entry:
            messages.append(Message("user", (TextPart(entry),)))
        else:
            messages += read_messages(reader, entry, "user")
    found.take("input", messages, VERCEL)


def _answer(reader: Reader, response: Node | None) -> Message | None:
    """One assistant message from `ai.response.*`: reasoning, text, then the tool calls."""
    if response is None:
        return None
    parts: list[Part] = []
    reasoning = reader.string(response, "reasoning")
    if reasoning:
        parts.append(TextPart(reasoning, "reasoning"))
    text = reader.string(response, "text")
    if text:
        parts.append(TextPart(text))
    for item in reader.items(at(response, "toolCalls")):
        call = reader.node(item)
        if call is not None:
            parts.append(
                ToolCall(
                    reader.string(call, "toolName", "name"),
                    reader.json(reader.first(call, "input", "args", "arguments")),
                    reader.string(call, "toolCallId", "id"),
                )
            )
    if not parts:
        return None
    return Message("assistant", tuple(parts), None, reader.string(response, "finishReason"))
