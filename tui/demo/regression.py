"""The demo's regression: a docs-page summarizer that worked for days, then failed after a
prompt and model change (what `tracetui diff` and the diff screen are for).

The docs search project runs `summarize_page` every few hours: load the page, load its last
three revisions, have claude-3-5-sonnet write three changelog bullets, have gpt-4o-mini check
them. Then "summarizer v2" ships, 1 h 40 min before the demo's now: it loads every revision
since the last release (eight), asks for every change quoted in full, and moves the call to
gpt-4o-mini, whose window the prompt no longer fits. Both runs since have failed with OpenAI's
context-length error, no answer and no check. Diffed against the last good run, the failing
one shows the cause in its first lines: the model and the prompt changed, five more revisions
loaded, the call refused.

Its own random generator (from the seed), so the other demo traces stay as they were; spans in
OpenInference conventions, as the rest of the docs search.
"""

from __future__ import annotations

import json
import random
from typing import Any

from tui.demo import conventions
from tui.demo.failures import LLM_ERRORS
from tui.demo.traces import HOUR_MS, TraceBuilder, trace_row
from tui.server.store.rows import SpanRow, TraceRow

PROJECT = "proj_rag"
NAME = "summarize_page"
PAGE = "billing/refunds.md"
DEPLOYED_AGO_MS = 100 * 60_000  # v2 ships 1 h 40 min before now
GOOD_RUNS = 10  # every 4 hours before the deploy
GOOD_EVERY_MS = 4 * HOUR_MS
FAILED_AGO_MS = (72 * 60_000, 24 * 60_000)  # the two runs since, the newest 24 min ago
CONTEXT_ERROR = LLM_ERRORS["openai"][1][0]  # "...maximum context length is 128000 tokens..."

PAGE_TEXT = (
    "# Refunds\n\nA refund goes back to the card or account that paid. Card refunds take 3-5 "
    "business days to show; bank transfers take up to 10. Annual plans are refunded pro rata "
    "by the day. Refunds over $500 need a second approver. Disputed charges cannot be refunded "
    "until the dispute closes."
)
REVISIONS = (
    "r41: card refunds take 3-5 business days (was 5-10)",
    "r42: annual plans are refunded pro rata by the day",
    "r43: bank transfer refunds take up to 10 business days",
    "r44: refunds over $500 need a second approver",
    "r45: disputed charges cannot be refunded until the dispute closes",
    "r46: a refund goes back to the card or account that paid",
    "r47: the refund form moved to Billing -> Payments -> Refund",
    "r48: refunds in another currency use the day's rate",
)
SYSTEM_V1 = (
    "Summarize the last three changes to this docs page as three bullet points for the "
    "changelog. Keep each bullet under 20 words. Quote nothing."
)
SYSTEM_V2 = (
    "Summarize every change to this docs page since the last release, in detail, for the "
    "changelog. Quote each revision and the page as it was after it in full."
)
SUMMARY = (
    "- Refunds over $500 now need a second approver.\n"
    "- Disputed charges are refunded only once the dispute closes.\n"
    "- Refunds go back to the card or account that paid."
)


def _tool(
    b: TraceBuilder, parent: str, name: str, start: int, args: dict[str, Any], result: str
) -> int:
    duration = b.latency(380 if name == "load_revision" else 120, 0.25)
    attributes = {
        "openinference.span.kind": "TOOL",
        "tool.name": name,
        "input.value": json.dumps(args),
        "input.mime_type": "application/json",
        "output.value": result,
    }
    b.add(parent, name, "tool", start, duration, attributes=attributes)
    return start + duration


def _call(
    b: TraceBuilder,
    parent: str,
    name: str,
    start: int,
    model: str,
    system: str,
    prompt: str,
    answer: str | None,
    tokens: tuple[int, int],
    version: str | None = None,
) -> int:
    error = None if answer is not None else CONTEXT_ERROR
    duration = (
        b.latency(250 + tokens[1] * 24) if answer is not None else 600 + b.rng.randint(0, 300)
    )
    attributes = conventions.openinference_llm(
        model, system, prompt, answer, 0, f"{b.rng.getrandbits(48):012x}"
    )
    if version is not None:
        attributes["llm.prompt_template.version"] = version
    b.add(parent, name, "llm", start, duration, model, tokens, attributes, error)
    return start + duration


def summarize_page(rng: random.Random, trace_id: str, start: int, v2: bool) -> TraceBuilder:
    """One run of the summarizer, before the deploy (`v2` False) or after it (it fails)."""
    b = TraceBuilder(rng, trace_id)
    root = b.span_id()
    t = _tool(b, root, "load_page", start + 2, {"page": PAGE}, PAGE_TEXT) + 1
    # Newest first: v1 stops after three, v2 goes on back to the last release.
    revisions = REVISIONS[::-1] if v2 else REVISIONS[:-4:-1]
    for revision in revisions:
        number = revision.split(":", 1)[0]
        t = _tool(b, root, "load_revision", t, {"page": PAGE, "revision": number}, revision) + 1
    changes = "\n".join(f"- {revision}" for revision in revisions)
    prompt = f"Page: {PAGE}\n\n{PAGE_TEXT}\n\nChanges:\n{changes}"
    if v2:
        prompt += "\n\n(each revision's page follows, in full)"
        t = _call(b, root, "write_summary", t, "gpt-4o-mini", SYSTEM_V2, prompt, None, (0, 0), "v2")
    else:
        tokens = (rng.randint(9_000, 12_000), rng.randint(150, 220))
        t = _call(
            b,
            root,
            "write_summary",
            t,
            "claude-3-5-sonnet-20241022",
            SYSTEM_V1,
            prompt,
            SUMMARY,
            tokens,
            "v1",
        )
        check = "Answer yes or no: does the summary say only what the changes say?"
        t = _call(
            b,
            root,
            "check_summary",
            t + 1,
            "gpt-4o-mini",
            check,
            SUMMARY,
            "yes",
            (rng.randint(180, 240), 1),
        )
    attributes = {"openinference.span.kind": "CHAIN", "input.value": f"summarize {PAGE}"}
    if not v2:
        attributes["output.value"] = SUMMARY
    b.add(
        None,
        NAME,
        "chain",
        start,
        t + 2 - start,
        attributes=attributes,
        error=CONTEXT_ERROR if v2 else None,
        span_id=root,
    )
    return b


def regression_traces(seed: int, now: int) -> tuple[list[TraceRow], list[SpanRow]]:
    """The summarizer's runs: GOOD_RUNS before the deploy, the failing ones after it."""
    rng = random.Random(f"tracetui-demo-regression:{seed}")
    deployed = now - DEPLOYED_AGO_MS
    runs = [(deployed - 30 * 60_000 - k * GOOD_EVERY_MS, False) for k in range(GOOD_RUNS)]
    runs += [(now - ago, True) for ago in FAILED_AGO_MS]
    traces, spans = [], []
    for start, v2 in sorted(runs):
        trace_id = f"{rng.getrandbits(128):032x}"
        b = summarize_page(random.Random(rng.getrandbits(64)), trace_id, start, v2)
        root = next(row for row in b.rows if row.parent_id is None)
        attrs: dict[str, Any] = {"input": f"summarize {PAGE}", "environment": "production"}
        if not v2:
            attrs["output"] = SUMMARY
        traces.append(trace_row(b, PROJECT, NAME, start, root.duration_ms, attrs))
        spans += b.rows
    return traces, spans
