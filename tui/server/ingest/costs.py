"""Offline cost estimates for LLM calls that report tokens but no cost, from `genai-prices`.

genai-prices is a maintained price table shipped inside the package (its network updater,
UpdatePrices, is never started here). Its calc_price matches model names each call (0.3-4.5 ms),
far too slow per span, so prices are derived once per (provider, model): for flat prices, four
unit usages give the price of an input, a cache-read, a cache-write and an output token, and a
span then costs four multiplications; models with tiered prices (by prompt length) keep calling
calc_price; models it does not know are remembered as unknown too. Importing it takes ~0.3-0.5 s,
so it is imported lazily and warmed in a thread when the service starts (see `warm`).

Token counts follow the OTel GenAI convention, which genai-prices shares: input tokens include
the cached ones (read or written), output tokens include the reasoning ones.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("tracetui.server")

MILLION = 1_000_000
MAX_REMEMBERED = 4096  # distinct (provider, model) pairs kept; a flood of names cannot grow it

# OTel `gen_ai.provider.name` / `gen_ai.system` values whose genai-prices provider id differs.
PROVIDER_IDS = {
    "gcp.gemini": "google",
    "gcp.vertex_ai": "google",
    "gcp.gen_ai": "google",
    "gemini": "google",
    "vertex_ai": "google",
    "aws.bedrock": "aws",
    "az.ai.openai": "azure",
    "azure.ai.openai": "azure",
    "azure.ai.inference": "azure",
    "mistral_ai": "mistral",
    "x_ai": "x-ai",
    "xai": "x-ai",
}


@dataclass(frozen=True)
class Flat:
    """Per-token prices in US dollars: cost = sum of count x price."""

    input: float
    cache_read: float
    cache_write: float
    output: float

    def cost(self, inp: int, out: int, cache_read: int, cache_write: int) -> float:
        uncached = inp - cache_read - cache_write
        return (
            uncached * self.input
            + cache_read * self.cache_read
            + cache_write * self.cache_write
            + out * self.output
        )


@dataclass(frozen=True)
class Tiered:
    """A model whose price depends on the prompt's length: asked of genai-prices each time."""

    model: str
    provider_id: str | None

    def cost(self, inp: int, out: int, cache_read: int, cache_write: int) -> float:
        price = _calc(self.model, self.provider_id, inp, out, cache_read, cache_write)
        return 0.0 if price is None else price


Rule = Flat | Tiered


def _calc(
    model: str, provider_id: str | None, inp: int, out: int, cache_read: int, cache_write: int
) -> float | None:
    """genai-prices' price of one call, or None if it does not know the model."""
    from genai_prices import Usage, calc_price

    usage = Usage(
        input_tokens=inp,
        output_tokens=out,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
    )
    try:
        return float(calc_price(usage, model, provider_id=provider_id).total_price)
    except LookupError:
        return None


def _is_tiered(model_price: Any) -> bool:
    from genai_prices.types import TieredPrices

    return any(isinstance(value, TieredPrices) for value in vars(model_price).values())


def derive_rule(provider: str | None, model: str) -> Rule | None:
    """How to price `model` from `provider`, or None if genai-prices does not know it."""
    from genai_prices import Usage, calc_price

    wanted = PROVIDER_IDS.get(provider or "", provider or None)
    found = None
    for provider_id in dict.fromkeys((wanted, None)):  # the named provider, else any
        try:
            found = calc_price(Usage(input_tokens=1), model, provider_id=provider_id)
        except LookupError:
            continue
        provider_id_found: str | None = provider_id
        break
    if found is None:
        return None
    if _is_tiered(found.model_price):
        return Tiered(model, provider_id_found)

    def per_token(inp: int, out: int, cache_read: int, cache_write: int) -> float:
        price = _calc(model, provider_id_found, inp, out, cache_read, cache_write)
        return 0.0 if price is None else price / MILLION

    # A million input tokens all read from (or written to) the cache price those tokens alone.
    return Flat(
        input=per_token(MILLION, 0, 0, 0),
        cache_read=per_token(MILLION, 0, MILLION, 0),
        cache_write=per_token(MILLION, 0, 0, MILLION),
        output=per_token(0, MILLION, 0, 0),
    )


class PriceBook:
    """Estimates, remembering each (provider, model)'s rule, unknown models included."""

    def __init__(self, derive: Callable[[str | None, str], Rule | None] = derive_rule) -> None:
        self._derive = derive
        self._rules: dict[tuple[str | None, str], Rule | None] = {}
        self._lock = threading.Lock()  # one derivation at a time: genai-prices loads lazily

    def estimate(
        self,
        provider: str | None,
        model: str,
        inp: int,
        out: int,
        cache_read: int = 0,
        cache_write: int = 0,
    ) -> float | None:
        """The call's cost in US dollars, or None for a model the price table does not know."""
        key = (provider, model)
        try:
            rule = self._rules[key]
        except KeyError:
            rule = self._rule(key)
        if rule is None:
            return None
        # Counts from the wire can disagree (more cached tokens than input tokens).
        cache_read = min(cache_read, inp)
        cache_write = min(cache_write, inp - cache_read)
        return round(max(0.0, rule.cost(inp, out, cache_read, cache_write)), 9)

    def _rule(self, key: tuple[str | None, str]) -> Rule | None:
        with self._lock:
            if key in self._rules:
                return self._rules[key]
            try:
                rule = self._derive(*key)
            except Exception as error:  # a price table bug must not lose the span
                log.warning("price estimate failed (%s); costing as unknown", type(error).__name__)
                rule = None
            if len(self._rules) >= MAX_REMEMBERED:
                self._rules.clear()
            self._rules[key] = rule
            return rule

    def warm(self) -> None:
        """Import genai-prices and load its table now (the service calls this in a thread as
        it starts), so the first span that needs an estimate does not wait ~0.5 s."""
        self.estimate("openai", "gpt-4o-mini", 1, 1)


PRICES = PriceBook()  # the service's one price book (shared by all requests)


def warm_in_background() -> threading.Thread:
    thread = threading.Thread(target=PRICES.warm, name="tracetui-prices", daemon=True)
    thread.start()
    return thread
