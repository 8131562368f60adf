"""The LangGraph agent of langgraph_tools.py, invoked with a LangChain run's metadata as teams
set it for Langfuse and OpenInference: tags, and Langfuse's user, session and tags keys.
openinference-instrumentation-langchain writes that metadata on every span as `metadata`."""

from __future__ import annotations

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent
from openinference.instrumentation.langchain import LangChainInstrumentor
from otlp_setup import STUB_URL, finish, provider

tracing = provider("langgraph-metadata")
LangChainInstrumentor().instrument(tracer_provider=tracing)


@tool
def lookup_order(order_id: int) -> str:
    """Find an order."""
    return "shipped on Monday"


model = ChatOpenAI(model="gpt-4o-mini", base_url=f"{STUB_URL}/v1", api_key="sk-test", max_retries=0)
graph = create_react_agent(model, [lookup_order])
metadata = {
    "tags": ["support", "beta"],
    "langfuse_tags": ["checkout"],
    "langfuse_user_id": "alice",
    "langfuse_session_id": "chat-48213",
}
result = graph.invoke(
    {"messages": [{"role": "user", "content": "Where is my order 48213?"}]},
    config={"metadata": metadata},
)
print(result["messages"][-1].content)
finish(tracing)
