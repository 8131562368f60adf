"""Conditions on one span (`span_` filters) and text in a trace's inputs or outputs alone (`input`,
`output`), on both stores (`store` is parametrised: conftest.py), against the same worked out
in Python over traces stored by ingest: every sort and order, paged by cursor, by either plan
(the failed spans' index or the walk in order; the text index's rare or common plan), alone and
with the other filters."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui.server.search.filters import SORTS, TraceFilters
from tui.server.store import span_search
from tui.server.store.postgres import search as postgres_search
from tui.server.store.rows import SearchPosition, SpanGroup, SpanRow
from tui.server.store.search import sort_value, trace_page
from tui.server.store.sqlite import search as sqlite_search

NOW = 1_795_000_000_000
START, END = NOW - 100_000, NOW
# Texts are stored folded and terms searched folded (search.text.folded): "STRAßE" finds
# "Straße" as "strasse", "école" finds "ÉCOLE".
ASKED = ["Where is my refund", "ORDER status please", "cancel the order to the Straße"]
ANSWERED = ["A refund is on its way", "your order shipped to the ÉCOLE", "Sorry, I cannot cancel"]


@dataclass(frozen=True)
class Part:
    """One span of a trace: what the span conditions and the text look at."""

    name: str
    kind: str
    model: str | None
    status: str
    duration: int
    asked: str | None  # its input.value
    answered: str | None  # its output.value


@dataclass(frozen=True)
class Made:
    id: str
    start: int
    parts: tuple[Part, ...]

    def spans(self) -> list[SpanRow]:
        rows = []
        for n, part in enumerate(self.parts):
            attributes: dict[str, Any] = {}
            if part.asked:
                attributes["input.value"] = part.asked
            if part.answered:
                attributes["output.value"] = part.answered
            rows.append(
                SpanRow(
                    self.id,
                    f"s{n}",
                    None if n == 0 else "s0",
                    part.name,
                    part.kind,
                    part.model,
                    self.start + n,
                    part.duration,
                    0,
                    0,
                    0.0,
                    part.status,
                    "failed" if part.status == "error" else None,
                    json.dumps(attributes),
                )
            )
        return rows

    @property
    def duration(self) -> int:
        return max(n + p.duration for n, p in enumerate(self.parts))


parts = st.builds(
    Part,
    st.sampled_from(["call", "Lookup", "plan"]),
    st.sampled_from(["llm", "tool", "retrieval", "chain"]),
    st.sampled_from([None, "gpt-4o", "GPT-4o-mini", "claude-3"]),
    st.sampled_from(["ok", "ok", "error"]),
    st.sampled_from([5, 100, 2_500]),
    st.sampled_from([None, *ASKED]),
    st.sampled_from([None, *ANSWERED]),
)


def traces(count: int) -> st.SearchStrategy[list[Made]]:
    one = st.builds(
        lambda start, found: (start, tuple(found)),
        st.integers(0, 90_000),
        st.lists(parts, min_size=1, max_size=4),
    )
    return st.lists(one, max_size=count).map(
        lambda found: [Made(f"{i:032x}", START + s, p) for i, (s, p) in enumerate(found)]
    )


def meets(part: Part, f: TraceFilters) -> bool:
    return (
        (f.span_model is None or (part.model or "").lower() == f.span_model.lower())
        and (f.span_model is None or part.model is not None)
        and (f.span_name is None or part.name.lower() == f.span_name.lower())
        and (f.span_kind is None or part.kind == f.span_kind)
        and (f.span_status is None or part.status == f.span_status)
        and (f.span_min_latency_ms is None or part.duration >= f.span_min_latency_ms)
        and (f.span_max_latency_ms is None or part.duration <= f.span_max_latency_ms)
    )


def matches(made: Made, f: TraceFilters) -> bool:
    asked = " ".join(p.asked or "" for p in made.parts).casefold()
    answered = " ".join(p.answered or "" for p in made.parts).casefold()
    models = {p.model.lower() for p in made.parts if p.model}
    failed = any(p.status == "error" for p in made.parts)
    return (
        (not f.has_span or any(meets(p, f) for p in made.parts))
        and all(term.casefold() in asked for term in f.inputs)
        and all(term.casefold() in answered for term in f.outputs)
        and (f.status is None or failed == (f.status == "error"))
        and (f.model is None or f.model.lower() in models)
        and (f.min_latency_ms is None or made.duration >= f.min_latency_ms)
    )


def key_of(made: Made, f: TraceFilters) -> Any:
    value = {"started_at": made.start, "duration_ms": made.duration}.get(f.sort, 0)
    return (value, made.id)


def expected(found: list[Made], f: TraceFilters) -> list[str]:
    kept = sorted((m for m in found if matches(m, f)), key=lambda m: key_of(m, f))
    if f.order == "desc":
        kept.reverse()
    return [m.id for m in kept]


def store_all(store: Any, project: str, found: list[Made]) -> None:
    with store.transaction() as db:
        store.insert_project(db, project, None, 30, project_id=project)
    if found:
        spans = [span for made in found for span in made.spans()]
        store.ingest([[SpanGroup(project, None, "{}", spans)]])
    store.index_texts()  # SQLite indexes the text off ingest's path (store/texts.py)


def walk(store: Any, project: str, f: TraceFilters, limit: int) -> list[str]:
    seen: list[str] = []
    after: SearchPosition | None = None
    for _ in range(1000):
        rows, more = store.search_traces(project, f, START, END, limit, after)
        seen += [r.id for r in rows]
        if not more:
            return seen
        after = SearchPosition(sort_value(rows[-1], f), rows[-1].id)
    raise AssertionError("no last page")


@pytest.fixture(params=["index", "walk"])
def plan(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Which plan every search takes: the indexes first (a failed span's, the text's rare
    plan), or the traces walked in order (never rare; the text common, scanned whole)."""
    index = request.param == "index"
    monkeypatch.setattr(span_search, "RARE_SPANS", 10**9 if index else 0)
    monkeypatch.setattr(sqlite_search, "COMMON_MATCHES", 10**9 if index else 0)
    monkeypatch.setattr(postgres_search, "SCAN", 0 if index else 10**6)
    yield request.param


FIXED = [
    TraceFilters(span_model="gpt-4o", span_status="error"),
    TraceFilters(span_model="GPT-4O", span_status="error", span_min_latency_ms=2000),
    TraceFilters(span_status="error", span_kind="tool"),
    TraceFilters(span_status="error"),
    TraceFilters(span_model="claude-3", span_min_latency_ms=100, span_max_latency_ms=100),
    TraceFilters(span_name="LOOKUP", span_status="ok"),
    TraceFilters(span_kind="retrieval", span_max_latency_ms=5),
    TraceFilters(inputs=("refund",)),
    TraceFilters(outputs=("REFUND",)),
    TraceFilters(inputs=("order",), outputs=("shipped",)),
    TraceFilters(inputs=("where is my",), q="refund"),
    TraceFilters(inputs=("STRAßE",)),
    TraceFilters(outputs=("école",), span_status="error"),
    TraceFilters(span_model="gpt-4o", span_status="error", model="claude-3", status="error"),
    TraceFilters(span_status="error", min_latency_ms=2000, outputs=("sorry",)),
]


def fixed_traces() -> list[Made]:
    """Traces covering every value of every condition, the conditions each met by some span
    alone and by no span together, as often as together."""
    values = list(
        itertools.product(
            ["call", "Lookup"],
            ["llm", "tool", "retrieval"],
            [None, "gpt-4o", "claude-3"],
            ["ok", "error"],
            [5, 100, 2_500],
        )
    )
    found = []
    for i in range(90):
        chosen = [values[(i * 7 + j * 13) % len(values)] for j in range(1 + i % 3)]
        made_parts = tuple(
            Part(*v, ASKED[(i + j) % 3] if (i + j) % 2 else None, ANSWERED[(i + 2 * j) % 3])
            for j, v in enumerate(chosen)
        )
        found.append(Made(f"{i:032x}", START + (i * 7919) % 80 * 1000, made_parts))
    return found


def test_every_span_and_text_condition_pages_to_what_python_finds(store: Any, plan: str) -> None:
    found = fixed_traces()
    store_all(store, "p-fixed", found)
    orders = list(itertools.product(SORTS, ("desc", "asc")))
    for f in FIXED:
        want = expected(found, f)
        assert want or f.status == "error", f"{f} finds nothing: a weak case"
        for sort, order in orders:
            ordered = TraceFilters(
                **{
                    **f.to_json(),
                    "sort": sort,
                    "order": order,
                    "inputs": f.inputs,
                    "outputs": f.outputs,
                }
            )
            if sort in ("started_at", "duration_ms"):
                assert walk(store, "p-fixed", ordered, limit=4) == expected(found, ordered), ordered
            else:  # costs and tokens are all 0: ties by id, the set is what counts
                assert sorted(walk(store, "p-fixed", ordered, limit=4)) == sorted(want), ordered


CHOICES: dict[str, list[Any]] = {
    "span_model": ["gpt-4o", "claude-3", "GPT-4o-mini"],
    "span_name": ["lookup", "call"],
    "span_kind": ["tool", "llm"],
    "span_status": ["error", "ok"],
    "span_min_latency_ms": [100.0, 2_500.0],
    "span_max_latency_ms": [5.0, 100.0],
    "inputs": [("refund",), ("order",), ("cancel", "order"), ("STRAßE",)],
    "outputs": [("refund",), ("sorry",), ("école",)],
    "status": ["error"],
}


@st.composite
def filters(draw: st.DrawFn) -> TraceFilters:
    chosen = draw(st.lists(st.sampled_from(sorted(CHOICES)), min_size=1, unique=True, max_size=3))
    values = {name: draw(st.sampled_from(CHOICES[name])) for name in chosen}
    sort = draw(st.sampled_from(["started_at", "duration_ms"]))
    return TraceFilters(**values, sort=sort, order=draw(st.sampled_from(["desc", "asc"])))


counter = itertools.count()


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(found=traces(30), f=filters(), limit=st.integers(1, 5))
def test_any_conditions_page_to_what_python_finds(
    store: Any, plan: str, found: list[Made], f: TraceFilters, limit: int
) -> None:
    project = f"p{next(counter)}"
    store_all(store, project, found)
    assert walk(store, project, f, limit) == expected(found, f)


def test_the_walk_asks_each_trace_of_its_own_spans(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk's plan stays a walk: each trace, in order, asked whether one of its own spans
    (its spans_by_trace_time prefix) meets the conditions. PostgreSQL would otherwise make the
    EXISTS a join and, taking the conditions for rare (it has no statistics of lower(model)),
    read every matching span and sort their traces: 1.6 s on 1,000,000 traces where the walk
    takes 20 ms (tests/perf/bench_span_search.py); or probe each trace through the failed
    spans' index, whose model prefix holds every failed call of the model."""
    monkeypatch.setattr(span_search, "RARE_SPANS", 0)
    store_all(store, "p-plan", fixed_traces())
    postgres = store.dialect.name == "postgres"
    for f in (
        TraceFilters(span_model="gpt-4o", span_status="error"),
        TraceFilters(span_model="gpt-4o", span_min_latency_ms=2000, min_cost_usd=0.0),
        TraceFilters(span_kind="llm", span_status="error", sort="duration_ms"),
    ):
        sql, args = trace_page(store.dialect, "p-plan", f, START, END, 10, None, None)
        with store._read() as db:
            if postgres:
                db.execute(b"SET LOCAL enable_seqscan = off")  # the indexes, as on big tables
                plan = "\n".join(r[0] for r in db.execute(b"EXPLAIN " + sql.encode(), args))
                assert "SubPlan" in plan and "Semi Join" not in plan, plan
            else:
                plan = "\n".join(r[-1] for r in db.execute("EXPLAIN QUERY PLAN " + sql, args))
                assert "CORRELATED" in plan, plan
        assert "spans_by_trace_time" in plan and "spans_failed" not in plan, plan


def test_postgres_plans_each_listing_for_its_own_values(backend: str, open_store: Any) -> None:
    """A listing's statement is never prepared on PostgreSQL (psycopg prepares one run 5 times
    on a connection): the generic plan of a prepared statement knows neither bounds nor
    status, and once it took over, a span condition with a trace filter deep by cursor went
    from 15 ms to 4 s on 1,000,000 traces (tests/perf/bench_span_search.py)."""
    if backend != "postgres":
        pytest.skip("SQLite plans each statement for its values: no generic plan to avoid")
    store = open_store(pool_size=1)  # one connection: what it prepared is what it holds
    found = fixed_traces()
    store_all(store, "p-prepared", found)
    for f in (
        TraceFilters(span_model="gpt-4o", span_min_latency_ms=100, min_cost_usd=0.0),
        TraceFilters(span_status="error", outputs=("sorry",)),
    ):
        for _ in range(12):
            assert walk(store, "p-prepared", f, limit=2) == expected(found, f)
    with store._read() as db:
        prepared = [row[0] for row in db.execute(b"SELECT statement FROM pg_prepared_statements")]
    assert not [sql for sql in prepared if "FROM traces" in sql], prepared
