"""The demo's traffic, one trace at a time: a builder of spans, the three applications' kinds
of trace (support chat, RAG search, coding agent) with their phrases and errors, the 12,000-span
and the 2,500-deep traces, and when traces start over a day.

Deterministic from the builder's random generator: the same seed makes the same traces.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tui.demo import conventions
from tui.demo.prices import cost_usd
from tui.server.ingest.preview import one_line
from tui.server.rows import SpanRow, TraceRow

DAY_MS = 86_400_000
HOUR_MS = 3_600_000
BIG_TRACE_ID = "0" * 24 + "b16b16b1"
DEEP_TRACE_ID = "0" * 24 + "dee9dee9"


# -- building one trace -------------------------------------------------------------------------


@dataclass
class TraceBuilder:
    """Accumulates the spans of one trace."""

    rng: random.Random
    trace_id: str
    rows: list[SpanRow] = field(default_factory=list)
    next_span: int = 0
    failure: str | None = None

    def span_id(self) -> str:
        self.next_span += 1
        return hashlib.blake2b(
            f"{self.trace_id}:{self.next_span}".encode(), digest_size=8
        ).hexdigest()

    def add(
        self,
        parent: str | None,
        name: str,
        kind: str,
        start: int,
        duration: int,
        model: str | None = None,
        tokens: tuple[int, int] = (0, 0),
        attributes: dict[str, Any] | None = None,
        error: str | None = None,
        span_id: str | None = None,
    ) -> str:
        span_id = span_id or self.span_id()
        cost = cost_usd(model, *tokens) if model else 0.0
        self.rows.append(
            SpanRow(
                trace_id=self.trace_id,
                id=span_id,
                parent_id=parent,
                name=name,
                kind=kind,
                model=model,
                started_at=start,
                duration_ms=max(duration, 0),
                input_tokens=tokens[0],
                output_tokens=tokens[1],
                cost_usd=cost,
                status="error" if error else "ok",
                error_message=error,
                attributes=json.dumps(attributes or {}),
            )
        )
        return span_id

    def latency(self, median_ms: float, spread: float = 0.45) -> int:
        """A log-normal duration with a heavy tail: about 1 call in 100 is 5-15x slower."""
        value = median_ms * math.exp(self.rng.gauss(0, spread))
        if self.rng.random() < 0.01:
            value *= self.rng.uniform(5, 15)
        return max(1, int(value))

    def llm(
        self,
        parent: str,
        name: str,
        start: int,
        model: str,
        prompt_tokens: tuple[int, int],
        completion_tokens: tuple[int, int],
        prompt: str,
        completion: str,
        system: str | None = None,
        messages: list[dict[str, Any]] | None = None,
        openinference: bool = False,
    ) -> int:
        """A model call: its input is `messages` (GenAI) if given, else `prompt` from the user."""
        inp = self.rng.randint(*prompt_tokens)
        out = self.rng.randint(*completion_tokens)
        duration = self.latency(250 + out * 18)
        error = self.maybe_fail(LLM_ERRORS)
        if error:
            duration = min(duration, self.rng.randint(200, 60_000))
            out = 0
        temperature = self.rng.choice([0, 0.2, 0.7])
        response_id = f"{self.rng.getrandbits(48):012x}"
        answer = None if error else completion
        if model in conventions.EMBEDDING_MODELS:
            attributes = conventions.embedding(model, prompt, openinference)
        elif openinference:
            attributes = conventions.openinference_llm(
                model, system, prompt, answer, temperature, response_id
            )
        else:
            messages = messages or [conventions.text_message("user", prompt)]
            attributes = conventions.genai_chat(
                model, system, messages, answer, temperature, response_id
            )
        self.add(parent, name, "llm", start, duration, model, (inp, out), attributes, error)
        return start + duration

    def tool(
        self,
        parent: str,
        name: str,
        start: int,
        args: dict[str, Any],
        result: str,
        call_id: str | None = None,
    ) -> int:
        duration = self.latency(self.rng.choice([15, 40, 120, 900]))
        error = self.maybe_fail(TOOL_ERRORS)
        call_id = call_id or f"call_{self.trace_id[:6]}{self.next_span}"
        attributes = conventions.genai_tool(name, call_id, args, None if error else result)
        self.add(parent, name, "tool", start, duration, attributes=attributes, error=error)
        return start + duration

    def maybe_fail(self, messages: tuple[str, ...]) -> str | None:
        """Fail this span if the trace was chosen to fail and has not failed yet."""
        if self.failure == "pending" and self.rng.random() < 0.5:
            self.failure = self.rng.choice(messages)
            return self.failure
        return None


LLM_ERRORS = (
    "RateLimitError: Error code: 429 - Rate limit reached for requests per min (RPM): "
    "Limit 500, Used 500, Requested 1. Please try again in 120ms.",
    "APITimeoutError: Request timed out after 60.0 seconds.",
    "BadRequestError: Error code: 400 - This model's maximum context length is 128000 tokens. "
    "However, your messages resulted in 131205 tokens.",
    "InternalServerError: Error code: 529 - {'type': 'error', 'error': {'type': "
    "'overloaded_error', 'message': 'Overloaded'}}",
    "OutputParserException: Could not parse LLM output: expected JSON object, got text.",
)
TOOL_ERRORS = (
    "ToolError: order 48213 not found",
    "httpx.ReadTimeout: timed out reading from inventory-service:8080",
    "PermissionError: [Errno 13] Permission denied: '/repo/.git/index.lock'",
    "subprocess.CalledProcessError: Command '['pytest', '-x']' returned non-zero exit status 1.",
)
RETRIEVAL_ERRORS = (
    "psycopg.errors.QueryCanceled: canceling statement due to statement timeout",
    "qdrant_client.http.exceptions.ResponseHandlingException: timed out",
)

QUESTIONS = (
    "Where is my order #48213?",
    "How do I reset my password?",
    "Can I return shoes after 30 days?",
    "Do you ship to Norway?",
    "My discount code SAVE20 doesn't work",
    "How do I configure SSO with Okta?",
    "What is the rate limit of the public API?",
    "How do I rotate an API key?",
    "Why is my webhook returning 401?",
)
# What the apps answer each question (the support bot the first five, the docs search the rest).
ANSWERS = {
    "Where is my order #48213?": "Your order shipped yesterday and should arrive within 2 "
    "business days.",
    "How do I reset my password?": "Use 'Forgot password' on the sign-in page; the link in the "
    "email is valid for one hour.",
    "Can I return shoes after 30 days?": "Yes: unworn items can be returned for free within 60 "
    "days, from the order page.",
    "Do you ship to Norway?": "Yes, we ship to Norway; delivery takes 3-5 business days.",
    "My discount code SAVE20 doesn't work": "SAVE20 expired on Friday, and codes cannot be "
    "combined; WINTER15 is valid until the end of the month.",
    "How do I configure SSO with Okta?": "Add tracetui as a SAML 2.0 app in Okta, paste its "
    "metadata URL under Settings -> Security, then map the email attribute [1].",
    "What is the rate limit of the public API?": "1,000 requests per minute per key; a 429 "
    "says how long to wait in Retry-After [1].",
    "How do I rotate an API key?": "Go to Settings -> API keys, create a new key, deploy it, "
    "then revoke the old one [1].",
    "Why is my webhook returning 401?": "Your endpoint is probably checking the signature with "
    "an old signing secret; copy the current one from the alert [1].",
}
# The support bot's knowledge base articles (the content its search returns).
KB_ARTICLES = (
    "Orders ship within one business day; tracking links are emailed when the parcel leaves.",
    "Returns are free within 60 days for unworn items; start one from the order page.",
    "Discount codes cannot be combined, and expire at midnight UTC on their end date.",
    "We ship to the EU, Norway, Switzerland and the UK; delivery takes 3-5 business days.",
    "A password reset link is valid for one hour; check the spam folder if it does not come.",
)
FILES = (
    "src/billing/invoice.py",
    "src/api/routes.py",
    "tests/test_invoice.py",
    "src/core/retry.py",
    "pyproject.toml",
)


def support_trace(b: TraceBuilder, start: int) -> tuple[str, dict[str, Any], int]:
    question = b.rng.choice(QUESTIONS[:5])
    root = b.span_id()
    t = start + 3
    t = b.tool(root, "guardrails.input", t, {"text": question}, "allowed") + 2
    search = b.span_id()
    s0 = t
    t = b.llm(search, "embed_query", t, "text-embedding-3-small", (12, 60), (0, 0), question, "")
    t += b.latency(35)
    article = b.rng.randint(100, 999)
    score = round(b.rng.uniform(0.6, 0.95), 3)
    content = KB_ARTICLES[article % len(KB_ARTICLES)]
    docs = [{"id": f"kb-{article}", "score": score, "content": content}]
    b.add(
        root,
        "kb.search",
        "retrieval",
        s0,
        t - s0,
        attributes={
            "gen_ai.operation.name": "retrieval",
            "gen_ai.retrieval.query.text": question,
            "gen_ai.retrieval.documents": json.dumps(docs),
        },
        span_id=search,
    )
    t = b.llm(
        root,
        "classify_intent",
        t + 2,
        "gpt-4o-mini",
        (300, 700),
        (3, 12),
        question,
        "order",
        system=conventions.CLASSIFY_SYSTEM,
    )
    # The conversation so far: now and then an earlier turn, then the question and, when the
    # order was looked up, the model's tool call and its result.
    turn = int(b.trace_id[-2:], 16) % (len(conventions.EARLIER_TURNS) + 2)
    messages = []
    if turn < len(conventions.EARLIER_TURNS):
        asked, answered = conventions.EARLIER_TURNS[turn]
        messages += [
            conventions.text_message("user", asked),
            conventions.text_message("assistant", answered),
        ]
    messages.append(conventions.text_message("user", question))
    if b.rng.random() < 0.5:
        call_id = f"call_{b.trace_id[:12]}"
        arguments = {"order_id": 48213}
        result = '{"status": "shipped", "carrier": "DHL", "eta": "2 business days"}'
        t = b.tool(root, "orders.lookup", t + 2, arguments, result, call_id=call_id)
        messages += [
            conventions.tool_call_message(call_id, "orders.lookup", arguments),
            conventions.tool_result_message(call_id, result),
        ]
    model = b.rng.choice(["gpt-4o", "claude-3-5-sonnet-20241022", "gpt-4o-mini"])
    answer = ANSWERS[question]
    t = b.llm(
        root,
        "draft_reply",
        t + 2,
        model,
        (900, 3200),
        (60, 420),
        question,
        answer,
        system=conventions.SUPPORT_SYSTEM,
        messages=messages,
    )
    t = b.tool(root, "guardrails.output", t + 1, {"text": answer}, "allowed") + 2
    b.add(
        None,
        "handle_ticket",
        "agent",
        start,
        t - start,
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"},
        span_id=root,
    )
    return "handle_ticket", {"input": question, "output": answer}, t - start


def rag_trace(b: TraceBuilder, start: int) -> tuple[str, dict[str, Any], int]:
    """The docs search, in OpenInference conventions (as Phoenix's instrumentations write)."""
    question = b.rng.choice(QUESTIONS[5:])
    root = b.span_id()
    t = b.llm(
        root,
        "embed_query",
        start + 2,
        "text-embedding-3-small",
        (8, 40),
        (0, 0),
        question,
        "",
        openinference=True,
    )
    found: list[dict[str, Any]] = []
    for name, median in (("pgvector.search", 60), ("rerank", 180)):
        duration = b.latency(median)
        error = b.maybe_fail(RETRIEVAL_ERRORS)
        model = "rerank-english-v3.0" if name == "rerank" else None
        tokens = (b.rng.randint(2000, 6000), 0) if model else (0, 0)
        docs: list[dict[str, Any]] = [
            {
                "id": f"docs/{b.rng.choice(['sso', 'api', 'keys', 'webhooks'])}.md#{i}",
                "score": round(b.rng.uniform(0.4, 0.9), 3),
            }
            for i in range(b.rng.randint(3, 8))
        ]
        if model:  # a reranker answers best first
            docs.sort(key=lambda doc: doc["score"], reverse=True)
        attributes = conventions.openinference_documents(question, docs)
        if model:
            attributes["openinference.span.kind"] = "RERANKER"
        b.add(root, name, "retrieval", t + 1, duration, model, tokens, attributes, error)
        t += 1 + duration
        found = docs
    model = b.rng.choice(["claude-3-5-haiku-20241022", "gpt-4o-mini", "gpt-4o"])
    answer = ANSWERS[question]
    context = "\n".join(
        f"[{n + 1}] {conventions.DOC_CONTENT[d['id'][5:].split('.')[0]]}"
        for n, d in enumerate(found[:3])
    )
    t = b.llm(
        root,
        "synthesize_answer",
        t + 2,
        model,
        (1500, 6000),
        (80, 600),
        f"{question}\n\nDocuments:\n{context}",
        answer,
        system=conventions.DOCS_SYSTEM,
        openinference=True,
    )
    if b.rng.random() < 0.3:
        t = b.llm(
            root,
            "suggest_followups",
            t + 1,
            "gpt-4o-mini",
            (200, 500),
            (20, 80),
            answer,
            "How do I revoke a key?\nCan a key be limited to one project?",
            openinference=True,
        )
    b.add(
        None,
        "answer_question",
        "chain",
        start,
        t + 2 - start,
        attributes={
            "openinference.span.kind": "CHAIN",
            "input.value": question,
            "output.value": answer,
        },
        span_id=root,
    )
    return "answer_question", {"input": question, "output": answer}, t + 2 - start


def agent_step(b: TraceBuilder, parent: str, start: int, depth: int) -> int:
    """One step of the coding agent: think, act with tools, sometimes delegate a subtask."""
    step = b.span_id()
    t = start + 1
    t = b.llm(
        step,
        "plan",
        t,
        b.rng.choice(["claude-3-5-sonnet-20241022", "o3-mini"]),
        (2000, 9000),
        (100, 900),
        "Decide the next action.",
        "Read the failing test.",
        system=conventions.AGENT_SYSTEM,
    )
    for _ in range(b.rng.randint(1, 3)):
        name = b.rng.choice(["read_file", "run_tests", "apply_patch", "grep"])
        t = b.tool(step, name, t + 1, {"path": b.rng.choice(FILES)}, "ok") + 1
    if depth < 5 and b.rng.random() < 0.35:
        t = agent_step(b, step, t + 1, depth + 1)
    b.add(parent, f"step.depth{depth}", "agent", start, t + 1 - start, span_id=step)
    return t + 1


def agent_trace(b: TraceBuilder, start: int) -> tuple[str, dict[str, Any], int]:
    root = b.span_id()
    t = start + 5
    for _ in range(b.rng.randint(2, 5)):
        t = agent_step(b, root, t, 2)
    b.add(None, "fix_failing_test", "agent", start, t + 3 - start, span_id=root)
    task = f"Fix {b.rng.choice(FILES[2:3])}::test_{b.rng.choice(['rounding', 'retry', 'tax'])}"
    return "fix_failing_test", {"input": task, "repository": "acme/shop"}, t + 3 - start


GENERATORS: dict[str, Callable[[TraceBuilder, int], tuple[str, dict[str, Any], int]]] = {
    "proj_support": support_trace,
    "proj_rag": rag_trace,
    "proj_agent": agent_trace,
}


def big_trace(rng: random.Random, start: int, steps: int = 600) -> TraceBuilder:
    """A 12,000-span agent run: 600 steps of one plan, 18 tool calls and a summary."""
    b = TraceBuilder(rng, BIG_TRACE_ID)
    root = b.span_id()
    t = start + 5
    for n in range(steps):
        step = b.span_id()
        s0 = t
        t = b.llm(
            step, "plan", t, "claude-3-5-haiku-20241022", (800, 1600), (20, 80), "next?", "grep"
        )
        for i in range(18):
            t = b.tool(step, f"grep.{i}", t, {"pattern": f"TODO-{n}-{i}"}, "3 matches")
        b.add(root, f"step {n + 1}", "agent", s0, t - s0, span_id=step)
    b.add(None, "migrate_monorepo", "agent", start, t + 1 - start, span_id=root)
    return b


def deep_trace(rng: random.Random, start: int, depth: int = 2500) -> TraceBuilder:
    """A recursive planner that nests 2,500 levels: each level delegates to the next."""
    b = TraceBuilder(rng, DEEP_TRACE_ID)
    ids = [b.span_id() for _ in range(depth)]
    end = start + depth * 3 + 50
    for level, span_id in enumerate(ids):
        parent = ids[level - 1] if level else None
        tokens = (rng.randint(50, 150), rng.randint(5, 30))
        b.add(
            parent,
            f"decompose level {level}",
            "chain",
            start + level * 2,
            end - start - level * 3,
            "gpt-4o-mini",
            tokens,
            {"level": level},
            span_id=span_id,
        )
    return b


def trace_row(
    b: TraceBuilder, project_id: str, name: str, start: int, duration: int, attrs: dict[str, Any]
) -> TraceRow:
    """The trace row summarising a builder's spans."""
    errors = [r for r in b.rows if r.status == "error"]
    return TraceRow(
        id=b.trace_id,
        project_id=project_id,
        name=name,
        started_at=start,
        duration_ms=duration,
        span_count=len(b.rows),
        input_tokens=sum(r.input_tokens for r in b.rows),
        output_tokens=sum(r.output_tokens for r in b.rows),
        total_cost_usd=round(sum(r.cost_usd for r in b.rows), 6),
        status="error" if errors else "ok",
        error_count=len(errors),
        attributes=json.dumps(attrs),
        input_preview=one_line(attrs["input"]) if isinstance(attrs.get("input"), str) else None,
    )


def daily_rhythm_start(rng: random.Random, now: int, days: int = 7) -> int:
    """A start time in the last `days` days, busier in (UTC) working hours than at night."""
    while True:
        t = now - rng.randrange(days * DAY_MS)
        hour = (t % DAY_MS) / HOUR_MS
        weight = 0.25 + 0.75 * max(0.0, math.sin((hour - 6) / 16 * math.pi))
        if rng.random() < weight:
            return t
