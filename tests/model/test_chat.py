"""tui/model/chat/: every common spelling of a span's conversation, and hostile shapes that must
neither raise nor run unbounded."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tui.model.attributes import MAX_ITEMS
from tui.model.chat import (
    Conversation,
    Document,
    Message,
    OtherPart,
    TextPart,
    ToolCall,
    ToolResult,
    conversation,
    conversation_text,
    preview,
    trace_facts,
    trace_preview,
)


def texts(messages: tuple[Message, ...]) -> list[tuple[str, str]]:
    return [
        (m.role, " | ".join(p.text for p in m.parts if isinstance(p, TextPart))) for m in messages
    ]


def read(
    attributes: Any, extras: dict[str, Any] | None = None, kind: str | None = None
) -> Conversation:
    found = conversation(attributes, extras, kind)
    assert found is not None
    return found


# -- OTel GenAI, current: JSON messages with role and parts -------------------------------------

GENAI_INPUT = [
    {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
    {
        "role": "assistant",
        "parts": [
            {
                "type": "tool_call",
                "id": "call_1",
                "name": "get_weather",
                "arguments": {"city": "Paris"},
            }
        ],
    },
    {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": "call_1", "response": "rainy, 14°C"}],
    },
]
GENAI_OUTPUT = [
    {
        "role": "assistant",
        "parts": [{"type": "text", "content": "Rainy, 14°C."}],
        "finish_reason": "stop",
    }
]


@pytest.mark.parametrize("as_json", [True, False], ids=["json-strings", "objects"])
def test_genai_messages_parts_system_and_tools(as_json: bool) -> None:
    def encode(value: Any) -> Any:
        return json.dumps(value) if as_json else value

    conv = read(
        {
            "gen_ai.system_instructions": encode([{"type": "text", "content": "Be brief."}]),
            "gen_ai.input.messages": encode(GENAI_INPUT),
            "gen_ai.output.messages": encode(GENAI_OUTPUT),
            "gen_ai.tool.definitions": encode([{"type": "function", "name": "get_weather"}]),
            "gen_ai.response.finish_reasons": ["stop"],
        },
        kind="llm",
    )
    assert conv.system == (TextPart("Be brief."),)
    assert [m.role for m in conv.input] == ["user", "assistant", "tool"]
    assert conv.input[1].parts == (ToolCall("get_weather", {"city": "Paris"}, "call_1"),)
    assert conv.input[2].parts == (ToolResult("rainy, 14°C", "call_1"),)
    assert texts(conv.output) == [("assistant", "Rainy, 14°C.")]
    assert conv.output[0].finish_reason == "stop" and conv.finish_reasons == ("stop",)
    assert conv.tools == ({"type": "function", "name": "get_weather"},)
    assert conv.conventions == ("OTel GenAI",)


def test_genai_nested_objects_as_some_exporters_send_them() -> None:
    conv = read(
        {"gen_ai": {"input": {"messages": GENAI_INPUT}, "output": {"messages": GENAI_OUTPUT}}}
    )
    assert texts(conv.output) == [("assistant", "Rainy, 14°C.")] and len(conv.input) == 3


def test_genai_flattened_old_style_in_numeric_order() -> None:
    attributes: dict[str, Any] = {}
    for i in range(12):  # inserted out of order: 10 and 11 must come after 9
        attributes[f"gen_ai.prompt.{11 - i}.role"] = "user" if (11 - i) % 2 == 0 else "assistant"
        attributes[f"gen_ai.prompt.{11 - i}.content"] = f"m{11 - i}"
    attributes.update(
        {
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.content": "",
            "gen_ai.completion.0.finish_reason": "tool_calls",
            "gen_ai.completion.0.tool_calls.0.id": "c9",
            "gen_ai.completion.0.tool_calls.0.name": "lookup",
            "gen_ai.completion.0.tool_calls.0.arguments": '{"order": 48213}',
            "gen_ai.prompt.12.role": "tool",
            "gen_ai.prompt.12.tool_call_id": "c8",
            "gen_ai.prompt.12.content": '{"status": "shipped"}',
        }
    )
    conv = read(attributes)
    assert [p.text for m in conv.input[:12] for p in m.parts if isinstance(p, TextPart)] == [
        f"m{i}" for i in range(12)
    ]
    assert conv.input[12].parts == (ToolResult({"status": "shipped"}, "c8"),)
    assert conv.output[0].parts[-1] == ToolCall("lookup", {"order": 48213}, "c9")
    assert conv.finish_reasons == ("tool_calls",)
    assert conv.conventions == ("OTel GenAI (flattened)",)


def test_genai_plain_prompt_and_completion_strings() -> None:
    conv = read({"gen_ai.prompt": "Hi", "gen_ai.completion": "Hello!"})
    assert texts(conv.messages) == [("user", "Hi"), ("assistant", "Hello!")]


# -- OpenInference: flattened (as Phoenix serves them) and nested ---------------------------------

OPENINFERENCE_FLAT = {
    "openinference.span.kind": "LLM",
    "llm.input_messages.0.message.role": "system",
    "llm.input_messages.0.message.content": "You are a support bot.",
    "llm.input_messages.1.message.role": "user",
    "llm.input_messages.1.message.contents.0.message_content.type": "text",
    "llm.input_messages.1.message.contents.0.message_content.text": "Where is order 7?",
    "llm.input_messages.1.message.contents.1.message_content.type": "image",
    "llm.input_messages.1.message.contents.1.message_content.image.image.url": "https://x/y.png",
    "llm.output_messages.0.message.role": "assistant",
    "llm.output_messages.0.message.tool_calls.0.tool_call.id": "t1",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "orders",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"id": 7}',
    "llm.tools.0.tool.json_schema": '{"type": "function", "function": {"name": "orders"}}',
    "input.value": '{"messages": "the raw request, not shown when messages are read"}',
    "input.mime_type": "application/json",
}


def test_openinference_flattened() -> None:
    conv = read(OPENINFERENCE_FLAT)
    assert texts(conv.input) == [
        ("system", "You are a support bot."),
        ("user", "Where is order 7?"),
    ]
    assert conv.input[1].parts[1] == OtherPart(
        "image", {"type": "image", "image": {"image": {"url": "https://x/y.png"}}}
    )
    assert conv.output[0].parts == (ToolCall("orders", {"id": 7}, "t1"),)
    assert conv.tools == ({"type": "function", "function": {"name": "orders"}},)
    assert conv.input_value is None  # input.value duplicates the messages: not shown twice
    assert conv.conventions == ("OpenInference",)


def test_openinference_nested() -> None:
    conv = read(
        {
            "llm": {
                "input_messages": [{"message": {"role": "user", "content": "hi"}}],
                "output_messages": [{"message": {"role": "assistant", "content": "hello"}}],
            }
        }
    )
    assert texts(conv.messages) == [("user", "hi"), ("assistant", "hello")]


def test_openinference_input_and_output_values_with_mime_types() -> None:
    conv = read(
        {
            "input": {"value": '{"question": "why?"}', "mime_type": "application/json"},
            "output.value": "because",
            "output.mime_type": "text/plain",
        },
        kind="chain",
    )
    assert conv.input_value == {"question": "why?"} and conv.output_value == "because"
    plain = read(
        {"input.value": '{"not": "parsed"}', "input.mime_type": "text/plain"}, kind="chain"
    )
    assert plain.input_value == '{"not": "parsed"}'  # text/plain: shown as sent


# -- Langfuse-style input / output -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("What is 2+2?", [("user", "What is 2+2?")]),
        (
            [{"role": "system", "content": "sys"}, {"role": "user", "content": "q"}],
            [("system", "sys"), ("user", "q")],
        ),
        ({"messages": [{"role": "user", "content": "q"}], "system": "be nice"}, [("user", "q")]),
        ({"role": "user", "content": [{"type": "text", "text": "blocks"}]}, [("user", "blocks")]),
    ],
    ids=["string", "list", "object-with-messages", "one-message"],
)
def test_langfuse_input(value: Any, expected: list[tuple[str, str]]) -> None:
    conv = read(
        {}, {"input": value, "output": {"role": "assistant", "content": "4"}}, kind="generation"
    )
    assert texts(conv.input) == expected
    assert texts(conv.output) == [("assistant", "4")]
    assert conv.conventions == ("Langfuse",)


def test_langfuse_anthropic_and_openai_shapes() -> None:
    conv = read(
        {},
        {
            "input": [
                {"role": "user", "content": "weather?"},
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "tu1",
                            "name": "weather",
                            "input": {"city": "Oslo"},
                        }
                    ],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "tu1", "content": "snow"}],
                },
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c2",
                            "type": "function",
                            "function": {"name": "f", "arguments": '{"a": 1}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c2", "content": "42"},
            ],
            "output": {
                "choices": [
                    {"message": {"role": "assistant", "content": "Snow."}, "finish_reason": "stop"}
                ]
            },
        },
        kind="generation",
    )
    assert conv.input[1].parts == (ToolCall("weather", {"city": "Oslo"}, "tu1"),)
    assert conv.input[2].parts == (ToolResult("snow", "tu1"),)
    assert conv.input[3].parts == (ToolCall("f", {"a": 1}, "c2"),)
    assert conv.input[4].parts == (ToolResult("42", "c2"),)  # only objects and arrays parse
    assert texts(conv.output) == [("assistant", "Snow.")] and conv.finish_reasons == ("stop",)


def test_langfuse_non_message_values_on_other_spans() -> None:
    conv = read({}, {"input": {"query": "x", "k": 3}, "output": [1, 2]}, kind="chain")
    assert conv.input_value == {"query": "x", "k": 3} and conv.output_value == [1, 2]
    assert conv.messages == ()


def test_langfuse_otel_attributes() -> None:
    conv = read(
        {
            "langfuse.observation.input": json.dumps([{"role": "user", "content": "hey"}]),
            "langfuse.observation.output": json.dumps({"role": "assistant", "content": "ho"}),
        }
    )
    assert texts(conv.messages) == [("user", "hey"), ("assistant", "ho")]


def test_langchain_and_gemini_shapes() -> None:
    conv = read(
        {},
        {
            "input": [
                {"type": "human", "data": {"content": "hi", "type": "human"}},
                {
                    "lc": 1,
                    "type": "constructor",
                    "id": ["langchain", "schema", "messages", "AIMessage"],
                    "kwargs": {
                        "content": "",
                        "tool_calls": [{"name": "s", "args": {"q": 1}, "id": "x"}],
                    },
                },
                {"role": "model", "parts": [{"functionCall": {"name": "g", "args": {"z": 2}}}]},
            ]
        },
        kind="llm",
    )
    assert [m.role for m in conv.input] == ["user", "assistant", "assistant"]
    assert conv.input[1].parts[-1] == ToolCall("s", {"q": 1}, "x")
    assert conv.input[2].parts == (ToolCall("g", {"z": 2}, None),)


# -- the local service's own fields, tools, retrieval ----------------------------------------------


def test_local_service_llm_prompt_and_completion() -> None:
    conv = read(
        {"llm.prompt": "Where is my order?", "llm.completion": "Shipped.", "llm.temperature": 0},
        kind="llm",
    )
    assert texts(conv.messages) == [("user", "Where is my order?"), ("assistant", "Shipped.")]


@pytest.mark.parametrize(
    ("attributes", "extras", "convention"),
    [
        (
            {
                "gen_ai.tool.name": "lookup",
                "gen_ai.tool.call.id": "c1",
                "gen_ai.tool.call.arguments": '{"order_id": 48213}',
                "gen_ai.tool.call.result": '{"status": "shipped"}',
            },
            None,
            "OTel GenAI",
        ),
        (
            {
                "tool.name": "lookup",
                "tool.arguments": {"order_id": 48213},
                "tool.result": '{"status": "shipped"}',
            },
            None,
            "tracetui",
        ),
        (
            {
                "tool.name": "lookup",
                "input.value": '{"order_id": 48213}',
                "output.value": '{"status": "shipped"}',
            },
            None,
            "OpenInference",
        ),
        (
            {"tool.name": "lookup"},
            {"input": {"order_id": 48213}, "output": {"status": "shipped"}},
            "Langfuse",
        ),
    ],
    ids=["genai", "local", "openinference", "langfuse"],
)
def test_tool_spans(
    attributes: dict[str, Any], extras: dict[str, Any] | None, convention: str
) -> None:
    conv = read(attributes, extras, kind="tool")
    assert conv.tool_call is not None and conv.tool_call.name == "lookup"
    assert conv.tool_call.arguments == {"order_id": 48213}
    assert conv.tool_result is not None and conv.tool_result.content == {"status": "shipped"}
    assert convention in conv.conventions


@pytest.mark.parametrize(
    ("attributes", "kind"),
    [
        (
            {
                "retrieval.documents.0.document.id": "d1",
                "retrieval.documents.0.document.score": 0.91,
                "retrieval.documents.0.document.content": "SSO setup",
                "retrieval.documents.1.document.id": "d2",
                "retrieval.documents.1.document.score": "0.5",
                "retrieval.documents.1.document.content": "API keys",
                "input.value": "how to sso",
            },
            "retriever",
        ),
        (
            {
                "gen_ai.retrieval.query.text": "how to sso",
                "gen_ai.retrieval.documents": json.dumps(
                    [
                        {"id": "d1", "score": 0.91, "content": "SSO setup"},
                        {"id": "d2", "score": 0.5, "content": "API keys"},
                    ]
                ),
            },
            "retrieval",
        ),
        (
            {
                "retrieval": {
                    "documents": [
                        {"document": {"id": "d1", "score": 0.91, "content": "SSO setup"}},
                        {"document": {"id": "d2", "score": 0.5, "content": "API keys"}},
                    ]
                },
                "input": {"value": "how to sso"},
            },
            "retriever",
        ),
    ],
    ids=["openinference-flat", "genai", "openinference-nested"],
)
def test_retrieval_documents(attributes: dict[str, Any], kind: str) -> None:
    conv = read(attributes, kind=kind)
    assert conv.documents == (Document("SSO setup", "d1", 0.91), Document("API keys", "d2", 0.5))
    assert conv.query == "how to sso"


def test_local_retrieval_documents_without_content_and_langchain_documents() -> None:
    conv = read({"retrieval.documents": [{"id": "kb-1", "score": 0.7}]}, kind="retrieval")
    assert conv.documents == (Document(None, "kb-1", 0.7),)
    lc = read(
        {},
        {"input": "q", "output": [{"page_content": "text", "metadata": {"id": "m"}}]},
        kind="retriever",
    )
    assert lc.documents == (Document("text", "m", None, {"id": "m"}),) and lc.query == "q"


# -- unknown shapes and hostile input ---------------------------------------------------------------


@pytest.mark.parametrize(
    "attributes",
    [
        {},
        {"http.method": "GET", "llm.temperature": 0.2},
        {"gen_ai.input.messages": 5},
        {"gen_ai.input.messages": "not json ["},
        {"llm.input_messages": {"a": {"b": 1}}},
        [1, 2, 3],
        "a string",
        None,
    ],
)
def test_unknown_shapes_give_none(attributes: Any) -> None:
    assert conversation(attributes, {}, "agent") is None


@pytest.mark.parametrize(
    "attributes",
    [
        {
            "gen_ai.input.messages": [
                5,
                None,
                "text",
                {"role": 5, "parts": "x"},
                {"parts": [{"type": 3}]},
            ]
        },
        {"gen_ai.input.messages": [{"role": "user", "content": {"a": [1, {"b": None}]}}]},
        {
            "gen_ai.input.messages": [
                {"role": "user", "parts": [{"type": "tool_call", "arguments": "{bad"}]}
            ]
        },
        {"llm.input_messages.x.message.role": "user", "llm.input_messages.0.message": "string"},
        {"gen_ai.prompt.0": {"role": ["list"], "content": 7}},
        {
            "gen_ai.prompt.-1.content": "neg",
            "gen_ai.prompt..content": "empty",
            "gen_ai.prompt.0.": "x",
        },
        {"retrieval.documents": [{"document": "x"}, 5, {"score": "nan"}, {"score": float("inf")}]},
        {"gen_ai.tool.call.arguments": float("nan"), "gen_ai.tool.call.result": [[[]]]},
    ],
)
def test_wrong_types_never_raise(attributes: dict[str, Any]) -> None:
    found = conversation(attributes, {"input": {"role": 1}, "output": [None]}, "llm")
    assert found is None or isinstance(found, Conversation)
    if found is not None:
        conversation_text(found)


def test_huge_indices_sort_numerically_without_int() -> None:
    attributes = {
        "gen_ai.prompt.999999999.content": "third",
        "gen_ai.prompt." + "9" * 5000 + ".content": "fourth",  # int() refuses this many digits
        "gen_ai.prompt.10.content": "second",
        "gen_ai.prompt.2.content": "first",
    }
    conv = read(attributes)
    assert texts(conv.input) == [("user", t) for t in ("first", "second", "third", "fourth")]


def test_100000_flattened_messages_are_cut_and_say_so() -> None:
    attributes = {f"llm.input_messages.{i}.message.content": f"m{i}" for i in range(100_000)}
    attributes["llm.input_messages.0.message.role"] = "user"
    conv = read(attributes)
    assert len(conv.input) == MAX_ITEMS and conv.truncated
    assert [p.text for p in conv.input[-1].parts if isinstance(p, TextPart)] == [
        f"m{MAX_ITEMS - 1}"
    ]


def test_100000_unrelated_keys_are_not_read() -> None:
    attributes: dict[str, Any] = {f"k{i}": i for i in range(100_000)}
    attributes["llm.prompt"] = "kept"
    assert texts(read(attributes, kind="llm").input) == [("user", "kept")]


def test_deep_nesting_and_long_keys() -> None:
    deep: dict[str, Any] = {"content": "bottom"}
    for _ in range(20_000):
        deep = {"x": deep}
    nested_json = "[" * 100_000 + "]" * 100_000  # json.loads recurses: RecursionError, caught
    attributes = {
        "llm": deep,
        "gen_ai.input.messages": nested_json,
        "gen_ai." + ".".join(["a"] * 100_000): "dots",
    }
    found = conversation(attributes, {"input": nested_json}, "llm")
    assert found is not None and found.input == (Message("user", (TextPart(nested_json),)),)
    assert conversation({"gen_ai.output.messages": nested_json}, None, "agent") is None


def test_a_megabyte_message_is_read_whole() -> None:
    big = "word " * 200_000
    conv = read(
        {
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": big}]}]
            )
        }
    )
    assert conv.input[0].parts == (TextPart(big),)


# -- text, previews and a trace's facts -------------------------------------------------------------


def test_conversation_text_holds_every_text() -> None:
    conv = read(
        {
            "gen_ai.input.messages": GENAI_INPUT,
            "gen_ai.output.messages": GENAI_OUTPUT,
            "gen_ai.system_instructions": "Be brief.",
        }
    )
    text = conversation_text(conv)
    for needle in (
        "Be brief.",
        "Weather in Paris?",
        "get_weather",
        "Paris",
        "rainy",
        "Rainy, 14°C.",
    ):
        assert needle in text


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("Where is\n my   order?", "Where is my order?"),
        (
            [
                {"role": "user", "content": "first"},
                {"role": "assistant", "content": "x"},
                {"role": "user", "content": "second"},
            ],
            "second",
        ),
        ({"messages": [{"role": "user", "content": "in messages"}]}, "in messages"),
        ({"question": "a question", "k": 3}, "a question"),
        ({"k": 3}, '{"k": 3}'),
        ("", None),
        (None, None),
        ("x" * 10_000, "x" * 300),
    ],
)
def test_preview(value: Any, shown: str | None) -> None:
    assert preview(value) == shown


def test_trace_preview_prefers_the_servers_preview() -> None:
    assert (
        trace_preview({"input_preview": "made by the server", "input": "raw"})
        == "made by the server"
    )
    assert trace_preview({"input": [{"role": "user", "content": "from input"}]}) == "from input"
    assert trace_preview({}, {"input": "from attributes"}) == "from attributes"
    assert trace_preview({}, None) is None


@pytest.mark.parametrize(
    "attributes",
    [
        {"user.id": "u-42", "session.id": "s-9", "tags": ["vip", "eu"]},
        {"user": {"id": "u-42"}, "session": {"id": "s-9"}, "tag.tags": '["vip", "eu"]'},
        {
            "langfuse.user.id": "u-42",
            "langfuse.session.id": "s-9",
            "langfuse.trace.tags": ["vip", "eu"],
        },
        {"userId": "u-42", "sessionId": "s-9", "tags": "vip, eu"},
    ],
    ids=["otel", "nested", "langfuse-otel", "langfuse-api"],
)
def test_trace_facts(attributes: dict[str, Any]) -> None:
    assert trace_facts(attributes) == [("user", "u-42"), ("session", "s-9"), ("tags", "vip, eu")]


def test_trace_facts_ignore_odd_values() -> None:
    assert trace_facts({"user.id": True, "session.id": {"nested": 1}, "tags": [{}]}, None, 5) == []
