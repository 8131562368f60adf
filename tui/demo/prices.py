"""Model prices (US dollars per million tokens) used to cost the demo data's LLM calls."""

from __future__ import annotations

# (input, output) per million tokens, list prices as published by the providers.
PRICES_PER_MILLION: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "o3-mini": (1.10, 4.40),
    "claude-3-5-sonnet-20241022": (3.00, 15.00),
    "claude-3-5-haiku-20241022": (0.80, 4.00),
    "text-embedding-3-small": (0.02, 0.0),
    "rerank-english-v3.0": (0.05, 0.0),
}


def cost_usd(model: str, input_tokens: int, output_tokens: int) -> float:
    """The cost of one call, rounded to a millionth of a dollar; unknown models cost nothing."""
    price_in, price_out = PRICES_PER_MILLION.get(model, (0.0, 0.0))
    return round((input_tokens * price_in + output_tokens * price_out) / 1_000_000, 6)
