"""A simulated LLM application for `tracetui demo`: a new trace every few seconds, over OTLP.

It goes through the same door as a real application: an ExportTraceServiceRequest
(opentelemetry-proto) POSTed to /v1/traces with a project key, children first and the root
last, as an SDK's batch processor sends them. Two apps take turns: a support chatbot that
speaks the OTel GenAI conventions (gen_ai.input.messages / gen_ai.output.messages, a tool call,
an order look-up run again when it times out) and a docs search that speaks OpenInference (a CHAIN with a
RETRIEVER and an LLM span, flattened llm.input_messages.*). Costs are left to the service's
estimate, as most instrumentations do. It never writes to the terminal (the app owns it):
failures go to a debug log only.

Now and then the support bot's order service has an incident (Incidents): for a minute and a
half its tool calls time out nine times in ten, where 2% fail otherwise. The demo's live alert
on the support bot's error rate fires during one and resolves after it, so the demo shows a
whole episode, webhooks included, within its first few minutes.
"""

from __future__ import annotations

import json
import logging
import os
import random
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from tui.demo.conventions import DOC_PASSAGES

log = logging.getLogger("tracetui.demo.feed")

# The support bot's questions: each about an order, which it looks up before it answers; the
# answer it gives from the look-up.
QUESTIONS = (
    ("Where is my order #48213?", "It shipped yesterday and arrives within 2 business days."),
    (
        "Can I still return the shoes of order #48213?",
        "Yes: they were delivered 12 days ago, and unworn items can be returned for 60 days.",
    ),
    (
        "My discount code SAVE20 didn't apply to order #48213",
        "SAVE20 had expired when you ordered; I've applied WINTER15 to your next order instead.",
    ),
    (
        "Does order #48213 ship to Norway?",
        "Yes, it ships to Norway and arrives in 3-5 business days.",
    ),
)
LOOKUP_RESULT = '{"order_id": 48213, "status": "shipped", "delivered": "12 days ago"}'
# What the bot says when the order service did not answer twice: no answer made up.
NO_LOOKUP_ANSWER = (
    "I'm sorry, I can't reach our order system right now. I've passed your question to a "
    "colleague, who will answer by email within a day."
)
LOOKUP_TIMEOUT_MS = 5000  # the bot's HTTP client gives the order service 5 s
# The docs search's questions: the page that answers each, and the answer.
DOCS_QUESTIONS = (
    (
        "How do I rotate an API key?",
        "keys",
        "Create a new key, deploy it, then revoke the old one [1].",
    ),
    (
        "How do I configure SSO with Okta?",
        "sso",
        "Add tracetui as a SAML 2.0 app in Okta and paste its metadata URL under Settings -> "
        "Security [1].",
    ),
    (
        "What is the rate limit of the public API?",
        "api",
        "1,000 requests per minute per key; a 429 says how long to wait [1].",
    ),
)


def value(item: Any) -> AnyValue:
    if isinstance(item, bool):
        return AnyValue(bool_value=item)
    if isinstance(item, int):
        return AnyValue(int_value=item)
    if isinstance(item, float):
        return AnyValue(double_value=item)
    return AnyValue(string_value=str(item))


def attributes(pairs: dict[str, Any]) -> list[KeyValue]:
    return [KeyValue(key=k, value=value(v)) for k, v in pairs.items()]


class OtlpTraceBuilder:
    """The OTLP protobuf spans of one trace (as an SDK exports them), ids random, times in ms
    from `start_ms`."""

    def __init__(self, rng: random.Random, start_ms: int) -> None:
        self.rng = rng
        self.trace_id = rng.randbytes(16)
        self.start_ms = start_ms
        self.spans: list[Span] = []

    def span(
        self,
        name: str,
        parent: bytes,
        offset_ms: int,
        duration_ms: int,
        attrs: dict[str, Any],
        kind: Span.SpanKind.ValueType = Span.SPAN_KIND_INTERNAL,
        error: tuple[str, str] | None = None,
    ) -> bytes:
        span_id = self.rng.randbytes(8)
        start_ns = (self.start_ms + offset_ms) * 1_000_000
        span = Span(
            trace_id=self.trace_id,
            span_id=span_id,
            parent_span_id=parent,
            name=name,
            kind=kind,
            start_time_unix_nano=start_ns,
            end_time_unix_nano=start_ns + duration_ms * 1_000_000,
            attributes=attributes(attrs),
        )
        if error is not None:
            kind_name, message = error
            span.status.CopyFrom(Status(code=Status.STATUS_CODE_ERROR, message=message))
            event = span.events.add()
            event.name = "exception"
            event.time_unix_nano = start_ns + duration_ms * 1_000_000
            event.attributes.extend(
                attributes({"exception.type": kind_name, "exception.message": message})
            )
        self.spans.append(span)
        return span_id


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


CALM_FAILURES = 0.02  # the share of order look-ups that fail on an ordinary day
INCIDENT_FAILURES = 0.9  # and while the order service is down


class Incidents:
    """When the order service is down: `length_s` seconds starting `first_s` after the feed
    starts, then again every `every_s` seconds."""

    def __init__(self, first_s: float = 60.0, length_s: float = 90.0, every_s: float = 360.0):
        self.first_s = first_s
        self.length_s = length_s
        self.every_s = every_s

    def failure_rate(self, since_start_s: float) -> float:
        if since_start_s < self.first_s:
            return CALM_FAILURES
        into_cycle = (since_start_s - self.first_s) % self.every_s
        return INCIDENT_FAILURES if into_cycle < self.length_s else CALM_FAILURES


def support_ticket(
    rng: random.Random, now_ms: int, failure_rate: float = CALM_FAILURES
) -> tuple[list[Span], Span]:
    """A support agent in OTel GenAI conventions: the model asks for the order, the tool looks
    it up (run again once if it timed out), the model answers from what it found, or, when the
    order service did not answer either time, says so and hands over to a person."""
    question, answer = rng.choice(QUESTIONS)
    attempts = [rng.random() < failure_rate]  # True: that attempt timed out
    if attempts[0]:
        attempts.append(rng.random() < failure_rate)
    found = not attempts[-1]
    offsets = [950 + n * (LOOKUP_TIMEOUT_MS + 300) for n in range(len(attempts))]
    answer_at = offsets[-1] + (LOOKUP_TIMEOUT_MS if not found else 400) + 50
    answer_ms = rng.randint(900, 3800)
    total = answer_at + answer_ms + 50
    b = OtlpTraceBuilder(rng, now_ms - total)
    root = rng.randbytes(8)
    user = [{"role": "user", "parts": [{"type": "text", "content": question}]}]
    call = {
        "type": "tool_call",
        "id": "call_1",
        "name": "lookup_order",
        "arguments": {"order_id": 48213},
    }
    model = rng.choice(["gpt-4o-mini", "gpt-4o"])
    b.span(
        f"chat {model}",
        root,
        20,
        rng.randint(300, 900),
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": model,
            "gen_ai.response.model": model,
            "gen_ai.usage.input_tokens": rng.randint(400, 1200),
            "gen_ai.usage.output_tokens": rng.randint(5, 20),
            "gen_ai.input.messages": json.dumps(user),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [call], "finish_reason": "tool_call"}]
            ),
        },
        kind=Span.SPAN_KIND_CLIENT,
    )
    for offset, timed_out in zip(offsets, attempts, strict=True):
        tool_attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "lookup_order",
            "gen_ai.tool.call.id": "call_1",
            "gen_ai.tool.call.arguments": '{"order_id": 48213}',
        }
        if not timed_out:
            tool_attributes["gen_ai.tool.call.result"] = LOOKUP_RESULT
        b.span(
            "execute_tool lookup_order",
            root,
            offset,
            LOOKUP_TIMEOUT_MS + rng.randint(0, 40) if timed_out else rng.randint(30, 400),
            tool_attributes,
            error=("httpx.ReadTimeout", "timed out reading from orders-service:8080 after 5 s")
            if timed_out
            else None,
        )
    result = LOOKUP_RESULT if found else '{"error": "orders-service timed out twice"}'
    said = answer if found else NO_LOOKUP_ANSWER
    conversation = [
        *user,
        {"role": "assistant", "parts": [call]},
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "call_1", "response": result}],
        },
    ]
    b.span(
        f"chat {model}",
        root,
        answer_at,
        answer_ms,
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": model,
            "gen_ai.response.model": model,
            "gen_ai.usage.input_tokens": rng.randint(900, 2400),
            "gen_ai.usage.output_tokens": rng.randint(40, 220),
            "gen_ai.usage.cache_read.input_tokens": rng.choice([0, 512, 1024]),
            "gen_ai.input.messages": json.dumps(conversation),
            "gen_ai.output.messages": json.dumps(
                [
                    {
                        "role": "assistant",
                        "parts": [{"type": "text", "content": said}],
                        "finish_reason": "stop",
                    }
                ]
            ),
        },
        kind=Span.SPAN_KIND_CLIENT,
    )
    children = b.spans
    b.spans = []
    b.span(
        "invoke_agent support",
        b"",
        0,
        total,
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"},
    )
    root_span = b.spans[0]
    root_span.span_id = root
    return children, root_span


def docs_question(
    rng: random.Random, now_ms: int, failure_rate: float = CALM_FAILURES
) -> tuple[list[Span], Span]:
    """A RAG answer in OpenInference conventions: retrieve distinct passages (the page that
    answers first), then one LLM call that answers from them."""
    question, page, answer = rng.choice(DOCS_QUESTIONS)
    total = rng.randint(900, 3500)
    b = OtlpTraceBuilder(rng, now_ms - total)
    root = rng.randbytes(8)
    others = [
        (p, n) for p, passages in DOC_PASSAGES.items() if p != page for n in range(len(passages))
    ]
    chosen = [(page, 0), *rng.sample(others, rng.randint(1, 3))]
    docs: dict[str, Any] = {}
    for n, (doc_page, section) in enumerate(chosen):
        score = rng.uniform(0.85, 0.95) if n == 0 else rng.uniform(0.4, 0.7)
        docs[f"retrieval.documents.{n}.document.id"] = f"docs/{doc_page}.md#{section}"
        docs[f"retrieval.documents.{n}.document.score"] = round(score, 3)
        docs[f"retrieval.documents.{n}.document.content"] = DOC_PASSAGES[doc_page][section]
    b.span(
        "retrieve",
        root,
        5,
        rng.randint(40, 200),
        {"openinference.span.kind": "RETRIEVER", "input.value": question, **docs},
    )
    context = "\n".join(
        f"[{n + 1}] {DOC_PASSAGES[doc_page][section]}"
        for n, (doc_page, section) in enumerate(chosen)
    )
    model = rng.choice(["claude-3-5-haiku-20241022", "gpt-4o-mini"])
    b.span(
        "synthesize",
        root,
        260,
        total - 280,
        {
            "openinference.span.kind": "LLM",
            "llm.model_name": model,
            "llm.provider": "anthropic" if model.startswith("claude") else "openai",
            "llm.input_messages.0.message.role": "system",
            "llm.input_messages.0.message.content": "Answer from the documents only, citing [n].",
            "llm.input_messages.1.message.role": "user",
            "llm.input_messages.1.message.content": f"{question}\n\nDocuments:\n{context}",
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": answer,
            "llm.token_count.prompt": rng.randint(1500, 5000),
            "llm.token_count.completion": rng.randint(60, 400),
        },
    )
    children = b.spans
    b.spans = []
    b.span(
        "answer_question",
        b"",
        0,
        total,
        {"openinference.span.kind": "CHAIN", "input.value": question, "output.value": answer},
    )
    root_span = b.spans[0]
    root_span.span_id = root
    return children, root_span


APPS = (
    ("proj_support", "support-chatbot", support_ticket),
    ("proj_rag", "docs-rag-search", docs_question),
)


def export(spans: list[Span], service_name: str) -> bytes:
    message = ExportTraceServiceRequest()
    resource_spans = message.resource_spans.add()
    resource_spans.resource.attributes.extend(
        attributes({"service.name": service_name, "telemetry.sdk.name": "tracetui-demo-feed"})
    )
    scope_spans = resource_spans.scope_spans.add()
    scope_spans.scope.name = "tracetui.demo.feed"
    scope_spans.spans.extend(spans)
    return message.SerializeToString()


class Feed:
    """Sends a trace every `interval_s` seconds (±30%) to the service at `root_url` (no /v1),
    each app's with its project key from `keys`, until stop()."""

    def __init__(
        self,
        root_url: str,
        keys: dict[str, str],
        interval_s: float = 4.0,
        seed: int | None = None,
        incidents: Incidents | None = None,
        clock: Callable[[], int] = wall_ms,
    ) -> None:
        self.url = root_url.rstrip("/") + "/v1/traces"
        self.keys = keys
        self.interval_s = interval_s
        self.incidents = incidents
        self.clock = clock  # epoch ms: the traces' times, and the incidents'
        self.started = clock()
        self.rng = random.Random(seed if seed is not None else os.urandom(8))
        self.sent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tracetui-demo-feed", daemon=True)

    def start(self) -> Feed:
        self.started = self.clock()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)

    def send_one(self, client: httpx.Client) -> None:
        project_id, service_name, build = self.rng.choice(APPS)
        key = self.keys.get(project_id)
        if key is None:
            return
        now = self.clock()
        failures = CALM_FAILURES
        if self.incidents is not None:
            failures = self.incidents.failure_rate((now - self.started) / 1000)
        children, root = build(self.rng, now, failures)
        headers = {"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {key}"}
        for batch in (children, [root]):  # as batch processors send them: the root ends last
            response = client.post(self.url, content=export(batch, service_name), headers=headers)
            response.raise_for_status()
        self.sent += 1

    def _run(self) -> None:
        with httpx.Client(timeout=5) as client:
            while not self._stop.wait(self.interval_s * self.rng.uniform(0.7, 1.3)):
                try:
                    self.send_one(client)
                except httpx.HTTPError as error:
                    log.debug("demo feed: %s", type(error).__name__)
