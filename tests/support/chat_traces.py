"""Traces that record conversations, for the tests of the conversation view (functional,
adversarial, snapshot) and its benchmark.

`add_trace` is the one place that writes them into the local service's store: the store's API
is being reshaped, so adapt it here only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.scenes import FIXED_NOW_MS, Scene
from tests.support.service import local_service
from tui.demo.data import DemoKeys, populate
from tui.server.run import LocalService
from tui.server.store.rows import SpanRow, TraceRow
from tui.server.store.sqlite.store import Store
from tui.ui.app import StartAt

SYSTEM_PROMPT = """You are the support assistant of the Acme web shop.

## Rules
- Answer in the customer's language.
- Never promise a refund: **escalate** it.
- Use `lookup_order` for anything about an order.

Reply in at most three short paragraphs, warm but brief, and sign as "Acme support"."""

QUESTION = "Hi! Where is my order #48213? It was due yesterday."
ANSWER = (
    "Good news: order **#48213** shipped with DHL on Nov 20 and should arrive **tomorrow**.\n\n"
    "Track it here:\n```\nhttps://dhl.example/track?id=JD0146000038271\n```\n"
    "- Carrier: DHL\n- Tracking: `JD0146000038271`\n\nAcme support"
)
FOLLOW_UP = "Thanks! Can I change the delivery address?"


@dataclass
class SpanSpec:
    """One span to insert: times are milliseconds after the trace's start."""

    id: str
    parent: str | None
    name: str
    kind: str
    start: int = 0
    duration: int = 100
    model: str | None = None
    tokens: tuple[int, int] = (0, 0)
    cost: float = 0.0
    attributes: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


def add_trace(
    store: Any,
    trace_id: str,
    spans: list[SpanSpec],
    *,
    project_id: str,
    name: str,
    started_ms: int,
    attributes: dict[str, Any] | None = None,
) -> None:
    """Insert a trace and its spans (and the project, if it is new) into the service's store."""
    duration = max((s.start + s.duration for s in spans), default=0)
    errors = sum(1 for s in spans if s.error)
    span_rows = [
        SpanRow(
            trace_id,
            s.id,
            s.parent,
            s.name,
            s.kind,
            s.model,
            started_ms + s.start,
            s.duration,
            s.tokens[0],
            s.tokens[1],
            s.cost,
            "error" if s.error else "ok",
            s.error,
            json.dumps(s.attributes),
        )
        for s in spans
    ]
    trace_row = TraceRow(
        trace_id,
        project_id,
        name,
        started_ms,
        duration,
        len(spans),
        sum(s.tokens[0] for s in spans),
        sum(s.tokens[1] for s in spans),
        round(sum(s.cost for s in spans), 6),
        "error" if errors else "ok",
        errors,
        json.dumps(attributes or {}),
    )
    with store.transaction() as db:
        if store.get_project(project_id) is None:
            store.insert_project(db, project_id, None, 30, project_id=project_id)
        store.insert_traces(db, [trace_row], span_rows)


def new_store(path: Path, workspace_key: str) -> Store:
    """An empty store whose workspace key is `workspace_key` (for the benchmarks)."""
    store = Store(path)
    store.add_key(workspace_key, None, "bench")
    return store


def genai(role: str, *parts: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, "parts": list(parts)}
    if finish:
        message["finish_reason"] = finish
    return message


def text(content: str) -> dict[str, Any]:
    return {"type": "text", "content": content}


def chat_spans(long_lines: int = 0) -> list[SpanSpec]:
    """A support agent's turn: a model call with a system prompt, two tools and a multi-turn
    history with a tool call and its result (OTel GenAI), the tool's own span, a retrieval
    with documents (OpenInference), and a second call in OpenInference's flattened spelling.
    With `long_lines`, the second call's user message is that many lines long."""
    history = [
        genai("user", text(QUESTION)),
        genai(
            "assistant",
            {
                "type": "tool_call",
                "id": "call_7Qx",
                "name": "lookup_order",
                "arguments": {"order_id": 48213, "include": ["shipping"]},
            },
        ),
        genai(
            "tool",
            {
                "type": "tool_call_response",
                "id": "call_7Qx",
                "response": {"status": "shipped", "carrier": "DHL", "eta": "2026-11-22"},
            },
        ),
    ]
    call = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.system_instructions": json.dumps([text(SYSTEM_PROMPT)]),
        "gen_ai.tool.definitions": json.dumps(
            [
                {
                    "type": "function",
                    "name": "lookup_order",
                    "description": "Look an order up by its number",
                    "parameters": {
                        "type": "object",
                        "properties": {"order_id": {"type": "integer"}},
                    },
                },
                {"type": "function", "name": "escalate", "parameters": {"type": "object"}},
            ]
        ),
        "gen_ai.input.messages": json.dumps(history),
        "gen_ai.output.messages": json.dumps([genai("assistant", text(ANSWER), finish="stop")]),
        "gen_ai.response.finish_reasons": ["stop"],
    }
    follow_up = FOLLOW_UP
    if long_lines:
        follow_up += "\n" + "\n".join(
            f"detail line {n}: the parcel needle" for n in range(long_lines)
        )
    second = {
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": QUESTION,
        "llm.input_messages.1.message.role": "assistant",
        "llm.input_messages.1.message.content": ANSWER,
        "llm.input_messages.2.message.role": "user",
        "llm.input_messages.2.message.content": follow_up,
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "Yes, until it leaves the depot: reply with the new address.",
    }
    return [
        SpanSpec("root", None, "support_turn", "agent", 0, 5200),
        SpanSpec("llm1", "root", "chat gpt-4o", "llm", 5, 2100, "gpt-4o", (812, 96), 0.003, call),
        SpanSpec(
            "tool1",
            "root",
            "lookup_order",
            "tool",
            900,
            240,
            attributes={
                "gen_ai.tool.name": "lookup_order",
                "gen_ai.tool.call.id": "call_7Qx",
                "gen_ai.tool.call.arguments": json.dumps(
                    {"order_id": 48213, "include": ["shipping"]}
                ),
                "gen_ai.tool.call.result": json.dumps({"status": "shipped", "carrier": "DHL"}),
            },
        ),
        SpanSpec(
            "ret1",
            "root",
            "kb.search",
            "retrieval",
            2200,
            310,
            attributes={
                "input.value": "change delivery address",
                "retrieval.documents.0.document.id": "kb-118",
                "retrieval.documents.0.document.score": 0.873,
                "retrieval.documents.0.document.content": "Addresses can be changed until the parcel leaves the depot.",
                "retrieval.documents.1.document.id": "kb-042",
                "retrieval.documents.1.document.score": 0.611,
                "retrieval.documents.1.document.content": "Returns are free within 30 days.",
            },
        ),
        SpanSpec(
            "llm2",
            "root",
            "chat gpt-4o-mini",
            "llm",
            2600,
            2500,
            "gpt-4o-mini",
            (1204, 18),
            0.0004,
            second,
        ),
        SpanSpec(
            "odd",
            "root",
            "custom.step",
            "chain",
            5100,
            50,
            attributes={"custom": {"shape": [1, 2]}},
        ),
    ]


CHAT_TRACE_ATTRIBUTES = {
    "user.id": "u-42",
    "session.id": "sess-9f2",
    "tags": ["vip", "eu"],
    "input": QUESTION,
}


# -- the scenes of the snapshot tests and screenshots ---------------------------------------------

CHAT_TRACE_ID = "5a1e5c0ffee0c4a7d00d5a1e5c0ffee0"
CHAT_SCENES = (
    Scene("chat", StartAt(trace_id=CHAT_TRACE_ID), ("down",), "A model call's conversation"),
    Scene(
        "chat-zoomed",
        StartAt(trace_id=CHAT_TRACE_ID),
        ("down", "z"),
        "z gives the detail pane the whole screen",
    ),
    Scene(
        "tool-fields",
        StartAt(trace_id=CHAT_TRACE_ID),
        ("down", "down", "c"),
        "A tool span's fields: its arguments open in the JSON tree",
    ),
)


def chat_service(path: Path) -> tuple[LocalService, DemoKeys]:
    """The local service on a small demo database holding the chat trace, at the fixed time."""
    store = Store(path)
    keys = populate(store, seed=7, now=FIXED_NOW_MS, scale=0.01, big_traces=False)
    add_trace(
        store,
        CHAT_TRACE_ID,
        chat_spans(),
        project_id="proj_support",
        name="support_turn",
        started_ms=FIXED_NOW_MS - 90_000,
        attributes=CHAT_TRACE_ATTRIBUTES,
    )
    return local_service(store, rate_limit=1000).start(), keys
