"""Annotations in both stores: a batch stored all or none, identifiers that update, the bound
per target (also when two writers race), what the trace answers' summaries say, listing and
paging, changes, and deletion with their trace (retention) or their project."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from tui.server.store.annotation_rows import (
    MAX_PER_TARGET,
    AnnotationPosition,
    AnnotationQuery,
    AnnotationRefused,
    NewAnnotation,
)
from tui.server.store.rows import DAY_MS, Once, Remembered, SpanRow, TraceRow

NOW = 1_795_000_000_000
KEPT = NOW - 30 * DAY_MS  # the retention's start: every trace here is newer
KEY = "tt_pk_annotation_store_key_0123456789"


def trace_row(project: str, trace_id: str, start: int, session: str | None = None) -> TraceRow:
    return TraceRow(
        trace_id,
        project,
        "agent",
        start,
        50,
        2,
        1,
        1,
        0.0,
        "ok",
        0,
        "{}",
        start,
        None,
        None,
        session,
    )


def span_row(trace_id: str, span_id: str, start: int) -> SpanRow:
    return SpanRow(
        trace_id, span_id, None, "step", "chain", None, start, 10, 0, 0, 0.0, "ok", None, "{}"
    )


def setup(store: Any, project: str = "p1", traces: int = 3, session: str | None = "s1") -> str:
    """The project with `traces` traces t0, t1... (spans a and b each), a key labelled
    "on-call laptop"; returns the key's hash."""
    with store.transaction() as db:
        store.insert_project(db, project, None, 30, project_id=project)
        rows = [trace_row(project, f"t{i}", NOW - 1000 + i, session) for i in range(traces)]
        spans = [span_row(f"t{i}", s, NOW - 1000 + i) for i in range(traces) for s in "ab"]
        store.insert_traces(db, rows, spans, texts=[])
    store.add_key(KEY + project, project, "on-call laptop")
    return hash_of(KEY + project)


def hash_of(key: str) -> str:
    from tui.server.api_keys import hash_key

    return hash_key(key)


def note(
    trace: str | None = "t0",
    span: str | None = None,
    session: str | None = None,
    name: str = "note",
    label: str | None = None,
    score: float | None = None,
    text: str | None = "looked at it",
    identifier: str | None = None,
) -> NewAnnotation:
    return NewAnnotation(trace, span, session, name, label, score, text, "HUMAN", identifier, "{}")


def test_a_batch_is_stored_in_order_with_its_author(store: Any) -> None:
    key = setup(store)
    items = [
        note(name="root_cause", label="retriever", text=None),
        note(span="a", text="the span's note"),
        note(trace=None, session="s1", text="the session's"),
    ]
    rows = store.add_annotations("p1", items, key, KEPT, now=NOW)
    assert [(r.trace_id, r.span_id, r.session_id, r.name) for r in rows] == [
        ("t0", None, None, "root_cause"),
        ("t0", "a", None, "note"),
        (None, None, "s1", "note"),
    ]
    assert {r.author for r in rows} == {"on-call laptop"}
    assert all(r.created_at == r.updated_at == NOW and r.id.startswith("ann_") for r in rows)
    assert store.get_annotation("p1", rows[1].id) == rows[1]
    assert store.count("annotations") == 3


@pytest.mark.parametrize(
    ("item", "field"),
    [
        (note(trace="nope"), "data[1].trace_id"),
        (note(span="zz"), "data[1].span_id"),
        (note(trace=None, session="nobody's"), "data[1].session_id"),
    ],
)
def test_a_target_not_in_the_project_refuses_the_whole_batch(
    store: Any, item: NewAnnotation, field: str
) -> None:
    key = setup(store)
    with pytest.raises(AnnotationRefused) as refused:
        store.add_annotations("p1", [note(), item], key, KEPT, now=NOW)
    assert refused.value.field == field
    assert store.count("annotations") == 0


def test_another_projects_target_is_refused_as_one_that_does_not_exist(store: Any) -> None:
    key = setup(store, "p1", session="s1")
    with store.transaction() as db:
        store.insert_project(db, "p2", None, 30, project_id="p2")
        rows = [trace_row("p2", "t0", NOW, "s2"), trace_row("p2", "only-in-p2", NOW, "s2")]
        spans = [span_row("t0", "c", NOW), span_row("only-in-p2", "a", NOW)]
        store.insert_traces(db, rows, spans, texts=[])
    pairs = [
        (note(trace="only-in-p2"), note(trace="nowhere")),
        (note(span="c"), note(span="zz")),  # p2's t0 has a span c; p1's t0 has not
        (note(trace=None, session="s2"), note(trace=None, session="nowhere")),
    ]
    for elsewhere, nowhere in pairs:
        refusals = []
        for item in (elsewhere, nowhere):
            with pytest.raises(AnnotationRefused) as refused:
                store.add_annotations("p1", [item], key, KEPT, now=NOW)
            refusals.append((refused.value.field, refused.value.message))
        assert refusals[0] == refusals[1]
    assert store.count("annotations") == 0


def test_a_trace_past_its_retention_takes_no_annotation(store: Any) -> None:
    key = setup(store)
    with pytest.raises(AnnotationRefused) as refused:
        store.add_annotations("p1", [note()], key, NOW + 1, now=NOW)
    assert refused.value.field == "data[0].trace_id"


def test_an_identifier_updates_its_annotation_instead_of_adding(store: Any) -> None:
    key = setup(store)
    first = store.add_annotations(
        "p1",
        [note(name="correctness", score=0.2, text=None, identifier="eval-1")],
        key,
        KEPT,
        now=NOW,
    )[0]
    store.add_key("tt_pk_second_terminal_0123456789", "p1", "second terminal")
    again = store.add_annotations(
        "p1",
        [note(name="correctness", score=0.9, label="right", text=None, identifier="eval-1")],
        hash_of("tt_pk_second_terminal_0123456789"),
        KEPT,
        now=NOW + 5,
    )[0]
    assert again.id == first.id and again.created_at == NOW and again.updated_at == NOW + 5
    assert (again.score, again.label, again.author) == (0.9, "right", "second terminal")
    # Another name, target or identifier, or none: a new annotation each.
    others = [
        note(name="correctness", score=0.1, text=None, identifier="eval-2"),
        note(name="correctness", score=0.1, text=None),
        note(name="helpfulness", score=0.1, text=None, identifier="eval-1"),
        note(span="a", name="correctness", score=0.1, text=None, identifier="eval-1"),
    ]
    store.add_annotations("p1", others, key, KEPT, now=NOW + 6)
    assert store.count("annotations") == 5
    # Twice in one batch: the second updates the first.
    rows = store.add_annotations(
        "p1",
        [note(name="x", label="a", identifier="i"), note(name="x", label="b", identifier="i")],
        key,
        KEPT,
        now=NOW + 7,
    )
    assert rows[0].id == rows[1].id and store.get_annotation("p1", rows[0].id).label == "b"
    assert store.count("annotations") == 6


def test_at_most_a_hundred_annotations_on_one_target(store: Any) -> None:
    key = setup(store)
    store.add_annotations("p1", [note()] * (MAX_PER_TARGET - 1), key, KEPT, now=NOW)
    with pytest.raises(AnnotationRefused) as refused:
        store.add_annotations("p1", [note(span="a"), note(), note()], key, KEPT, now=NOW)
    assert refused.value.field == "data" and "data[2]" in refused.value.message
    assert store.count("annotations") == MAX_PER_TARGET - 1
    # The hundredth fits; updates by identifier do not count; other targets have their own.
    store.add_annotations("p1", [note(identifier="i")], key, KEPT, now=NOW)
    store.add_annotations("p1", [note(identifier="i")] * 3 + [note(span="a")], key, KEPT, now=NOW)
    assert store.count("annotations") == MAX_PER_TARGET + 1


def test_two_writers_racing_on_one_target_keep_the_bound(open_store: Any) -> None:
    """Each writer counts what the other committed: one of two batches of 60 is refused,
    whichever writes first. (Without the target's lock both counted 0 and 120 were kept.)"""
    first = open_store()
    key = setup(first)
    second = open_store()
    refusals: list[str] = []
    go = threading.Barrier(2)

    def write(store: Any) -> None:
        go.wait()
        try:
            store.add_annotations("p1", [note()] * 60, key, KEPT, now=NOW)
        except AnnotationRefused as refused:
            refusals.append(refused.field)

    threads = [threading.Thread(target=write, args=(s,)) for s in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert refusals == ["data"]
    assert first.count("annotations") == 60


def test_an_idempotency_key_replays_the_first_answer_and_stores_once(store: Any) -> None:
    key = setup(store)
    once = Once(key, "retry-1", "hash-a")
    rows = store.add_annotations("p1", [note()], key, KEPT, once, lambda r: {"n": len(r)}, now=NOW)
    assert not isinstance(rows, Remembered)
    seen = store.add_annotations("p1", [note()], key, KEPT, once, lambda r: {"n": 9}, now=NOW)
    assert seen == Remembered("hash-a", 201, {"n": 1})
    assert store.count("annotations") == 1


def test_summaries_are_each_names_latest_and_count_over_the_trace_and_its_spans(
    store: Any,
) -> None:
    key = setup(store)
    add = store.add_annotations
    add("p1", [note(name="correctness", label="wrong", score=0.1, text=None)], key, KEPT, now=NOW)
    add(
        "p1",
        [note(span="a", name="correctness", label="right", score=0.9, text=None)],
        key,
        KEPT,
        now=NOW + 1,
    )
    add("p1", [note(span="b"), note(span="b"), note(trace="t1")], key, KEPT, now=NOW + 2)
    summaries = store.annotation_summaries("p1", ["t0", "t1", "t2"])
    assert set(summaries) == {"t0", "t1"}
    correctness = summaries["t0"]["correctness"]
    assert (correctness.label, correctness.score, correctness.total) == ("right", 0.9, 2)
    assert correctness.updated_at == NOW + 1
    assert summaries["t0"]["note"].total == 2 and summaries["t1"]["note"].total == 1
    whole, spans = store.trace_annotations("p1", "t0")
    assert whole == summaries["t0"]
    assert set(spans) == {"a", "b"}
    assert spans["a"]["correctness"].total == 1 and spans["a"]["correctness"].label == "right"
    assert list(spans["b"]) == ["note"] and spans["b"]["note"].total == 2
    # A session's annotations are on no trace.
    add("p1", [note(trace=None, session="s1")], key, KEPT, now=NOW + 3)
    assert store.annotation_summaries("p1", ["t0", "t1", "t2"]) == summaries


def test_summaries_never_count_another_projects_annotations(store: Any) -> None:
    setup(store, "p1")
    key2 = setup(store, "p2")  # the same trace ids t0, t1, t2
    store.add_annotations("p2", [note(), note(span="a")], key2, KEPT, now=NOW)
    assert store.annotation_summaries("p1", ["t0"]) == {}
    assert store.trace_annotations("p1", "t0") == ({}, {})
    assert store.annotation_summaries("p2", ["t0"])["t0"]["note"].total == 2


def test_the_listing_pages_newest_first_under_each_filter(store: Any) -> None:
    key = setup(store)
    for n in range(7):
        items = [note(trace=f"t{n % 3}", span="a" if n % 2 else None, name=f"n{n % 2}")]
        store.add_annotations("p1", items, key, KEPT, now=NOW + n // 2)
    store.add_annotations("p1", [note(trace=None, session="s1")], key, KEPT, now=NOW + 9)
    everything = store.list_annotations("p1", AnnotationQuery(), 100)[0]
    assert [(r.created_at, r.id) for r in everything] == sorted(
        ((r.created_at, r.id) for r in everything), reverse=True
    )
    for query in [
        AnnotationQuery(),
        AnnotationQuery(trace_id="t1"),
        AnnotationQuery(trace_id="t1", span_id="a"),
        AnnotationQuery(session_id="s1"),
        AnnotationQuery(name="n0"),
        AnnotationQuery(trace_id="t0", name="n1"),
    ]:
        wanted = [
            r.id
            for r in everything
            if all(getattr(query, f) in (None, getattr(r, f)) for f in AnnotationQuery._fields)
        ]
        seen: list[str] = []
        after = None
        while True:
            rows, more = store.list_annotations("p1", query, 2, after)
            seen += [r.id for r in rows]
            if not more:
                break
            after = AnnotationPosition(rows[-1].created_at, rows[-1].id)
        assert seen == wanted, query
    assert len(store.list_annotations("p1", AnnotationQuery(trace_id="t1"), 100)[0]) == 2


def test_a_change_keeps_a_value_and_names_the_changer(store: Any) -> None:
    key = setup(store)
    row = store.add_annotations(
        "p1", [note(name="c", label="x", identifier="i")], key, KEPT, now=NOW
    )[0]
    other = store.add_annotations(
        "p1", [note(name="d", label="y", identifier="i")], key, KEPT, now=NOW
    )[0]
    store.add_key("tt_pk_changer_0123456789", "p1", "changer")
    changer = hash_of("tt_pk_changer_0123456789")
    changed = store.update_annotation("p1", row.id, {"label": None, "score": 0.5}, changer, NOW + 9)
    assert (changed.label, changed.score, changed.explanation) == (None, 0.5, "looked at it")
    assert (changed.author, changed.updated_at, changed.created_at) == ("changer", NOW + 9, NOW)
    assert store.get_annotation("p1", row.id) == changed
    with pytest.raises(AnnotationRefused) as refused:
        store.update_annotation("p1", row.id, {"score": None, "explanation": None}, key, NOW)
    assert refused.value.field == "label"
    with pytest.raises(AnnotationRefused) as refused:
        store.update_annotation("p1", row.id, {"name": "d"}, key, NOW)  # d's identifier is i
    assert refused.value.field == "name"
    assert store.update_annotation("p1", other.id, {"name": "e"}, key, NOW).name == "e"
    assert store.update_annotation("p2", row.id, {"label": "z"}, key, NOW) is None
    assert store.update_annotation("p1", "ann_missing", {"label": "z"}, key, NOW) is None
    assert not store.delete_annotation("p2", row.id)
    assert store.delete_annotation("p1", row.id) and not store.delete_annotation("p1", row.id)
    assert store.get_annotation("p1", row.id) is None


def test_retention_deletes_a_traces_annotations_and_an_emptied_sessions(store: Any) -> None:
    key = setup(store, traces=0)
    old, new = NOW - 40 * DAY_MS, NOW - 1000
    with store.transaction() as db:
        rows = [
            trace_row("p1", "old-1", old, "gone"),
            trace_row("p1", "old-2", old, "kept"),
            trace_row("p1", "new-1", new, "kept"),
        ]
        spans = [span_row(r.id, "a", r.started_at) for r in rows]
        store.insert_traces(db, rows, spans, texts=[])
    items = [
        note(trace="old-1"),
        note(trace="old-1", span="a"),
        note(trace="old-2"),
        note(trace="new-1", span="a"),
        note(trace=None, session="gone"),
        note(trace=None, session="kept"),
    ]
    store.add_annotations("p1", items, key, old - 1, now=NOW)
    assert store.expire(NOW) == 2
    left = store.list_annotations("p1", AnnotationQuery(), 100)[0]
    assert {(r.trace_id, r.span_id, r.session_id) for r in left} == {
        (None, None, "kept"),
        ("new-1", "a", None),
    }


def test_deleting_a_project_deletes_its_annotations_only(store: Any) -> None:
    key1, key2 = setup(store, "p1"), setup(store, "p2")
    store.add_annotations("p1", [note(), note(trace=None, session="s1")], key1, KEPT, now=NOW)
    store.add_annotations("p2", [note()], key2, KEPT, now=NOW)
    assert store.delete_project("p1")
    assert store.count("annotations") == 1
    assert store.list_annotations("p2", AnnotationQuery(), 10)[0][0].project_id == "p2"
