"""The demo's failures, as the real SDKs and tools raise them: which error each provider's SDK
answers with, which pass when tried again, how long a timeout lasts. The traces use them so that
each failing span tells a story that holds (a gpt-4o call never carries Anthropic's error, a
timeout lasts its timeout, a retried call is followed by the retry that worked)."""

from __future__ import annotations

import re

RETRY_BACKOFF_MS = 500  # an SDK's first backoff, before the call is tried again
LLM_TIMEOUT_MS = 60_000  # the timeout the LLM errors below name
LONG_PROMPT = 5000  # tokens: only calls whose prompts may be this long can exceed the window

# What each provider's SDK raises: (failures that pass when retried, failures that do not).
LLM_ERRORS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "openai": (
        (
            "RateLimitError: Error code: 429 - Rate limit reached for requests per min (RPM): "
            "Limit 500, Used 500, Requested 1. Please try again in 120ms.",
            "APITimeoutError: Request timed out after 60.0 seconds.",
            "InternalServerError: Error code: 500 - The server had an error while processing "
            "your request. Sorry about that!",
        ),
        (
            "BadRequestError: Error code: 400 - This model's maximum context length is 128000 "
            "tokens. However, your messages resulted in 131205 tokens.",
        ),
    ),
    "anthropic": (
        (
            "RateLimitError: Error code: 429 - {'type': 'error', 'error': {'type': "
            "'rate_limit_error', 'message': 'Number of request tokens has exceeded your "
            "per-minute rate limit'}}",
            "APITimeoutError: Request timed out after 60.0 seconds.",
            "OverloadedError: Error code: 529 - {'type': 'error', 'error': {'type': "
            "'overloaded_error', 'message': 'Overloaded'}}",
        ),
        (
            "BadRequestError: Error code: 400 - {'type': 'error', 'error': {'type': "
            "'invalid_request_error', 'message': 'prompt is too long: 213417 tokens > 200000 "
            "maximum'}}",
        ),
    ),
}
# How each tool fails (each passes when run again: a lock released, a service back).
TOOL_ERRORS: dict[str, tuple[str, ...]] = {
    "orders.lookup": ("httpx.ReadTimeout: timed out reading from orders-service:8080 after 5 s",),
    "promotions.check_code": (
        "httpx.ReadTimeout: timed out reading from promotions-service:8080 after 5 s",
    ),
    "apply_patch": ("PermissionError: [Errno 13] Permission denied: '/repo/.git/index.lock'",),
    "run_tests": (
        "subprocess.TimeoutExpired: Command '['pytest', '-x']' timed out after 120 seconds",
    ),
    "grep": (
        "subprocess.TimeoutExpired: Command '['rg', '-n', 'def ']' timed out after 30 seconds",
    ),
}
# How each retrieval step fails (retried once too).
RETRIEVAL_ERRORS: dict[str, str] = {
    "pgvector.search": "psycopg.errors.QueryCanceled: canceling statement due to statement "
    "timeout after 3 s",
    "rerank": "cohere.errors.ServiceUnavailableError: status_code: 503, body: "
    "{'message': 'Service temporarily unavailable'}",
}
_TIMEOUT = re.compile(r"(?:timed out|timeout)\b[^;]*? after ([\d.]+) ?(s|seconds)")


def timeout_ms(error: str) -> int | None:
    """The timeout an error message names ("timed out after 30 seconds"), in ms."""
    found = _TIMEOUT.search(error)
    return int(float(found[1]) * 1000) if found else None
