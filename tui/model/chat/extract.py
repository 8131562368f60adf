"""The entry point: `conversation(...)` reads a span's attributes and extra fields in every
convention it knows, in order of preference, and builds the conversation they record.

The span's kind (its own field, OpenInference's `openinference.span.kind`, GenAI's
`gen_ai.operation.name` or the Vercel AI SDK's `ai.operationId`) picks the readers: a tool span's call and result, a retriever's query
and documents, else a model call's messages, whose raw input and output may also be Langfuse's
observation fields or a plain `input` / `output` attribute. What matches none gives None: the
caller shows the JSON tree instead, so nothing is ever lost.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tui.model.attributes import Node, Reader, at
from tui.model.chat.genai import (
    read_genai_events,
    read_genai_finish_reasons,
    read_genai_messages,
    read_genai_tool_definitions,
)
from tui.model.chat.messages import Conversation, Found, Message, TextPart
from tui.model.chat.openinference import (
    OPENINFERENCE,
    holds_openinference_value,
    openinference_value,
    read_openinference_messages,
    read_openinference_tool_definitions,
)
from tui.model.chat.shapes import messages_in
from tui.model.chat.text import message_text
from tui.model.chat.tools_and_documents import (
    Sourced,
    read_retrieval_span,
    read_span_documents,
    read_tool_span,
)
from tui.model.chat.vercel import read_vercel_messages, read_vercel_tool, vercel_kind

# The first segments of the attribute keys read here: the others are never looked at.
HEADS = frozenset(
    [
        "gen_ai",
        "llm",
        "input",
        "output",
        "tool",
        "tool_call",
        "retrieval",
        "reranker",
        "openinference",
        "langfuse",
        "ai",
        "traceloop",
    ]
)
LLM_KINDS = frozenset(["llm", "generation", "chat", "completion", "text_completion"])
_OPERATIONS = {
    "chat": "llm",
    "text_completion": "llm",
    "generate_content": "llm",
    "execute_tool": "tool",
    "retrieval": "retrieval",
    "embeddings": "embedding",
}
_TOOL_KEYS = (
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "tool.arguments",
    "tool.result",
    "ai.toolCall.name",
)
_RETRIEVAL_KINDS = frozenset(["retrieval", "retriever", "reranker"])
# OpenLLMetry's decorated functions (traceloop-sdk's @workflow, @task, @agent, @tool).
_TRACELOOP_KINDS = {"workflow": "chain", "task": "chain", "agent": "agent", "tool": "tool"}
MAX_QUOTED = 100_000  # characters of a JSON-quoted entity value decoded


def span_kind(reader: Reader, tree: Node, kind: str | None) -> str:
    """The span's kind in lower case, from its own field or the conventions' attributes."""
    if kind:
        return kind.strip().lower()
    declared = reader.string(tree, "openinference.span.kind")
    if declared:
        return declared.lower()
    operation = reader.string(tree, "gen_ai.operation.name") or ""
    return (
        _OPERATIONS.get(operation.lower(), "")
        or vercel_kind(reader.string(tree, "ai.operationId"))
        or _TRACELOOP_KINDS.get(reader.string(tree, "traceloop.span.kind") or "", "")
    )


def conversation(
    attributes: Any, extras: Mapping[str, Any] | None = None, kind: str | None = None
) -> Conversation | None:
    """The conversation a span records (from its attributes, its extra fields such as
    Langfuse's `input`/`output`, and its kind), or None when no convention matches."""
    reader = Reader()
    tree = reader.tree(attributes if isinstance(attributes, dict) else {}, HEADS)
    extra = reader.tree({k: v for k, v in (extras or {}).items() if k in ("input", "output")})
    kind_name = span_kind(reader, tree, kind)
    found = Found()
    _read_model_call(reader, tree, found)
    if isinstance(attributes, dict):  # messages as events: joined logs, then span events
        for events in ("tracetui.logs", "tracetui.events"):
            if events in attributes:
                read_genai_events(reader, attributes[events], found)
    raw_in, raw_in_from = _raw_value(reader, tree, extra, "input")
    raw_out, raw_out_from = _raw_value(reader, tree, extra, "output")
    if kind_name == "tool" or any(at(tree, key) is not None for key in _TOOL_KEYS):
        read_vercel_tool(reader, tree, found)
        read_tool_span(reader, tree, found, (raw_in, raw_in_from), (raw_out, raw_out_from))
    elif kind_name in _RETRIEVAL_KINDS:
        read_retrieval_span(reader, tree, found, (raw_in, raw_in_from), (raw_out, raw_out_from))
    else:
        read_span_documents(reader, tree, found)
        is_llm = kind_name in LLM_KINDS
        for value, name, role, source in (
            (raw_in, "input", "user", raw_in_from),
            (raw_out, "output", "assistant", raw_out_from),
        ):
            if value is None or name in found:
                continue
            exchange = messages_in(reader, value, role)
            if exchange is not None:
                found.take(name, exchange.messages, source)
                found.take("system", exchange.system, source)
                found.take("tools", exchange.tools, source)
                found.take("finish_reasons", exchange.finish_reasons, source)
            elif is_llm and isinstance(value, str):
                found.take(name, [Message(role, (TextPart(value),))], source)
            else:
                found.take(f"{name}_value", value, source)
        # The local service's own spelling, read last: llm.prompt and llm.completion as text.
        prompt = reader.string(tree, "llm.prompt")
        if prompt:
            found.take("input", [Message("user", (TextPart(prompt),))], "tracetui")
        completion = reader.string(tree, "llm.completion")
        if completion:
            found.take("output", [Message("assistant", (TextPart(completion),))], "tracetui")
    if not found.fields:
        return None
    fields = found.fields
    inputs = tuple(fields.get("input", ()))
    output = _after_echo(inputs, tuple(fields.get("output", ())))
    reasons = fields.get("finish_reasons") or [m.finish_reason for m in output if m.finish_reason]
    return Conversation(
        system=tuple(fields.get("system", ())),
        tools=tuple(fields.get("tools", ())),
        input=inputs,
        output=output,
        finish_reasons=tuple(str(r) for r in reasons),
        tool_call=fields.get("tool_call"),
        tool_result=fields.get("tool_result"),
        query=fields.get("query"),
        documents=tuple(fields.get("documents", ())),
        input_value=fields.get("input_value"),
        output_value=fields.get("output_value"),
        conventions=tuple(found.conventions),
        truncated=reader.truncated,
    )


def _read_model_call(reader: Reader, tree: Node, found: Found) -> None:
    """Messages, system instructions, tool definitions and finish reasons in the attributes."""
    read_genai_messages(reader, tree, found)
    read_openinference_messages(reader, tree, found)
    read_vercel_messages(reader, tree, found)
    definitions, convention = read_genai_tool_definitions(reader, tree)
    if not definitions:
        definitions, convention = read_openinference_tool_definitions(reader, tree), OPENINFERENCE
    found.take("tools", definitions, convention)
    read_genai_finish_reasons(reader, tree, found)


def _after_echo(inputs: tuple[Message, ...], output: tuple[Message, ...]) -> tuple[Message, ...]:
    """The output without the input it starts by repeating: a graph (LangGraph's root, its
    nodes) returns its whole state, the messages it was given and then the new ones."""
    echoed = len(inputs)
    if not echoed or len(output) < echoed:
        return output
    for given, returned in zip(inputs, output, strict=False):
        if given.role != returned.role or message_text(given) != message_text(returned):
            return output
    return output[echoed:]


def _unquoted(value: Any) -> Any:
    """OpenLLMetry sends every entity value as JSON, a returned string too (`"shipped"`)."""
    if isinstance(value, str) and 2 <= len(value) <= MAX_QUOTED and value[0] == value[-1] == '"':
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _raw_value(reader: Reader, tree: Node, extra: Node, name: str) -> Sourced:
    """A raw input or output and where it came from: OpenInference's input.value, Langfuse's
    field or its OTel attribute, OpenLLMetry's `traceloop.entity.input` / `.output`, or a
    plain attribute of that name."""
    node = at(tree, name)
    if node is not None and holds_openinference_value(node):
        return openinference_value(reader, node), OPENINFERENCE
    for value, source in (
        (reader.raw(at(extra, name)), "Langfuse"),
        (reader.raw(at(tree, f"langfuse.observation.{name}")), "Langfuse"),
        (_unquoted(reader.raw(at(tree, f"traceloop.entity.{name}"))), "OpenLLMetry"),
        (reader.raw(node), "input/output"),
    ):
        if value is not None:
            return value, source
    return None, ""
