"""What a trace list shows of each trace before any span is opened: a one-line preview of its
input (the last user message of a conversation, else the text, else compact JSON) and the facts
its attributes name (user, session, tags, environment, release) in their common spellings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tui.model.attributes import Reader
from tui.model.chat.shapes import messages_in
from tui.model.chat.text import dump, message_text

PREVIEW_CHARS = 300


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
    return _one_line(dump(parsed)) or None


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
