"""A trace's one-line input preview, for its list row: what the user asked.

Read from an ingested span's attributes (the JSON text the store writes), in this order:
OpenInference's `input.value`, OTel GenAI's `gen_ai.input.messages`, OpenInference's flattened
`llm.input_messages.N.message.*`, the older GenAI `gen_ai.prompt.N.*`, and a plain `input`.
From a list of messages it takes the last user message (in a multi-turn history that is the
question this call answers, not the conversation's opening). A JSON `input.value` holding
messages is read as messages.

The store asks this of a trace's root, whose input wins, and otherwise of the first span that
has one (a GenAI agent's root often carries no input; its first model call does). Bounded:
spans without any of the names are skipped on a substring test, without parsing, and bodies
over MAX_PARSED are not parsed at all.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_CHARS = 200
MAX_PARSED = 1_000_000  # characters of attribute JSON parsed to find a preview
MAX_FLATTENED_KEYS = 10_000  # attributes searched for flattened messages
MARKERS = (
    '"input.value"',
    '"gen_ai.input.messages"',
    '"llm.input_messages',
    '"gen_ai.prompt',
    '"input"',
)
_INDEXED = re.compile(
    r"^(llm\.input_messages|gen_ai\.prompt)\.(\d+)\.(?:message\.)?(role|content)$"
)


def preview_of(attributes_json: str) -> str | None:
    """The preview found in a span's attributes (JSON object text), or None."""
    if len(attributes_json) > MAX_PARSED or not any(m in attributes_json for m in MARKERS):
        return None
    try:
        attributes = json.loads(attributes_json)
    except ValueError:
        return None
    if not isinstance(attributes, dict):
        return None
    return preview_in(attributes)


def preview_in(attributes: dict[str, Any]) -> str | None:
    """The preview found in a span's attributes as decoded (ingest has them so: no parsing)."""
    # In order, each read only if the ones before found nothing; the flattened messages are
    # looked for among the keys of spans of a sane size only. (The caller leaves out spans
    # whose JSON is over MAX_PARSED, as preview_of does.)
    return (
        from_value(attributes.get("input.value"))
        or from_messages(attributes.get("gen_ai.input.messages"))
        or (from_flattened(attributes) if len(attributes) <= MAX_FLATTENED_KEYS else None)
        or from_value(attributes.get("input"))
    )


def one_line(text: str) -> str | None:
    """`text` on one line (control characters and runs of space become one space), cut."""
    line = " ".join(text[: MAX_CHARS * 4].split())
    if not line.isprintable():  # rare: control or format characters besides white space
        line = " ".join("".join(c if c.isprintable() else " " for c in line).split())
    if not line:
        return None
    return line if len(line) <= MAX_CHARS else line[: MAX_CHARS - 1] + "…"


def from_value(value: Any) -> str | None:
    """A plain input: text (JSON text of messages read as messages), or an object with one."""
    if isinstance(value, str):
        stripped = value.lstrip()
        if stripped[:1] in ("[", "{"):
            try:
                parsed = json.loads(stripped)
            except ValueError:
                return one_line(value)
            return from_value(parsed) or one_line(value)
        return one_line(value)
    if isinstance(value, list):
        return from_messages(value)
    if isinstance(value, dict):
        if "messages" in value:
            return from_messages(value["messages"])
        for key in ("question", "query", "input", "prompt", "text", "content"):
            if isinstance(value.get(key), str):
                return one_line(value[key])
    return None


def from_messages(value: Any) -> str | None:
    """The last user message's text in a list of messages (OTel GenAI parts, OpenAI content)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if not isinstance(value, list):
        return None
    for message in reversed(value[:1000]):
        if isinstance(message, dict) and message.get("role") in ("user", "human"):
            text = text_of(message)
            if text:
                return text
    return None


def text_of(message: dict[str, Any]) -> str | None:
    content = message.get("content", message.get("parts"))
    if isinstance(content, str):
        return one_line(content)
    if isinstance(content, list):
        texts = [
            part.get("content") or part.get("text")
            for part in content[:100]
            if isinstance(part, dict) and part.get("type", "text") == "text"
        ]
        return one_line(" ".join(t for t in texts if isinstance(t, str)))
    return None


def from_flattened(attributes: dict[str, Any]) -> str | None:
    """The last user message among flattened `prefix.N.[message.]role` / `content` keys."""
    messages: dict[tuple[str, int], dict[str, Any]] = {}
    for key, value in attributes.items():
        match = _INDEXED.match(key)
        if match:
            prefix, index, field = match.groups()
            messages.setdefault((prefix, int(index)), {})[field] = value
    for _, message in sorted(messages.items(), reverse=True):
        if message.get("role") in ("user", "human") and isinstance(message.get("content"), str):
            return one_line(message["content"])
    return None
