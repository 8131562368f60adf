"""The demo's traffic, one trace at a time: a builder of spans, the three applications' kinds
of trace (support chat, RAG search, coding agent) with their phrases and errors, the 12,000-span
and the 2,500-deep traces, and when traces start over a day.

Deterministic from the builder's random generator: the same seed makes the same traces. Some
550 lines: the builder's failures and retries and the three stories that use them are read
together (their phrases and errors are in `phrases` and `failures`).
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
from tui.demo.failures import (
    LLM_ERRORS,
    LLM_TIMEOUT_MS,
    LONG_PROMPT,
    RETRIEVAL_ERRORS,
    RETRY_BACKOFF_MS,
    TOOL_ERRORS,
    timeout_ms,
)
from tui.demo.phrases import (
    AGENT_ACTIONS,
    ANSWERS,
    DOCS_QUESTIONS,
    FILES,
    KB_ARTICLES,
    SUPPORT_CASES,
    SUPPORT_QUESTIONS,
)
from tui.demo.prices import cost_usd
from tui.demo.sessions import Turn
from tui.server.ingest.preview import one_line
from tui.server.store.rows import SpanRow, TraceRow

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
    gave_up: str | None = None  # a failure the trace cannot go on from
    turn: Turn | None = None  # a support trace's place in its session's story

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
        """A model call: its input is `messages` (GenAI) if given, else `prompt` from the user.

        A failure is one its provider really answers with. A passing one (a rate limit, a
        timeout, an overload) is retried once, as the SDKs do: a second span of the same name,
        which succeeds. One that cannot pass (a prompt over the context window, possible only
        for calls with long prompts) ends the story: `gave_up` holds it, for the caller to stop."""
        provider = conventions.provider_of(model)
        passing, fatal = LLM_ERRORS[provider]
        error = self.maybe_fail(passing + (fatal if prompt_tokens[1] >= LONG_PROMPT else ()))
        args = (parent, name, model, prompt_tokens, completion_tokens, prompt, completion)
        end = self._llm_span(*args, start, system, messages, openinference, error)
        if error in fatal:
            self.gave_up = error
        elif error:
            end = self._llm_span(
                *args, end + RETRY_BACKOFF_MS, system, messages, openinference, None
            )
        return end

    def _llm_span(
        self,
        parent: str,
        name: str,
        model: str,
        prompt_tokens: tuple[int, int],
        completion_tokens: tuple[int, int],
        prompt: str,
        completion: str,
        start: int,
        system: str | None,
        messages: list[dict[str, Any]] | None,
        openinference: bool,
        error: str | None,
    ) -> int:
        inp = self.rng.randint(*prompt_tokens)
        out = self.rng.randint(*completion_tokens)
        duration = self.latency(250 + out * 18)
        if error:
            # A refused call reports no usage and costs nothing; a timeout lasts its timeout.
            inp = out = 0
            timed_out = "timed out" in error
            duration = (
                LLM_TIMEOUT_MS + self.rng.randint(0, 400) if timed_out else min(duration, 900)
            )
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
        """A tool's execution. The tools that can fail (TOOL_ERRORS) fail as they really do,
        and are run again once, with the same call: the second run gives `result`."""
        call_id = call_id or f"call_{self.trace_id[:6]}{self.next_span}"
        error = self.maybe_fail(TOOL_ERRORS.get(name, ()))
        end = self._tool_span(parent, name, start, args, result, call_id, error)
        if error:
            end = self._tool_span(parent, name, end + RETRY_BACKOFF_MS, args, result, call_id, None)
        return end

    def _tool_span(
        self,
        parent: str,
        name: str,
        start: int,
        args: dict[str, Any],
        result: str,
        call_id: str,
        error: str | None,
    ) -> int:
        duration = self.latency(self.rng.choice([15, 40, 120, 900]))
        if error and (timeout := timeout_ms(error)):
            duration = timeout + self.rng.randint(0, 50)
        attributes = conventions.genai_tool(name, call_id, args, None if error else result)
        self.add(parent, name, "tool", start, duration, attributes=attributes, error=error)
        return start + duration

    def maybe_fail(self, messages: tuple[str, ...]) -> str | None:
        """Fail this span if the trace was chosen to fail and has not failed yet (and this kind
        of span can fail: `messages` is not empty)."""
        if messages and self.failure == "pending" and self.rng.random() < 0.5:
            self.failure = self.rng.choice(messages)
            return self.failure
        return None


def support_trace(b: TraceBuilder, start: int) -> tuple[str, dict[str, Any], int]:
    """A support agent: the input guardrail, a search of the knowledge base, the intent, the
    tool the question needs (an order look-up, a discount code check), the reply from what was
    found, the output guardrail. A tool that times out is run again before the reply."""
    # Drawn either way, so that the trace's timings are the same whatever question it asks.
    question = b.rng.choice(SUPPORT_QUESTIONS)
    if b.turn is not None:
        question = b.turn.question
    intent, article, tool = SUPPORT_CASES[question]
    root = b.span_id()
    t = start + 3
    t = b.tool(root, "guardrails.input", t, {"text": question}, "allowed") + 2
    search = b.span_id()
    s0 = t
    t = b.llm(search, "embed_query", t, "text-embedding-3-small", (12, 60), (0, 0), question, "")
    t += b.latency(35)
    # The article that answers first, then another one, less close: two distinct documents.
    other = (article + b.rng.randint(1, len(KB_ARTICLES) - 1)) % len(KB_ARTICLES)
    docs = [
        {
            "id": f"kb-{100 + n}",
            "score": round(b.rng.uniform(lo, hi), 3),
            "content": KB_ARTICLES[n],
        }
        for n, (lo, hi) in ((article, (0.82, 0.95)), (other, (0.45, 0.7)))
    ]
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
        intent,
        system=conventions.CLASSIFY_SYSTEM,
    )
    # The conversation so far (the session's earlier turns: tui/demo/sessions.py), then the
    # question and, when the question needs a tool, the model's call and its result.
    messages = []
    for asked, answered in b.turn.history if b.turn is not None else ():
        messages += [
            conventions.text_message("user", asked),
            conventions.text_message("assistant", answered),
        ]
    messages.append(conventions.text_message("user", question))
    if tool is not None:
        name, arguments, result = tool
        call_id = f"call_{b.trace_id[:12]}"
        t = b.tool(root, name, t + 2, arguments, result, call_id=call_id)
        messages += [
            conventions.tool_call_message(call_id, name, arguments),
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


def retrieved(b: TraceBuilder, page: str, count: int) -> list[dict[str, Any]]:
    """`count` distinct passages of the docs, closest first: the question's page scores high
    (its first passage, which answers it, highest), the other pages lower."""
    docs: list[dict[str, Any]] = []
    for other_page, passages in conventions.DOC_PASSAGES.items():
        for n, content in enumerate(passages):
            if other_page == page:
                lo, hi = (0.86, 0.95) if n == 0 else (0.68, 0.84)
            else:
                lo, hi = 0.32, 0.62
            docs.append(
                {
                    "id": f"docs/{other_page}.md#{n}",
                    "score": round(b.rng.uniform(lo, hi), 3),
                    "content": content,
                }
            )
    docs.sort(key=lambda doc: doc["score"], reverse=True)
    return docs[:count]


def rag_trace(b: TraceBuilder, start: int) -> tuple[str, dict[str, Any], int]:
    """The docs search, in OpenInference conventions (as Phoenix's instrumentations write):
    embed the question, search the vectors, rerank, answer from the three best documents. A
    search or a rerank that fails is run again; an answer whose prompt is over the model's
    window is not: the trace ends there, with no answer."""
    question = b.rng.choice(DOCS_QUESTIONS)
    page = conventions.QUESTION_PAGES[question]
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
    found = retrieved(b, page, b.rng.randint(4, 8))
    for name, median in (("pgvector.search", 60), ("rerank", 180)):
        model = "rerank-english-v3.0" if name == "rerank" else None
        if model:  # the reranker answers best first, three of them, with its own scores
            found = [doc | {"score": round(min(0.99, doc["score"] + 0.05), 3)} for doc in found[:3]]
        error = b.maybe_fail((RETRIEVAL_ERRORS[name],))
        for attempt_error in (error, None) if error else (None,):
            duration = b.latency(median)
            if attempt_error and (timeout := timeout_ms(attempt_error)):
                duration = timeout + b.rng.randint(0, 50)
            tokens = (b.rng.randint(2000, 6000), 0) if model and not attempt_error else (0, 0)
            attributes = conventions.openinference_documents(question, found)
            if attempt_error:
                attributes = {k: v for k, v in attributes.items() if "documents" not in k}
            if model:
                attributes["openinference.span.kind"] = "RERANKER"
            b.add(
                root, name, "retrieval", t + 1, duration, model, tokens, attributes, attempt_error
            )
            t += 1 + duration + (RETRY_BACKOFF_MS if attempt_error else 0)
    model = b.rng.choice(["claude-3-5-haiku-20241022", "gpt-4o-mini", "gpt-4o"])
    answer: str | None = ANSWERS[question]
    context = "\n".join(f"[{n + 1}] {doc['content']}" for n, doc in enumerate(found[:3]))
    t = b.llm(
        root,
        "synthesize_answer",
        t + 2,
        model,
        (1500, 6000),
        (80, 600),
        f"{question}\n\nDocuments:\n{context}",
        answer or "",
        system=conventions.DOCS_SYSTEM,
        openinference=True,
    )
    if b.gave_up:
        answer = None
    elif b.rng.random() < 0.3:
        t = b.llm(
            root,
            "suggest_followups",
            t + 1,
            "gpt-4o-mini",
            (200, 500),
            (20, 80),
            answer or "",
            conventions.FOLLOW_UPS[page],
            openinference=True,
        )
    root_attributes = {"openinference.span.kind": "CHAIN", "input.value": question}
    if answer is not None:
        root_attributes["output.value"] = answer
    b.add(
        None,
        "answer_question",
        "chain",
        start,
        t + 2 - start,
        attributes=root_attributes,
        error=b.gave_up,
        span_id=root,
    )
    attrs: dict[str, Any] = {"input": question}
    if answer is not None:
        attrs["output"] = answer
    return "answer_question", attrs, t + 2 - start


def agent_step(b: TraceBuilder, parent: str, start: int, depth: int) -> int:
    """One step of the coding agent: plan the next actions, run them, sometimes delegate a
    subtask. A plan whose prompt outgrew the model's window stops the agent."""
    step = b.span_id()
    t = start + 1
    actions = [
        (b.rng.choice(list(AGENT_ACTIONS)), b.rng.choice(FILES)) for _ in range(b.rng.randint(1, 3))
    ]
    plan = " Then: ".join(AGENT_ACTIONS[name][0].format(path=path) for name, path in actions)
    t = b.llm(
        step,
        "plan",
        t,
        b.rng.choice(["claude-3-5-sonnet-20241022", "o3-mini"]),
        (2000, 9000),
        (100, 900),
        "Decide the next action.",
        plan,
        system=conventions.AGENT_SYSTEM,
    )
    if not b.gave_up:
        for name, path in actions:
            result = AGENT_ACTIONS[name][1].format(path=path)
            t = b.tool(step, name, t + 1, {"path": path}, result) + 1
        if depth < 5 and b.rng.random() < 0.35:
            t = agent_step(b, step, t + 1, depth + 1)
    b.add(parent, f"step.depth{depth}", "agent", start, t + 1 - start, span_id=step)
    return t + 1


def agent_trace(b: TraceBuilder, start: int) -> tuple[str, dict[str, Any], int]:
    root = b.span_id()
    t = start + 5
    for _ in range(b.rng.randint(2, 5)):
        t = agent_step(b, root, t, 2)
        if b.gave_up:
            break  # the agent stops: nothing more is planned or run
    task = f"Fix {b.rng.choice(FILES[2:3])}::test_{b.rng.choice(['rounding', 'retry', 'tax'])}"
    b.add(None, "fix_failing_test", "agent", start, t + 3 - start, error=b.gave_up, span_id=root)
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
