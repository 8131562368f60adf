"""Prompt drift: how far the prompts of a window's LLM spans have moved from a baseline.

The score is the Jensen-Shannon distance (base 2, so in [0, 1]) between two token
distributions: the words of the prompts sent to models in the window, and those of the 24 hours
before it. 0 means the same words in the same proportions; 1 means no word in common. Sampling
noise keeps an unchanged application a little above 0 (about 0.04 with 300 prompts a side of a
support bot's real-looking prompts); a new system prompt takes it to 0.8 and more, a new kind of
question to about 0.4.

A prompt is what an LLM span was asked, in whichever convention it came: OTel GenAI
(`gen_ai.system_instructions`, `gen_ai.input.messages`, the older `gen_ai.prompt` and
`gen_ai.prompt.N.content`), OpenInference (`llm.input_messages...content`, `llm.prompts`, else
`input.value`), Langfuse's `input`, and the demo's `llm.prompt`. Words are lowercased runs of
letters; every number is one token (`<num>`), so order ids and dates are not drift. Everything
is bounded: a prompt's first 16,000 characters, its first 2,000 words.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

MAX_PROMPT_CHARS = 16_000
MAX_TOKENS = 2_000
WORD = re.compile(r"[^\W\d_]{2,}|\d+")
NUMBER = "<num>"
# Keys whose values are a prompt, as they sit in a span's stored attributes (flat, as sent).
PROMPT_KEYS = (
    "gen_ai.system_instructions",
    "gen_ai.input.messages",
    "gen_ai.prompt",
    "llm.input_messages",
    "llm.prompts",
    "llm.prompt",
    "input",
)
FALLBACK_KEYS = ("input.value",)  # an OpenInference LLM span's whole request, if nothing else
FLAT_PROMPT = re.compile(
    r"^(?:gen_ai\.prompt\.\d+\.content"
    r"|llm\.input_messages\.\d+\.message\.content"
    r"|llm\.input_messages\.\d+\.message\.contents\.\d+\.message_content\.text"
    r"|llm\.prompts\.\d+(?:\.prompt\.text)?)$"
)
TEXT_KEYS = ("content", "text", "prompt")


def is_prompt_key(key: str) -> bool:
    """Whether an attribute named `key` holds (part of) a prompt."""
    return key in PROMPT_KEYS or key in FALLBACK_KEYS or FLAT_PROMPT.match(key) is not None


def prompt_text(attributes: Iterable[tuple[str, Any]]) -> str:
    """The text of a span's prompt from its (key, value) attributes; "" if it has none."""
    found: list[str] = []
    fallback: list[str] = []
    for key, value in attributes:
        if key in FALLBACK_KEYS:
            fallback.append(text_of(value))
        elif is_prompt_key(key):
            found.append(text_of(value))
    return "\n".join(found or fallback)[:MAX_PROMPT_CHARS]


def text_of(value: Any) -> str:
    """The words of an attribute's value: a string (which may be JSON of messages), or a list
    or object of messages, whose text parts are kept and whose roles, types and ids are not."""
    if isinstance(value, str):
        stripped = value.lstrip()
        if stripped[:1] in ("[", "{") and len(value) <= 4 * MAX_PROMPT_CHARS:
            try:
                value = json.loads(value)
            except (ValueError, RecursionError):  # too deep for the parser
                return str(value)[:MAX_PROMPT_CHARS]
        else:
            return value[:MAX_PROMPT_CHARS]
    parts: list[str] = []
    collect(value, parts, top=True)
    return "\n".join(parts)[:MAX_PROMPT_CHARS]


def collect(value: Any, parts: list[str], top: bool = False, depth: int = 0) -> None:
    """Text parts of parsed messages: strings at the top or under content/text/prompt keys."""
    if depth > 20 or sum(map(len, parts)) > MAX_PROMPT_CHARS:
        return
    if isinstance(value, str):
        if top:
            parts.append(value)
    elif isinstance(value, list):
        for item in value[:200]:
            collect(item, parts, top, depth + 1)
    elif isinstance(value, dict):
        for key, item in list(value.items())[:200]:
            if isinstance(item, str):
                if key in TEXT_KEYS:
                    parts.append(item)
            else:
                collect(item, parts, False, depth + 1)


def tokens(text: str) -> Counter[str]:
    """The prompt's words, counted: lowercased, numbers as one token, at most MAX_TOKENS."""
    counts: Counter[str] = Counter()
    for n, match in enumerate(WORD.finditer(text.lower())):
        if n >= MAX_TOKENS:
            break
        word = match.group()
        counts[NUMBER if word[0].isdigit() else word] += 1
    return counts


def js_distance(window: Counter[str], baseline: Counter[str]) -> float | None:
    """The Jensen-Shannon distance (base 2, in [0, 1]) between two token counts; None if either
    is empty."""
    total_w, total_b = sum(window.values()), sum(baseline.values())
    if not total_w or not total_b:
        return None
    divergence = 0.0
    for token in window.keys() | baseline.keys():
        p = window.get(token, 0) / total_w
        q = baseline.get(token, 0) / total_b
        mean = (p + q) / 2
        if p:
            divergence += p * math.log2(p / mean)
        if q:
            divergence += q * math.log2(q / mean)
    # Half of each KL term; rounding can take it a hair outside [0, 1].
    return math.sqrt(min(max(divergence / 2, 0.0), 1.0))


def novelty(prompt: Counter[str], baseline: Counter[str]) -> float:
    """The share of a prompt's words that the baseline never had: what ranks the traces of a
    drifted window (the ones whose prompts are most unlike before come first)."""
    total = sum(prompt.values())
    if not total:
        return 0.0
    return sum(n for token, n in prompt.items() if token not in baseline) / total
