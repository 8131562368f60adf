"""The OpenInference conventions (Arize Phoenix and its instrumentors): messages under
`llm.input_messages.N.message.*` and `llm.output_messages.N.message.*`, tools under
`llm.tools.N.tool.json_schema`, and a raw `input.value` / `output.value` whose
`input.mime_type` says whether it is JSON.

A message's own OpenInference shape (`message.contents.M.message_content.*`,
`message.tool_calls.N.tool_call.*`) is read with every other shape in
tui/model/chat/shapes.py; a tool span's and a retriever's attributes (`tool_call.function.*`,
`retrieval.documents`, `reranker.*`) beside the other conventions' in
tui/model/chat/tools_and_documents.py.
"""

from __future__ import annotations

from typing import Any

from tui.model.attributes import Node, Reader, at
from tui.model.chat.messages import Found
from tui.model.chat.shapes import read_messages

OPENINFERENCE = "OpenInference"


def read_openinference_messages(reader: Reader, tree: Node, found: Found) -> None:
    """The messages, and the span's `llm.finish_reason` (openai-agents' instrumentation sends
    the reason there, not on its output message). Messages that are only a role (LangGraph's
    root sends `llm.input_messages.0.message.role` alone) are not offered: the raw
    `input.value` then holds what was said."""
    for path, name, role in (
        ("llm.input_messages", "input", "user"),
        ("llm.output_messages", "output", "assistant"),
    ):
        messages = read_messages(reader, at(tree, path), role)
        if any(message.parts for message in messages):
            found.take(name, messages, OPENINFERENCE)
    reason = reader.string(tree, "llm.finish_reason")
    if reason:
        found.take("finish_reasons", [reason], OPENINFERENCE)


def read_openinference_tool_definitions(reader: Reader, tree: Node) -> list[Any]:
    """Each tool's JSON schema (parsed when sent as a string), or the tool as sent."""
    definitions = []
    for item in reader.items(at(tree, "llm.tools")):
        node = reader.node(item)
        schema = reader.value(node, "tool.json_schema")
        definitions.append(reader.json(schema) if schema is not None else reader.raw(node))
    return definitions


def holds_openinference_value(node: Node) -> bool:
    """Whether `input` / `output` is OpenInference's pair of `value` and `mime_type`."""
    return "value" in node.children


def openinference_value(reader: Reader, node: Node) -> Any:
    """The `value` below `node`, parsed when its mime type says JSON or it has none."""
    value = reader.raw(node.children["value"])
    mime = reader.string(node, "mime_type") or ""
    return reader.json(value) if "json" in mime or not mime else value
