"""The filtered and sorted trace listing of both stores (search/), against the same filters
worked out in Python over the whole set: every filter and sort alone, and (hypothesis) any
combination paged by cursor while traces arrive between pages."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui.server.search.filters import SORTS, TraceFilters
from tui.server.store.rows import SearchPosition, SpanGroup, SpanRow, TraceRow
from tui.server.store.search import sort_value

NOW = 1_795_000_000_000
START, END = NOW - 10_000, NOW
WORDS = ["refund", "Alpha", "bravo", "charlie", "delta"]


@dataclass(frozen=True)
class Spec:
    """A trace to store, and what the filters look at."""

    id: str
    listed_at: int
    duration_ms: int
    cost: float
    tokens: int
    status: str
    name: str
    user_id: str | None
    session_id: str | None
    tags: tuple[str, ...]
    models: tuple[str, ...]
    text: str

    def row(self, project_id: str) -> TraceRow:
        return TraceRow(
            self.id,
            project_id,
            self.name,
            self.listed_at,
            self.duration_ms,
            1,
            self.tokens,
            1,
            self.cost,
            self.status,
            int(self.status == "error"),
            "{}",
            self.listed_at,
            None,
            self.user_id,
            self.session_id,
            json.dumps(list(self.tags)),
            None,
            json.dumps([m.lower() for m in self.models]),
        )


def specs(count: int, offset: int = 0, spread: int = 9_000) -> st.SearchStrategy[list[Spec]]:
    one = st.builds(
        lambda n, listed, duration, cost, tokens, status, name, user, session, tags, models, text: (
            Spec(
                f"{n:032x}",
                START + listed,
                duration,
                cost,
                tokens,
                status,
                name,
                user,
                session,
                tuple(tags),
                tuple(models),
                text,
            )
        ),
        st.just(0),
        st.integers(0, spread),
        st.sampled_from([0, 5, 100, 2_500]),
        st.sampled_from([0.0, 0.5, 1.25, 0.000001]),
        st.sampled_from([0, 2, 40]),
        st.sampled_from(["ok", "error"]),
        st.sampled_from(["chat", "Agent run"]),
        st.sampled_from([None, "alice", "bob"]),
        st.sampled_from([None, "s1", "s2"]),
        st.lists(st.sampled_from(["prod", "beta", "x"]), unique=True, max_size=2),
        st.lists(st.sampled_from(["gpt-4o", "Claude-3"]), unique=True, max_size=2),
        st.lists(st.sampled_from(WORDS), max_size=3).map(" ".join),
    )
    return st.lists(one, max_size=count).map(
        lambda found: [replace(s, id=f"{offset + i:032x}") for i, s in enumerate(found)]
    )


def matches(spec: Spec, f: TraceFilters) -> bool:
    text = spec.text.lower()
    return (
        all(term.lower() in text for term in f.terms)
        and (f.status is None or spec.status == f.status)
        and (f.model is None or f.model.lower() in [m.lower() for m in spec.models])
        and (f.name is None or spec.name.lower() == f.name.lower())
        and (f.min_latency_ms is None or spec.duration_ms >= f.min_latency_ms)
        and (f.max_latency_ms is None or spec.duration_ms <= f.max_latency_ms)
        and (f.min_cost_usd is None or spec.cost >= f.min_cost_usd)
        and (f.user_id is None or spec.user_id == f.user_id)
        and (f.session_id is None or spec.session_id == f.session_id)
        and all(tag in spec.tags for tag in f.tags)
        and START <= spec.listed_at < END
    )


def key_of(spec: Spec, f: TraceFilters) -> Any:
    value = {
        "started_at": spec.listed_at,
        "duration_ms": spec.duration_ms,
        "total_cost_usd": spec.cost,
        "total_tokens": spec.tokens + 1,
    }[f.sort]
    return (value, spec.id)


def expected(found: list[Spec], f: TraceFilters) -> list[str]:
    kept = sorted((s for s in found if matches(s, f)), key=lambda s: key_of(s, f))
    if f.order == "desc":
        kept.reverse()
    return [s.id for s in kept]


def insert(store: Any, project_id: str, found: list[Spec]) -> None:
    with store.transaction() as db:
        store.insert_traces(
            db,
            [s.row(project_id) for s in found],
            texts=[(project_id, s.id, s.text) for s in found],
        )


def walk(
    store: Any, project_id: str, f: TraceFilters, limit: int, between: list[list[Spec]] = ()
) -> list[str]:
    """Every page's ids in order, inserting `between`'s batches before each later page."""
    seen: list[str] = []
    after: SearchPosition | None = None
    arriving = iter(between)
    for _ in range(1000):
        rows, more = store.search_traces(project_id, f, START, END, limit, after)
        assert len(rows) <= limit
        seen += [r.id for r in rows]
        if not more:
            return seen
        after = SearchPosition(sort_value(rows[-1], f), rows[-1].id)
        batch = next(arriving, None)
        if batch:
            insert(store, project_id, batch)
    raise AssertionError("no last page")


SINGLE_FILTERS = [
    TraceFilters(q="refund"),
    TraceFilters(q="alpha bravo"),
    TraceFilters(q='"fund alp"'),
    TraceFilters(status="error"),
    TraceFilters(status="ok"),
    TraceFilters(model="GPT-4o"),
    TraceFilters(name="agent RUN"),
    TraceFilters(min_latency_ms=100),
    TraceFilters(max_latency_ms=5),
    TraceFilters(min_cost_usd=0.5),
    TraceFilters(user_id="alice"),
    TraceFilters(session_id="s2"),
    TraceFilters(tags=("prod",)),
    TraceFilters(tags=("prod", "beta")),
]


def test_every_filter_and_sort_alone_pages_to_what_python_finds(store: Any) -> None:
    project = "p-alone"
    with store.transaction() as db:
        store.insert_project(db, project, None, 30, project_id=project)
    found = fixed_specs()
    insert(store, project, found)
    orders = [TraceFilters(sort=s, order=o) for s, o in itertools.product(SORTS, ("desc", "asc"))]
    for f in [*SINGLE_FILTERS, *orders]:
        assert walk(store, project, f, limit=4) == expected(found, f), f


def fixed_specs() -> list[Spec]:
    """Sixty traces covering every value of every filter, with ties in every sort."""
    found = []
    for i in range(60):
        found.append(
            Spec(
                f"{i:032x}",
                START + (i * 7919) % 50 * 100,
                [0, 5, 100, 2_500][i % 4],
                [0.0, 0.5, 1.25][i % 3],
                [0, 2, 40][i % 3],
                "error" if i % 5 == 0 else "ok",
                "Agent run" if i % 2 else "chat",
                [None, "alice", "bob"][i % 3],
                [None, "s1", "s2"][i % 3 if i % 2 else 0],
                (("prod",), ("prod", "beta"), (), ("beta",))[i % 4],
                (("gpt-4o",), ("Claude-3",), ("gpt-4o", "Claude-3"), ())[i % 4],
                " ".join(WORDS[j] for j in range(len(WORDS)) if (i >> j) & 1),
            )
        )
    return found


CHOICES: dict[str, list[Any]] = {
    "q": ["refund", "ALPHA", "lta", "ravo cha"],
    "status": ["ok", "error"],
    "model": ["gpt-4o", "claude-3"],
    "name": ["chat"],
    "min_latency_ms": [5.0, 100.0],
    "max_latency_ms": [100.0],
    "min_cost_usd": [0.5, 0.000001],
    "user_id": ["alice"],
    "session_id": ["s1"],
    "tags": [("prod",), ("prod", "beta")],
}


@st.composite
def filters(draw: st.DrawFn) -> TraceFilters:
    """Up to two filters (more would leave most examples with nothing to page), a sort."""
    chosen = draw(st.lists(st.sampled_from(sorted(CHOICES)), unique=True, max_size=2))
    values = {name: draw(st.sampled_from(CHOICES[name])) for name in chosen}
    sort = draw(st.sampled_from(list(SORTS)))
    return TraceFilters(**values, sort=sort, order=draw(st.sampled_from(["desc", "asc"])))


counter = itertools.count()


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    before=specs(25),
    arriving=st.lists(specs(4, offset=10_000), max_size=5),
    f=filters(),
    limit=st.integers(1, 5),
)
def test_filtered_paging_while_traces_arrive_equals_filtering_the_whole_set(
    store: Any, before: list[Spec], arriving: list[list[Spec]], f: TraceFilters, limit: int
) -> None:
    """The traces stored before the first page, unchanged, are each listed once, in order,
    exactly when they match, whatever arrives between pages (newcomers may or may not be)."""
    project = f"p{next(counter)}"
    with store.transaction() as db:
        store.insert_project(db, project, None, 30, project_id=project)
    # Each batch's ids are its own: a newcomer never replaces a trace stored before.
    batches = [
        [replace(s, id=f"{10_000 + 10 * b + i:032x}") for i, s in enumerate(batch)]
        for b, batch in enumerate(arriving)
    ]
    insert(store, project, before)
    seen = walk(store, project, f, limit, batches)
    assert len(seen) == len(set(seen)), "a trace listed twice"
    old = {s.id for s in before}
    assert [i for i in seen if i in old] == expected(before, f)
    newcomers = {s.id: s for batch in batches for s in batch}
    assert all(matches(newcomers[i], f) for i in seen if i not in old)


def span_row(
    trace_id: str, span_id: str, parent: str | None, start: int, **attributes: Any
) -> SpanRow:
    kind = "llm" if parent else "chain"
    return SpanRow(
        trace_id,
        span_id,
        parent,
        f"span {span_id}",
        kind,
        None,
        start,
        10,
        0,
        0,
        0.0,
        "ok",
        None,
        json.dumps(attributes),
    )


def test_a_trace_sent_in_parts_takes_its_roots_user_and_output_and_every_tag(store: Any) -> None:
    """Ingest's rules over several requests: a child's user and session fill in until the root
    comes, whose win; tags add up; the root's output wins over the last LLM span's; the text
    grows (the first part's words are still found)."""
    trace = "ab" * 16
    with store.transaction() as db:
        store.insert_project(db, "default", None, 30, project_id="default")
    first = [
        span_row(
            trace,
            "c1",
            "r1",
            NOW - 900,
            **{
                "user.id": "child",
                "tag.tags": ["x"],
                "output.value": "early answer",
                "input.value": "zebra question",
            },
        ),
        span_row(trace, "c2", "r1", NOW - 800, **{"output.value": "late answer"}),
    ]
    store.ingest([[SpanGroup("default", None, "{}", first)]])
    (row,) = store.search_traces("default", TraceFilters(), START, END, 10)[0]
    assert (row.user_id, row.output_preview) == ("child", "late answer")
    root = span_row(
        trace,
        "r1",
        None,
        NOW - 1000,
        **{
            "user.id": "root",
            "session.id": "s",
            "tag.tags": '["y"]',
            "output.value": "final answer",
        },
    )
    store.ingest([[SpanGroup("default", None, "{}", [root])]])
    store.index_texts()  # SQLite indexes the text off ingest's path (store/texts.py)
    (row,) = store.search_traces("default", TraceFilters(q="zebra"), START, END, 10)[0]
    assert (row.user_id, row.session_id, row.output_preview) == ("root", "s", "final answer")
    assert json.loads(row.tags) == ["x", "y"]
    assert store.search_traces("default", TraceFilters(q="final"), START, END, 10)[0]
    assert store.search_traces("default", TraceFilters(tags=("y",)), START, END, 10)[0]


def test_a_deleted_trace_takes_its_text_along(store: Any) -> None:
    """Retention deletes a trace's text too: a search finds nothing afterwards, and a new
    trace with the same id is found by its own words only."""
    trace = "cd" * 16
    with store.transaction() as db:
        store.insert_project(db, "kept", None, 30, project_id="kept")
    old = [span_row(trace, "r1", None, NOW - 100 * 86_400_000, **{"input.value": "walrus"})]
    store.ingest([[SpanGroup("kept", None, "{}", old)]])
    store.index_texts()
    assert store.expire(NOW) == 1
    new = [span_row(trace, "r1", None, NOW - 500, **{"input.value": "penguin"})]
    store.ingest([[SpanGroup("kept", None, "{}", new)]])
    store.index_texts()
    assert not store.search_traces("kept", TraceFilters(q="walrus"), 0, END, 10)[0]
    assert store.search_traces("kept", TraceFilters(q="penguin"), 0, END, 10)[0]


def test_a_database_from_before_search_migrates_with_models_filled_in(
    store_url: str, backend: str, open_store: Any
) -> None:
    """Traces stored before the search columns keep their rows: no user, session, tags or
    text (not read back from their spans), but their models are filled in from their spans,
    and every filter answers on them."""
    trace_values = (
        "ef" * 16,
        "old",
        "old run",
        NOW - 500,
        10,
        1,
        1,
        1,
        0.0,
        "ok",
        0,
        "{}",
        NOW - 500,
        None,
    )
    span_values = (
        "old",
        "ef" * 16,
        "s1",
        None,
        "root",
        "llm",
        "GPT-4o",
        NOW - 500,
        10,
        1,
        1,
        0.0,
        "ok",
        None,
        "{}",
    )
    trace_sql = (
        "INSERT INTO traces (id, project_id, name, started_at, duration_ms, span_count,"
        " input_tokens, output_tokens, total_cost_usd, status, error_count, attributes,"
        " listed_at, input_preview) VALUES (" + ", ".join(["?"] * 14) + ")"
    )
    span_sql = (
        "INSERT INTO spans (project_id, trace_id, id, parent_id, name, kind, model, started_at,"
        " duration_ms, input_tokens, output_tokens, cost_usd, status, error_message, attributes)"
        " VALUES (" + ", ".join(["?"] * 15) + ")"
    )
    if backend == "sqlite":
        import sqlite3

        from tui.server.store.sqlite.migrations import MIGRATIONS, migrate

        db = sqlite3.connect(store_url, isolation_level=None)
        migrate(db, store_url, MIGRATIONS[:7])
        db.execute(trace_sql, trace_values)
        db.execute(span_sql, span_values)
        db.close()
    else:
        import psycopg

        from tui.server.store.postgres import migrations

        with psycopg.connect(store_url, autocommit=True) as db:
            migrations.migrate(db, "test", migrations.MIGRATIONS[:3])
            db.execute(trace_sql.replace("?", "%s").encode(), trace_values)
            db.execute(span_sql.replace("?", "%s").encode(), span_values)
    store = open_store()
    (row,) = store.search_traces("old", TraceFilters(model="gpt-4o"), START, END, 10)[0]
    assert (row.user_id, row.session_id, json.loads(row.tags), row.output_preview) == (
        None,
        None,
        [],
        None,
    )
    assert not store.search_traces("old", TraceFilters(q="old run"), START, END, 10)[0]
    assert store.search_traces("old", TraceFilters(name="OLD RUN"), START, END, 10)[0]


def test_common_words_are_searched_row_by_row_to_the_same_answer(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second way of searching the text, for words that match many traces (SQLite:
    search.sqlite.is_common; PostgreSQL: a bounded walk in order first, search.postgres.SCAN)
    finds the same traces in the same order."""
    monkeypatch.setattr("tui.server.store.sqlite.search.COMMON_MATCHES", 1)
    monkeypatch.setattr("tui.server.store.postgres.search.SCAN", 7)
    project = "p-common"
    with store.transaction() as db:
        store.insert_project(db, project, None, 30, project_id=project)
    found = fixed_specs()
    insert(store, project, found)
    for q in ("refund", "alpha bravo", '"fund alp"', "nothing"):
        for sort in ("started_at", "duration_ms"):
            f = TraceFilters(q=q, sort=sort, status="ok")
            assert walk(store, project, f, limit=4) == expected(found, f), f
