"""Ingest without HTTP: conventions to span fields, price estimates and their cache, bodies."""

from __future__ import annotations

import asyncio
import gzip
import zlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from genai_prices import Usage, calc_price

from tui.server.ingest.body import BodyError, read_body
from tui.server.ingest.conventions import (
    GENAI_OPERATION_KINDS,
    OPENINFERENCE_KINDS,
    count,
    facts,
)
from tui.server.ingest.costs import Flat, PriceBook, Tiered, derive_rule

PRICES = PriceBook()


def test_otel_genai_current_names() -> None:
    found = facts(
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.response.model": "gpt-4o-2024-08-06",
            "gen_ai.usage.input_tokens": 1000,
            "gen_ai.usage.output_tokens": 100,
            "gen_ai.usage.cache_read.input_tokens": 600,
            "gen_ai.usage.cache_creation.input_tokens": 0,
            "gen_ai.usage.reasoning.output_tokens": 40,
        },
        PRICES,
    )
    assert found.kind == "llm" and found.model == "gpt-4o-2024-08-06"  # the response's model
    assert (found.input_tokens, found.output_tokens) == (1000, 100)
    assert (found.cache_read_tokens, found.reasoning_tokens) == (600, 40)
    assert found.cost_source == "estimated"
    assert found.cost_usd == pytest.approx(400 * 2.5e-6 + 600 * 1.25e-6 + 100 * 10e-6)


def test_otel_genai_older_names() -> None:
    found = facts(
        {
            "gen_ai.system": "openai",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.usage.prompt_tokens": 10,
            "gen_ai.usage.completion_tokens": "5",  # a number in a string
        },
        PRICES,
    )
    assert found.kind == "llm" and (found.input_tokens, found.output_tokens) == (10, 5)
    assert found.cost_usd == pytest.approx(10 * 0.15e-6 + 5 * 0.6e-6)


def test_openinference_names_and_reported_costs() -> None:
    found = facts(
        {
            "openinference.span.kind": "LLM",
            "llm.model_name": "claude-3-5-haiku-20241022",
            "llm.provider": "anthropic",
            "llm.token_count.prompt": 200,
            "llm.token_count.completion": 20,
            "llm.token_count.prompt_details.cache_write": 50,
            "llm.cost.prompt": 0.001,
            "llm.cost.completion": 0.002,
        },
        PRICES,
    )
    assert found.cost_source == "reported" and found.cost_usd == pytest.approx(0.003)
    assert found.cache_write_tokens == 50
    total = facts({"llm.cost.total": 0.5, "llm.cost.prompt": 9.0}, PRICES)
    assert total.cost_usd == 0.5 and total.cost_source == "reported"


@pytest.mark.parametrize(("value", "kind"), sorted(OPENINFERENCE_KINDS.items()))
def test_every_openinference_kind(value: str, kind: str) -> None:
    assert facts({"openinference.span.kind": value.lower()}, PRICES).kind == kind


@pytest.mark.parametrize(("operation", "kind"), sorted(GENAI_OPERATION_KINDS.items()))
def test_every_genai_operation(operation: str, kind: str) -> None:
    assert facts({"gen_ai.operation.name": operation}, PRICES).kind == kind


def test_kinds_without_a_convention_saying_so() -> None:
    assert facts({"gen_ai.tool.name": "search"}, PRICES).kind == "tool"
    assert facts({"llm.model_name": "m"}, PRICES).kind == "llm"
    assert facts({"http.method": "GET"}, PRICES).kind == "chain"
    nothing = facts({}, PRICES)
    assert nothing.cost_source is None and nothing.cost_usd == 0.0


def test_an_unknown_model_costs_nothing_and_says_so() -> None:
    found = facts({"llm.model_name": "my-finetune-7b", "llm.token_count.prompt": 5}, PRICES)
    assert found.cost_usd == 0.0 and found.cost_source == "unknown_model"
    no_tokens = facts({"llm.model_name": "gpt-4o"}, PRICES)
    assert no_tokens.cost_source is None  # nothing to cost


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (7, 7),
        (-3, 0),
        (10**30, 10**12),
        (2.9, 2),
        ("12", 12),
        (" 4.0 ", 4),
        ("x", 0),
        (float("nan"), 0),
        (float("inf"), 0),
        (True, 0),
        (None, 0),
        ([1], 0),
    ],
)
def test_counts_are_coerced_and_clamped(value: Any, expected: int) -> None:
    assert count(value) == expected


def test_a_reported_cost_that_is_not_a_number_is_ignored() -> None:
    for bad in (float("nan"), -1.0, "free", True, 1e300):
        found = facts({"llm.cost.total": bad, "llm.model_name": "gpt-4o"}, PRICES)
        assert found.cost_source is None


def test_flat_prices_agree_with_genai_prices_itself() -> None:
    rule = derive_rule("openai", "gpt-4o")
    assert isinstance(rule, Flat)
    for inp, out, read, write in ((1000, 100, 0, 0), (5000, 10, 3000, 0), (10, 10000, 5, 5)):
        expected = calc_price(
            Usage(
                input_tokens=inp,
                output_tokens=out,
                cache_read_tokens=read,
                cache_write_tokens=write,
            ),
            "gpt-4o",
            provider_id="openai",
        ).total_price
        assert rule.cost(inp, out, read, write) == pytest.approx(float(expected))


def test_tiered_prices_ask_genai_prices_each_time() -> None:
    rule = derive_rule("gcp.gemini", "gemini-2.5-pro")  # priced by prompt length
    assert isinstance(rule, Tiered) and rule.provider_id == "google"
    short, long = rule.cost(1000, 0, 0, 0) / 1000, rule.cost(300_000, 0, 0, 0) / 300_000
    assert long > short


def test_the_price_book_derives_once_per_model_unknown_ones_too() -> None:
    calls: list[tuple[str | None, str]] = []

    def derive(provider: str | None, model: str) -> Flat | None:
        calls.append((provider, model))
        return None if model == "unknown" else Flat(1e-6, 0.5e-6, 2e-6, 4e-6)

    book = PriceBook(derive)
    for _ in range(3):
        assert book.estimate("p", "m", 10, 1) == pytest.approx(10e-6 + 4e-6)
        assert book.estimate("p", "unknown", 10, 1) is None
    assert calls == [("p", "m"), ("p", "unknown")]
    # Counts that disagree (more cached than input) are bounded, never negative.
    assert book.estimate("p", "m", 10, 0, cache_read=50) == pytest.approx(10 * 0.5e-6)


def test_a_price_table_failure_costs_as_unknown() -> None:
    def broken(provider: str | None, model: str) -> Flat | None:
        raise RuntimeError("tt_ws_secret in a message")

    assert PriceBook(broken).estimate("p", "m", 1, 1) is None


async def chunks(data: bytes, size: int = 1000) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def read(data: bytes, encoding: str, limit: int) -> bytes:
    return asyncio.run(read_body(chunks(data), encoding, limit))


def test_bodies_are_inflated_within_the_limit() -> None:
    payload = b"span " * 1000
    assert read(gzip.compress(payload), "gzip", 10_000) == payload
    assert read(zlib.compress(payload), "deflate", 10_000) == payload
    assert read(payload, "identity", 10_000) == payload
    with pytest.raises(BodyError) as over:
        read(gzip.compress(payload), "gzip", 4999)
    assert over.value.status == 413
    with pytest.raises(BodyError) as short:
        read(gzip.compress(payload)[:-20], "gzip", 10_000)
    assert short.value.status == 400
