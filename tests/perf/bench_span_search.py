"""Span conditions (issue 43: `span(model:gpt-4o error latency>2s)`, GET /v1/traces's span_
filters) on million.py's 1,000,000 traces (3,000,000 spans: an agent root and two model calls
each, gpt-4o-mini then claude-3-5-haiku, the second failed in 3% of traces), on both backends:
the first page of conditions that many spans meet and of rarer ones (target p95 <= 50 ms), and a
span condition with a filter on the trace deep by cursor (<= 100 ms), each row naming the plan
store/span_search.py picked (`index`: the failed spans' index, `walk`: the traces walked in
order) and how many traces match.

Then the evidence for span_search.RARE_SPANS: a failed model call slower than a bound, for
bounds from common to rare, timed under each plan (the `index` figure against the `walk` one as
its floor: a ratio below 1 is where the index wins), with the count of matching failed spans
the choice is made on.

Timed as bench_search times (the store's search_traces, p95 of RUNS after one warm-up, the window
the whole week). Every page timed is first checked against the answer of a brute-force filter in
Python over the same rows (all spans read once, each condition evaluated on each span): the
bench never times an empty or a wrong answer.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

from tests.perf import million
from tests.perf.pg_server import bench_postgres
from tests.perf.report import Row, p95_ms
from tui.server.search.filters import TraceFilters
from tui.server.store import span_search
from tui.server.store.opening import open_store
from tui.server.store.rows import SearchPosition
from tui.server.store.search import sort_value

RUNS = 20
LIMIT = 100
DEEP_PAGES = 20
SWEEP_RUNS = 10
FULL = 1_000_000  # below this many traces (TINY) a page may rightly be empty
TINY = {"million.TRACES": 400, "RUNS": 2, "DEEP_PAGES": 2, "SWEEP_RUNS": 2}
HAIKU = "claude-3-5-haiku"
# The first page of each (target p95 <= 50 ms).
FIRST: dict[str, TraceFilters] = {
    f"span(model:{HAIKU} error)": TraceFilters(span_model=HAIKU, span_status="error"),
    "span(error latency>2s)": TraceFilters(span_status="error", span_min_latency_ms=2000),
    "span(error latency>4s)": TraceFilters(span_status="error", span_min_latency_ms=4000),
    "span(model:gpt-4o-mini latency>2s)": TraceFilters(
        span_model="gpt-4o-mini", span_min_latency_ms=2000
    ),
    "span(kind:llm latency>3s)": TraceFilters(span_kind="llm", span_min_latency_ms=3000),
    "span(kind:llm latency>5s)": TraceFilters(span_kind="llm", span_min_latency_ms=5000),
}
# Deep by cursor (target p95 <= 100 ms): a condition many spans meet, with one on the trace.
DEEP_LABEL = "span(model:gpt-4o-mini latency>2s) min_cost_usd=0.0007"
DEEP = TraceFilters(span_model="gpt-4o-mini", span_min_latency_ms=2000, min_cost_usd=0.0007)
# A failed call slower than each bound: from thousands of failed spans to a hundred.
SWEEP_MS = (1000, 1500, 1750, 2000, 2500, 3000)


def swept(bound: int) -> TraceFilters:
    return TraceFilters(span_model=HAIKU, span_status="error", span_min_latency_ms=bound)


# -- the brute-force answers ---------------------------------------------------------------------


@dataclass(frozen=True)
class Span:
    trace_id: str
    model: str | None
    name: str
    kind: str
    status: str
    duration_ms: int


def meets(span: Span, f: TraceFilters) -> bool:
    """Whether one span meets every span_ condition of `f` (filters.py's meaning, in Python)."""
    return (
        (f.span_model is None or (span.model or "").lower() == f.span_model.lower())
        and (f.span_name is None or span.name.lower() == f.span_name.lower())
        and (f.span_kind is None or span.kind == f.span_kind)
        and (f.span_status is None or span.status == f.span_status)
        and (f.span_min_latency_ms is None or span.duration_ms >= f.span_min_latency_ms)
        and (f.span_max_latency_ms is None or span.duration_ms <= f.span_max_latency_ms)
    )


def expected_orders(
    spans: Iterable[tuple[Any, ...]],
    traces: Iterable[tuple[Any, ...]],
    wanted: dict[str, TraceFilters],
    start: int,
    end: int,
) -> dict[str, list[str]]:
    """Each filter's traces, newest first (listed_at, then id, descending): from every span
    (trace_id, model, name, kind, status, duration_ms) and every trace (id, listed_at,
    total_cost_usd), read once each. Only the trace filters the bench uses are known here."""
    found: dict[str, set[str]] = {label: set() for label in wanted}
    for row in spans:
        span = Span(*row)
        for label, f in wanted.items():
            if meets(span, f):
                found[label].add(span.trace_id)
    listed: dict[str, list[tuple[int, str]]] = {label: [] for label in wanted}
    for trace_id, listed_at, cost in traces:
        if not start <= listed_at < end:
            continue
        for label, f in wanted.items():
            if trace_id in found[label] and (
                f.min_cost_usd is None or float(cost) >= f.min_cost_usd
            ):
                listed[label].append((int(listed_at), trace_id))
    plain = asdict(TraceFilters())
    for f in wanted.values():
        others = {k for k, v in asdict(f).items() if v != plain[k] and not k.startswith("span_")}
        assert f.has_span and others <= {"min_cost_usd"}, f"not known here: {others}"
    return {label: [i for _, i in sorted(pairs, reverse=True)] for label, pairs in listed.items()}


SPANS_SQL = "SELECT trace_id, model, name, kind, status, duration_ms FROM spans WHERE project_id = "
TRACES_SQL = "SELECT id, listed_at, total_cost_usd FROM traces WHERE project_id = "


def sqlite_answers(
    path: Any, wanted: dict[str, TraceFilters], start: int, end: int
) -> dict[str, list[str]]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        spans = db.execute(SPANS_SQL + "?", (million.PROJECT,))
        traces = db.execute(TRACES_SQL + "?", (million.PROJECT,))
        return expected_orders(spans, traces, wanted, start, end)
    finally:
        db.close()


def postgres_answers(
    url: str, wanted: dict[str, TraceFilters], start: int, end: int
) -> dict[str, list[str]]:
    import psycopg

    with psycopg.connect(url) as db:
        # Server-side cursors: the rows stream, never 3,000,000 of them held at once.
        spans = db.cursor(name="bench_spans")
        spans.execute(SPANS_SQL + "%s", (million.PROJECT,))
        traces = db.cursor(name="bench_traces")
        traces.execute(TRACES_SQL + "%s", (million.PROJECT,))
        return expected_orders(spans, traces, wanted, start, end)


def checked(ids: list[str], expected: list[str], label: str) -> None:
    """The page is the brute force's, and (at full size) not empty."""
    assert ids == expected, f"{label}: {ids[:3]}... is not the brute force's {expected[:3]}..."
    assert ids or million.TRACES < FULL, f"{label}: an empty page"


def plan_of(store: Any, f: TraceFilters) -> tuple[str, int | None]:
    """The plan store/span_search.py picks for `f` and the failed spans it counted (None: not
    counted, the condition is not on a failed span)."""
    with store._read() as db:
        rare = span_search.is_rare(db, store.dialect, million.PROJECT, f)
        if f.span_status != "error":
            return "walk", None
        sql, args = span_search.count_failed(store.dialect, million.PROJECT, f)
        counted = int(db.execute(sql, args).fetchone()[0])
    return ("index" if rare else "walk"), counted


def failed_spans(store: Any, f: TraceFilters) -> int:
    """All the failed spans that meet `f` (not bounded at RARE_SPANS)."""
    source, args = span_search.failed_spans(f)
    with store._read() as db:
        row = db.execute(store.dialect.sql(f"SELECT count(*) {source}"), [million.PROJECT, *args])
        return int(row.fetchone()[0])


def forced(rare_spans: int, fn: Callable[[], object]) -> Callable[[], object]:
    """`fn` with span_search.RARE_SPANS set to `rare_spans` while it runs (0: always walk)."""

    def call() -> object:
        kept = span_search.RARE_SPANS
        span_search.RARE_SPANS = rare_spans
        try:
            return fn()
        finally:
            span_search.RARE_SPANS = kept

    return call


def measure(
    store: Any, backend: str, now: int, answers: Callable[[dict[str, TraceFilters]], Any]
) -> list[Row]:
    start, end = now - 8 * 86_400_000, now + 1
    kept = 0  # the project's retention is longer than the data's age: nothing is past it

    def page(f: TraceFilters, after: SearchPosition | None = None) -> list[str]:
        rows, _more = store.search_traces(million.PROJECT, f, start, end, LIMIT, after, kept)
        return [row.id for row in rows]

    sweep = {f"sweep {bound}": swept(bound) for bound in SWEEP_MS}
    expected = answers({**FIRST, DEEP_LABEL: DEEP, **sweep})
    found = []
    for label, f in FIRST.items():
        checked(page(f), expected[label][:LIMIT], label)
        plan, counted = plan_of(store, f)
        ms = p95_ms(lambda f=f: page(f), RUNS)
        counts = f"{len(expected[label]):,} traces"
        if counted is not None:
            counts += f", {failed_spans(store, f):,} failed spans"
        found.append(
            Row(
                f"spans {backend}: {label} [{plan}; {counts}]",
                ms,
                0,
                "ms",
                "p95 <= 50 ms",
                ms <= 50,
            )
        )
    after: SearchPosition | None = None
    for _ in range(DEEP_PAGES):
        rows, _more = store.search_traces(million.PROJECT, DEEP, start, end, LIMIT, after, kept)
        if not rows:
            break
        after = SearchPosition(sort_value(rows[-1], DEEP), rows[-1].id)
    deep = DEEP_PAGES * LIMIT
    checked(page(DEEP, after), expected[DEEP_LABEL][deep : deep + LIMIT], DEEP_LABEL)
    ms = p95_ms(lambda: page(DEEP, after), RUNS)
    found.append(
        Row(
            f"spans {backend}: {DEEP_LABEL}, page {DEEP_PAGES + 1}"
            f" [walk; {len(expected[DEEP_LABEL]):,} traces]",
            ms,
            0,
            "ms",
            "p95 <= 100 ms",
            ms <= 100,
        )
    )
    for bound in SWEEP_MS:
        f = swept(bound)
        want = expected[f"sweep {bound}"][:LIMIT]
        walk, index = forced(0, lambda f=f: page(f)), forced(10**12, lambda f=f: page(f))
        checked(walk(), want, f"sweep {bound} walk")  # type: ignore[arg-type]
        checked(index(), want, f"sweep {bound} index")  # type: ignore[arg-type]
        chosen, _ = plan_of(store, f)
        found.append(
            Row(
                f"spans {backend}: {HAIKU} error >{bound} ms"
                f" [{failed_spans(store, f):,} failed; picks {chosen}]: index vs walk",
                p95_ms(index, SWEEP_RUNS),
                p95_ms(walk, SWEEP_RUNS),
                "ms",
                "report",
                True,
            )
        )
    return found


def run() -> list[Row]:
    out: list[Row] = []
    path, built = million.sqlite_database()
    store = open_store(str(path))
    try:

        def from_file(wanted: dict[str, TraceFilters]) -> Any:
            start, end = built.now - 8 * 86_400_000, built.now + 1
            return sqlite_answers(path, wanted, start, end)

        out += measure(store, "sqlite", built.now, from_file)
    finally:
        store.close()
    with bench_postgres(million.postgres_name()) as server:
        url = server.socket_url(million.DATABASE)
        built = million.postgres_database(url, server.execute)
        store = open_store(url)
        try:

            def from_server(wanted: dict[str, TraceFilters]) -> Any:
                start, end = built.now - 8 * 86_400_000, built.now + 1
                return postgres_answers(url, wanted, start, end)

            out += measure(store, "postgres", built.now, from_server)
        finally:
            store.close()
    return out


if __name__ == "__main__":
    from tests.perf.report import print_table

    print_table(run())
