"""A trace's count of spans whose model has no price (`unpriced_spans`, issue 31), on both
stores: summed at ingest for a new trace, recomputed from all its spans for a trace stored
before (a counted-once inner span never counts), read by the list, the search and one trace,
filled in by bulk inserts, 0 for traces stored before the migration, and in the trace's JSON."""

from __future__ import annotations

import json
import uuid
from typing import Any

import psycopg
import pytest

from tests.support.otlp import request
from tests.support.otlp import span as otlp_span
from tests.support.service import RunningService
from tui.server.ingest.body import PROTOBUF
from tui.server.ingest.costs import PRICES
from tui.server.ingest.processes import decode, groups_of
from tui.server.search.filters import TraceFilters
from tui.server.store.rows import SpanRow, TraceRow, now_ms

NOW = 1_795_000_000_000
START, END = NOW - 60_000, NOW + 60_000
PROJECT = "p"

PRICED = {
    "gen_ai.operation.name": "chat",
    "gen_ai.request.model": "gpt-4o-mini",
    "gen_ai.usage.input_tokens": 100,
    "gen_ai.usage.output_tokens": 20,
}
UNPRICED = {**PRICED, "gen_ai.request.model": "acme-private-llm-9"}
AGENT = {"gen_ai.operation.name": "invoke_agent"}

# name: (parent, attributes). "inner" is the same unpriced call recorded again below "outer"
# (counted once in it: its cost_source is then NULL).
SPANS: dict[str, tuple[str | None, dict[str, Any]]] = {
    "agent": (None, AGENT),
    "priced": ("agent", PRICED),
    "outer": ("agent", UNPRICED),
    "inner": ("outer", UNPRICED),
    "beside": ("agent", UNPRICED),
}
IDS = {name: bytes([n + 1]) * 8 for n, name in enumerate(SPANS)}


def export(store: Any, trace: bytes, names: list[str]) -> None:
    """`names`' spans of `trace` through ingest as one OTLP export."""
    spans = [
        otlp_span(
            trace,
            IDS[name],
            IDS[parent] if (parent := SPANS[name][0]) else b"",
            name=name,
            start_ms=NOW + list(SPANS).index(name),
            attributes=SPANS[name][1],
        )
        for name in names
    ]
    body = request(*spans).SerializeToString()
    store.ingest([groups_of(decode(PROTOBUF, body, PRICES, NOW), PROJECT)])


def with_project(store: Any) -> Any:
    with store.transaction() as db:
        store.insert_project(db, PROJECT, None, 30, project_id=PROJECT)
    return store


def unpriced(store: Any, trace: bytes) -> int:
    """The count as one trace, the list and the search read it (all the same)."""
    (row,) = store.find_traces(trace.hex(), PROJECT)
    listed, _ = store.list_traces(PROJECT, START, END, 100)
    searched, _ = store.search_traces(
        PROJECT, TraceFilters(sort="total_cost_usd", order="asc"), START, END, 100
    )
    counts = {
        row.unpriced_spans,
        *(r.unpriced_spans for r in listed if r.id == trace.hex()),
        *(r.unpriced_spans for r in searched if r.id == trace.hex()),
    }
    assert len(counts) == 1, counts
    return int(row.unpriced_spans)


def test_a_new_trace_counts_its_spans_whose_model_has_no_price(store: Any) -> None:
    trace = bytes.fromhex("a1" * 16)
    export(with_project(store), trace, ["agent", "priced", "outer", "beside"])
    assert unpriced(store, trace) == 2


def test_a_priced_trace_counts_none(store: Any) -> None:
    trace = bytes.fromhex("a2" * 16)
    export(with_project(store), trace, ["agent", "priced"])
    assert unpriced(store, trace) == 0


@pytest.mark.parametrize(
    "exports",
    [
        [["agent", "priced"], ["outer", "beside"]],  # the unpriced spans come later
        [["outer", "beside"], ["agent", "priced"]],
        [["agent", "outer"], ["beside"], ["beside"]],  # one sent again counts once
    ],
)
def test_a_stored_trace_is_recounted_from_all_its_spans(
    store: Any, exports: list[list[str]]
) -> None:
    trace = bytes.fromhex("b1" * 16)
    with_project(store)
    for names in exports:
        export(store, trace, names)
    assert unpriced(store, trace) == 2


@pytest.mark.parametrize(
    "exports",
    [
        [["agent", "outer", "inner"]],  # one export: counted once as it is decoded
        [["agent", "outer"], ["inner"]],  # split: the store's count (store/counting.py)
        [["inner"], ["agent", "outer"]],  # the inner first (it ends first)
    ],
)
def test_a_call_counted_once_in_its_parent_is_one_unpriced_span(
    store: Any, exports: list[list[str]]
) -> None:
    trace = bytes.fromhex("c1" * 16)
    with_project(store)
    for names in exports:
        export(store, trace, names)
    assert unpriced(store, trace) == 1


def span_row(trace_id: str, span_id: str, parent: str | None, source: str | None) -> SpanRow:
    attributes = {} if source is None else {"tracetui.cost_source": source}
    return SpanRow(
        trace_id,
        span_id,
        parent,
        span_id,
        "llm" if parent else "chain",
        "m" if parent else None,
        NOW,
        10,
        1,
        1,
        0.0,
        "ok",
        None,
        json.dumps(attributes),
        cost_source=source,
    )


def test_bulk_inserts_fill_it_in_from_their_spans_and_take_old_tuples(store: Any) -> None:
    spans = [
        span_row("t1", "root", None, None),
        span_row("t1", "a", "root", "unknown_model"),
        span_row("t1", "b", "root", "estimated"),
        span_row("t2", "root", None, None),
    ]
    # A row as a plain tuple of the fields before unpriced_spans (tests, builders).
    old = ("t2", PROJECT, "t2", NOW, 10, 1, 1, 1, 0.0, "ok", 0, "{}")
    with with_project(store).transaction() as db:
        store.insert_traces(
            db, [TraceRow("t1", PROJECT, "t1", NOW, 10, 3, 3, 3, 0.0, "ok", 0, "{}"), old], spans
        )
    assert store.find_traces("t1", PROJECT)[0].unpriced_spans == 1
    assert store.find_traces("t2", PROJECT)[0].unpriced_spans == 0


def stored_before(backend: str, store_url: str) -> None:
    """A database at the migration before unpriced_spans with one trace in it."""
    row = (
        "old",
        PROJECT,
        "old",
        NOW,
        10,
        1,
        1,
        1,
        0.0,
        "ok",
        0,
        "{}",
        NOW,
    )
    columns = (
        "id, project_id, name, started_at, duration_ms, span_count, input_tokens, "
        "output_tokens, total_cost_usd, status, error_count, attributes, listed_at"
    )
    project = "INSERT INTO projects (id, name, description, retention_days, created_at) "
    if backend == "sqlite":
        import sqlite3

        from tui.server.store.sqlite.migrations import MIGRATIONS, migrate

        db = sqlite3.connect(store_url, isolation_level=None)
        migrate(db, store_url, MIGRATIONS[:9])
        db.execute(project + "VALUES (?, ?, NULL, 30, ?)", (PROJECT, PROJECT, NOW))
        db.execute(f"INSERT INTO traces ({columns}) VALUES ({', '.join('?' * 13)})", row)
        db.close()
        return
    from tui.server.store.postgres.migrations import MIGRATIONS as PG_MIGRATIONS
    from tui.server.store.postgres.migrations import migrate as pg_migrate

    with psycopg.connect(store_url, autocommit=True) as connection:
        pg_migrate(connection, "test", PG_MIGRATIONS[:6])
        connection.execute(project + "VALUES (%s, %s, NULL, 30, %s)", (PROJECT, PROJECT, NOW))
        connection.execute(f"INSERT INTO traces ({columns}) VALUES ({', '.join(['%s'] * 13)})", row)


def test_traces_stored_before_the_migration_keep_0(
    backend: str, store_url: str, open_store: Any
) -> None:
    stored_before(backend, store_url)
    store = open_store()  # migrates to the latest version
    (row,) = store.find_traces("old", PROJECT)
    assert row.unpriced_spans == 0
    listed, _ = store.list_traces(PROJECT, START, END, 100)
    assert [r.unpriced_spans for r in listed] == [0]


def test_the_trace_json_carries_it_as_an_extension(service: RunningService) -> None:
    project_id, trace_id = f"proj_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    start = now_ms() - 60_000
    spans = [
        span_row(trace_id, "root", None, None)._replace(started_at=start),
        span_row(trace_id, "a", "root", "unknown_model")._replace(started_at=start),
        span_row(trace_id, "b", "root", "unknown_model")._replace(started_at=start),
    ]
    trace = TraceRow(trace_id, project_id, "ask", start, 10, 3, 3, 3, 0.0, "ok", 0, "{}")
    with service.store.transaction() as db:
        service.store.insert_project(db, project_id, None, 30, project_id=project_id)
        service.store.insert_traces(db, [trace], spans)
    with service.client() as api:
        listed = api.get("traces", params={"project_id": project_id})
        assert listed.status_code == 200, listed.text
        (row,) = listed.json()["data"]
        one = api.get(f"traces/{trace_id}")
        assert one.status_code == 200, one.text
    assert row["unpriced_spans"] == 2 and row["total_cost_usd"] == 0.0
    assert one.json()["unpriced_spans"] == 2
