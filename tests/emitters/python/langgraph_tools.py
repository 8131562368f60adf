"""LangGraph's prebuilt ReAct agent over langchain-openai's ChatOpenAI (chat completions),
instrumented by openinference-instrumentation-langchain: the model calls a tool, then answers."""

from __future__ import annotations

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent
from openinference.instrumentation.langchain import LangChainInstrumentor
from otlp_setup import STUB_URL, finish, provider

tracing = provider("langgraph-stack")
LangChainInstrumentor().instrument(tracer_provider=tracing)


@tool
def lookup_order(order_id: int) -> str:
    """Find an order."""
    return "shipped on Monday"


model = ChatOpenAI(model="gpt-4o-mini", base_url=f"{STUB_URL}/v1", api_key="sk-test", max_retries=0)
graph = create_react_agent(model, [lookup_order])
result = graph.invoke({"messages": [{"role": "user", "content": "Where is my order 48213?"}]})
print(result["messages"][-1].content)
finish(tracing)
