"""The alert evaluator's pure parts: the metric grammar, prompts read from every convention,
the drift score's range, the address rules of the SSRF guard, and signatures that someone
else's Standard Webhooks implementation accepts."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import time
from collections import Counter

import pytest
from standardwebhooks import Webhook

from tui.server.alerts import signing
from tui.server.alerts.drift import js_distance, prompt_text, tokens
from tui.server.alerts.metrics import MetricParts, parse_metric, percentile_95
from tui.server.alerts.targets import Refused, address_kind, resolve_target


@pytest.mark.parametrize(
    ("text", "metric"),
    [
        ("latency_ms_5m", MetricParts("latency", "ms", 300_000)),
        ("latency_s_hour", MetricParts("latency", "s", 3_600_000)),
        ("error_rate_pct_15m", MetricParts("error_rate", "pct", 900_000)),
        ("cost_usd_1d", MetricParts("cost", "usd", 86_400_000)),
        ("prompt_drift_score_week", MetricParts("prompt_drift", "score", 7 * 86_400_000)),
        ("error_rate_ratio_999h", MetricParts("error_rate", "ratio", 999 * 3_600_000)),
    ],
)
def test_metrics_parse_into_measure_unit_and_period(text: str, metric: MetricParts) -> None:
    assert parse_metric(text) == metric


def test_percentile_95_of_a_list() -> None:
    assert percentile_95([]) is None
    assert percentile_95([7.0]) == 7.0
    assert percentile_95([0.0, 100.0]) == pytest.approx(95.0)
    assert percentile_95(list(map(float, range(101)))) == pytest.approx(95.0)


def test_prompts_are_read_from_every_convention_without_their_structure() -> None:
    genai = [
        ("gen_ai.system_instructions", json.dumps([{"type": "text", "content": "Be brief."}])),
        (
            "gen_ai.input.messages",
            json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Where is it?"}]}]),
        ),
        ("gen_ai.request.model", "gpt-4o"),
    ]
    assert prompt_text(genai).split("\n") == ["Be brief.", "Where is it?"]
    flat = [
        ("llm.input_messages.0.message.role", "system"),
        ("llm.input_messages.0.message.content", "Answer from the docs."),
        ("llm.input_messages.1.message.content", "How do I rotate a key?"),
        ("input.value", '{"messages": "ignored when messages are there"}'),
    ]
    assert prompt_text(flat) == "Answer from the docs.\nHow do I rotate a key?"
    older = [("gen_ai.prompt.0.content", "hello"), ("gen_ai.prompt.0.role", "user")]
    assert prompt_text(older) == "hello"
    fallback = [("input.value", "plain question"), ("output.value", "answer")]
    assert prompt_text(fallback) == "plain question"
    assert prompt_text([("llm.prompt", "the demo's own")]) == "the demo's own"
    assert prompt_text([("gen_ai.request.model", "gpt-4o")]) == ""
    # Roles, types and ids are structure, not words of the prompt.
    words = tokens(prompt_text(genai))
    assert "role" not in words and "type" not in words and "text" not in words


def test_tokens_fold_numbers_and_stay_bounded() -> None:
    assert tokens("Order #48213 and order 99") == Counter({"order": 2, "and": 1, "<num>": 2})
    assert sum(tokens("word " * 100_000).values()) == 2000


def test_js_distance_is_0_for_the_same_words_and_1_for_none_in_common() -> None:
    same = Counter({"a": 3, "b": 1})
    assert js_distance(same, Counter({"a": 6, "b": 2})) == pytest.approx(0.0, abs=1e-9)
    assert js_distance(same, Counter({"c": 1})) == pytest.approx(1.0)
    middle = js_distance(same, Counter({"a": 1, "c": 1}))
    assert middle is not None and 0 < middle < 1
    assert js_distance(Counter(), same) is None


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("10.0.0.8", "private"),
        ("172.20.1.1", "private"),
        ("192.168.0.1", "private"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("fc00::5", "private"),
        ("100.64.0.1", "non-public"),
        ("0.0.0.0", "unspecified"),  # noqa: S104 - an address to refuse, not to bind
        ("224.0.0.1", "multicast"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.0.0.1", "private"),
        ("2002:7f00:1::", "loopback"),  # 6to4 around 127.0.0.1
        ("93.184.215.14", None),
        ("2606:4700::1111", None),
    ],
)
def test_address_kinds(address: str, kind: str | None) -> None:
    assert address_kind(ipaddress.ip_address(address)) == kind


def test_targets_keep_the_host_for_the_header_and_tls_and_pin_the_address() -> None:
    async def resolve(host: str, port: int) -> list[str]:
        return {"hooks.pager.acme.io": ["93.184.215.14"]}[host]

    target = asyncio.run(
        resolve_target("https://hooks.pager.acme.io:8443/a/b?c=d", resolve, allow_private=False)
    )
    assert target.url == "https://93.184.215.14:8443/a/b?c=d"
    assert target.host_header == "hooks.pager.acme.io:8443"
    assert target.sni_hostname == "hooks.pager.acme.io"
    plain = asyncio.run(resolve_target("http://[::1]/x", resolve, allow_private=True))
    assert plain.url == "http://[::1]/x" and plain.sni_hostname is None
    with pytest.raises(Refused, match="link-local"):
        asyncio.run(resolve_target("http://169.254.1.1/", resolve, allow_private=False))
    with pytest.raises(Refused, match="port"):
        asyncio.run(resolve_target("http://pager.acme.io:99999/", resolve, allow_private=True))


def test_reserved_example_names_are_refused_without_a_lookup() -> None:
    asked: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        return ["93.184.215.14"]

    for url in ("https://hooks.slack.example.com/x", "http://example.org/", "http://a.test/"):
        with pytest.raises(Refused, match="reserved example name"):
            asyncio.run(resolve_target(url, resolve, allow_private=True))
    assert asked == []  # no DNS query for them
    asyncio.run(resolve_target("https://examples.io/x", resolve, allow_private=False))
    assert asked == ["examples.io"]


def test_signatures_verify_with_the_standardwebhooks_package() -> None:
    secret = signing.new_secret()
    body = b'{"type":"alert.test","data":{}}'
    headers = signing.headers(secret, "msg_1", int(time.time()), body)
    assert Webhook(secret).verify(body, headers) == json.loads(body)
    # And the package's own signature is ours, byte for byte.
    stamp = int(time.time())
    from datetime import datetime, timezone

    theirs = Webhook(secret).sign(
        "msg_1", datetime.fromtimestamp(stamp, tz=timezone.utc), body.decode()
    )
    assert theirs == signing.signature(secret, "msg_1", stamp, body)


def test_a_prompt_nested_too_deep_for_the_parser_is_read_as_text() -> None:
    """RecursionError, not ValueError, is what json.loads raises there: it once escaped."""
    deep = "[" * 5000 + "]" * 5000
    assert prompt_text([("gen_ai.prompt", deep)]).startswith("[[[")
