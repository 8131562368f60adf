"""openai-agents with its default model (the Responses API), instrumented by
openinference-instrumentation-openai-agents (its exclusive processor: nothing goes to OpenAI's
own trace endpoint): an agent that calls a function tool, then answers."""

from __future__ import annotations

import asyncio

from agents import Agent, Runner, function_tool, set_default_openai_client
from openai import AsyncOpenAI
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from otlp_setup import STUB_URL, finish, provider

tracing = provider("openai-agents-stack")
OpenAIAgentsInstrumentor().instrument(tracer_provider=tracing)
set_default_openai_client(AsyncOpenAI(base_url=f"{STUB_URL}/v1", api_key="sk-test", max_retries=0))


@function_tool
def lookup_order(order_id: int) -> str:
    """Find an order."""
    return "shipped on Monday"


agent = Agent(
    name="Support agent",
    instructions="Answer questions about orders.",
    model="gpt-4o-mini",
    tools=[lookup_order],
)
result = asyncio.run(Runner.run(agent, "Where is my order 48213?"))
print(result.final_output)
finish(tracing)
