"""A trace's one-line input and output previews, for its list row: what the user asked, and
the answer.

Read from an ingested span's attributes (the JSON text the store writes), in this order:
OpenInference's `input.value`, OTel GenAI's `gen_ai.input.messages`, OpenInference's flattened
`llm.input_messages.N.message.*`, the older GenAI `gen_ai.prompt.N.*`, the Vercel AI SDK's
`ai.prompt`, and a plain `input`.
From a list of messages it takes the last user message (in a multi-turn history that is the
question this call answers, not the conversation's opening). A JSON `input.value` holding
messages is read as messages: a request's `messages` (Anthropic's, OpenAI's) or `input` (the
Responses API's, whose items carry text or `input_text` parts), or the list alone.

The store asks this of a trace's root, whose input wins, and otherwise of the first span that
has one (a GenAI agent's root often carries no input; its first model call does). Bounded:
spans without any of the names are skipped on a substring test, without parsing, and bodies
over MAX_PARSED are not parsed at all.

The output preview is read the same way from the output names (`output.value`,
`gen_ai.output.messages`, `llm.output_messages.N.message.*`, `gen_ai.completion.N.*`, the
Vercel AI SDK's `ai.response.text`, a plain `output`), taking the last assistant message of a
list: from the root, else from the trace's last LLM span that has one (ingest.summaries). A JSON
`output.value` is read as what it records: an Anthropic Message (`role` and text blocks), an
OpenAI Responses Response (its `output` items, `output_text` parts), a chat completion, or
messages.

JSON read as messages that holds no text (a model call that only calls a tool) gives no
preview rather than the JSON itself; JSON of no shape known here is shown as it is. Nothing
raises on odd JSON: too deep to parse is not parsed, like too big.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

MAX_CHARS = 200
MAX_PARSED = 1_000_000  # characters of attribute JSON parsed to find a preview
MAX_FLATTENED_KEYS = 10_000  # attributes searched for flattened messages
MARKERS = (
    '"input.value"',
    '"gen_ai.input.messages"',
    '"llm.input_messages',
    '"gen_ai.prompt',
    '"ai.prompt"',
    '"input"',
)
OUTPUT_MARKERS = (
    '"output.value"',
    '"gen_ai.output.messages"',
    '"llm.output_messages',
    '"gen_ai.completion',
    '"ai.response.text"',
    '"output"',
)
ANSWER_ROLES = ("assistant", "ai", "model")
QUESTION_ROLES = ("user", "human")
TEXT_PARTS = ("text", "input_text", "output_text")  # OpenAI Responses name theirs by direction
MAX_MESSAGES = 1000  # messages or items of one list looked through
NO_TEXT = ""  # messages were read and hold no text: not to be shown as the JSON they came in
_OUTPUT_INDEXED = re.compile(
    r"^(llm\.output_messages|gen_ai\.completion)\.(\d+)\.(?:message\.)?(role|content)$"
)
_INDEXED = re.compile(
    r"^(llm\.input_messages|gen_ai\.prompt)\.(\d+)\.(?:message\.)?(role|content)$"
)


def parsed_if_marked(attributes_json: str, markers: tuple[str, ...]) -> dict[str, Any] | None:
    """A span's attributes (JSON object text) parsed, if they are of a bounded size and name
    one of `markers`; None otherwise, without parsing."""
    if len(attributes_json) > MAX_PARSED or not any(m in attributes_json for m in markers):
        return None
    attributes = loaded(attributes_json)
    return attributes if isinstance(attributes, dict) else None


def loaded(text: str) -> Any:
    """`text` parsed as JSON, or None: when it is not JSON, over MAX_PARSED, or nested too deep
    for the parser (which raises RecursionError, not ValueError, for that)."""
    if len(text) > MAX_PARSED:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def preview_of(attributes_json: str) -> str | None:
    """The preview found in a span's attributes (JSON object text), or None."""
    attributes = parsed_if_marked(attributes_json, MARKERS)
    return None if attributes is None else preview_in(attributes)


def preview_in(attributes: dict[str, Any]) -> str | None:
    """The preview found in a span's attributes as decoded (ingest has them so: no parsing)."""
    # In order, each read only if the ones before found nothing; the flattened messages are
    # looked for among the keys of spans of a sane size only. (The caller leaves out spans
    # whose JSON is over MAX_PARSED, as preview_of does.)
    return (
        from_value(attributes.get("input.value"))
        or from_messages(attributes.get("gen_ai.input.messages"))
        or (from_flattened(attributes) if len(attributes) <= MAX_FLATTENED_KEYS else None)
        or from_value(attributes.get("ai.prompt"))  # the Vercel AI SDK
        or from_value(attributes.get("input"))
        or None  # NO_TEXT is no preview
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
        return from_json_text(value, from_value)
    if isinstance(value, list):
        return from_messages(value)
    if isinstance(value, dict):
        # A request's messages (chat APIs, as a list or JSON text), or the Responses API's input.
        found = from_messages(value.get("messages")) if "messages" in value else None
        if found is None and isinstance(value.get("input"), list):
            found = from_messages(value["input"])
        if found is not None:
            return found
        for key in ("question", "query", "input", "prompt", "text", "content"):
            if isinstance(value.get(key), str):
                return one_line(value[key])
    return None


def from_json_text(value: str, read: Callable[[Any], str | None]) -> str | None:
    """Text that may be JSON: what `read` finds in it parsed, else the text itself (JSON of no
    shape `read` knows included); NO_TEXT when `read` found messages without text."""
    stripped = value.lstrip()
    if stripped[:1] in ("[", "{"):
        parsed = loaded(stripped)
        if parsed is not None:
            found = read(parsed)
            if found is not None:
                return found
    return one_line(value)


def from_messages(value: Any) -> str | None:
    """The last user message's text in a list of messages (OTel GenAI parts, OpenAI content,
    Responses items); NO_TEXT when there are messages and none has a user's text."""
    if isinstance(value, str):
        value = loaded(value)
    if not isinstance(value, list):
        return None
    messages = [m for m in value[:MAX_MESSAGES] if isinstance(m, dict)]
    for message in reversed(messages):
        if message.get("role") in QUESTION_ROLES:
            text = text_of(message)
            if text:
                return text
    return NO_TEXT if is_messages(messages) else None


def is_messages(items: list[dict[str, Any]]) -> bool:
    """Whether a list's objects are messages or Responses items (a role or a type), whose JSON
    is no preview; other lists (a tool's arguments) are shown as they are."""
    return any("role" in item or "type" in item for item in items)


def text_of(message: dict[str, Any]) -> str | None:
    """A message's text: its string content, or its text parts joined (tool calls, tool
    results, images and the like left out)."""
    content = message.get("content", message.get("parts"))
    if isinstance(content, str):
        return one_line(content)
    if isinstance(content, list):
        texts = [
            part.get("content") or part.get("text")
            for part in content[:100]
            if isinstance(part, dict) and part.get("type", "text") in TEXT_PARTS
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


def output_preview_of(attributes_json: str) -> str | None:
    """The output preview found in a span's attributes (JSON object text), or None."""
    attributes = parsed_if_marked(attributes_json, OUTPUT_MARKERS)
    return None if attributes is None else output_preview_in(attributes)


def output_preview_in(attributes: dict[str, Any]) -> str | None:
    """The output preview found in a span's attributes as decoded."""
    return (
        answer_from_value(attributes.get("output.value"))
        or answer_from_messages(attributes.get("gen_ai.output.messages"))
        or (from_output_flattened(attributes) if len(attributes) <= MAX_FLATTENED_KEYS else None)
        or answer_from_value(attributes.get("ai.response.text"))
        or answer_from_value(attributes.get("output"))
        or None  # NO_TEXT is no preview
    )


def answer_from_value(value: Any) -> str | None:
    """A plain output: text (JSON text of messages or a completion read as such), or an
    object with one."""
    if isinstance(value, str):
        return from_json_text(value, answer_from_value)
    if isinstance(value, list):
        return answer_from_messages(value)
    if isinstance(value, dict):
        # Messages (a list or JSON text), a Responses Response's output items, or one message
        # (an Anthropic Message: its role and content blocks).
        found = answer_from_messages(value.get("messages")) if "messages" in value else None
        if found is None and isinstance(value.get("output"), list):
            found = answer_from_messages(value["output"])
        if found is None and value.get("role") in ANSWER_ROLES:
            found = text_of(value) or NO_TEXT
        if found is not None:
            return found
        choices = value.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            message = choices[0].get("message")
            if isinstance(message, dict):
                return text_of(message)
            if isinstance(choices[0].get("text"), str):
                return one_line(choices[0]["text"])
        for key in ("answer", "output", "response", "result", "text", "content"):
            if isinstance(value.get(key), str):
                return one_line(value[key])
    return None


def answer_from_messages(value: Any) -> str | None:
    """The last assistant message's text in a list of messages or Responses items (else the
    last message's); NO_TEXT when there are messages and none has text."""
    if isinstance(value, str):
        value = loaded(value)
    if not isinstance(value, list):
        return None
    messages = [m for m in value[-MAX_MESSAGES:] if isinstance(m, dict)]
    for message in reversed(messages):
        if message.get("role") in ANSWER_ROLES:
            text = text_of(message)
            if text:
                return text
    last = text_of(messages[-1]) if messages else None
    return last or (NO_TEXT if is_messages(messages) else None)


def from_output_flattened(attributes: dict[str, Any]) -> str | None:
    """The last message's content among flattened output `prefix.N.[message.]content` keys."""
    messages: dict[tuple[str, int], dict[str, Any]] = {}
    for key, value in attributes.items():
        match = _OUTPUT_INDEXED.match(key)
        if match:
            prefix, index, field = match.groups()
            messages.setdefault((prefix, int(index)), {})[field] = value
    for _, message in sorted(messages.items(), reverse=True):
        if isinstance(message.get("content"), str):
            return one_line(message["content"])
    return None
