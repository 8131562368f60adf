"""The annotation calls of the spec's client, against a MockTransport server that answers the
annotations contract exactly (fake_annotations.py), and one that speaks only the spec: what is
sent, what is read back, the bounds, a write whose outcome is unknown, and the trace answers'
summaries read by the fast readers as by the tolerant ones."""

from __future__ import annotations

import json
import math

import httpx
import pytest

from tests.client.fake_annotations import PROJECT, SESSION, SPAN, TRACE, FakeAnnotations
from tests.support.helpers import mock_client
from tui.api import BadResponse, NotOffered, ValidationFailed
from tui.api.annotation_records import (
    Annotation,
    AnnotationChange,
    AnnotationDraft,
    AnnotationTarget,
)
from tui.api.errors import TimedOut
from tui.api.models import ScoreBound, Trace, TraceFilter
from tui.api.readers import fast_span, fast_trace, read_span_json, read_trace_fast


def draft(target: AnnotationTarget | None = None, **values: object) -> AnnotationDraft:
    fields = {"name": "correctness", "label": "wrong", "score": 0.0, **values}
    return AnnotationDraft(target or AnnotationTarget.trace(TRACE), **fields)  # type: ignore[arg-type]


async def test_the_offer_comes_from_the_document_and_a_batch_is_sent_as_the_contract_says() -> None:
    server = FakeAnnotations()
    async with mock_client(server) as client:
        known_before = client.offers_annotations  # nothing known before it is asked
        await client.discover_offers()
        assert (known_before, client.offers_annotations) == (False, True)
        stored = await client.create_annotations(
            PROJECT,
            [
                draft(),
                draft(
                    AnnotationTarget.span(TRACE, SPAN),
                    name="note",
                    label=None,
                    score=None,
                    explanation="the retriever returned the 2023 policy",
                ),
                draft(
                    AnnotationTarget.session(SESSION),
                    name="root_cause",
                    label="retriever",
                    score=None,
                ),
            ],
            idempotency_key="batch-1",
        )
    post = server.writes()[0]
    assert post.url.path == f"/v1/projects/{PROJECT}/annotations"
    assert post.headers["idempotency-key"] == "batch-1"
    assert json.loads(post.content) == {
        "data": [
            {
                "trace_id": TRACE,
                "name": "correctness",
                "label": "wrong",
                "score": 0.0,
                "annotator_kind": "HUMAN",
            },
            {
                "trace_id": TRACE,
                "span_id": SPAN,
                "name": "note",
                "explanation": "the retriever returned the 2023 policy",
                "annotator_kind": "HUMAN",
            },
            {
                "session_id": SESSION,
                "name": "root_cause",
                "label": "retriever",
                "annotator_kind": "HUMAN",
            },
        ]
    }
    assert [a.name for a in stored] == ["correctness", "note", "root_cause"]
    assert stored[0].author == "on-call laptop" and stored[0].score == 0.0
    assert stored[1].is_note and stored[1].target == AnnotationTarget.span(TRACE, SPAN)
    assert stored[2].target.kind == "session"


async def test_a_spec_only_server_keeps_none_and_nothing_but_its_document_is_asked() -> None:
    server = FakeAnnotations(offered=False)
    async with mock_client(server) as client:
        with pytest.raises(NotOffered, match="This tracing server keeps no annotations"):
            await client.create_annotations(PROJECT, [draft()])
        with pytest.raises(NotOffered):
            await client.list_annotations(PROJECT, AnnotationTarget.trace(TRACE))
        with pytest.raises(NotOffered):
            await client.annotation_vocabulary(PROJECT)
    assert [r.url.path for r in server.requests] == ["/v1/openapi.json"]


async def test_a_target_is_listed_newest_first_through_every_page() -> None:
    server = FakeAnnotations()
    async with mock_client(server) as client:
        await client.create_annotations(
            PROJECT, [draft(score=i / 1000) for i in range(600)], idempotency_key="many"
        )
        await client.create_annotations(PROJECT, [draft(AnnotationTarget.session(SESSION))])
        listed = await client.list_annotations(PROJECT, AnnotationTarget.trace(TRACE))
        named = await client.list_annotations(PROJECT, AnnotationTarget.trace(TRACE), "nothing")
    assert len(listed) == 600 and listed[0].score == 0.599 and listed[-1].score == 0.0
    assert named == []
    gets = [r for r in server.requests if r.method == "GET" and "annotations" in r.url.path]
    assert gets[0].url.params["trace_id"] == TRACE and gets[0].url.params["limit"] == "500"
    assert "cursor" in gets[1].url.params  # the second page, by the first one's cursor
    assert gets[2].url.params["name"] == "nothing"


async def test_a_refused_item_names_its_field_and_nothing_is_stored() -> None:
    server = FakeAnnotations()
    async with mock_client(server) as client:
        with pytest.raises(ValidationFailed) as refused:
            await client.create_annotations(
                PROJECT, [draft(), draft(AnnotationTarget.trace("f" * 32))]
            )
    assert refused.value.field_messages() == {
        "data[1].trace_id": "no trace with this id in this project"
    }
    assert server.records == {}


async def test_a_write_whose_outcome_is_unknown_says_so_and_a_look_finds_it() -> None:
    server = FakeAnnotations(store_then=httpx.ReadTimeout("no answer"))
    wanted = draft(explanation="checked by hand")
    async with mock_client(server) as client:
        with pytest.raises(TimedOut) as failed:
            await client.create_annotations(PROJECT, [wanted])
        assert failed.value.outcome_unknown
        assert len(server.writes()) == 1  # a POST that reached the server is never resent
        found = await client.find_annotation(PROJECT, wanted)
        assert found is not None and found.explanation == "checked by hand"
        assert await client.find_annotation(PROJECT, draft(label="right")) is None


async def test_an_answer_that_does_not_list_what_was_stored_leaves_the_outcome_unknown() -> None:
    server = FakeAnnotations(fail_next=httpx.Response(201, json={"ok": True}))
    async with mock_client(server) as client:
        with pytest.raises(BadResponse) as failed:
            await client.create_annotations(PROJECT, [draft()])
    assert failed.value.outcome_unknown


async def test_an_annotation_is_changed_and_deleted_by_its_id() -> None:
    server = FakeAnnotations()
    async with mock_client(server) as client:
        (stored,) = await client.create_annotations(PROJECT, [draft()])
        changed = await client.update_annotation(
            PROJECT, stored, AnnotationChange({"label": "right", "score": None})
        )
        assert (changed.label, changed.score) == ("right", None)
        await client.delete_annotation(PROJECT, changed)
        assert await client.list_annotations(PROJECT, AnnotationTarget.trace(TRACE)) == []
    patch, delete = server.writes()[1:]
    assert (patch.method, patch.url.path) == (
        "PATCH",
        f"/v1/projects/{PROJECT}/annotations/{stored.id}",
    )
    assert json.loads(patch.content) == {"label": "right", "score": None}
    assert (delete.method, delete.url.path) == ("DELETE", patch.url.path)


async def test_the_vocabulary_is_the_names_and_labels_in_use_newest_first() -> None:
    server = FakeAnnotations()
    async with mock_client(server) as client:
        await client.create_annotations(
            PROJECT,
            [
                draft(name="root_cause", label="retriever", score=None),
                draft(name="correctness", label="right"),
                draft(name="root_cause", label="prompt", score=None),
                draft(name="note", label=None, score=None, explanation="x"),
            ],
        )
        vocabulary = await client.annotation_vocabulary(PROJECT)
    assert vocabulary.names == ["note", "root_cause", "correctness"]
    assert vocabulary.labels["root_cause"] == ["prompt", "retriever"]


def test_the_bounds_are_checked_before_anything_is_sent() -> None:
    assert draft().problems() == {}
    assert set(draft(name=" ").problems()) == {"name"}
    assert set(draft(name="x" * 65).problems()) == {"name"}
    assert set(draft(label="x" * 201).problems()) == {"label"}
    assert set(draft(score=math.inf).problems()) == {"score"}
    assert set(draft(label=None, score=None).problems()) == {"label"}
    assert set(draft(explanation="x" * 10_001).problems()) == {"explanation"}
    assert set(AnnotationDraft(AnnotationTarget(), "n", "l").problems()) == {"target"}
    assert AnnotationTarget(trace_id="t", span_id="s").kind == "span"


def test_phoenix_s_shape_is_read_as_the_flat_one() -> None:
    flat = Annotation.model_validate({"id": "a", "name": "c", "label": "wrong", "score": 0.5})
    nested = Annotation.model_validate(
        {"id": "a", "name": "c", "result": {"label": "wrong", "score": 0.5, "explanation": None}}
    )
    assert (flat.label, flat.score) == (nested.label, nested.score)


def test_score_bounds_are_sent_inclusive_and_a_strict_one_as_the_nearest_float_inside() -> None:
    query = TraceFilter(
        annotations=("note",),
        labels=(("root_cause", "retriever"),),
        scores=(ScoreBound("correctness", "<", 0.5), ScoreBound("helpful", ">=", 0.8)),
    )
    params = query.params()
    assert params["annotation"] == ["note"] and params["label"] == ["root_cause:retriever"]
    assert params["min_score"] == ["helpful:0.8"]
    (strict,) = params["max_score"]
    value = float(strict.rpartition(":")[2])
    assert value < 0.5 and math.nextafter(value, math.inf) == 0.5
    assert ScoreBound("c", "<", 0.5).holds(value) and not ScoreBound("c", "<", 0.5).holds(0.5)
    # A label whose name holds the separator cannot be a parameter: no server offers it.
    assert not TraceFilter(labels=(("a:b", "c"),)).parameter_names <= set(params) | {"label"}


SUMMARY = {
    "correctness": {
        "label": "wrong",
        "score": 0.0,
        "count": 2,
        "updated_at": "2026-11-27T03:12:00.123Z",
    }
}


def test_the_summaries_keep_trace_rows_and_spans_on_the_fast_readers() -> None:
    row = {
        "id": TRACE,
        "name": "checkout",
        "started_at": "2026-11-27T03:00:00Z",
        "status": "ok",
        "annotations": SUMMARY,
    }
    fast = fast_trace(row)
    assert fast is not None and fast.annotations == SUMMARY
    assert Trace.model_validate(row).annotations == SUMMARY
    span = {
        "id": SPAN,
        "trace_id": TRACE,
        "name": "retrieve",
        "started_at": "2026-11-27T03:00:00Z",
        "ended_at": "2026-11-27T03:00:01Z",
        "status": "ok",
        "annotations": SUMMARY,
        "attributes": {},
    }
    read = fast_span(span)
    assert read is not None and read.annotations == SUMMARY
    body = json.dumps({**row, "annotations": {}, "spans": [span]}).encode()
    trace = read_trace_fast(body)
    assert trace is not None and trace.annotations == {}
    assert type(trace.spans).__name__ == "SpanTable"  # the fast path, not the tolerant one
    assert trace.spans[0].annotations == SUMMARY
    assert read_span_json(json.dumps(span).encode()).annotations == SUMMARY
