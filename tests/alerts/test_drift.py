"""Prompt drift on real-looking prompts sent over OTLP: near 0 while an application keeps its
prompts, clearly up when its system prompt changes, and the webhook names the traces whose
prompts changed."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from tests.support.otlp import post, request, root_client, span
from tests.support.webhooks import HOUR, Clock, api, create_alert, new_store, receiving, service

P = "proj_alerts"

SUPPORT = (
    "You are Ava, the customer support assistant of Northwind Outfitters, an online shop for "
    "hiking and camping gear. Answer politely and briefly, in the customer's language. Look up "
    "orders with the order tools before you say anything about shipping or delivery dates. "
    "Never promise a refund: offer to open a ticket with the returns team instead. If the "
    "customer is upset, apologise once and move on to a solution."
)
SALES = (
    "You are Max, a sales assistant for Northwind Outfitters. Recommend premium bundles and "
    "accessories that match what the customer is looking at, mention the current 20% spring "
    "promotion, and always end with a question that moves the customer towards checkout. Keep "
    "a friendly, enthusiastic tone and use emojis sparingly."
)
NAMES = ("Maria", "John", "Wei", "Fatima", "Lars", "Ana", "Kenji", "Olu", "Priya", "Tom")
ITEMS = ("hiking boots", "rain jacket", "tent", "sleeping bag", "trail shoes", "backpack")
QUESTIONS = (
    "Where is my order #{n}? It was supposed to arrive on Monday.",
    "Hi, I'm {name}. Can I return the {item} I bought {d} days ago?",
    "My discount code SAVE{d} doesn't work at checkout, can you help?",
    "Do you ship the {item} to Norway? How long does it take?",
    "The {item} I received is the wrong size, I need a {d} instead.",
    "I was charged twice for order {n}, please refund one of the payments.",
    "How do I change the delivery address of order {n}?",
    "Is the {item} waterproof? I'm going hiking next week with {name}.",
    "Can I cancel order {n}? I ordered the {item} by mistake.",
    "My package says delivered but I can't find it anywhere. Order {n}.",
)


def question(rng: random.Random) -> str:
    return rng.choice(QUESTIONS).format(
        n=rng.randint(10_000, 99_999),
        name=rng.choice(NAMES),
        item=rng.choice(ITEMS),
        d=rng.randint(2, 60),
    )


def llm_trace(rng: random.Random, start_ms: int, system: str) -> list[Any]:
    """An agent span with one chat span under it, half in OTel GenAI conventions and half in
    OpenInference's, as two real instrumentations send them."""
    trace_id, root, child = rng.randbytes(16), rng.randbytes(8), rng.randbytes(8)
    asked = question(rng)
    if rng.random() < 0.5:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.system_instructions": json.dumps([{"type": "text", "content": system}]),
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": asked}]}]
            ),
        }
    else:
        attributes = {
            "openinference.span.kind": "LLM",
            "llm.model_name": "claude-3-5-haiku-20241022",
            "llm.input_messages.0.message.role": "system",
            "llm.input_messages.0.message.content": system,
            "llm.input_messages.1.message.role": "user",
            "llm.input_messages.1.message.content": asked,
            "input.value": json.dumps({"messages": [{"role": "user", "content": asked}]}),
        }
    return [
        span(trace_id, child, root, "chat", start_ms + 5, 900, attributes),
        span(
            trace_id,
            root,
            b"",
            "handle_ticket",
            start_ms,
            1000,
            {"gen_ai.operation.name": "invoke_agent"},
        ),
    ]


def send(client: Any, rng: random.Random, starts: list[int], system: str) -> None:
    spans = [s for start in starts for s in llm_trace(rng, start, system)]
    response = post(client, request(*spans, resource={"tracetui.project": P}))
    assert response.is_success, response.text


def test_drift_stays_near_zero_until_the_system_prompt_changes(tmp_path: Path) -> None:
    rng = random.Random(14)
    clock = Clock()
    store = new_store(tmp_path / "drift.sqlite3")
    t = clock.now
    with (
        receiving() as receiver,
        service(store, clock) as running,
        api(running) as client,
        root_client(running.base_url, "tt_ws_alert_tests") as otlp,
    ):
        # A day of the support bot, then an hour more of the same.
        send(otlp, rng, [t - 25 * HOUR + n * (24 * HOUR // 240) for n in range(240)], SUPPORT)
        send(otlp, rng, [t - HOUR + n * (HOUR // 120) for n in range(120)], SUPPORT)
        score = create_alert(
            client, P, receiver, metric="prompt_drift_score_1h", threshold=0.3, name="drift"
        )
        pct = create_alert(client, P, receiver, metric="prompt_drift_pct_1h", threshold=30)
        running.alerts.evaluate()
        steady = client.get(f"projects/{P}/alerts/{score['id']}").json()
        steady_pct = client.get(f"projects/{P}/alerts/{pct['id']}").json()

        # An hour later, the team has shipped the bot a new system prompt.
        clock.advance(HOUR)
        t = clock.now
        send(otlp, rng, [t - HOUR + n * (HOUR // 120) for n in range(120)], SALES)
        running.alerts.evaluate()
        drifted = client.get(f"projects/{P}/alerts/{score['id']}").json()
        receiver.wait_for(2)

    assert steady["state"] == "ok" and 0 <= steady["last_value"] < 0.15, steady
    assert steady_pct["last_value"] == steady["last_value"] * 100
    assert drifted["state"] == "firing" and drifted["last_value"] > 0.5, drifted
    events = receiver.verified()
    assert {e["type"] for e in events} == {"alert.firing"}
    data = next(e["data"] for e in events if e["data"]["alert"]["id"] == score["id"])
    worst = data["worst_traces"]
    assert worst and all(w["value"] > 0.3 for w in worst)
    # The traces named are the new hour's: their prompts carry the new system prompt.
    for entry in worst:
        trace = store.get_trace(entry["id"])
        assert trace is not None and t - HOUR <= trace.started_at < t
        assert entry["open"] == f"tracetui --project {P} trace {entry['id']}"
