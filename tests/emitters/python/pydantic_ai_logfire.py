"""pydantic-ai over its OpenAI chat model, instrumented through logfire (pydantic-ai's spans and
the openai SDK's below them, logfire sending nowhere but to the service), inside a logfire span
named by a template: the agent calls a tool, then answers."""

from __future__ import annotations

import logfire
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from otlp_setup import BATCH_DELAY_MS, STUB_URL, exporter, finish_processor
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

processor = BatchSpanProcessor(exporter(), schedule_delay_millis=BATCH_DELAY_MS)
logfire.configure(
    send_to_logfire=False,
    console=False,
    service_name="pydantic-ai-stack",
    additional_span_processors=[processor],
    metrics=False,
)
logfire.instrument_pydantic_ai()
logfire.instrument_openai()  # the openai SDK's calls too, below pydantic-ai's spans

model = OpenAIChatModel(
    "gpt-4o-mini", provider=OpenAIProvider(base_url=f"{STUB_URL}/v1", api_key="sk-test")
)
agent = Agent(model, name="support_agent", instructions="Answer questions about orders.")


@agent.tool_plain
def lookup_order(order_id: int) -> str:
    """Find an order."""
    return "shipped on Monday"


with logfire.span("support turn for order {order_id}", order_id=48213):
    result = agent.run_sync("Where is my order 48213?")
print(result.output)
finish_processor(processor)
