"""The Phoenix reader against a real Phoenix: projects, traces paged by Phoenix's cursor, a
trace's spans with kinds, models, tokens, status, errors and the cost Phoenix computes, the
conversation read from its flattened OpenInference attributes, Phoenix's errors, what it has
not (alerts), and recognising a Phoenix at an address given without a kind."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from tests.phoenix.conftest import (
    ERROR_MESSAGE,
    QUESTION,
    TRACE_COUNT,
    SeededPhoenix,
)
from tui.api import ApiError, NotFound, ValidationFailed
from tui.api.base_url import InvalidBaseUrl
from tui.api.client import ApiClient
from tui.api.kinds import checked_address, open_source
from tui.api.pagination import NextPage
from tui.api.phoenix.client import PhoenixClient
from tui.api.phoenix.probe import Probe, probe_address
from tui.api.source import TraceSource
from tui.model.chat.extract import conversation


@pytest.fixture
async def client(phoenix: SeededPhoenix) -> AsyncIterator[PhoenixClient]:
    async with PhoenixClient(phoenix.base_url) as client:
        yield client


async def project_id(client: PhoenixClient, name: str) -> str:
    projects = await client.list_projects()
    found = [p.id for p in projects if p.name == name and p.id]
    assert found, [p.name for p in projects]
    return found[0]


async def test_both_clients_are_trace_sources(phoenix: SeededPhoenix) -> None:
    source = open_source("phoenix", phoenix.base_url + "/v1/")
    async with source:
        assert isinstance(source, PhoenixClient) and isinstance(source, TraceSource)
        assert source.base_url == phoenix.base_url + "/v1"
        assert not source.has_alerts
    async with ApiClient("http://127.0.0.1:9/v1") as spec:
        assert isinstance(spec, TraceSource) and spec.has_alerts


async def test_projects(client: PhoenixClient, phoenix: SeededPhoenix) -> None:
    names = {p.name for p in await client.list_projects()}
    assert {"default", phoenix.project} <= names


async def test_traces_paged_by_phoenix_cursor_each_once(
    client: PhoenixClient, phoenix: SeededPhoenix
) -> None:
    pid = await project_id(client, phoenix.project)
    seen: list[str] = []
    page = await client.list_traces(pid, limit=4)
    pages = 1
    while True:
        seen += [t.id for t in page.items if t.id]
        if page.next_page is None:
            break
        page = await client.list_traces(pid, limit=4, after=page.next_page)
        pages += 1
    assert pages == 3 and len(seen) == len(set(seen)) == TRACE_COUNT
    assert {phoenix.chat_trace_id, phoenix.failing_trace_id} <= set(seen)
    every = [t.id async for t in client.iter_traces(pid, limit=2)]
    assert sorted(every) == sorted(seen)


async def test_trace_rows_have_names_counts_tokens_and_cost(
    client: PhoenixClient, phoenix: SeededPhoenix
) -> None:
    pid = await project_id(client, phoenix.project)
    rows = {t.id: t for t in (await client.list_traces(pid, limit=100)).items}
    chat = rows[phoenix.chat_trace_id]
    assert chat.name == "answer-question" and chat.span_count == 2
    assert (chat.input_tokens, chat.output_tokens) == (12, 5)
    assert chat.total_cost_usd is not None and chat.total_cost_usd > 0
    failing = rows[phoenix.failing_trace_id]
    assert failing.is_error and failing.error_count == 1 and failing.name == "failing-step"


async def test_a_trace_tree_with_kinds_models_tokens_costs(
    client: PhoenixClient, phoenix: SeededPhoenix
) -> None:
    pid = await project_id(client, phoenix.project)
    trace = await client.get_trace(phoenix.chat_trace_id, pid)
    assert trace.id == phoenix.chat_trace_id and trace.name == "answer-question"
    root, call = sorted(trace.spans, key=lambda s: s.parent_id is not None)
    assert root.parent_id is None and call.parent_id == root.id
    assert (root.kind, call.kind) == ("chain", "llm")
    assert call.model and call.model.startswith("gpt-4o-mini")
    assert (call.input_tokens, call.output_tokens) == (12, 5)
    assert call.status == "ok" and not call.is_error
    assert call.cost_usd is not None and call.cost_usd > 0
    assert trace.total_cost_usd == pytest.approx(call.cost_usd)
    assert trace.started_at is not None and trace.duration_ms is not None
    # The same trace found without its project (an alert's link, `tracetui trace ID`).
    assert (await client.get_trace(phoenix.chat_trace_id)).span_count == 2


async def test_the_conversation_from_flattened_openinference(
    client: PhoenixClient, phoenix: SeededPhoenix
) -> None:
    pid = await project_id(client, phoenix.project)
    trace = await client.get_trace(phoenix.chat_trace_id, pid)
    call = next(s for s in trace.spans if s.kind == "llm")
    assert call.attributes["llm.input_messages.0.message.content"] == QUESTION
    chat = conversation(call.attributes, call.extras, call.kind)
    assert chat is not None and "OpenInference" in chat.conventions
    assert [m.role for m in chat.input] == ["user"] and [m.role for m in chat.output] == [
        "assistant"
    ]
    tool = await client.get_trace(phoenix.tool_trace_id, pid)
    prefix = "llm.output_messages.0.message.tool_calls.0.tool_call.function"
    assert tool.spans[0].attributes[f"{prefix}.name"] == "lookup_order"


async def test_an_errored_span_has_its_status_and_message(
    client: PhoenixClient, phoenix: SeededPhoenix
) -> None:
    pid = await project_id(client, phoenix.project)
    trace = await client.get_trace(phoenix.failing_trace_id, pid)
    (span,) = trace.spans
    assert span.is_error and span.error_message == ERROR_MESSAGE and span.kind == "tool"
    assert trace.is_error


async def test_phoenix_errors_are_the_clients_typed_errors(client: PhoenixClient) -> None:
    with pytest.raises(NotFound) as unknown_project:
        await client.list_traces("no-such-project")
    assert "404" in unknown_project.value.message and "no-such-project" in str(
        unknown_project.value
    )
    with pytest.raises(NotFound, match="No trace"):
        await client.get_trace("0" * 32, "default")
    with pytest.raises(ValidationFailed, match=r"Invalid cursor.*\(HTTP 422\)"):
        await client.list_traces("default", after=NextPage(cursor="not-a-cursor"))
    # The local service's `include` extension is not Phoenix's: it is left out, not refused.
    page = await client.list_traces("default", limit=10, include="models")
    assert page.items == []


async def test_alerts_are_said_to_be_absent(client: PhoenixClient) -> None:
    with pytest.raises(ApiError, match="This Phoenix server has no alerts"):
        await client.list_alerts("default")


def test_a_phoenix_is_recognised_at_its_plain_address(
    phoenix: SeededPhoenix, stub_llm: str
) -> None:
    found = probe_address(phoenix.base_url)
    assert (found.root, found.version) == (phoenix.base_url, phoenix.phoenix.version)
    assert probe_address(stub_llm) == Probe()  # an HTTP server that is not Phoenix
    nothing = probe_address("http://127.0.0.1:9")  # nothing listening: said why
    assert nothing.root is None and "connection refused" in (nothing.unreachable or "")


def test_an_address_given_without_a_kind_is_read_as_phoenix(phoenix: SeededPhoenix) -> None:
    kind, url, note = checked_address("auto", phoenix.base_url)
    assert (kind, url) == ("phoenix", phoenix.base_url + "/v1")
    assert note is not None and f"Arize Phoenix {phoenix.phoenix.version}" in note
    assert checked_address("phoenix", phoenix.base_url)[:2] == ("phoenix", url)
    # The OTLP endpoint, copied as the address: not the spec's either, and Phoenix's.
    assert checked_address("auto", phoenix.base_url + "/v1/traces")[:2] == ("phoenix", url)
    assert checked_address("auto", "http://127.0.0.1:9/v1") == (
        "auto",
        "http://127.0.0.1:9/v1",
        None,
    )
    with pytest.raises(InvalidBaseUrl, match="must end in /v1"):
        checked_address("auto", "http://127.0.0.1:9")  # not the spec's, and not a Phoenix
    with pytest.raises(InvalidBaseUrl, match="must end in /v1"):
        checked_address("spec", phoenix.base_url)  # a kind given is never second-guessed


async def test_a_phoenix_at_a_spec_address_is_recognised_beside_the_first_frame(
    phoenix: SeededPhoenix, stub_llm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """http://HOST:6006/v1 reads as the spec's: without a kind, it is asked, when the client
    is made (in the thread that loads it, after the first frame), and found to be Phoenix."""
    address = phoenix.base_url + "/v1"
    assert checked_address("auto", address) == ("auto", address, None)  # nothing asked yet
    monkeypatch.setenv("PHOENIX_API_KEY", "phx-key-for-a-recognised-phoenix")
    # In a thread, as the app makes it: the question runs an event loop of its own.
    source = await asyncio.to_thread(open_source, "auto", address)
    async with source:
        assert isinstance(source, PhoenixClient) and source.base_url == address
        assert source.recognised_note is not None
        assert f"{phoenix.base_url} is Arize Phoenix {phoenix.phoenix.version}" in (
            source.recognised_note
        )
        assert source.redact("phx-key-for-a-recognised-phoenix") != (
            "phx-key-for-a-recognised-phoenix"
        )  # Phoenix's own key variable, as for a profile of kind phoenix
        assert {p.name for p in await source.list_projects()} >= {phoenix.project}
    # A Phoenix under a path (behind a proxy, or its address copied with more at its end).
    deeper = await asyncio.to_thread(open_source, "auto", phoenix.base_url + "/some/path/v1")
    async with deeper:
        assert isinstance(deeper, PhoenixClient) and deeper.base_url == address
    # An HTTP server at a spec address that is not Phoenix, and nothing listening: the spec's.
    for other in (stub_llm, "http://127.0.0.1:9/v1"):
        plain = await asyncio.to_thread(open_source, "auto", other)
        async with plain:
            assert type(plain) is ApiClient and plain.base_url == other
    explicit = open_source("spec", address)  # a kind given: not asked
    async with explicit:
        assert type(explicit) is ApiClient
