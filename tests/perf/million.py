"""The benchmarks' big database: 1,000,000 traces (3,000,000 spans) in one project, on either
backend, built fast and kept between runs.

The data: traces over the WEEK before the build, newest first, each an agent's root span and
two chat calls (prompt attributes of ~350 bytes drawn from 500 prompts, tokens, cost, 3% of
traces with an error), ids spread as a real exporter's are (a multiplicative permutation, not
counting up), and 100 alerts on the project (a quarter per measure, 1 h and 24 h windows).

Built fast: the schema comes from opening the store (its migrations), then the traces' and
spans' secondary indexes and (PostgreSQL) their keys are dropped, the rows written in one
transaction (binary COPY on PostgreSQL, executemany on SQLite) and the indexes made again from
their own definitions, then VACUUM / ANALYZE. Whatever indexes the schema has (a text search
index added later included) are rebuilt as the schema defines them. The rows are the store's
row classes (TraceRow, SpanRow), written under the columns those classes name (tests/perf/
bulk.py): a column the schema adds is a field of its row class, written with its default.

Kept under pg_server.CACHE, keyed by the schema's version and DATA_VERSION (bump it when the
data changes): a SQLite file, or a PostgreSQL data directory (pg_server.bench_postgres), with
a JSON note of when the data was made (its "now": the bench reads it at that moment, so the
windows are the same whenever it runs) and how long the build took.
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from tests.perf import pg_server
from tests.perf.bulk import pg_copy, pg_write, sqlite_insert
from tui.server.store.alert_rows import new_alert
from tui.server.store.opening import open_store
from tui.server.store.protocol import TraceStore
from tui.server.store.rows import SpanRow, TraceRow
from tui.server.store.sqlite.migrations import LATEST as SQLITE_SCHEMA

TRACES = 1_000_000
WEEK_MS = 7 * 86_400_000
PROJECT = "proj_million"
KEY = "tt_ws_bench_million_key_0123456789"
DATABASE = "million"  # the PostgreSQL database's name
DATA_VERSION = 2  # 2: each trace's models, as ingest fills them (the span_ filters read them)
PERMUTE = 0x9E3779B97F4A7C15F39CC0605CEDC835  # odd: n -> n * PERMUTE mod 2**128 is one to one
CHUNK = 20_000  # traces generated and written at a time

SYSTEM = (
    "You are Ava, the support assistant of Northwind Outfitters. Answer briefly, look up "
    "orders before talking about delivery, never promise refunds, and hand over to a human "
    "when the customer asks for one."
)
QUESTIONS = (
    "Where is my order {n}? It was due on Monday and the tracking page has not moved since.",
    "Can I return the {item} I bought last week? It is unused, still in its box.",
    "Do you ship the {item} to Norway, and how long does it take to arrive there?",
    "I was charged twice for order {n}; please refund the second payment.",
)
ITEMS = ("tent", "rain jacket", "boots", "backpack", "sleeping bag")
MODELS = ("gpt-4o-mini", "claude-3-5-haiku")


class Built(NamedTuple):
    now: int  # epoch ms the data was made at: the newest trace started just before
    build_s: float  # seconds the build took (0 never: read from the note)
    cached: bool  # found in the cache (this run built nothing)


def sqlite_name() -> str:
    return f"million-sqlite-schema{SQLITE_SCHEMA}-data{DATA_VERSION}"


def postgres_name() -> str:
    from tui.server.store.postgres.migrations import LATEST

    return f"million-postgres-schema{LATEST}-data{DATA_VERSION}"


def prune(keep: str) -> None:
    """Remove the cache's big databases of other schema or data versions than `keep` (a name
    of sqlite_name() or postgres_name()'s kind): each is gigabytes, and never read again."""
    kind = keep.split("-schema")[0]
    for path in pg_server.CACHE.glob(f"{kind}-schema*"):
        if not path.name.startswith(keep):
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def trace_id(n: int) -> str:
    return f"{(n * PERMUTE) % 2**128:032x}"


def rows(now: int) -> Iterator[tuple[list[TraceRow], list[tuple[Any, ...]]]]:
    """(trace rows, span rows as written: the project, then a SpanRow's fields) CHUNK traces
    at a time, newest trace first."""
    rng = random.Random(27)
    prompts = []
    for _ in range(500):
        asked = rng.choice(QUESTIONS).format(n=rng.randint(10_000, 99_999), item=rng.choice(ITEMS))
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": asked}]
        prompts.append((asked, json.dumps({"gen_ai.input.messages": json.dumps(messages)})))
    step = WEEK_MS / TRACES
    models = json.dumps(sorted(model.lower() for model in MODELS))
    traces: list[TraceRow] = []
    spans: list[tuple[Any, ...]] = []
    for n in range(TRACES):
        tid = trace_id(n)
        start = now - 1 - int(n * step)
        errored = rng.random() < 0.03
        status = "error" if errored else "ok"
        asked, attributes = prompts[n % len(prompts)]
        calls = []
        at = start + 5
        for call in range(2):
            duration = int(rng.lognormvariate(6.5, 0.6))
            tokens_in, tokens_out = rng.randint(300, 2500), rng.randint(20, 400)
            cost = round(tokens_in * 1.5e-7 + tokens_out * 6e-7, 9)
            failed = errored and call == 1
            calls.append(
                SpanRow(
                    *(tid, f"{n:014x}{call + 1:02x}", f"{n:014x}00"),
                    *("chat " + MODELS[call], "llm", MODELS[call], at, duration),
                    *(tokens_in, tokens_out, cost, "error" if failed else "ok"),
                    "rate limited by the provider" if failed else None,
                    attributes,
                )
            )
            at += duration + 3
        duration = at - start + 2
        root = SpanRow(
            *(tid, f"{n:014x}00", None, "answer_question", "agent", None, start),
            *(duration, 0, 0, 0.0, status, None, '{"gen_ai.operation.name": "invoke_agent"}'),
        )
        spans += [(PROJECT, *span) for span in (root, *calls)]
        tokens_in = calls[0].input_tokens + calls[1].input_tokens
        tokens_out = calls[0].output_tokens + calls[1].output_tokens
        cost = round(calls[0].cost_usd + calls[1].cost_usd, 9)
        traces.append(
            TraceRow(
                *(tid, PROJECT, "answer_question", start, duration, 3, tokens_in, tokens_out),
                *(cost, status, int(errored), '{"service.name": "support-bot"}', start, asked),
                models=models,
            )
        )
        if len(traces) == CHUNK:
            yield traces, spans
            traces, spans = [], []
    if traces:
        yield traces, spans


def prepare(store: TraceStore) -> None:
    """The project (a retention longer than the data's age), the key and 100 alerts."""
    with store.transaction() as db:  # type: ignore[attr-defined]
        store.insert_project(db, "million", None, 3650, project_id=PROJECT)  # type: ignore[attr-defined]
    store.add_key(KEY, None, "bench")
    plans: list[tuple[str, str, list[float]]] = [
        ("latency_ms_1h", "gt", [1500, 2500, 4000]),
        ("latency_s_24h", "gte", [1.5, 2.5]),
        ("error_rate_pct_24h", "gt", [1, 2.5, 5]),
        ("error_rate_ratio_1h", "lte", [0.01, 0.05]),
        ("cost_usd_1h", "gt", [0.5, 1, 2]),
        ("cost_usd_24h", "gt", [50, 100]),
        ("prompt_drift_score_1h", "gt", [0.1, 0.3]),
        ("prompt_drift_pct_24h", "lt", [5, 30]),
    ]
    made = []
    for measure in ("latency", "error_rate", "cost", "prompt_drift"):
        mine = [p for p in plans if p[0].startswith(measure)]
        for n in range(25):
            metric, condition, thresholds = mine[n % len(mine)]
            made.append(
                new_alert(
                    PROJECT,
                    f"{metric} #{n}",
                    metric,
                    condition,
                    thresholds[n % len(thresholds)],
                    "http://127.0.0.1:9/hook",
                )
            )
    with store.transaction() as db:  # type: ignore[attr-defined]
        for alert in made:
            store.insert_alert(db, **alert._asdict())  # type: ignore[attr-defined]


# -- SQLite ----------------------------------------------------------------------------------


def sqlite_database() -> tuple[Path, Built]:
    """The big SQLite file, built if the cache has none for this schema."""
    path = pg_server.CACHE / f"{sqlite_name()}.sqlite3"
    note = pg_server.CACHE / f"{sqlite_name()}.json"
    if path.exists() and note.exists():
        meta = json.loads(note.read_text())
        return path, Built(meta["now"], meta["build_s"], True)
    pg_server.CACHE.mkdir(parents=True, exist_ok=True)
    prune(sqlite_name())
    for stale in pg_server.CACHE.glob(f"{sqlite_name()}.sqlite3*"):
        stale.unlink()
    now = int(time.time() * 1000)
    started = time.perf_counter()
    store = open_store(str(path))
    try:
        prepare(store)
    finally:
        store.close()
    db = sqlite3.connect(path, isolation_level=None)
    # No journal while building (one transaction, thrown away if it fails): a write-ahead log
    # would hold the whole database once more until its checkpoint.
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("PRAGMA cache_size = -1000000")  # 1 GB while building
    insert_traces, insert_spans = (sqlite_insert(db, row) for row in (TraceRow, SpanRow))
    indexes = db.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
        "AND tbl_name IN ('traces', 'spans')"
    ).fetchall()
    for name, _ in indexes:
        db.execute(f'DROP INDEX "{name}"')
    db.execute("BEGIN")
    for traces, spans in rows(now):
        db.executemany(insert_traces, traces)
        db.executemany(insert_spans, spans)
    db.execute("COMMIT")
    for _, sql in indexes:
        db.execute(sql)
    db.execute("ANALYZE")
    db.execute("PRAGMA journal_mode = WAL")  # as the store keeps it
    db.close()
    build_s = time.perf_counter() - started
    note.write_text(json.dumps({"now": now, "build_s": build_s}))
    return path, Built(now, build_s, False)


# -- PostgreSQL ------------------------------------------------------------------------------


def postgres_database(url: str, admin: Any) -> Built:
    """The big database `url` names (DATABASE on the cached cluster), built if the cluster
    has none. `admin(sql)` runs a statement as the superuser (CREATE DATABASE)."""
    import psycopg

    note = pg_server.CACHE / f"{postgres_name()}.json"
    exists = admin(f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE}'")
    if exists and note.exists():
        meta = json.loads(note.read_text())
        return Built(meta["now"], meta["build_s"], True)
    prune(postgres_name())
    if exists:
        admin(f'DROP DATABASE "{DATABASE}" WITH (FORCE)')
    now = int(time.time() * 1000)
    started = time.perf_counter()
    admin(f'CREATE DATABASE "{DATABASE}" TEMPLATE template0 OWNER tracetui')
    store = open_store(url)
    try:
        prepare(store)
    finally:
        store.close()
    with psycopg.connect(url) as db:
        copy_traces, copy_spans = (pg_copy(db, row) for row in (TraceRow, SpanRow))
        keys = db.execute(
            "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) "
            "FROM pg_constraint WHERE conrelid IN ('traces'::regclass, 'spans'::regclass) "
            "AND contype IN ('p', 'u')"
        ).fetchall()
        for table, name, _ in keys:
            db.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
        indexes = db.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename IN ('traces', 'spans')"
        ).fetchall()
        for name, _ in indexes:
            db.execute(f'DROP INDEX "{name}"')
        with db.cursor() as cursor:
            for traces, spans in rows(now):
                pg_write(cursor, copy_traces, traces)
                pg_write(cursor, copy_spans, spans)
        for table, name, definition in keys:
            db.execute(f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}'.encode())
        for _, definition in indexes:
            db.execute(definition.encode())
        db.commit()
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("VACUUM (ANALYZE) traces")
        db.execute("VACUUM (ANALYZE) spans")
    admin("CHECKPOINT")  # the build's pages on disk: the first bench does not pay for them
    build_s = time.perf_counter() - started
    note.write_text(json.dumps({"now": now, "build_s": build_s}))
    return Built(now, build_s, False)
