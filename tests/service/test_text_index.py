"""The text `q` searches, indexed off ingest's path on SQLite (store/texts.py): what waits for the
index and how the store's indexer moves it (index_texts), on both stores; and, through a
running service, that a trace is found by its words without anyone asking for the index, while
other exports keep coming, and on a second replica of a PostgreSQL store (where the text is
indexed as it is written). Conditions are waited for with a generous deadline: the bound
(texts.FINDABLE_WITHIN_S) is a figure of `make bench`, never asserted here."""

from __future__ import annotations

import functools
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.otlp import new_span_id, new_trace_id, post, request, root_client, span
from tests.support.service import local_service, wait_for
from tui.server.search.filters import TraceFilters
from tui.server.store.opening import open_store
from tui.server.store.rows import SpanGroup, SpanRow, now_ms

NOW = now_ms()
START, END = NOW - 3_600_000, NOW + 3_600_000
KEY = "tt_pk_text_index_key_0123456789abcdef"
DEADLINE_S = 60.0  # for conditions: generous, never a measure


def span_row(trace_id: str, span_id: str, parent: str | None, words: str) -> SpanRow:
    return SpanRow(
        trace_id, span_id, parent, "step", "chain", None, NOW - 1000, 10, 0, 0, 0.0, "ok",
        None, '{"input.value": "' + words + '"}',
    )  # fmt: skip


def ingest(store: Any, trace_id: str, span_id: str, words: str, parent: str | None = None) -> None:
    store.ingest([[SpanGroup("p", None, "{}", [span_row(trace_id, span_id, parent, words)])]])


def found(store: Any, words: str) -> list[str]:
    rows, _ = store.search_traces("p", TraceFilters(q=words), START, END, 10)
    return [row.id for row in rows]


@pytest.fixture
def project_store(store: Any) -> Any:
    with store.transaction() as db:
        store.insert_project(db, "p", None, 30, project_id="p")
    return store


def test_a_text_waits_for_the_indexer_on_sqlite_only(project_store: Any, backend: str) -> None:
    """SQLite: the trace is listed at once, its text found once indexed; PostgreSQL indexes as
    it writes, so nothing waits. Indexing again finds nothing to do."""
    store, trace = project_store, "a1" * 16
    ingest(store, trace, "r1", "zanzibar question")
    assert store.search_traces("p", TraceFilters(), START, END, 10)[0]  # listed at once
    if backend == "sqlite":
        assert found(store, "zanzibar") == []
        assert store.index_texts() == 1
    assert found(store, "zanzibar") == [trace]
    assert store.index_texts() == 0
    assert found(store, "zanzibar") == [trace]


def test_the_indexer_takes_at_most_its_batch_and_the_oldest_first(
    project_store: Any, backend: str
) -> None:
    store = project_store
    traces = [f"{n:032x}" for n in range(1, 6)]
    for n, trace in enumerate(traces):
        ingest(store, trace, "r1", f"word{n}x")
    batches = []
    while done := store.index_texts(2):
        batches.append(done)
    assert batches == ([2, 2, 1] if backend == "sqlite" else [])
    for n, trace in enumerate(traces):
        assert found(store, f"word{n}x") == [trace]


def test_a_text_that_grows_after_it_was_indexed_is_indexed_again_once(
    project_store: Any, backend: str
) -> None:
    """The trace's text grows when more of its spans come (after its first text was indexed):
    both parts' words find it, through one row of the index."""
    store, trace = project_store, "b2" * 16
    ingest(store, trace, "r1", "walrus opening")
    store.index_texts()
    ingest(store, trace, "c1", "penguin closing", parent="r1")
    assert store.index_texts() == (1 if backend == "sqlite" else 0)
    assert found(store, "walrus") == found(store, "penguin") == [trace]
    if backend == "sqlite":
        with store._read() as db:
            assert db.execute("SELECT count(*) FROM trace_texts").fetchone() == (1,)


def test_a_trace_deleted_before_its_text_was_indexed_leaves_nothing_waiting(
    project_store: Any,
) -> None:
    store, trace = project_store, "c3" * 16
    old = span_row(trace, "r1", None, "mammoth")._replace(started_at=NOW - 100 * 86_400_000)
    store.ingest([[SpanGroup("p", None, "{}", [old])]])
    assert store.expire(NOW) == 1
    assert store.index_texts() == 0
    assert found(store, "mammoth") == []


# -- through a running service -----------------------------------------------------------------


@pytest.fixture
def service_url(fresh_database: str) -> Iterator[str]:
    """A service over an empty store with project "p" and its key, ingesting through a worker
    process as `tracetui serve` does, its background tasks (the indexer among them) running."""
    store: Any = open_store(fresh_database)
    with store.transaction() as db:
        store.insert_project(db, "p", None, 30, project_id="p")
    store.add_key(KEY, "p", "text index")
    service = local_service(store, ingest_processes=1).start()
    try:
        yield service.base_url
    finally:
        service.stop()
        store.close()


def posted(api: httpx.Client, words: str, spans: int = 1) -> bytes:
    """A trace of `spans` spans whose root holds `words`, exported; its id."""
    trace, root = new_trace_id(), new_span_id()
    body = [span(trace, root, name="probe", attributes={"input.value": words})]
    body += [
        span(trace, new_span_id(), parent=root, name="call", attributes={"output.value": "x" * 300})
        for _ in range(spans - 1)
    ]
    assert post(api, request(*body)).status_code == 200
    return trace


def is_found(api: httpx.Client, words: str, trace_id: str) -> bool:
    return search(api, words) == [trace_id]


def search(api: httpx.Client, words: str) -> list[str]:
    answer = api.get("traces", params={"project_id": "p", "q": words, "limit": 5})
    assert answer.status_code == 200, answer.text
    return [row["id"] for row in answer.json()["data"]]


@pytest.mark.parametrize("api_backend", ["sqlite", "postgres"], indirect=True)
def test_exported_words_are_found_while_exports_keep_coming(service_url: str) -> None:
    """Nobody asks for the index: the service's indexer finds each probe's words while another
    sender exports traces of 200 spans without a pause (bounded: it stops with the probes)."""
    stop = threading.Event()
    sent: list[int] = []

    def flood() -> None:
        with root_client(service_url, KEY) as api:
            while not stop.is_set() and len(sent) < 300:
                posted(api, "filler words", spans=200)
                sent.append(1)

    sender = threading.Thread(target=flood)
    sender.start()
    try:
        with (
            root_client(service_url, KEY) as api,
            httpx.Client(
                base_url=service_url + "/",
                headers={"Authorization": f"Bearer {KEY}"},
                timeout=30,
            ) as reader,
        ):
            wait_for(lambda: len(sent) >= 2, DEADLINE_S, "the flood to start")
            for _ in range(3):
                word = f"probe{uuid.uuid4().hex[:12]}"
                trace = posted(api, word).hex()
                wait_for(functools.partial(is_found, reader, word, trace), DEADLINE_S, word)
    finally:
        stop.set()
        sender.join(DEADLINE_S)
    assert not sender.is_alive()


@pytest.mark.parametrize("api_backend", ["postgres"], indirect=True)
def test_a_second_replica_finds_the_words_once_the_export_is_answered(
    service_url: str, fresh_database: str
) -> None:
    """Two replicas on one PostgreSQL database: a trace exported to one is found by its words
    on the other as soon as its export is answered (PostgreSQL indexes as it writes)."""
    other_store: Any = open_store(fresh_database)
    other = local_service(other_store, ingest_processes=1).start()
    try:
        with (
            root_client(service_url, KEY) as api,
            httpx.Client(
                base_url=other.base_url + "/",
                headers={"Authorization": f"Bearer {KEY}"},
                timeout=30,
            ) as reader,
        ):
            for _ in range(3):
                word = f"probe{uuid.uuid4().hex[:12]}"
                trace = posted(api, word).hex()
                assert search(reader, word) == [trace]
    finally:
        other.stop()
        other_store.close()
