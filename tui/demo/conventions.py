"""The demo data's span attributes, in the conventions real instrumentations write.

The support chatbot and the coding agent speak the OTel GenAI semantic conventions (system
instructions, `gen_ai.input.messages` / `gen_ai.output.messages` with role and parts, tool calls
and their results, `gen_ai.tool.*` on tool spans); the docs search speaks OpenInference
(flattened `llm.input_messages.N.message.*`, `input.value` / `output.value`, retrieval
documents with their content), as Phoenix's instrumentations send it. So `make demo` shows the
conversation view on the data it starts with, not only on what the live feed sends.

Pure functions of their arguments: the demo stays deterministic from its seed.
"""

from __future__ import annotations

import json
from typing import Any

EMBEDDING_MODELS = frozenset(["text-embedding-3-small"])

SUPPORT_SYSTEM = (
    "You are the support assistant of the Acme web shop. Answer in two or three sentences, "
    "politely and only from the order data and the knowledge base you are given. If you are "
    "not sure, offer to hand the conversation to a human agent."
)
CLASSIFY_SYSTEM = "Classify the customer's message: order, returns, shipping, billing or other."
DOCS_SYSTEM = "Answer from the documents only, and cite each one you use as [n]."
AGENT_SYSTEM = (
    "You are a coding agent working in the acme/shop repository. Decide one next action at a "
    "time: read a file, run the tests, grep or apply a patch."
)

# What the docs search finds: each page's passages (a document is one passage), the first
# passage of a page being the one that answers its question.
DOC_PASSAGES = {
    "sso": (
        "SSO: add tracetui as a SAML 2.0 application in your identity provider, paste its "
        "metadata URL under Settings -> Security, then map the email attribute.",
        "With Okta, choose SAML 2.0 when creating the app; the sign-on URL and the audience "
        "come from the metadata.",
        "People who sign in through SSO for the first time get the Viewer role until an admin "
        "changes it.",
    ),
    "api": (
        "The public API allows 1,000 requests per minute per key; a 429 answer carries "
        "Retry-After with the seconds to wait.",
        "Every answer carries X-RateLimit-Remaining and X-RateLimit-Reset, so a client can pace "
        "itself.",
        "List endpoints return at most 500 items per page; follow next_cursor for the rest.",
    ),
    "keys": (
        "To rotate a key: create a new key, deploy it everywhere, then revoke the old one. "
        "Revoked keys stop working at once.",
        "API keys are made under Settings -> API keys; a key is shown once, when it is made.",
        "A project key reads and writes one project; a workspace key reads every project.",
    ),
    "webhooks": (
        "Webhook deliveries are signed; a 401 from your endpoint usually means the signing "
        "secret in its configuration is an old one.",
        "The signature is an HMAC-SHA256 of the timestamp and the body, in the X-Signature header.",
        "Failed deliveries are retried with backoff for 24 hours, then marked failed in the "
        "alert's history.",
    ),
}
# Which page answers each docs question, and the follow-ups suggested after its answer.
QUESTION_PAGES = {
    "How do I configure SSO with Okta?": "sso",
    "What is the rate limit of the public API?": "api",
    "How do I rotate an API key?": "keys",
    "Why is my webhook returning 401?": "webhooks",
}
FOLLOW_UPS = {
    "sso": "Which role do new SSO users get?\nCan I require SSO for everyone?",
    "api": "How do I see how many requests I have left?\nIs the limit per key or per account?",
    "keys": "How do I revoke a key?\nCan a key be limited to one project?",
    "webhooks": "How is the signature computed?\nHow long are failed deliveries retried?",
}


def provider_of(model: str) -> str:
    if model.startswith("claude"):
        return "anthropic"
    if model.startswith("rerank"):
        return "cohere"
    return "openai"


def text_message(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def tool_call_message(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    part = {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}
    return {"role": "assistant", "parts": [part]}


def tool_result_message(call_id: str, result: str) -> dict[str, Any]:
    return {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": call_id, "response": result}],
    }


def genai_chat(
    model: str,
    system: str | None,
    messages: list[dict[str, Any]],
    answer: str | None,
    temperature: float,
    response_id: str,
) -> dict[str, Any]:
    """A chat call as the OTel GenAI conventions record it (answer None: the call failed)."""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider_of(model),
        "gen_ai.request.model": model,
        "gen_ai.request.temperature": temperature,
        "gen_ai.input.messages": json.dumps(messages),
    }
    if system:
        attributes["gen_ai.system_instructions"] = json.dumps([{"type": "text", "content": system}])
    if answer is not None:
        attributes |= {
            "gen_ai.response.model": model,
            "gen_ai.response.id": f"chatcmpl-{response_id}",
            "gen_ai.response.finish_reasons": ["stop"],
            "gen_ai.output.messages": json.dumps(
                [text_message("assistant", answer) | {"finish_reason": "stop"}]
            ),
        }
    return attributes


def openinference_llm(
    model: str,
    system: str | None,
    question: str,
    answer: str | None,
    temperature: float,
    response_id: str,
) -> dict[str, Any]:
    """An LLM call as OpenInference records it: flattened messages, input and output values."""
    attributes: dict[str, Any] = {
        "openinference.span.kind": "LLM",
        "llm.model_name": model,
        "llm.provider": provider_of(model),
        "llm.invocation_parameters": json.dumps({"temperature": temperature}),
        "input.value": question,
    }
    messages = ([("system", system)] if system else []) + [("user", question)]
    for n, (role, content) in enumerate(messages):
        attributes[f"llm.input_messages.{n}.message.role"] = role
        attributes[f"llm.input_messages.{n}.message.content"] = content
    if answer is not None:
        attributes |= {
            "output.value": answer,
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": answer,
            "llm.response_id": response_id,
        }
    return attributes


def embedding(model: str, text: str, openinference: bool) -> dict[str, Any]:
    """An embedding call: the text embedded, in the span's convention."""
    if openinference:
        return {
            "openinference.span.kind": "EMBEDDING",
            "embedding.model_name": model,
            "embedding.embeddings.0.embedding.text": text,
        }
    return {
        "gen_ai.operation.name": "embeddings",
        "gen_ai.provider.name": provider_of(model),
        "gen_ai.request.model": model,
        "gen_ai.input.messages": json.dumps([text_message("user", text)]),
    }


def genai_tool(
    name: str, call_id: str, arguments: dict[str, Any], result: str | None
) -> dict[str, Any]:
    """A tool's execution as the OTel GenAI conventions record it (result None: it failed)."""
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.call.arguments": json.dumps(arguments),
    }
    if result is not None:
        attributes["gen_ai.tool.call.result"] = result
    return attributes


def openinference_documents(query: str, docs: list[dict[str, Any]]) -> dict[str, Any]:
    """A retriever's query and documents (id, score, content), flattened as OpenInference does."""
    attributes: dict[str, Any] = {"openinference.span.kind": "RETRIEVER", "input.value": query}
    for n, doc in enumerate(docs):
        attributes[f"retrieval.documents.{n}.document.id"] = doc["id"]
        attributes[f"retrieval.documents.{n}.document.score"] = doc["score"]
        attributes[f"retrieval.documents.{n}.document.content"] = doc["content"]
    return attributes
