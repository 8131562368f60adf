"""The annotations in the pure model: the query line's `has:`, `label:` and `score:` terms read,
refused with words, applied to loaded rows from their annotations' summary (or named as not
judged where rows carry none), and what is asked of a server that offers the filters; the
summaries read tolerantly and said in a line, and stored annotations said whole and safe."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from tui.api.annotation_records import Annotation
from tui.api.models import ScoreBound, Trace, TraceFilter
from tui.model.annotations import (
    MARK,
    NOTE_MARK,
    NameSummary,
    annotation_lines,
    digest,
    mark_of,
    names_and_labels,
    summary_of,
)
from tui.model.query import QueryError, parse_query
from tui.model.query_rows import matches, unjudged
from tui.model.trace_list import TraceListState
from tui.model.trace_list_rows import keeps_within, left_to_do, row_texts, show
from tui.model.trace_list_text import header

NOW = datetime(2026, 11, 27, 3, 30, tzinfo=timezone.utc)
EVERY = frozenset(["annotation", "label", "min_score", "max_score", "q", "status"])


def entry(
    label: str | None = None, score: float | None = None, count: int = 1
) -> dict[str, object]:
    return {"label": label, "score": score, "count": count, "updated_at": "2026-11-27T03:12:00Z"}


def row(n: int, annotations: object = None) -> Trace:
    fields: dict[str, object] = {
        "id": f"t{n}",
        "name": "checkout",
        "started_at": (NOW - timedelta(minutes=n)).isoformat(),
    }
    if annotations is not None:
        fields["annotations"] = annotations
    return Trace.model_validate(fields)


ROWS = [
    row(0, {"root_cause": entry("retriever"), "note": entry(count=2)}),
    row(1, {"correctness": entry("wrong", 0.0)}),
    row(2, {"correctness": entry("right", 1.0), "root_cause": entry("prompt")}),
    row(3, {"correctness": entry(score=0.5)}),
    row(4, {}),
]


def kept(text: str, rows: list[Trace] = ROWS) -> list[str]:
    query = parse_query(text)
    return [r.id or "" for r in rows if matches(r, query, skip=unjudged(query, rows))]


def test_the_issue_s_terms_read_into_the_filter() -> None:
    query = parse_query("error label:root_cause=retriever score:correctness<0.5 has:note")
    assert query == TraceFilter(
        status="error",
        annotations=("note",),
        labels=(("root_cause", "retriever"),),
        scores=(ScoreBound("correctness", "<", 0.5),),
    )
    assert parse_query('label:"root cause=the retriever"').labels == (
        ("root cause", "the retriever"),
    )
    assert parse_query("score:helpful>=0.8 score:helpful>=0.8").scores == (
        ScoreBound("helpful", ">=", 0.8),
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("has:", "has: needs a value"),
        ("label:root_cause", "label:NAME=VALUE"),
        ("label:=x", "label:NAME=VALUE"),
        ("score:correctness", "score:NAME<NUMBER"),
        ("score:correctness=1", "score:NAME<NUMBER"),
        ("score:correctness<high", "score:NAME<NUMBER"),
        ("score:c<1e999", "too large"),
    ],
)
def test_a_term_that_does_not_read_says_what_is_meant(text: str, says: str) -> None:
    with pytest.raises(QueryError, match=says):
        parse_query(text)


def test_loaded_rows_are_judged_by_each_name_s_latest_label_and_score() -> None:
    assert kept("has:note") == ["t0"]
    assert kept("label:root_cause=retriever") == ["t0"]
    assert kept("label:root_cause=prompt") == ["t2"]
    assert kept("score:correctness<0.5") == ["t1"]
    assert kept("score:correctness<=0.5") == ["t1", "t3"]
    assert kept("score:correctness>0.5") == ["t2"]
    assert kept("has:correctness score:correctness>=0") == ["t1", "t2", "t3"]
    assert kept("has:nothing") == []


def test_rows_that_carry_no_summary_cannot_be_judged_and_say_so() -> None:
    bare = [row(5), row(6)]  # a server that keeps no annotations sends no summary
    query = parse_query("has:note label:a=b")
    assert unjudged(query, bare) == ("annotations", "labels")
    assert kept("has:note", bare) == ["t5", "t6"]  # not judged: kept, and named in the header
    state = TraceListState().submitted("has:note")
    shown = show(state, bare, row_texts(bare))
    assert shown.unjudged == ("annotations",)
    assert "has: not judged" in header(state, "shop", shown, 2, False, 200).plain


def test_the_terms_are_asked_of_a_server_that_offers_them_else_done_here() -> None:
    state = TraceListState().submitted("score:correctness<0.5 has:note")
    wanted = state.wanted(EVERY)
    assert wanted is not None and wanted.params()["annotation"] == ["note"]
    assert state.wanted(frozenset(["q", "status"])) is None  # applied to the loaded rows


def test_a_narrower_query_previews_within_what_the_server_found() -> None:
    wide = parse_query("has:note")
    narrow = parse_query("has:note label:root_cause=retriever")
    assert keeps_within(narrow, wide) and not keeps_within(wide, narrow)
    assert left_to_do(narrow, wide) == TraceFilter(labels=(("root_cause", "retriever"),))


def test_a_summary_is_read_tolerantly_and_said_in_a_line() -> None:
    trace = row(
        9,
        {
            "correctness": {"label": "wrong", "score": "0.25", "count": 3},
            "note": {"count": 2},
            "": {},
            "odd": "not an object",
        },
    )
    summary = summary_of(trace)
    assert summary is not None and summary["correctness"] == NameSummary("wrong", 0.25, 3, None)
    assert summary["odd"] == NameSummary(count=1)
    assert digest(summary).plain == "correctness wrong 0.25 ×3 · odd · 2 notes"
    assert mark_of(summary) == NOTE_MARK and mark_of({"c": NameSummary()}) == MARK
    assert mark_of({}) == "" and summary_of(row(8)) is None
    assert names_and_labels([summary, None]) == [
        ("correctness", "wrong"),
        ("note", None),
        ("odd", None),
    ]


def test_stored_annotations_are_said_whole_and_never_as_markup_or_escapes() -> None:
    note = Annotation.model_validate(
        {
            "id": "a1",
            "trace_id": "t",
            "span_id": "s1",
            "name": "note",
            "explanation": "line one [bold red]not markup[/]\nline two \x1b[31m",
            "author": "on-call [@click=app.quit]",
            "updated_at": (NOW - timedelta(minutes=3)).isoformat(),
        }
    )
    lines = annotation_lines([note], NOW, {"s1": "retrieve"})
    assert lines[0].plain.startswith("✎ note on span retrieve · on-call [@click=app.quit] · 3m")
    body = lines[1].plain
    assert "[bold red]not markup[/]" in body and "\x1b" not in body and "line two" in body
    assert not lines[1].spans or all(span.style == "" for span in lines[1].spans)
