"""The input and output previews of the JSON shapes emitters record in `input.value` and
`output.value`: the human text (the last user's, the last assistant's), never the JSON itself.

The Anthropic and OpenAI Responses bodies are those the real emitters sent in
tests/ingest/test_python_stacks.py (openinference-instrumentation-anthropic, openai-agents with
openinference-instrumentation-openai-agents, both against tests/support/model_stubs.py), cut to
the fields that matter and a few that do not."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.model_stubs import ANSWER, QUESTION
from tui.server.ingest.preview import (
    MAX_CHARS,
    MAX_PARSED,
    output_preview_in,
    output_preview_of,
    preview_in,
    preview_of,
)
from tui.server.ingest.summaries import summarize
from tui.server.store.rows import SpanRow

USAGE = {"input_tokens": 120, "output_tokens": 30, "cache_read_input_tokens": 0}

# openinference-instrumentation-anthropic: the Message, as JSON text (output.mime_type JSON).
ANTHROPIC_ANSWER = {
    "id": "msg_1",
    "container": None,
    "content": [{"citations": None, "text": ANSWER, "type": "text"}],
    "model": "claude-3-5-haiku-20241022",
    "role": "assistant",
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "type": "message",
    "usage": USAGE,
}
ANTHROPIC_TOOL_CALL = {
    **ANTHROPIC_ANSWER,
    "content": [
        {
            "id": "toolu_1",
            "input": {"order_id": 48213},
            "name": "lookup_order",
            "type": "tool_use",
        }
    ],
    "stop_reason": "tool_use",
}
# Its input.value: the request's parameters; the last user message is the tool's result.
ANTHROPIC_REQUEST = {
    "model": "claude-3-5-haiku-latest",
    "max_tokens": 256,
    "messages": [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": ANTHROPIC_TOOL_CALL["content"]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "shipped on Monday"}
            ],
        },
    ],
    "tools": [{"name": "lookup_order", "input_schema": {"type": "object"}}],
}

# openai-agents (Responses API): the Response, as JSON text; its output is a list of items.
FUNCTION_CALL = {
    "arguments": '{"order_id": 48213}',
    "call_id": "call_1",
    "name": "lookup_order",
    "type": "function_call",
    "id": "fc_1",
    "status": "completed",
}
ANSWER_ITEM = {
    "id": "msg_1",
    "content": [{"annotations": [], "text": ANSWER, "type": "output_text", "logprobs": None}],
    "role": "assistant",
    "status": "completed",
    "type": "message",
}


def response(*items: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "created_at": 1.0,
        "error": None,
        "instructions": "Answer questions about orders.",  # a string that is not the answer
        "model": "gpt-4o-mini-2024-07-18",
        "object": "response",
        "output": list(items),
        "parallel_tool_calls": True,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [{"name": "lookup_order", "type": "function", "strict": True}],
        "usage": USAGE,
    }


# Its input.value: the items sent (the easy message form, then the tool round trip).
RESPONSES_INPUT = [
    {"content": QUESTION, "role": "user"},
    FUNCTION_CALL,
    {"call_id": "call_1", "output": "shipped on Monday", "type": "function_call_output"},
]
# Content given as parts: the Responses API's `input_text`.
RESPONSES_PARTS_INPUT = [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": QUESTION}]},
]


def output(value: Any) -> str | None:
    """The output preview of `output.value` (JSON text when not a string), read both ways (from
    the decoded attributes and from their JSON text), which must agree."""
    text = value if isinstance(value, str) else json.dumps(value)
    attributes = {"output.value": text, "output.mime_type": "application/json"}
    found = output_preview_in(attributes)
    assert output_preview_of(json.dumps(attributes)) == found
    return found


def input_(value: Any) -> str | None:
    """The input preview of `input.value`, read both ways."""
    text = value if isinstance(value, str) else json.dumps(value)
    attributes = {"input.value": text, "input.mime_type": "application/json"}
    found = preview_in(attributes)
    assert preview_of(json.dumps(attributes)) == found
    return found


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (ANTHROPIC_ANSWER, ANSWER),
        (ANTHROPIC_TOOL_CALL, None),  # a model call that only calls a tool has no answer
        (response(ANSWER_ITEM), ANSWER),
        (response(FUNCTION_CALL), None),
        (response({"type": "reasoning", "summary": []}, ANSWER_ITEM, FUNCTION_CALL), ANSWER),
        ([FUNCTION_CALL, ANSWER_ITEM], ANSWER),  # a list of output items
        (  # the last assistant text, its text parts joined
            response(
                {**ANSWER_ITEM, "content": [{"type": "output_text", "text": "first"}]},
                {
                    **ANSWER_ITEM,
                    "content": [
                        {"type": "output_text", "text": "Order 48213"},
                        {"type": "refusal", "refusal": "not this"},
                        {"type": "output_text", "text": "shipped."},
                    ],
                },
            ),
            "Order 48213 shipped.",
        ),
    ],
    ids=[
        "anthropic-answer",
        "anthropic-tool-use",
        "responses-answer",
        "responses-function-call",
        "responses-reasoning-first",
        "responses-items",
        "responses-last-parts",
    ],
)
def test_output_previews_read_the_answer(value: Any, expected: str | None) -> None:
    assert output(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (ANTHROPIC_REQUEST, QUESTION),  # the tool's result is not the user's question
        (RESPONSES_INPUT, QUESTION),
        (RESPONSES_PARTS_INPUT, QUESTION),
        ({"model": "gpt-4o-mini", "input": RESPONSES_PARTS_INPUT}, QUESTION),  # a request's
        ({"model": "gpt-4o-mini", "input": QUESTION}, QUESTION),
        ({"messages": [{"role": "system", "content": "Be brief."}]}, None),  # no user text
    ],
    ids=[
        "anthropic-request",
        "responses-items",
        "responses-input-text",
        "responses-request",
        "responses-request-text",
        "system-only",
    ],
)
def test_input_previews_read_the_question(value: Any, expected: str | None) -> None:
    assert input_(value) == expected


def test_a_textless_output_lets_another_name_answer() -> None:
    attributes = {
        "output.value": json.dumps(ANTHROPIC_TOOL_CALL),
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "from the flattened messages",
    }
    assert output_preview_in(attributes) == "from the flattened messages"


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    "value",
    [
        DEEP,  # deeper than the parser goes: RecursionError, not ValueError
        '{"role": "assistant", "content": ' + DEEP + "}",
        "{not json",
        "",
        "   ",
        "{}",
        "[]",
        "null",
        '{"role": "assistant", "content": [{"type": "text", "text": {"nested": ["x"]}}]}',
        '{"role": "assistant", "content": [null, 1, "x", {"type": "text"}]}',
        '{"output": [1, "two", null, [{"role": "assistant", "content": "nested too far"}]]}',
        '{"output": {"role": "assistant"}, "messages": 7, "choices": [null]}',
        '[{"role": 7, "content": {"text": "?"}}, {"type": ["message"]}]',
    ],
    ids=[
        "too-deep",
        "too-deep-inside",
        "broken",
        "empty",
        "blank",
        "empty-object",
        "empty-list",
        "null",
        "text-not-a-string",
        "odd-parts",
        "odd-items",
        "odd-fields",
        "odd-roles",
    ],
)
def test_odd_json_never_raises(value: str) -> None:
    for read in (output, input_):
        found = read(value)
        assert found is None or 0 < len(found) <= MAX_CHARS


def test_long_lists_are_looked_at_in_part() -> None:
    # The last MAX_MESSAGES items of an output: the answer among them is found, one before
    # them is not looked for (and the JSON is not shown instead).
    assert output(response(*[FUNCTION_CALL] * 3000, ANSWER_ITEM)) == ANSWER
    assert output(response(ANSWER_ITEM, *[FUNCTION_CALL] * 5000)) is None


def test_json_not_of_a_known_shape_is_shown_as_it_is() -> None:
    assert output('{"status": "done", "count": 3}') == '{"status": "done", "count": 3}'
    assert output("{not json") == "{not json"
    assert input_('["a", "b"]') == '["a", "b"]'  # a list of no messages (a tool's arguments)
    deep = output(DEEP)
    assert deep is not None and deep.startswith("[[[") and deep.endswith("…")


def test_bodies_over_max_parsed_are_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(text: str) -> Any:
        raise AssertionError("parsed a body over MAX_PARSED")

    huge = json.dumps({**ANTHROPIC_ANSWER, "padding": "x" * MAX_PARSED})
    monkeypatch.setattr(json, "loads", refuse)  # the module preview parses with
    found = output_preview_in({"output.value": huge})
    assert found is not None and found.startswith('{"id": "msg_1"')


def span(span_id: str, parent: str | None, started: int, attributes: dict[str, Any]) -> SpanRow:
    kind = "llm" if parent else "agent"
    return SpanRow(
        "t1", span_id, parent, span_id, kind, None, started, 10, 0, 0, 0.0, "ok", None,
        json.dumps(attributes),
    )  # fmt: skip


@pytest.mark.parametrize("decoded", [True, False])
def test_a_responses_trace_previews_its_question_and_answer(decoded: bool) -> None:
    # As openai-agents sends it: an agent root without input or output, two model calls.
    spans = [
        span("root", None, 1, {"openinference.span.kind": "AGENT"}),
        span(
            "call-1",
            "root",
            2,
            {
                "input.value": json.dumps(RESPONSES_INPUT[:1]),
                "output.value": json.dumps(response(FUNCTION_CALL)),
            },
        ),
        span(
            "call-2",
            "root",
            3,
            {
                "input.value": json.dumps(RESPONSES_INPUT),
                "output.value": json.dumps(response(ANSWER_ITEM)),
            },
        ),
    ]
    attributes = [json.loads(s.attributes) for s in spans] if decoded else None
    [sums] = summarize(spans, attributes)
    assert (sums.input_preview, sums.output_preview) == (QUESTION, ANSWER)
