"""The OTel GenAI conventions: `gen_ai.input.messages` and `gen_ai.output.messages` (messages
with a role and parts), `gen_ai.system_instructions`, `gen_ai.tool.definitions` and
`gen_ai.response.finish_reasons`; and the flattened spelling that GenAI used before 1.37 and
OpenLLMetry still sends (`gen_ai.prompt.N.*`, `gen_ai.completion.N.*`, `llm.prompts`,
`llm.completions`, `llm.request.functions`).

A tool span's and a retrieval span's GenAI attributes are read beside the other conventions'
(tui/model/chat/tools_and_documents.py), where the first convention that has a field wins it.
"""

from __future__ import annotations

from typing import Any

from tui.model.attributes import MAX_ITEMS, Node, Reader, at
from tui.model.chat.messages import Found, Message, TextPart
from tui.model.chat.shapes import content_parts, read_messages

GENAI = "OTel GenAI"
FLATTENED = "OTel GenAI (flattened)"

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
