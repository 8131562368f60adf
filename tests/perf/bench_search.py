"""Searching a big project (GET /v1/traces's filters and sorts), on both backends: the first page
of each single filter and sort (target p95 <= 50 ms), a text search, anywhere (`q`) or in the
inputs or outputs only (`input:`, `output:`) (<= 200 ms), a combined filter deep by cursor
(<= 100 ms), and the database's size with and without the text index.

The data: TRACES traces (BENCH_SEARCH_TRACES, default 1,000,000) over the week before the build,
in one project, each with a user (5,000 of them), a session (5 traces each), 0-2 of 8 tags,
1-2 of 3 models, 3% errors, and the text a support bot's trace has (a question drawn from 500,
an answer, span names, made as ingest makes it: marked, so `input:` finds the question and
`output:` the answer). Only the traces table is filled: the listing reads no spans (the model
filter reads the trace's models), so spans would only make the build longer. It is built by
this module (tests/perf/million.py fills none of the search columns), with the indexes made
after the rows, and the text index last, to measure the size without it.

Timed at the store (search_traces: the SQL, not HTTP), 20 runs each after one warm-up; the
window is the whole week (the worst case: the app's default is the last 24 hours). A text
search's first page is first checked against the first matches of the data made again (a
brute-force filter in Python): no row times an empty or a wrong answer.
"""

from __future__ import annotations

import functools
import json
import os
import random
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests.perf.bulk import pg_copy, pg_write, sqlite_insert
from tests.perf.report import Row, p95_ms
from tui.server.search.filters import TraceFilters
from tui.server.search.text import INPUT, OUTPUT, in_part, searched_text
from tui.server.store.rows import SearchPosition, TraceRow, TraceSummary
from tui.server.store.search import sort_value
from tui.server.store.sqlite.textfile import text_path

TRACES = int(os.environ.get("BENCH_SEARCH_TRACES", "1000000"))
WEEK_MS = 7 * 86_400_000
PROJECT = "proj_search"
RUNS = 20
LIMIT = 100
DEEP_PAGES = 20
# What `make test` runs this module with (tests/bench/test_tiny_benches.py): every code path
# once, at a size that takes seconds; no figure of it means anything.
TINY = {"TRACES": 300, "RUNS": 2, "DEEP_PAGES": 2}
TAGS = ("prod", "beta", "eu", "us", "mobile", "web", "vip", "trial")
MODELS = ("gpt-4o-mini", "claude-3-5-haiku", "gpt-4o")
NAMES = tuple(f"workflow_{i}" for i in range(10))
QUESTIONS = (
    "Where is my order {n}? It was due on Monday and the tracking page has not moved since.",
    "Can I return the {item} I bought last week? It is unused, still in its box.",
    "Do you ship the {item} to Norway, and how long does it take to arrive there?",
    "I was charged twice for order {n}; please refund the second payment.",
)
ANSWERS = (
    "I looked up order {n}: it left our warehouse yesterday and should arrive within 2 days.",
    "Yes, unused items can be returned within 30 days; I have emailed you a return label.",
    "We ship to Norway in 4 to 6 working days; customs may add a day.",
    "I cannot promise a refund, but I have passed order {n} to our billing team.",
)
ITEMS = ("tent", "rain jacket", "boots", "backpack", "sleeping bag")


def rows(now: int) -> Iterator[tuple[TraceRow, str]]:
    """(trace row, its text), newest first."""
    rng = random.Random(29)
    texts = []
    for _ in range(500):
        n, item = rng.randint(10_000, 99_999), rng.choice(ITEMS)
        which = rng.randrange(len(QUESTIONS))
        texts.append(
            (QUESTIONS[which].format(n=n, item=item), ANSWERS[which].format(n=n, item=item))
        )
    step = WEEK_MS / TRACES
    for n in range(TRACES):
        start = now - 1 - int(n * step)
        errored = rng.random() < 0.03
        asked, answer = texts[n % len(texts)]
        duration = int(rng.lognormvariate(7, 0.6))
        tokens_in, tokens_out = rng.randint(300, 2500), rng.randint(20, 400)
        models = rng.sample(MODELS, rng.randint(1, 2))
        tags = rng.sample(TAGS, rng.randint(0, 2))
        name = NAMES[n % len(NAMES)]
        text = trace_text(name, models[0], asked, answer, errored)
        row = TraceRow(
            *(f"{(n * 0x9E3779B97F4A7C15) % 2**128:032x}", PROJECT, name, start, duration, 3),
            *(tokens_in, tokens_out, round(tokens_in * 1.5e-7 + tokens_out * 6e-7, 9)),
            *("error" if errored else "ok", int(errored), "{}", start, asked),
            user_id=f"user-{rng.randrange(5000)}",
            session_id=f"session-{n // 5}",
            tags=json.dumps(tags),
            output_preview=answer,
            models=json.dumps(sorted(models)),
        )
        yield row, text


@functools.lru_cache(maxsize=65_536)
def trace_text(name: str, model: str, asked: str, answer: str, errored: bool) -> str:
    """A trace's text as ingest makes it (search.text.searched_text: marked, folded): its root
    span's name, then its model call's name, error, input and output. Remembered: the data has
    some 30,000 different ones."""
    attributes = {"input.value": asked, "output.value": answer}
    error = "RateLimitError: rate limited by the provider" if errored else None
    return searched_text(((name, None, None), (f"chat {model}", error, attributes)))


# -- building ----------------------------------------------------------------------------------


def build_sqlite(path: Path, now: int) -> tuple[int, int]:
    """The database at `path`; returns its size in bytes without and with the text index."""
    from tui.server.store.sqlite.store import Store

    store = Store(path)
    with store.transaction() as db:
        store.insert_project(db, "search", None, 3650, project_id=PROJECT)
    store.close()
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("PRAGMA cache_size = -500000")
    indexes = db.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
        "AND tbl_name = 'traces'"
    ).fetchall()
    for name, _ in indexes:
        db.execute(f'DROP INDEX "{name}"')
    insert = sqlite_insert(db, TraceRow)
    texts = []
    db.execute("BEGIN")
    batch = []
    for row, text in rows(now):
        batch.append(row)
        texts.append(text)
        if len(batch) == 20_000:
            db.executemany(insert, batch)
            batch = []
    db.executemany(insert, batch)
    db.execute("COMMIT")
    for _, sql in indexes:
        db.execute(sql)
    db.execute("ANALYZE")
    db.execute("VACUUM")
    without = path.stat().st_size
    ids = [r[0] for r in db.execute("SELECT id FROM traces ORDER BY rowid")]
    db.execute("PRAGMA journal_mode = WAL")
    db.close()
    # The text index lives in a file of its own (store/sqlite/textfile.py), made by the Store.
    index = sqlite3.connect(text_path(str(path)), isolation_level=None)
    index.execute("PRAGMA journal_mode = OFF")
    index.execute("PRAGMA synchronous = OFF")
    index.execute("PRAGMA cache_size = -500000")
    index.execute("BEGIN")
    # Keyed as the store keys them (search/sqlite.py), written by rowid: the store's own
    # writer looks each key up in a statement per trace (2x the FTS5 work, docs/benchmarks.md).
    index.executemany(
        "INSERT INTO trace_text_keys (id, project_id, trace_id) VALUES (?, ?, ?)",
        ((i + 1, PROJECT, trace_id) for i, trace_id in enumerate(ids)),
    )
    index.executemany(
        "INSERT INTO trace_texts (rowid, body) VALUES (?, ?)",
        ((i + 1, text) for i, text in enumerate(texts)),
    )
    index.execute("COMMIT")
    index.execute("INSERT INTO trace_texts (trace_texts) VALUES ('optimize')")
    index.execute("ANALYZE")
    index.execute("VACUUM")
    index.execute("PRAGMA journal_mode = WAL")
    index.close()
    return without, without + Path(text_path(str(path))).stat().st_size


def build_postgres(url: str, now: int) -> tuple[int, int]:
    """The database at `url` (empty); returns its size without and with the text index."""
    import psycopg

    from tui.server.store.postgres.store import PostgresStore

    store = PostgresStore(url)
    with store.transaction() as db:
        store.insert_project(db, "search", None, 3650, project_id=PROJECT)
    store.close()
    with psycopg.connect(url) as db:
        indexes = db.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'traces'"
            " AND indexname NOT LIKE '%pkey'"
        ).fetchall()
        for name, _ in indexes:
            db.execute(f'DROP INDEX "{name}"'.encode())
        copy = pg_copy(db, TraceRow, extra=("search_text",))
        pg_write(db.cursor(), copy, ((*row, text) for row, text in rows(now)))
        text_index = [d for n, d in indexes if n == "traces_by_text"]
        for name, definition in indexes:
            if name != "traces_by_text":
                db.execute(definition.encode())
        db.commit()
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("VACUUM (ANALYZE) traces")
        without = size_of(db)
        for definition in text_index:
            db.execute(definition.encode())
        db.execute("ANALYZE traces")
        return without, size_of(db)


def size_of(db: Any) -> int:
    row = db.execute("SELECT pg_database_size(current_database())").fetchone()
    return int(row[0])


SINGLE = {
    "status=error": TraceFilters(status="error"),
    "model=gpt-4o": TraceFilters(model="gpt-4o"),
    "name=workflow_3": TraceFilters(name="workflow_3"),
    "min_latency_ms=3000": TraceFilters(min_latency_ms=3000),
    "max_latency_ms=400": TraceFilters(max_latency_ms=400),
    "min_cost_usd=0.0005": TraceFilters(min_cost_usd=0.0005),
    "user_id (1 in 5,000)": TraceFilters(user_id="user-4321"),
    "session_id (5 traces)": TraceFilters(session_id="session-12345"),
    "tag=vip": TraceFilters(tags=("vip",)),
    "sort=duration_ms desc": TraceFilters(sort="duration_ms"),
    "sort=total_cost_usd asc": TraceFilters(sort="total_cost_usd", order="asc"),
    "sort=total_tokens desc": TraceFilters(sort="total_tokens"),
    "sort=started_at asc": TraceFilters(order="asc"),
}
TEXT = {
    "q=refund (1 in 4)": TraceFilters(q="refund"),
    'q="order 12" (about 1 in 100)': TraceFilters(q='"order 12"'),
    "q=RateLimitError norway (1 in 130)": TraceFilters(q="RateLimitError norway"),
    'input:"order 12" (about 1 in 100)': TraceFilters(inputs=("order 12",)),
    "output:refund (1 in 5)": TraceFilters(outputs=("refund",)),
    "input:refund output:billing (1 in 5)": TraceFilters(inputs=("refund",), outputs=("billing",)),
}
COMBINED = TraceFilters(status="ok", model="gpt-4o", min_latency_ms=1000, sort="duration_ms")


def matches(f: TraceFilters, text: str) -> bool:
    """Whether a trace of (folded, marked) `text` is kept by `f`'s text filters: the brute
    force the pages are checked against."""
    return (
        all(term in text for term in f.searched_terms)
        and all(in_part(text, INPUT, term) for term in f.inputs)
        and all(in_part(text, OUTPUT, term) for term in f.outputs)
    )


def first_page(f: TraceFilters, now: int) -> list[str]:
    """The ids of `f`'s first page, newest first, from the data made again: the first
    matches made (a few more, for traces of the same start) ordered as the listing orders."""
    found: list[tuple[int, str]] = []
    for row, text in rows(now):
        if matches(f, text):
            found.append((row.started_at, row.id))
            if len(found) == LIMIT + 10:
                break
    return [trace_id for _, trace_id in sorted(found, reverse=True)[:LIMIT]]


def measure(store: Any, backend: str, now: int, sizes: tuple[int, int]) -> list[Row]:
    start, end = now - 8 * 86_400_000, now + 1

    def first(f: TraceFilters) -> Callable[[], object]:
        return lambda: store.search_traces(PROJECT, f, start, end, LIMIT)

    found = []
    for label, f in SINGLE.items():
        ms = p95_ms(first(f), RUNS)
        found.append(Row(f"search {backend}: {label}", ms, 0, "ms", "p95 <= 50 ms", ms <= 50))
    for label, f in TEXT.items():
        got, _more = store.search_traces(PROJECT, f, start, end, LIMIT)
        want = first_page(f, now)
        assert [r.id for r in got] == want, f"{label}: not the brute force's first page"
        assert len(want) == LIMIT or TRACES < 100_000, f"{label}: {len(want)} traces found"
        ms = p95_ms(first(f), RUNS)
        found.append(Row(f"search {backend}: {label}", ms, 0, "ms", "p95 <= 200 ms", ms <= 200))
    after: SearchPosition | None = None
    rows: list[TraceSummary] = []
    for _ in range(DEEP_PAGES):
        rows, _more = store.search_traces(PROJECT, COMBINED, start, end, LIMIT, after)
        if not rows:
            break
        after = SearchPosition(sort_value(rows[-1], COMBINED), rows[-1].id)
    ms = p95_ms(lambda: store.search_traces(PROJECT, COMBINED, start, end, LIMIT, after), RUNS)
    found.append(
        Row(
            f"search {backend}: 4 filters, page {DEEP_PAGES + 1}",
            ms,
            0,
            "ms",
            "p95 <= 100 ms",
            ms <= 100,
        )
    )
    without, with_text = sizes
    found.append(Row(f"search {backend}: MB without text index", without / 1e6, 0, "MB", "-", True))
    found.append(Row(f"search {backend}: MB with text index", with_text / 1e6, 0, "MB", "-", True))
    return found


def run() -> list[Row]:
    now = int(time.time() * 1000)
    found: list[Row] = []
    folder = Path(tempfile.mkdtemp(prefix="tracetui-bench-search-"))
    path = folder / "search.sqlite3"
    started = time.perf_counter()
    sizes = build_sqlite(path, now)
    print(f"search: SQLite, {TRACES:,} traces built in {time.perf_counter() - started:.0f} s")
    from tui.server.store.sqlite.store import Store

    store = Store(path)
    try:
        found += measure(store, "sqlite", now, sizes)
    finally:
        store.close()
        for leftover in folder.glob("search.sqlite3*"):  # the text file's too
            leftover.unlink()
    found += run_postgres(now)
    return found


def run_postgres(now: int) -> list[Row]:
    from tests.perf.pg_server import bench_postgres
    from tui.server.store.postgres.store import PostgresStore

    with bench_postgres("search-bench") as server:
        server.execute('DROP DATABASE IF EXISTS "search" WITH (FORCE)')
        server.execute('CREATE DATABASE "search" TEMPLATE template0 OWNER tracetui')
        url = server.socket_url("search")
        started = time.perf_counter()
        sizes = build_postgres(url, now)
        print(
            f"search: PostgreSQL, {TRACES:,} traces built in {time.perf_counter() - started:.0f} s"
        )
        store = PostgresStore(url)
        try:
            return measure(store, "postgres", now, sizes)
        finally:
            store.close()
            server.execute('DROP DATABASE IF EXISTS "search" WITH (FORCE)')


if __name__ == "__main__":
    from tests.perf.report import print_table

    print_table(run())
