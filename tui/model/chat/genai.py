"""The OTel GenAI conventions: `gen_ai.input.messages` and `gen_ai.output.messages` (messages
with a role and parts), `gen_ai.system_instructions`, `gen_ai.tool.definitions` and
`gen_ai.response.finish_reasons`; and the flattened spelling that GenAI used before 1.37 and
OpenLLMetry still sends (`gen_ai.prompt.N.*`, `gen_ai.completion.N.*`, `llm.prompts`,
`llm.completions`, `llm.request.functions`).

The messages may also come as events of the span rather than attributes (read_genai_events):
one log event per message (`gen_ai.user.message`, `gen_ai.choice`, ...) or one
`gen_ai.client.inference.operation.details` holding the structured attributes, as the local
service joins them into the span (`tracetui.logs`) or as span events (`tracetui.events`).

A tool span's and a retrieval span's GenAI attributes are read beside the other conventions'
(tui/model/chat/tools_and_documents.py), where the first convention that has a field wins it.
"""

from __future__ import annotations

from typing import Any

from tui.model.attributes import MAX_ITEMS, Node, Reader, at
from tui.model.chat.messages import Found, Message, TextPart
from tui.model.chat.shapes import content_parts, read_message, read_messages

GENAI = "OTel GenAI"
FLATTENED = "OTel GenAI (flattened)"
EVENTS = "OTel GenAI (log events)"

# The events of one message each, by the role of their message (the content in the body).
MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
CHOICE_EVENT = "gen_ai.choice"
DETAILS_EVENT = "gen_ai.client.inference.operation.details"

# The flattened messages: the prefix, the field it fills and the role its messages default to.
FLATTENED_MESSAGES = (
    ("gen_ai.prompt", "input", "user"),
    ("gen_ai.completion", "output", "assistant"),
    ("llm.prompts", "input", "user"),
    ("llm.completions", "output", "assistant"),
)


def read_genai_messages(reader: Reader, tree: Node, found: Found) -> None:
    """The messages and system instructions, in the structured spelling and then the flattened."""
    found.take("input", read_messages(reader, at(tree, "gen_ai.input.messages"), "user"), GENAI)
    found.take(
        "output", read_messages(reader, at(tree, "gen_ai.output.messages"), "assistant"), GENAI
    )
    system = at(tree, "gen_ai.system_instructions")
    if system is not None:
        found.take("system", content_parts(reader, system), GENAI)
    for prefix, name, role in FLATTENED_MESSAGES:
        node = at(tree, prefix)
        if node is None:
            continue
        plain = node.value if not node.children else None
        if isinstance(plain, str) and not isinstance(reader.json(plain), (list, dict)):
            found.take(name, [Message(role, (TextPart(plain),))], FLATTENED)
        else:
            found.take(name, read_messages(reader, node, role), FLATTENED)


def read_genai_tool_definitions(reader: Reader, tree: Node) -> tuple[list[Any], str]:
    """The tools offered to the model, as sent, and the spelling they were found in (an empty
    list when the span names none in either GenAI spelling)."""
    for path, convention in (
        ("gen_ai.tool.definitions", GENAI),
        ("llm.request.functions", FLATTENED),
    ):
        found = [reader.json(reader.raw(_as_node(i))) for i in reader.items(at(tree, path))]
        if found:
            return found, convention
    return [], GENAI


def _as_node(item: Any) -> Node:
    if isinstance(item, Node):
        return item
    node = Node()
    node.value = item
    return node


def read_genai_finish_reasons(reader: Reader, tree: Node, found: Found) -> None:
    """`gen_ai.response.finish_reasons`: a list, a JSON array or one reason."""
    reasons = reader.json(reader.value(tree, "gen_ai.response.finish_reasons"))
    if isinstance(reasons, str):
        reasons = [reasons]
    if isinstance(reasons, list):
        found.take("finish_reasons", [str(r) for r in reasons[:MAX_ITEMS] if r], GENAI)


def read_genai_events(reader: Reader, events: Any, found: Found) -> None:
    """The messages recorded as GenAI events (a list of `{name, attributes, body}`), read
    only where the span's attributes gave none."""
    inputs: list[Message] = []
    outputs: list[Message] = []
    for item in reader.items(events):
        event = reader.node(item)
        name = reader.string(event, "name")
        if name is None:
            continue
        body = reader.raw(at(event, "body"))
        body = body if isinstance(body, dict) else {}
        if name in MESSAGE_EVENTS:
            role = MESSAGE_EVENTS[name]
            fields = {"role": role, **body}
            if role == "tool" and "id" in body:  # the tool call it answers
                fields["tool_call_id"] = body["id"]
            message = read_message(reader, fields, role)
            if message is not None and message.parts:
                inputs.append(message)
        elif name == CHOICE_EVENT:
            said = body.get("message")
            fields = {"role": "assistant", **(said if isinstance(said, dict) else {})}
            fields["finish_reason"] = body.get("finish_reason")
            message = read_message(reader, fields, "assistant")
            if message is not None:
                outputs.append(message)
        elif name == DETAILS_EVENT:
            details = Found()
            read_genai_messages(reader, at(event, "attributes") or Node(), details)
            for field in ("input", "output", "system"):
                found.take(field, details.fields.get(field), EVENTS)
    found.take("input", inputs, EVENTS)
    found.take("output", outputs, EVENTS)
