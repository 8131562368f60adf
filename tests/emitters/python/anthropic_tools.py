"""The anthropic SDK, with its own OpenTelemetry spans on (it makes one per API call from the
global tracer provider) and instrumented by openinference-instrumentation-anthropic: a question,
a tool call answered by the script, and the final answer."""

from __future__ import annotations

import anthropic
from openinference.instrumentation.anthropic import AnthropicInstrumentor
from otlp_setup import STUB_URL, finish, provider

QUESTION = "Where is my order 48213?"
TOOLS = [
    {
        "name": "lookup_order",
        "description": "Find an order",
        "input_schema": {"type": "object", "properties": {"order_id": {"type": "integer"}}},
    }
]

tracing = provider("anthropic-stack")
AnthropicInstrumentor().instrument(tracer_provider=tracing)
client = anthropic.Anthropic(base_url=STUB_URL, api_key="sk-ant-test", max_retries=0)
messages: list = [{"role": "user", "content": QUESTION}]
with tracing.get_tracer("support-bot").start_as_current_span("support_turn"):
    first = client.messages.create(
        model="claude-3-5-haiku-latest", max_tokens=256, messages=messages, tools=TOOLS
    )
    [call] = [block for block in first.content if block.type == "tool_use"]
    messages += [
        {"role": "assistant", "content": [block.model_dump() for block in first.content]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": call.id, "content": "shipped on Monday"}
            ],
        },
    ]
    second = client.messages.create(
        model="claude-3-5-haiku-latest", max_tokens=256, messages=messages, tools=TOOLS
    )
    print(second.content[0].text)
finish(tracing)
