"""The list's input preview read from an ingested span's attributes, in each convention."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tui.server.ingest.preview import MAX_CHARS, MAX_PARSED, preview_in, preview_of


def preview(attributes: dict[str, Any]) -> str | None:
    """The preview read from the stored JSON; ingest reads the decoded attributes, and the two
    must agree."""
    from_json = preview_of(json.dumps(attributes))
    assert preview_in(attributes) == from_json
    return from_json


def genai(*messages: tuple[str, str]) -> str:
    return json.dumps(
        [{"role": role, "parts": [{"type": "text", "content": text}]} for role, text in messages]
    )


@pytest.mark.parametrize(
    ("attributes", "expected"),
    [
        ({"input.value": "How do I rotate a key?"}, "How do I rotate a key?"),
        (  # OpenInference input.value holding messages as JSON text
            {"input.value": json.dumps({"messages": [{"role": "user", "content": "Hi there"}]})},
            "Hi there",
        ),
        (  # multi-turn: the last user message is the question this call answers
            {
                "gen_ai.input.messages": genai(
                    ("user", "Hello"),
                    ("assistant", "Hi! How can I help?"),
                    ("user", "Where is #48213?"),
                )
            },
            "Where is #48213?",
        ),
        (  # GenAI messages sent as an array of objects rather than JSON text
            {
                "gen_ai.input.messages": [
                    {"role": "user", "parts": [{"type": "text", "content": "A"}]}
                ]
            },
            "A",
        ),
        (
            {
                "llm.input_messages.0.message.role": "system",
                "llm.input_messages.0.message.content": "Be brief.",
                "llm.input_messages.1.message.role": "user",
                "llm.input_messages.1.message.content": "Ship to Norway?",
                "llm.input_messages.10.message.role": "assistant",
                "llm.input_messages.10.message.content": "Yes.",
            },
            "Ship to Norway?",
        ),
        (
            {"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Older GenAI names"},
            "Older GenAI names",
        ),
        (  # OpenAI content parts
            {"input": [{"role": "user", "content": [{"type": "text", "text": "From parts"}]}]},
            "From parts",
        ),
        ({"input": {"question": "As an object"}}, "As an object"),
        ({"gen_ai.operation.name": "invoke_agent"}, None),
        ({"gen_ai.input.messages": genai(("system", "Only a system prompt"))}, None),
        ({"input.value": "   \n\t "}, None),
        ({"gen_ai.input.messages": "not json ["}, None),
    ],
)
def test_each_convention(attributes: dict[str, Any], expected: str | None) -> None:
    assert preview(attributes) == expected


def test_one_line_neutralised_and_cut() -> None:
    found = preview({"input.value": "a\x1b[2J\nb\u202e\tc " + "x" * 1000})
    assert found is not None and found.startswith("a [2J b c x")
    assert "\x1b" not in found and "\n" not in found and "\u202e" not in found
    assert len(found) == MAX_CHARS and found.endswith("…")


def test_bodies_without_the_names_or_too_big_are_not_parsed() -> None:
    assert preview_of("{not json but no marker}") is None
    assert preview_of('{"input.value": broken') is None
    huge = json.dumps({"input.value": "q", "pad": "x" * MAX_PARSED})
    assert preview_of(huge) is None
