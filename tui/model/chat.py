"""Pure (no Textual): a span's attributes and extra fields -> the conversation they record.

Reads every common spelling: OTel GenAI (`gen_ai.input.messages` with role and parts, and the
older flattened `gen_ai.prompt.N.*` / `gen_ai.completion.N.*`), OpenInference
(`llm.input_messages.N.message.*`, `input.value`, `tool.*`, `retrieval.documents.N.document.*`),
Langfuse-style `input` / `output` (a string, an object or a list of messages in OpenAI,
Anthropic, Gemini or LangChain shapes) and the local service's own `llm.prompt`, `tool.*` and
`retrieval.documents`. Nested objects, JSON strings and flattened dotted keys are read alike,
numbered keys in numeric order (10 after 9). What matches none of them gives None: the caller
shows the JSON tree instead, so nothing is ever lost.

Nothing here raises on hostile input: every read is bounded (keys looked at, items per list,
characters of JSON parsed) and nothing recurses.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tui.model.attributes import MAX_ITEMS, Node, Reader, at, is_index, leaf

# Bounds on the work done for one span, whatever it holds (and see tui/model/attributes.py).
MAX_PARTS = 500  # parts read from one message
PREVIEW_CHARS = 300


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


# -- messages and parts ----------------------------------------------------------------------------

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


def _content(reader: Reader, value: Any) -> Any:
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
    return ToolResult(
        _content(reader, reader.first(node, "response", "result", "output", "content")),
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


def _content_parts(reader: Reader, content: Any) -> list[Part]:
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
            if raw is not None:
                parts.append(
                    ToolResult(_content(reader, raw), tool_call_id, reader.string(node, "name"))
                )
        else:
            parts += _content_parts(reader, content)
    for entry in reader.items(at(node, "contents"))[:MAX_PARTS]:  # OpenInference multimodal
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
    return Message(
        role or default_role,
        tuple(parts[:MAX_PARTS]),
        None if role == "tool" else reader.string(node, "name"),
        reader.string(node, "finish_reason", "finishReason", "stop_reason")
        or reader.string(outer, "finish_reason"),
    )


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
            found.system = _content_parts(reader, reader.raw(system))
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


# -- tools and documents -----------------------------------------------------------------------------


def read_documents(reader: Reader, value: Any) -> list[Document]:
    """Retrieved documents: OpenInference's documents.N.document.{id,score,content,metadata},
    GenAI's [{id, score, content}], LangChain's [{page_content, metadata}], or plain text."""
    node = reader.node(value) if not isinstance(value, (list, str)) else None
    if node is not None and "documents" in node.children and not any(map(is_index, node.children)):
        value = node.children["documents"]
    documents = []
    for item in reader.items(value):
        item = leaf(item)
        if isinstance(item, str):
            documents.append(Document(item))
            continue
        node = reader.node(item)
        if node is None:
            continue
        inner = at(node, "document")
        if inner is not None:
            node = reader.node(inner) or node
        content = reader.first(node, "content", "page_content", "pageContent", "text")
        if content is not None and not isinstance(content, str):
            content = _dump(content)
        metadata = reader.json(reader.value(node, "metadata"))
        documents.append(
            Document(
                content,
                reader.string(node, "id", "document_id", "doc_id", "source_id", "metadata.id"),
                _number(reader.first(node, "score", "relevance_score", "similarity", "distance")),
                metadata,
            )
        )
    return documents


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def read_tool_definitions(reader: Reader, tree: Node) -> tuple[list[Any], str]:
    for path, convention in (
        ("gen_ai.tool.definitions", "OTel GenAI"),
        ("llm.request.functions", "OTel GenAI (flattened)"),
    ):
        found = [reader.json(reader.raw(_as_node(i))) for i in reader.items(at(tree, path))]
        if found:
            return found, convention
    definitions = []
    for item in reader.items(at(tree, "llm.tools")):  # OpenInference: llm.tools.N.tool.json_schema
        node = reader.node(item)
        schema = reader.value(node, "tool.json_schema")
        definitions.append(reader.json(schema) if schema is not None else reader.raw(node))
    return definitions, "OpenInference"


def _as_node(item: Any) -> Node:
    if isinstance(item, Node):
        return item
    node = Node()
    node.value = item
    return node


# -- the span as a whole -------------------------------------------------------------------------------

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
)
_RETRIEVAL_KINDS = frozenset(["retrieval", "retriever", "reranker"])


def span_kind(reader: Reader, tree: Node, kind: str | None) -> str:
    """The span's kind in lower case, from its own field or the conventions' attributes."""
    if kind:
        return kind.strip().lower()
    declared = reader.string(tree, "openinference.span.kind")
    if declared:
        return declared.lower()
    operation = reader.string(tree, "gen_ai.operation.name") or ""
    return _OPERATIONS.get(operation.lower(), "")


class _Found:
    """What an extraction found so far: the first convention to give a field wins it."""

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


def conversation(
    attributes: Any, extras: Mapping[str, Any] | None = None, kind: str | None = None
) -> Conversation | None:
    """The conversation a span records (from its attributes, its extra fields such as
    Langfuse's `input`/`output`, and its kind), or None when no convention matches."""
    reader = Reader()
    tree = reader.tree(attributes if isinstance(attributes, dict) else {}, HEADS)
    extra = reader.tree({k: v for k, v in (extras or {}).items() if k in ("input", "output")})
    kind_name = span_kind(reader, tree, kind)
    found = _Found()
    _read_model_call(reader, tree, found)
    raw_in, raw_in_from = _raw_value(reader, tree, extra, "input")
    raw_out, raw_out_from = _raw_value(reader, tree, extra, "output")
    if kind_name == "tool" or any(at(tree, key) is not None for key in _TOOL_KEYS):
        _read_tool(reader, tree, found, (raw_in, raw_in_from), (raw_out, raw_out_from))
    elif kind_name in _RETRIEVAL_KINDS:
        _read_retrieval(reader, tree, found, (raw_in, raw_in_from), (raw_out, raw_out_from))
    else:
        _read_documents(reader, tree, found)
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
        # The local service's own spelling: llm.prompt and llm.completion as text.
        prompt = reader.string(tree, "llm.prompt")
        if prompt:
            found.take("input", [Message("user", (TextPart(prompt),))], "tracetui")
        completion = reader.string(tree, "llm.completion")
        if completion:
            found.take("output", [Message("assistant", (TextPart(completion),))], "tracetui")
    if not found.fields:
        return None
    fields = found.fields
    output = tuple(fields.get("output", ()))
    reasons = fields.get("finish_reasons") or [m.finish_reason for m in output if m.finish_reason]
    return Conversation(
        system=tuple(fields.get("system", ())),
        tools=tuple(fields.get("tools", ())),
        input=tuple(fields.get("input", ())),
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


def _read_model_call(reader: Reader, tree: Node, found: _Found) -> None:
    """Messages, system instructions, tool definitions and finish reasons in the attributes."""
    genai = "OTel GenAI"
    found.take("input", read_messages(reader, at(tree, "gen_ai.input.messages"), "user"), genai)
    found.take(
        "output", read_messages(reader, at(tree, "gen_ai.output.messages"), "assistant"), genai
    )
    system = at(tree, "gen_ai.system_instructions")
    if system is not None:
        found.take("system", _content_parts(reader, system), genai)
    # Before GenAI 1.37 (and OpenLLMetry): flattened gen_ai.prompt.N.*, gen_ai.completion.N.*
    for prefix, name, role in (
        ("gen_ai.prompt", "input", "user"),
        ("gen_ai.completion", "output", "assistant"),
        ("llm.prompts", "input", "user"),
        ("llm.completions", "output", "assistant"),
    ):
        node = at(tree, prefix)
        if node is None:
            continue
        plain = node.value if not node.children else None
        if isinstance(plain, str) and not isinstance(reader.json(plain), (list, dict)):
            found.take(name, [Message(role, (TextPart(plain),))], f"{genai} (flattened)")
        else:
            found.take(name, read_messages(reader, node, role), f"{genai} (flattened)")
    found.take(
        "input", read_messages(reader, at(tree, "llm.input_messages"), "user"), "OpenInference"
    )
    found.take(
        "output",
        read_messages(reader, at(tree, "llm.output_messages"), "assistant"),
        "OpenInference",
    )
    definitions, convention = read_tool_definitions(reader, tree)
    found.take("tools", definitions, convention)
    reasons = reader.json(reader.value(tree, "gen_ai.response.finish_reasons"))
    if isinstance(reasons, str):
        reasons = [reasons]
    if isinstance(reasons, list):
        found.take("finish_reasons", [str(r) for r in reasons[:MAX_ITEMS] if r], genai)


def _read_tool(
    reader: Reader,
    tree: Node,
    found: _Found,
    raw_in: tuple[Any, str],
    raw_out: tuple[Any, str],
) -> None:
    """A tool span: its name and call id, the arguments it got and the result it returned."""
    arguments: tuple[Any, str] = (None, "")
    for path, convention in (
        ("gen_ai.tool.call.arguments", "OTel GenAI"),
        ("tool.arguments", "tracetui"),
        ("tool_call.function.arguments", "OpenInference"),
    ):
        value = reader.value(tree, path)
        if value is not None:
            arguments = (value, convention)
            break
    else:
        arguments = raw_in
    result: tuple[Any, str] = (None, "")
    for path, convention in (
        ("gen_ai.tool.call.result", "OTel GenAI"),
        ("tool.result", "tracetui"),
    ):
        value = reader.value(tree, path)
        if value is not None:
            result = (value, convention)
            break
    else:
        result = raw_out
    name = reader.string(tree, "gen_ai.tool.name", "tool.name", "tool_call.function.name")
    call_id = reader.string(tree, "gen_ai.tool.call.id", "tool_call.id")
    if arguments[0] is not None or name:
        found.take("tool_call", ToolCall(name, reader.json(arguments[0]), call_id), arguments[1])
    if result[0] is not None:
        found.take("tool_result", ToolResult(_content(reader, result[0]), call_id, name), result[1])


def _read_documents(reader: Reader, tree: Node, found: _Found) -> bool:
    for path, convention in (
        ("gen_ai.retrieval.documents", "OTel GenAI"),
        ("retrieval.documents", "OpenInference"),
        ("reranker.output_documents", "OpenInference"),
        ("reranker.input_documents", "OpenInference"),
    ):
        documents = read_documents(reader, at(tree, path))
        if documents:
            found.take("documents", documents, convention)
            return True
    return False


def _read_retrieval(
    reader: Reader,
    tree: Node,
    found: _Found,
    raw_in: tuple[Any, str],
    raw_out: tuple[Any, str],
) -> None:
    """A retrieval span: its query and the documents it found."""
    if not _read_documents(reader, tree, found) and raw_out[0] is not None:
        documents = read_documents(reader, raw_out[0])
        if documents:
            found.take("documents", documents, raw_out[1])
        else:
            found.take("output_value", raw_out[0], raw_out[1])
    query = reader.string(tree, "gen_ai.retrieval.query.text", "reranker.query")
    if query is not None:
        found.take(
            "query", query, "OTel GenAI" if at(tree, "gen_ai.retrieval") else "OpenInference"
        )
    elif raw_in[0] is not None:
        value = reader.json(raw_in[0])
        text = (
            value
            if isinstance(value, str)
            else reader.string(reader.node(value), "query", "input", "question")
        )
        if text is not None:
            found.take("query", text, raw_in[1])
        else:
            found.take("input_value", value, raw_in[1])


def _raw_value(reader: Reader, tree: Node, extra: Node, name: str) -> tuple[Any, str]:
    """A raw input or output and where it came from: OpenInference's input.value (parsed when
    its mime type says JSON, or it has none), Langfuse's field or its OTel attribute, or a
    plain attribute of that name."""
    node = at(tree, name)
    if node is not None and "value" in node.children:
        value = reader.raw(node.children["value"])
        mime = reader.string(node, "mime_type") or ""
        return (reader.json(value) if "json" in mime or not mime else value), "OpenInference"
    for value, source in (
        (reader.raw(at(extra, name)), "Langfuse"),
        (reader.raw(at(tree, f"langfuse.observation.{name}")), "Langfuse"),
        (reader.raw(node), "input/output"),
    ):
        if value is not None:
            return value, source
    return None, ""


# -- text for search and previews -----------------------------------------------------------------


def _dump(value: Any) -> str:
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
        arguments = "" if part.arguments is None else _dump(part.arguments)
        return f"{part.name or ''}({arguments})"
    if isinstance(part, ToolResult):
        return _dump(part.content)
    return _dump(part.value)


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
    pieces += [_dump(v) for v in (conv.input_value, conv.output_value) if v is not None]
    return "\n".join(pieces)


def _one_line(text: str, limit: int = PREVIEW_CHARS) -> str:
    return " ".join(text[: limit * 4].split())[:limit]


def preview(value: Any) -> str | None:
    """A short one-line preview of a trace's input: the last user message of a conversation
    (in a multi-turn history, the one this trace answers), else the text, else compact JSON."""
    if value is None or value == "":
        return None
    reader = Reader()
    exchange = messages_in(reader, value, "user")
    if exchange is not None and exchange.messages:
        users = [m for m in exchange.messages if m.role == "user"] or exchange.messages
        return _one_line(message_text(users[-1])) or None
    parsed = reader.json(value)
    if isinstance(parsed, str):
        return _one_line(parsed) or None
    node = reader.node(parsed)
    text = reader.string(node, "input", "question", "query", "prompt", "text", "message")
    if text:
        return _one_line(text)
    return _one_line(_dump(parsed)) or None


PREVIEW_FIELDS = ("input_preview", "inputPreview", "preview", "input")


def trace_preview(*sources: Any) -> str | None:
    """A trace's input preview from its fields or attributes: the preview a server made
    (`input_preview`, `preview`), or its `input` (Langfuse sends one on each trace)."""
    for source in sources:
        if isinstance(source, Mapping):
            for key in PREVIEW_FIELDS:
                found = preview(source.get(key))
                if found:
                    return found
    return None


# -- a trace's own attributes: who, which session, tags ---------------------------------------------

FACTS = {
    "user": ("user.id", "user_id", "userId", "langfuse.user.id", "enduser.id", "user"),
    "session": (
        "session.id",
        "session_id",
        "sessionId",
        "langfuse.session.id",
        "gen_ai.conversation.id",
        "conversation_id",
        "thread_id",
        "threadId",
    ),
    "tags": ("tags", "langfuse.trace.tags", "langfuse.tags", "tag.tags"),
    "env": ("environment", "deployment.environment", "langfuse.environment"),
    "release": ("release", "langfuse.release", "service.version"),
}


def trace_facts(*sources: Any) -> list[tuple[str, str]]:
    """(label, value) for the user, session, tags, environment and release that a trace's
    attributes or fields name, each read in its common spellings (`user.id`, `userId`,
    `langfuse.user.id`...; nested or dotted)."""
    reader = Reader()
    trees = [reader.tree(s) for s in sources if isinstance(s, Mapping)]
    facts = []
    for label, paths in FACTS.items():
        for tree in trees:
            value = reader.json(reader.first(tree, *paths))
            if isinstance(value, dict):
                value = reader.string(reader.node(value), "id", "name")
            if isinstance(value, list):
                value = ", ".join(str(v) for v in value[:20] if isinstance(v, (str, int, float)))
            if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value):
                facts.append((label, str(value)))
                break
    return facts
