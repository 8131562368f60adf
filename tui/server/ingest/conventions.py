"""What the spec's span needs, read from the attributes of the two conventions LLM apps emit.

OTel GenAI semantic conventions (`gen_ai.*`, including the older `prompt_tokens` /
`completion_tokens` and `gen_ai.system`) and OpenInference (`openinference.span.kind`,
`llm.*`), in that order where both say the same thing. Messages, documents and tool details stay
in the attributes as sent (`gen_ai.input.messages`, `gen_ai.prompt.N.*`, `llm.input_messages.*`,
`input.value`, `retrieval.documents.*`, `gen_ai.tool.*`): the app reads them there.

The Vercel AI SDK (`ai.*`) is read where GenAI says nothing: its `ai.operationId` gives the
kind (vercel_span_kind), and on its provider calls only (`*.doGenerate`, `*.doStream`, `*.doEmbed`)
its `ai.model.id` and `ai.usage.*`. Its operation spans (`ai.generateText`, ...) repeat the sum
of their calls' usage, so reading them too would count every call twice.

OpenLLMetry's `traceloop.span.kind` gives a kind where the others say nothing; pydantic-ai's
`operation.cost` is a reported cost; logfire's `logfire.msg` names a span whose name is a
template (display_name). A model call recorded by two nested spans is counted once
(counted_once, within an export; the stores, across exports; docs/conventions.md, "The Python
stacks").

Every value is untrusted: counts may arrive as strings, floats, negatives or 10**30, costs as
NaN. They are coerced (numbers in strings read) and clamped, never trusted to fit a column.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from tui.server.ingest.costs import PriceBook
from tui.server.store.rows import SpanRow

MAX_TOKENS = 10**12  # per span: sums over a million such spans still fit SQLite's int64
MAX_COST = 1e9

# The spec's kinds are llm, retrieval, tool, agent and chain.
OPENINFERENCE_KINDS = {
    "LLM": "llm",
    "EMBEDDING": "llm",
    "RETRIEVER": "retrieval",
    "RERANKER": "retrieval",
    "TOOL": "tool",
    "AGENT": "agent",
    "CHAIN": "chain",
    "GUARDRAIL": "chain",
    "EVALUATOR": "chain",
    "PROMPT": "chain",
}
GENAI_OPERATION_KINDS = {
    "chat": "llm",
    "text_completion": "llm",
    "generate_content": "llm",
    "embeddings": "llm",
    "execute_tool": "tool",
    "invoke_agent": "agent",
    "create_agent": "agent",
    "invoke_workflow": "chain",
    "retrieval": "retrieval",
}

PROVIDER = ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system")


class Facts(NamedTuple):
    """The span fields the attributes decide."""

    kind: str
    model: str | None
    input_tokens: int
    output_tokens: int
    cost_usd: float
    cost_source: str | None  # reported, estimated, unknown_model; None: nothing to cost
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int


def first(attributes: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        value = attributes.get(key)
        if value is not None:
            return value
    return None


def count(value: Any) -> int:
    """A token count from whatever came: ints, integral floats, numeric strings; else 0."""
    if value is None:  # the common case: most spans report most counts not at all
        return 0
    if type(value) is int:
        return value if 0 <= value <= MAX_TOKENS else min(max(value, 0), MAX_TOKENS)
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return 0
    if isinstance(value, float) and math.isfinite(value):
        return int(min(max(value, 0.0), MAX_TOKENS))
    return 0


def money(value: Any) -> float | None:
    """A reported cost in US dollars, or None if it is not a finite, non-negative number."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
        if math.isfinite(number) and 0 <= number <= MAX_COST:
            return number
    return None


def text(value: Any, limit: int) -> str | None:
    if isinstance(value, str) and value:
        return value[:limit]
    return None


# OpenLLMetry (traceloop-sdk) names its decorated functions' spans by `traceloop.span.kind`;
# its model calls say nothing there and are read by their model.
TRACELOOP_KINDS = {"workflow": "chain", "task": "chain", "agent": "agent", "tool": "tool"}

# The Vercel AI SDK's operation ids: its provider calls (VERCEL_CALLS) are model calls, its
# tool executions tools, the operations around them (ai.generateText...) chains.
VERCEL_CALLS = (".doGenerate", ".doStream", ".doEmbed")


def vercel_span_kind(operation: Any) -> str | None:
    """The kind a Vercel AI SDK `ai.operationId` names; None if it is not one."""
    if not isinstance(operation, str) or not operation.startswith("ai."):
        return None
    if operation == "ai.toolCall":
        return "tool"
    return "llm" if operation.endswith(VERCEL_CALLS) else "chain"


def kind_of(attributes: dict[str, Any], model: str | None) -> str:
    kind = attributes.get("openinference.span.kind")
    if isinstance(kind, str) and kind.upper() in OPENINFERENCE_KINDS:
        return OPENINFERENCE_KINDS[kind.upper()]
    operation = attributes.get("gen_ai.operation.name")
    if isinstance(operation, str) and operation in GENAI_OPERATION_KINDS:
        return GENAI_OPERATION_KINDS[operation]
    vercel = vercel_span_kind(attributes.get("ai.operationId"))
    if vercel is not None:
        return vercel
    traceloop = attributes.get("traceloop.span.kind")
    if isinstance(traceloop, str) and traceloop in TRACELOOP_KINDS:
        return TRACELOOP_KINDS[traceloop]
    if model is not None:
        return "llm"
    if "gen_ai.tool.name" in attributes or "tool.name" in attributes:
        return "tool"
    return "chain"


def reported_cost(attributes: dict[str, Any]) -> float | None:
    if not (
        "llm.cost.total" in attributes
        or "gen_ai.usage.cost" in attributes
        or "operation.cost" in attributes
        or "llm.cost.prompt" in attributes
        or "llm.cost.completion" in attributes
    ):
        return None  # the common case: no reported cost, answered without a loop
    # pydantic-ai (through logfire) reports each model call's cost as `operation.cost`.
    total = money(first(attributes, ("llm.cost.total", "gen_ai.usage.cost", "operation.cost")))
    if total is not None:
        return total
    prompt = money(attributes.get("llm.cost.prompt"))
    completion = money(attributes.get("llm.cost.completion"))
    if prompt is None and completion is None:
        return None
    return (prompt or 0.0) + (completion or 0.0)


def facts(attributes: dict[str, Any], prices: PriceBook, model_limit: int = 256) -> Facts:
    """Kind, model, tokens and cost of a span from its attributes, estimated when not reported.

    Runs once per ingested span: plain look-ups, no loops (`first` is spelled out here)."""
    get = attributes.get
    model = text(
        get("gen_ai.response.model") or get("gen_ai.request.model") or get("llm.model_name"),
        model_limit,
    )
    inp = count(
        get("gen_ai.usage.input_tokens")
        or get("gen_ai.usage.prompt_tokens")
        or get("llm.token_count.prompt")
    )
    out = count(
        get("gen_ai.usage.output_tokens")
        or get("gen_ai.usage.completion_tokens")
        or get("llm.token_count.completion")
    )
    cache_read = count(
        get("gen_ai.usage.cache_read.input_tokens")
        or get("llm.token_count.prompt_details.cache_read")
    )
    cache_write = count(
        get("gen_ai.usage.cache_creation.input_tokens")
        or get("llm.token_count.prompt_details.cache_write")
    )
    reasoning = count(
        get("gen_ai.usage.reasoning.output_tokens")
        or get("llm.token_count.completion_details.reasoning")
    )
    if vercel_span_kind(get("ai.operationId")) == "llm":  # a provider call: see the module's doc
        model = model or text(get("ai.model.id"), model_limit)
        inp = inp or count(
            get("ai.usage.inputTokens") or get("ai.usage.promptTokens") or get("ai.usage.tokens")
        )
        out = out or count(get("ai.usage.outputTokens") or get("ai.usage.completionTokens"))
        cache_read = cache_read or count(
            get("ai.usage.inputTokenDetails.cacheReadTokens") or get("ai.usage.cachedInputTokens")
        )
        cache_write = cache_write or count(get("ai.usage.inputTokenDetails.cacheWriteTokens"))
        reasoning = reasoning or count(
            get("ai.usage.outputTokenDetails.reasoningTokens") or get("ai.usage.reasoningTokens")
        )
    cost = reported_cost(attributes)
    source: str | None = None
    if cost is not None:
        source = "reported"
    elif model is not None and (inp or out):
        provider = text(
            get("gen_ai.provider.name") or get("gen_ai.system") or first(attributes, PROVIDER),
            64,
        )
        cost = prices.estimate(provider, model, inp, out, cache_read, cache_write)
        source = "unknown_model" if cost is None else "estimated"
    return Facts(
        kind_of(attributes, model),
        model,
        inp,
        out,
        cost or 0.0,
        source,
        cache_read,
        cache_write,
        reasoning,
    )


def display_name(name: str, attributes: dict[str, Any]) -> str:
    """The span's name as shown: logfire names a span by its message template (`Chat
    Completion with {request_data[model]!r}`) and sends the message filled in as `logfire.msg`."""
    if "{" in name:
        message = attributes.get("logfire.msg")
        if isinstance(message, str) and message:
            return message
    return name


# The attribute naming the span a model call is counted in (counted_once). The stores look for
# it too: a span counted in its parent has its tokens set to 0, so this is how a later export's
# spans still see it as a model call reporting tokens.
COUNTED_IN = "tracetui.counted_in"


def counted_in_parents(reporting: dict[tuple[str, str], str | None]) -> set[tuple[str, str]]:
    """Which model-call spans are counted in their parent, of `reporting`: every model-call
    span reporting tokens (or counted in its parent already, so it reported them), keyed by
    (trace id, span id), with its parent's id.

    A span is the same call as its parent when the parent reports tokens too and the span is
    the parent's only child that does: a call recorded twice nests one span in one span. A
    parent with two or more such children made that many calls of its own (an agent's model
    span around the calls it makes), so each of them counts, and so does the parent. The
    stores run the same rule over a stored trace's spans (store/counting.py). A span naming
    itself as its parent (kept as sent, shown as a flagged root) is nobody's child."""
    children: dict[tuple[str, str], int] = {}
    for (trace_id, span_id), parent_id in reporting.items():
        if parent_id not in (None, span_id) and (trace_id, parent_id) in reporting:
            key = (trace_id, parent_id)
            children[key] = children.get(key, 0) + 1
    return {
        (trace_id, span_id)
        for (trace_id, span_id), parent_id in reporting.items()
        if parent_id not in (None, span_id) and children.get((trace_id, parent_id)) == 1
    }


def with_mark(attributes: str, parent_id: str) -> str:
    """A span's attributes (a JSON object, as text) with `tracetui.counted_in` added last."""
    separator = "" if attributes == "{}" else ","
    return f'{attributes[:-1]}{separator}"{COUNTED_IN}":"{parent_id}"}}'


def counted_once(spans: list[SpanRow]) -> list[SpanRow]:
    """The spans of one export with every model call counted once (counted_in_parents).

    A model-call span reporting tokens whose parent, in the same export, is a model-call span
    reporting tokens, and which is that parent's only such child, is the same call recorded
    twice: an SDK's own span below an instrumentation's (the anthropic SDK's
    `anthropic.messages.create` below OpenInference's `messages.create`), or an HTTP client's
    instrumentation below a framework's (logfire's openai span below pydantic-ai's `chat`
    span). The outer span, which holds the messages, counts; the inner keeps its attributes
    as sent, its tokens and cost set to 0, and `tracetui.counted_in` naming the span that
    counts them.

    The stores apply the same rule to the spans of a trace that came in several exports
    (store/counting.py, on both stores), and give a span its tokens back when a sibling that
    reports tokens comes later: only spans reporting tokens are counted in another, so a
    span carrying the mark reported tokens, whatever order spans came in."""
    reporting = {
        (span.trace_id, span.id): span.parent_id
        for span in spans
        if span.kind == "llm" and (span.input_tokens or span.output_tokens)
    }
    if len(reporting) < 2:
        return spans  # the common case: one pass, nothing to change
    inner = counted_in_parents(reporting)
    if not inner:
        return spans
    counted = []
    for span in spans:
        if (span.trace_id, span.id) not in inner or span.attributes[-1:] != "}":
            counted.append(span)
            continue
        counted.append(
            span._replace(
                input_tokens=0,
                output_tokens=0,
                cost_usd=0.0,
                cost_source=None,
                cache_read_tokens=0,
                cache_write_tokens=0,
                reasoning_tokens=0,
                attributes=with_mark(span.attributes, span.parent_id or ""),
            )
        )
    return counted
