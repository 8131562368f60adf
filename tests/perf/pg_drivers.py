"""Which PostgreSQL driver for the store: psycopg 3 (sync, its pool) or asyncpg (async only,
called from sync code through an event loop in a thread of its own), on our workload, on the
wheel's PostgreSQL (tests/support/postgres.py).

- Ingest: 50,000 LLM-like spans (16 columns, ~1 KB of JSON attributes each) into a spans
  table keyed by (project_id, trace_id, id), in batches of 500, one transaction a batch, each
  way a driver can upsert: one multi-row INSERT ... ON CONFLICT DO UPDATE; executemany of a
  one-row upsert (both drivers pipeline it); COPY into a temporary table, then INSERT ...
  SELECT ... ON CONFLICT. The floor: the same rows by one plain COPY, no conflict handling.
- Point read: one trace's 30 spans by (project_id, trace_id), 1,000 reads, p50 and p95; and
  the same from 4 threads at once (reads per second), which is how the service calls a store.
- Keyset page: 100 rows of a 200,000-trace table by (project_id, started_at desc, id) past a
  random cursor, 1,000 pages, p50 and p95.

`.venv/bin/python -m tests.perf.pg_drivers` prints one table (driver, operation,
figure); `make bench` includes its rows.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from tests.perf.report import Row
from tests.support.postgres import PostgresServer, running_postgres

SPANS = 50_000
SPANS_PER_TRACE = 30
BATCH = 500
READS = 1_000
TRACES = 200_000
PAGE = 100
THREADS = 4
POOL_SIZE = 8
PROJECT = "proj_bench"
RUNS = 3  # each ingest way: the median of RUNS passes

T = TypeVar("T")

COLUMNS = (
    *("project_id", "trace_id", "id", "parent_id", "name", "kind", "model", "started_at"),
    *("duration_ms", "input_tokens", "output_tokens", "cost_usd", "status", "error_message"),
    *("attributes", "cost_source"),
)
KEY = ("project_id", "trace_id", "id")
TYPES = ("text",) * 7 + ("int8",) * 4 + ("float8",) + ("text",) * 4  # COPY in binary

SCHEMA = """
CREATE TABLE spans (
    project_id text NOT NULL, trace_id text NOT NULL, id text NOT NULL, parent_id text,
    name text NOT NULL, kind text NOT NULL, model text, started_at bigint NOT NULL,
    duration_ms bigint NOT NULL, input_tokens bigint NOT NULL, output_tokens bigint NOT NULL,
    cost_usd double precision NOT NULL, status text NOT NULL, error_message text,
    attributes text NOT NULL, cost_source text,
    PRIMARY KEY (project_id, trace_id, id)
);
CREATE TABLE traces (
    project_id text NOT NULL, id text NOT NULL, name text NOT NULL, started_at bigint NOT NULL,
    duration_ms bigint NOT NULL, span_count integer NOT NULL, input_tokens bigint NOT NULL,
    output_tokens bigint NOT NULL, total_cost_usd double precision NOT NULL,
    status text NOT NULL, error_count integer NOT NULL, input_preview text,
    attributes text NOT NULL,
    PRIMARY KEY (project_id, id)
);
"""

UPDATE_SET = ", ".join(f"{c} = EXCLUDED.{c}" for c in COLUMNS if c not in KEY)
CONFLICT = f"ON CONFLICT ({', '.join(KEY)}) DO UPDATE SET {UPDATE_SET}"
STAGE = "CREATE TEMP TABLE IF NOT EXISTS staged (LIKE spans) ON COMMIT DELETE ROWS"
FROM_STAGE = f"INSERT INTO spans SELECT * FROM staged {CONFLICT}"
TRACE_SPANS = (
    "SELECT id, parent_id, name, kind, model, started_at, duration_ms, input_tokens, "
    "output_tokens, cost_usd, status, error_message, attributes, cost_source FROM spans "
    "WHERE project_id = {0} AND trace_id = {1} ORDER BY started_at, id"
)
TRACE_PAGE = (
    "SELECT id, name, started_at, duration_ms, span_count, input_tokens, output_tokens, "
    "total_cost_usd, status, error_count, input_preview FROM traces WHERE project_id = {0} "
    "AND (started_at, id) < ({1}, {2}) ORDER BY started_at DESC, id DESC LIMIT {3}"
)
FILL_TRACES = f"""
INSERT INTO traces
SELECT CASE WHEN n % 10 = 0 THEN 'proj_other' ELSE '{PROJECT}' END, md5(n::text),
    'chat ' || (n % 50), 1700000000000 + n * 1000 + (n * 7919) % 1000, (n * 31) % 20000,
    1 + n % 40, n % 5000, n % 800, (n % 1000) / 10000.0, CASE WHEN n % 23 = 0 THEN 'error'
    ELSE 'ok' END, (n % 23 = 0)::int, repeat('what does the user ask? ', 8),
    '{{"input": "' || repeat('x', 300) || '"}}'
FROM generate_series(1, {TRACES}) AS n;
CREATE INDEX traces_by_project_started ON traces (project_id, started_at DESC, id DESC);
ANALYZE traces;
"""

WORDS = ("the", "model", "answered", "a", "question", "about", "invoices", "tokens", "cost")


def span_rows(count: int, seed: int = 7) -> list[tuple[Any, ...]]:
    """LLM-like spans in traces of SPANS_PER_TRACE: a root and its model calls."""
    pick = random.Random(seed)
    rows = []
    for n in range(count):
        trace, position = divmod(n, SPANS_PER_TRACE)
        prompt = " ".join(pick.choices(WORDS, k=70))
        attributes = json.dumps(
            {
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.prompt": prompt,
                "gen_ai.completion": prompt[::-1],
                "llm.temperature": 0.2,
            }
        )
        rows.append(
            (
                PROJECT,
                f"{trace:032x}",
                f"{n:016x}",
                None if position == 0 else f"{trace * SPANS_PER_TRACE:016x}",
                "chat gpt-4o-mini" if position else "agent run",
                "llm" if position else "chain",
                "gpt-4o-mini" if position else None,
                1_700_000_000_000 + n * 10,
                pick.randrange(50, 4000),
                pick.randrange(10, 3000),
                pick.randrange(10, 800),
                pick.random() / 100,
                "ok" if n % 97 else "error",
                None if n % 97 else "rate limited",
                attributes,
                "reported" if position else None,
            )
        )
    return rows


def batches(rows: Sequence[tuple[Any, ...]]) -> Iterator[Sequence[tuple[Any, ...]]]:
    for start in range(0, len(rows), BATCH):
        yield rows[start : start + BATCH]


def multirow_insert(count: int, mark: Callable[[int], str]) -> str:
    width = len(COLUMNS)
    values = ", ".join(
        "(" + ", ".join(mark(r * width + c) for c in range(width)) + ")" for r in range(count)
    )
    return f"INSERT INTO spans ({', '.join(COLUMNS)}) VALUES {values} {CONFLICT}"


def percentile(times: list[float], share: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000


def timed_each(calls: int, call: Callable[[int], object]) -> list[float]:
    times = []
    for n in range(calls):
        start = time.perf_counter()
        call(n)
        times.append(time.perf_counter() - start)
    return times


class Figures:
    """The measured rows: driver, operation, figure, unit."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, float, str]] = []

    def add(self, driver: str, operation: str, figure: float, unit: str) -> None:
        self.rows.append((driver, operation, figure, unit))
        print(f"  {driver:<28} {operation:<50} {figure:>10.2f} {unit}", flush=True)

    def get(self, driver: str, operation: str) -> float:
        return next(f for d, o, f, _ in self.rows if d == driver and o == operation)


# psycopg 3 ---------------------------------------------------------------------------------


def bench_psycopg(
    server: PostgresServer, url: str, rows: list[tuple[Any, ...]], out: Figures
) -> None:
    from psycopg_pool import ConnectionPool

    driver = "psycopg 3.3 (sync)"
    with ConnectionPool(url, min_size=THREADS, max_size=POOL_SIZE, open=True) as pool:

        def ingest(name: str, write: Callable[[Any, Sequence[tuple[Any, ...]]], None]) -> None:
            rates = []
            for _ in range(RUNS):
                with pool.connection() as connection:
                    connection.execute("TRUNCATE spans")
                start = time.perf_counter()
                for batch in batches(rows):
                    with pool.connection() as connection, connection.transaction():
                        write(connection, batch)
                rates.append(len(rows) / (time.perf_counter() - start))
            out.add(driver, f"ingest: {name}", statistics.median(rates), "spans/s")

        def multirow(connection: Any, batch: Sequence[tuple[Any, ...]]) -> None:
            sql = multirow_insert(len(batch), lambda _: "%s")
            connection.execute(sql.encode(), [v for row in batch for v in row])

        def many(connection: Any, batch: Sequence[tuple[Any, ...]]) -> None:
            with connection.cursor() as cursor:
                cursor.executemany(multirow_insert(1, lambda _: "%s").encode(), batch)

        def copy(connection: Any, batch: Sequence[tuple[Any, ...]]) -> None:
            connection.execute(STAGE)
            with connection.cursor() as cursor:
                with cursor.copy(f"COPY staged ({', '.join(COLUMNS)}) FROM STDIN".encode()) as c:
                    for row in batch:
                        c.write_row(row)
                cursor.execute(FROM_STAGE.encode())

        def copy_binary(connection: Any, batch: Sequence[tuple[Any, ...]]) -> None:
            connection.execute(STAGE)
            with connection.cursor() as cursor:
                names = ", ".join(COLUMNS)
                with cursor.copy(f"COPY staged ({names}) FROM STDIN (FORMAT BINARY)".encode()) as c:
                    c.set_types(list(TYPES))
                    for row in batch:
                        c.write_row(row)
                cursor.execute(FROM_STAGE.encode())

        def many_binary(connection: Any, batch: Sequence[tuple[Any, ...]]) -> None:
            with connection.cursor(binary=True) as cursor:
                cursor.executemany(multirow_insert(1, lambda _: "%b").encode(), batch)

        ingest("multi-row INSERT ON CONFLICT", multirow)
        ingest("executemany (pipelined) ON CONFLICT", many)
        ingest("binary executemany (pipelined) ON CONFLICT", many_binary)
        ingest("COPY to temp + INSERT SELECT ON CONFLICT", copy)
        ingest("binary COPY to temp + INSERT SELECT ON CONFLICT", copy_binary)

        with pool.connection() as connection:
            connection.execute("TRUNCATE spans")
            start = time.perf_counter()
            with (
                connection.cursor() as cursor,
                cursor.copy(f"COPY spans ({', '.join(COLUMNS)}) FROM STDIN".encode()) as c,
            ):
                for row in rows:
                    c.write_row(row)
            out.add(
                driver,
                "floor: one plain COPY of all spans",
                len(rows) / (time.perf_counter() - start),
                "spans/s",
            )
            connection.execute("ANALYZE spans")

        trace_ids = sorted({row[1] for row in rows})
        pick = random.Random(11)
        span_sql = TRACE_SPANS.format("%s", "%s").encode()

        def point(_: int) -> None:
            with pool.connection() as connection:
                found = connection.execute(span_sql, (PROJECT, pick.choice(trace_ids))).fetchall()
            assert len(found) == SPANS_PER_TRACE

        times = timed_each(READS, point)
        out.add(driver, "point read: a trace's 30 spans, p50", percentile(times, 0.5), "ms")
        out.add(driver, "point read: a trace's 30 spans, p95", percentile(times, 0.95), "ms")
        start = time.perf_counter()
        with ThreadPoolExecutor(THREADS) as threads:
            list(threads.map(point, range(2 * READS)))
        out.add(
            driver,
            f"point reads from {THREADS} threads",
            2 * READS / (time.perf_counter() - start),
            "reads/s",
        )

        keys = keyset_positions(server, url)
        page_sql = TRACE_PAGE.format("%s", "%s", "%s", "%s").encode()

        def page(n: int) -> None:
            started_at, trace_id = keys[n % len(keys)]
            with pool.connection() as connection:
                found = connection.execute(
                    page_sql, (PROJECT, started_at, trace_id, PAGE)
                ).fetchall()
            assert len(found) == PAGE

        times = timed_each(READS, page)
        out.add(driver, "keyset page of 100 of 200k traces, p50", percentile(times, 0.5), "ms")
        out.add(driver, "keyset page of 100 of 200k traces, p95", percentile(times, 0.95), "ms")


def keyset_positions(server: PostgresServer, url: str) -> list[tuple[int, str]]:
    """Random cursors (started_at, id) of the project, each with at least a page after it."""
    import psycopg

    with psycopg.connect(url) as connection:
        keys = connection.execute(
            "SELECT started_at, id FROM traces WHERE project_id = %s ORDER BY started_at DESC, id DESC",
            (PROJECT,),
        ).fetchall()
    usable = keys[: len(keys) - PAGE]
    return random.Random(13).sample(usable, READS)


# asyncpg -----------------------------------------------------------------------------------


class LoopThread:
    """An event loop in a thread of its own: how sync code (the store's protocol, called
    from request threads and worker processes) would call asyncpg."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


def bench_asyncpg(
    url: str, rows: list[tuple[Any, ...]], keys: list[tuple[int, str]], out: Figures
) -> None:
    import asyncpg

    driver = "asyncpg 0.32 (sync bridge)"
    bridge = LoopThread()

    async def open_pool() -> Any:
        return await asyncpg.create_pool(url, min_size=THREADS, max_size=POOL_SIZE)

    pool = bridge.run(open_pool())
    try:

        async def write_all(
            write: Callable[[Any, Sequence[tuple[Any, ...]]], Coroutine[Any, Any, None]],
            batch: Sequence[tuple[Any, ...]],
        ) -> None:
            async with pool.acquire() as connection, connection.transaction():
                await write(connection, batch)

        def ingest(
            name: str, write: Callable[[Any, Sequence[tuple[Any, ...]]], Coroutine[Any, Any, None]]
        ) -> None:
            rates = []
            for _ in range(RUNS):
                bridge.run(pool.execute("TRUNCATE spans"))
                start = time.perf_counter()
                for batch in batches(rows):
                    bridge.run(write_all(write, batch))
                rates.append(len(rows) / (time.perf_counter() - start))
            out.add(driver, f"ingest: {name}", statistics.median(rates), "spans/s")

        async def multirow(connection: Any, batch: Sequence[tuple[Any, ...]]) -> None:
            sql = multirow_insert(len(batch), lambda n: f"${n + 1}")
            await connection.execute(sql, *[v for row in batch for v in row])

        async def many(connection: Any, batch: Sequence[tuple[Any, ...]]) -> None:
            await connection.executemany(multirow_insert(1, lambda n: f"${n + 1}"), batch)

        async def copy(connection: Any, batch: Sequence[tuple[Any, ...]]) -> None:
            await connection.execute(STAGE)
            await connection.copy_records_to_table("staged", records=batch, columns=list(COLUMNS))
            await connection.execute(FROM_STAGE)

        ingest("multi-row INSERT ON CONFLICT", multirow)
        ingest("executemany (pipelined) ON CONFLICT", many)
        ingest("COPY to temp + INSERT SELECT ON CONFLICT", copy)

        trace_ids = sorted({row[1] for row in rows})
        pick = random.Random(11)
        span_sql = TRACE_SPANS.format("$1", "$2")

        async def read_trace() -> None:
            found = await pool.fetch(span_sql, PROJECT, pick.choice(trace_ids))
            assert len(found) == SPANS_PER_TRACE

        def point(_: int) -> None:
            bridge.run(read_trace())

        times = timed_each(READS, point)
        out.add(driver, "point read: a trace's 30 spans, p50", percentile(times, 0.5), "ms")
        out.add(driver, "point read: a trace's 30 spans, p95", percentile(times, 0.95), "ms")
        start = time.perf_counter()
        with ThreadPoolExecutor(THREADS) as threads:
            list(threads.map(point, range(2 * READS)))
        out.add(
            driver,
            f"point reads from {THREADS} threads",
            2 * READS / (time.perf_counter() - start),
            "reads/s",
        )

        async def native_reads() -> list[float]:
            times = []
            for _ in range(READS):
                start = time.perf_counter()
                await read_trace()
                times.append(time.perf_counter() - start)
            return times

        times = bridge.run(native_reads())
        out.add(
            "asyncpg 0.32 (in its loop)",
            "point read: a trace's 30 spans, p50",
            percentile(times, 0.5),
            "ms",
        )
        out.add(
            "asyncpg 0.32 (in its loop)",
            "point read: a trace's 30 spans, p95",
            percentile(times, 0.95),
            "ms",
        )

        page_sql = TRACE_PAGE.format("$1", "$2", "$3", "$4")

        async def read_page(n: int) -> None:
            started_at, trace_id = keys[n % len(keys)]
            found = await pool.fetch(page_sql, PROJECT, started_at, trace_id, PAGE)
            assert len(found) == PAGE

        times = timed_each(READS, lambda n: bridge.run(read_page(n)))
        out.add(driver, "keyset page of 100 of 200k traces, p50", percentile(times, 0.5), "ms")
        out.add(driver, "keyset page of 100 of 200k traces, p95", percentile(times, 0.95), "ms")
    finally:
        bridge.run(pool.close())
        bridge.close()


# The run -----------------------------------------------------------------------------------


def measure() -> Figures:
    import psycopg

    out = Figures()
    rows = span_rows(SPANS)
    size = statistics.mean(len(row[14]) for row in rows)
    print(f"pg drivers: {SPANS} spans (attributes {size:.0f} bytes on average), batches of {BATCH}")
    with running_postgres() as server:
        database = server.create_database()
        url = server.socket_url(database)
        with psycopg.connect(url) as connection:
            connection.execute(SCHEMA.encode())
            connection.execute(FILL_TRACES.encode())
        bench_psycopg(server, url, rows, out)
        bench_asyncpg(url, rows, keyset_positions(server, url), out)
    return out


def run() -> list[Row]:
    out = measure()
    psycopg_name, asyncpg_name = "psycopg 3.3 (sync)", "asyncpg 0.32 (sync bridge)"
    floor = out.get(psycopg_name, "floor: one plain COPY of all spans")
    rows = []
    for driver, short in ((psycopg_name, "psycopg"), (asyncpg_name, "asyncpg")):
        best = max(f for d, o, f, _ in out.rows if d == driver and o.startswith("ingest: "))
        rows.append(
            Row(
                f"pg {short}: best upsert vs plain COPY (k/s)",
                best / 1000,
                floor / 1000,
                "k",
                "info",
                True,
            )
        )
        for operation, label in (
            ("point read: a trace's 30 spans, p95", "a trace's spans p95"),
            ("keyset page of 100 of 200k traces, p95", "keyset page p95"),
        ):
            rows.append(
                Row(f"pg {short}: {label}", out.get(driver, operation), 0, "ms", "info", True)
            )
    return rows


def main() -> int:
    out = measure()
    print()
    print(f"{'driver':<28} {'operation':<50} {'figure':>10}")
    print("-" * 96)
    for driver, operation, figure, unit in out.rows:
        print(f"{driver:<28} {operation:<50} {figure:>10.2f} {unit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
