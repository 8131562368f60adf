"""The demo data tells one coherent story per trace: each failure is one its provider or tool
really raises, lasts as long as its timeout, and is either retried (a later span of the same
name that succeeds) or ends the trace with no answer; retrieved documents are distinct; the
live feed's bot never answers from an order look-up that timed out."""

from __future__ import annotations

import json
import random
import re
import sqlite3
from collections import defaultdict
from typing import Any

import pytest

from tui.demo import feed
from tui.demo.data import populate
from tui.server.store.sqlite.store import Store

NOW = 1_795_000_000_000
ANTHROPIC_WORDS = ("overloaded_error", "rate_limit_error", "invalid_request_error", "200000")
OPENAI_WORDS = ("128000 tokens", "Sorry about that", "requests per min (RPM)")
TIMEOUT = re.compile(r"(?:timed out|timeout)\b[^;]*? after ([\d.]+) ?(?:s|seconds)")


def timeout_ms(error: str) -> int | None:
    found = TIMEOUT.search(error)
    return int(float(found[1]) * 1000) if found else None


@pytest.fixture(scope="module")
def spans_by_trace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    store = Store(tmp_path_factory.mktemp("stories") / "demo.sqlite3")
    populate(store, seed=7, now=NOW, scale=0.2, big_traces=False)
    db = sqlite3.connect(store.path)
    db.row_factory = sqlite3.Row
    traces: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in db.execute("SELECT * FROM spans ORDER BY started_at"):
        traces[row["trace_id"]].append(dict(row))
    outputs = {
        row["id"]: json.loads(row["attributes"]).get("output")
        for row in db.execute("SELECT id, attributes FROM traces")
    }
    for trace_id, spans in traces.items():
        spans[0]["trace_output"] = outputs[trace_id]
    return dict(traces)


def failed(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [span for span in spans if span["status"] == "error" and span["parent_id"]]


def test_there_are_failures_to_look_at(spans_by_trace: dict[str, list[dict[str, Any]]]) -> None:
    assert sum(bool(failed(spans)) for spans in spans_by_trace.values()) >= 20


def test_an_error_comes_from_the_provider_of_its_model(
    spans_by_trace: dict[str, list[dict[str, Any]]],
) -> None:
    for spans in spans_by_trace.values():
        for span in failed(spans):
            model, error = span["model"] or "", span["error_message"]
            if model.startswith(("gpt", "o3", "text-embedding")):
                assert not any(word in error for word in ANTHROPIC_WORDS), (model, error)
            if model.startswith("claude"):
                assert not any(word in error for word in OPENAI_WORDS), (model, error)


def test_a_timeout_lasts_as_long_as_its_timeout(
    spans_by_trace: dict[str, list[dict[str, Any]]],
) -> None:
    for spans in spans_by_trace.values():
        for span in failed(spans):
            error = span["error_message"]
            if (limit := timeout_ms(error)) is not None or "timed out" in error:
                limit = limit or 1000
                assert span["duration_ms"] >= limit, (span["name"], error, span["duration_ms"])


def test_a_failure_is_retried_or_ends_the_trace_without_an_answer(
    spans_by_trace: dict[str, list[dict[str, Any]]],
) -> None:
    for spans in spans_by_trace.values():
        root = next(span for span in spans if span["parent_id"] is None)
        for span in failed(spans):
            retried = [
                later
                for later in spans
                if later["name"] == span["name"]
                and later["parent_id"] == span["parent_id"]
                and later["started_at"] >= span["started_at"] + span["duration_ms"]
                and later["status"] == "ok"
            ]
            if not retried:  # nothing after it may act as if it had worked
                assert root["status"] == "error", (span["name"], span["error_message"])
                assert spans[0]["trace_output"] is None, (span["name"], span["error_message"])
                assert "context" in span["error_message"] or "too long" in span["error_message"]


def test_retrieved_documents_are_distinct(spans_by_trace: dict[str, list[dict[str, Any]]]) -> None:
    seen = 0
    for spans in spans_by_trace.values():
        for span in spans:
            attributes = json.loads(span["attributes"])
            contents = [v for k, v in attributes.items() if k.endswith("document.content")]
            ids = [v for k, v in attributes.items() if k.endswith("document.id")]
            if "gen_ai.retrieval.documents" in attributes:
                docs = json.loads(attributes["gen_ai.retrieval.documents"])
                contents, ids = [d["content"] for d in docs], [d["id"] for d in docs]
            if len(contents) > 1:
                seen += 1
                assert len(set(contents)) == len(contents), span["name"]
                assert len(set(ids)) == len(ids), span["name"]
    assert seen > 100


def test_the_support_bot_answers_from_its_own_articles(
    spans_by_trace: dict[str, list[dict[str, Any]]],
) -> None:
    # The order look-up only for the question about an order; the best article the one that
    # answers the question (its reply says the same).
    for spans in spans_by_trace.values():
        root = next(span for span in spans if span["parent_id"] is None)
        if root["name"] != "handle_ticket":
            continue
        question = json.loads(next(s for s in spans if s["name"] == "kb.search")["attributes"])[
            "gen_ai.retrieval.query.text"
        ]
        looked_up = any(span["name"] == "orders.lookup" for span in spans)
        assert looked_up == ("order #" in question), question


@pytest.mark.parametrize("rate", [0.0, 1.0])
def test_the_feeds_bot_never_answers_from_a_look_up_that_timed_out(rate: float) -> None:
    for seed in range(20):
        children, _root = feed.support_ticket(random.Random(seed), NOW, failure_rate=rate)
        tools = [s for s in children if s.name == "execute_tool lookup_order"]
        answer = children[-1]
        said = json.loads(
            next(
                a.value.string_value for a in answer.attributes if a.key == "gen_ai.output.messages"
            )
        )[0]["parts"][0]["content"]
        if tools[-1].status.code == tools[-1].status.STATUS_CODE_ERROR:
            assert said == feed.NO_LOOKUP_ANSWER
            assert len(tools) == 2  # tried again once first
        else:
            assert said != feed.NO_LOOKUP_ANSWER
        assert answer.start_time_unix_nano >= tools[-1].end_time_unix_nano


def test_the_feeds_documents_are_distinct() -> None:
    for seed in range(20):
        children, _root = feed.docs_question(random.Random(seed), NOW)
        retrieve = next(s for s in children if s.name == "retrieve")
        contents = [a.value.string_value for a in retrieve.attributes if a.key.endswith("content")]
        assert len(contents) >= 2 and len(set(contents)) == len(contents)
