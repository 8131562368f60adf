"""Annotations on a real Phoenix through the Phoenix reader (tui/api/phoenix/annotations.py):
what tracetui writes, Phoenix's own REST reads back (plain httpx, not our client); what
Phoenix's own client (arize-phoenix-client, in the Phoenix virtualenv, run as a subprocess)
writes, tracetui lists; edits and deletes by id; and what Phoenix cannot keep is refused
before anything is sent."""

from __future__ import annotations

import json
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.phoenix.conftest import SeededPhoenix, SessionsSeeded
from tests.support.phoenix import ensure_venv
from tui.api.annotation_batches import BatchedWrite, Values
from tui.api.annotation_records import AnnotationChange, AnnotationDraft, AnnotationTarget
from tui.api.errors import NotOffered, ValidationFailed
from tui.api.phoenix.client import PhoenixClient
from tui.cli import main

PHOENIX_CLIENT_SECONDS = 120.0


def unique(name: str) -> str:
    """A name no other test of the shared Phoenix writes."""
    return f"{name}_{uuid.uuid4().hex[:6]}"


def rest(base_url: str, path: str, **params: Any) -> list[dict[str, Any]]:
    """Every record of one of Phoenix's annotation lists, read by plain httpx."""
    records: list[dict[str, Any]] = []
    cursor = None
    while True:
        query = {**params, "limit": 1000} | ({"cursor": cursor} if cursor else {})
        answer = httpx.get(f"{base_url}/v1/{path}", params=query, timeout=30)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        records += body["data"]
        cursor = body.get("next_cursor")
        if not cursor:
            return records


@dataclass(frozen=True)
class Scratch:
    """Where these tests write: the sessions project (tests/phoenix/conftest.py), whose trees
    no other test reads line by line (a ✎ on a span shortens its line), and its turns' traces:
    a root span and a model call each."""

    base_url: str
    project: str
    traces: list[str]


@pytest.fixture
def scratch(phoenix_sessions: SessionsSeeded) -> Scratch:
    turns = [t for ids in phoenix_sessions.turns.values() for t in ids]
    return Scratch(phoenix_sessions.base_url, phoenix_sessions.project, turns)


def spans_of(phoenix: Scratch | SeededPhoenix, trace_id: str) -> list[dict[str, Any]]:
    answer = httpx.get(
        f"{phoenix.base_url}/v1/projects/{phoenix.project}/spans",
        params={"trace_id": trace_id, "limit": 1000},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    spans: list[dict[str, Any]] = answer.json()["data"]
    return spans


def child_span(phoenix: Scratch, trace_id: str) -> str:
    """The id of a span of the trace that is not its root."""
    span_id: str = next(
        s["context"]["span_id"] for s in spans_of(phoenix, trace_id) if s["parent_id"]
    )
    return span_id


def phoenix_client_writes(base_url: str, script: str) -> None:
    """Run `script` with Phoenix's own client (`client` is phoenix.client.Client at base_url)
    in the Phoenix virtualenv's Python."""
    python = ensure_venv() / "bin" / "python"
    code = f"from phoenix.client import Client\nclient = Client(base_url={base_url!r})\n{script}"
    done = subprocess.run(
        [str(python), "-c", code],
        capture_output=True,
        text=True,
        timeout=PHOENIX_CLIENT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]


async def test_what_tracetui_writes_phoenix_reads_back(scratch: Scratch) -> None:
    phoenix = scratch
    trace_id = scratch.traces[0]
    span_id = child_span(phoenix, trace_id)
    verdict, cause = unique("correctness"), unique("root_cause")
    async with PhoenixClient(phoenix.base_url) as client:
        assert (await client.discover_offers()).annotations
        stored = await client.create_annotations(
            phoenix.project,
            [
                AnnotationDraft(
                    AnnotationTarget.span(trace_id, span_id),
                    verdict,
                    label="wrong",
                    score=0.2,
                    explanation="quoted the 2023 policy",
                ),
                AnnotationDraft(AnnotationTarget.trace(trace_id), cause, label="retriever"),
                AnnotationDraft(AnnotationTarget.trace(trace_id), "note", explanation="see #41"),
                AnnotationDraft(
                    AnnotationTarget.span(trace_id, span_id), "note", explanation="line 1\nline 2"
                ),
            ],
            idempotency_key=uuid.uuid4().hex,
        )
    assert [(a.name, a.target) for a in stored] == [
        (verdict, AnnotationTarget.span(trace_id, span_id)),
        (cause, AnnotationTarget.trace(trace_id)),
        ("note", AnnotationTarget.trace(trace_id)),
        ("note", AnnotationTarget.span(trace_id, span_id)),
    ]
    assert all(a.id and a.created_at is not None for a in stored)

    on_span = rest(
        phoenix.base_url, f"projects/{phoenix.project}/span_annotations", span_ids=[span_id]
    )
    by_id = {record["id"]: record for record in on_span}
    mine = by_id[stored[0].id or ""]
    assert mine["span_id"] == span_id and mine["name"] == verdict
    assert mine["result"] == {
        "label": "wrong",
        "score": 0.2,
        "explanation": "quoted the 2023 policy",
    }
    assert mine["annotator_kind"] == "HUMAN"
    assert by_id[stored[3].id or ""]["result"]["explanation"] == "line 1\nline 2"
    on_trace = rest(
        phoenix.base_url, f"projects/{phoenix.project}/trace_annotations", trace_ids=[trace_id]
    )
    by_id = {record["id"]: record for record in on_trace}
    assert by_id[stored[1].id or ""]["result"]["label"] == "retriever"
    assert by_id[stored[2].id or ""]["name"] == "note"
    assert by_id[stored[2].id or ""]["result"]["explanation"] == "see #41"


async def test_a_session_s_annotation_and_note(phoenix_sessions: SessionsSeeded) -> None:
    name = unique("helpful")
    target = AnnotationTarget.session("sess-alpha")
    async with PhoenixClient(phoenix_sessions.base_url) as client:
        stored = await client.create_annotations(
            phoenix_sessions.project,
            [
                AnnotationDraft(target, name, label="yes", score=1),
                AnnotationDraft(target, "note", explanation="the user gave up"),
            ],
            idempotency_key=uuid.uuid4().hex,
        )
        listed = await client.list_annotations(phoenix_sessions.project, target)
    read = rest(
        phoenix_sessions.base_url,
        f"projects/{phoenix_sessions.project}/session_annotations",
        session_ids=["sess-alpha"],
    )
    by_id = {record["id"]: record for record in read}
    assert by_id[stored[0].id or ""]["result"]["label"] == "yes"
    assert by_id[stored[0].id or ""]["session_id"] == "sess-alpha"
    assert by_id[stored[1].id or ""]["result"]["explanation"] == "the user gave up"
    assert {a.id for a in stored} <= {a.id for a in listed}
    assert all(a.target == target for a in listed)

    async with PhoenixClient(phoenix_sessions.base_url) as client:
        changed = await client.update_annotation(
            phoenix_sessions.project, stored[0], AnnotationChange({"label": "no", "score": None})
        )
        assert (changed.id, changed.label, changed.score) == (stored[0].id, "no", None)
        assert changed.target == target
        await client.delete_annotation(phoenix_sessions.project, stored[1])
    read = rest(
        phoenix_sessions.base_url,
        f"projects/{phoenix_sessions.project}/session_annotations",
        session_ids=["sess-alpha"],
    )
    by_id = {record["id"]: record for record in read}
    assert by_id[stored[0].id or ""]["result"] == {
        "label": "no",
        "score": None,
        "explanation": None,
    }
    assert by_id[stored[0].id or ""]["name"] == name
    assert stored[1].id not in by_id
    async with PhoenixClient(phoenix_sessions.base_url) as client:
        await client.delete_annotation(phoenix_sessions.project, changed)
    gone = rest(
        phoenix_sessions.base_url,
        f"projects/{phoenix_sessions.project}/session_annotations",
        session_ids=["sess-alpha"],
    )
    assert stored[0].id not in {record["id"] for record in gone}


async def test_an_identifier_updates_instead_of_adding(scratch: Scratch) -> None:
    phoenix = scratch
    trace_id = scratch.traces[1]
    name, identifier = unique("eval"), unique("run")
    async with PhoenixClient(phoenix.base_url) as client:
        for score in (0.1, 0.9):
            draft = AnnotationDraft(
                AnnotationTarget.trace(trace_id),
                name,
                score=score,
                annotator_kind="LLM",
                identifier=identifier,
            )
            await client.create_annotations(phoenix.project, [draft])
    read = rest(
        phoenix.base_url,
        f"projects/{phoenix.project}/trace_annotations",
        trace_ids=[trace_id],
        include_annotation_names=[name],
    )
    assert [(r["result"]["score"], r["identifier"], r["annotator_kind"]) for r in read] == [
        (0.9, identifier, "LLM")
    ]


async def test_what_phoenix_s_own_client_writes_shows_in_tracetui(
    scratch: Scratch, phoenix_sessions: SessionsSeeded
) -> None:
    phoenix = scratch
    trace_id = scratch.traces[2]
    span_id = spans_of(phoenix, trace_id)[0]["context"]["span_id"]
    verdict, hallucination, helpful = unique("verdict"), unique("hallucination"), unique("helpful")
    phoenix_client_writes(
        phoenix.base_url,
        f"""
client.spans.add_span_annotation(span_id={span_id!r}, annotation_name={verdict!r},
    annotator_kind="LLM", label="unsafe", score=0.25, explanation="it leaked", sync=True)
client.spans.add_span_note(span_id={span_id!r}, note="written by px")
client.traces.add_trace_annotation(trace_id={trace_id!r}, annotation_name={hallucination!r},
    label="no", score=0, identifier="eval-1", sync=True)
client.sessions.add_session_annotation(session_id="sess-beta", annotation_name={helpful!r},
    label="no", sync=True)
""",
    )
    async with PhoenixClient(phoenix.base_url) as client:
        listed = await client.list_annotations(phoenix.project, AnnotationTarget.trace(trace_id))
        session = await client.list_annotations(
            phoenix_sessions.project, AnnotationTarget.session("sess-beta")
        )
        notes = await client.list_annotations(
            phoenix.project, AnnotationTarget.span(trace_id, span_id), "note"
        )
        vocabulary = await client.annotation_vocabulary(phoenix.project)
    by_name = {a.name: a for a in listed}
    span_verdict = by_name[verdict]
    assert span_verdict.target == AnnotationTarget.span(trace_id, span_id)
    assert (span_verdict.label, span_verdict.score, span_verdict.explanation) == (
        "unsafe",
        0.25,
        "it leaked",
    )
    assert span_verdict.annotator_kind == "LLM"
    trace_verdict = by_name[hallucination]
    assert trace_verdict.target == AnnotationTarget.trace(trace_id)
    assert (trace_verdict.label, trace_verdict.score, trace_verdict.identifier) == (
        "no",
        0.0,
        "eval-1",
    )
    assert "written by px" in [n.explanation for n in notes]
    assert all(n.is_note for n in notes)
    assert [(a.name, a.label) for a in session if a.name == helpful] == [(helpful, "no")]
    created = [a.created_at for a in listed]
    assert created == sorted(created, reverse=True)  # newest first, trace's and spans' mixed
    assert {verdict, hallucination, "note"} <= set(vocabulary.names)


async def test_an_edit_and_a_delete_by_id(scratch: Scratch) -> None:
    phoenix = scratch
    trace_id = scratch.traces[3]
    span_id = child_span(phoenix, trace_id)
    name, other = unique("tone"), unique("tone")
    target = AnnotationTarget.span(trace_id, span_id)
    async with PhoenixClient(phoenix.base_url) as client:
        kept, gone = await client.create_annotations(
            phoenix.project,
            [AnnotationDraft(target, name, label="rude"), AnnotationDraft(target, other, score=1)],
        )
        note = (
            await client.create_annotations(
                phoenix.project, [AnnotationDraft(target, "note", explanation="to delete")]
            )
        )[0]
        changed = await client.update_annotation(
            phoenix.project, kept, AnnotationChange({"label": "curt", "score": 0.5})
        )
        assert (changed.id, changed.label, changed.score) == (kept.id, "curt", 0.5)
        assert changed.target == target
        await client.delete_annotation(phoenix.project, gone)
        with pytest.raises(NotOffered, match="cannot change a note"):
            await client.update_annotation(
                phoenix.project, note, AnnotationChange({"explanation": "edited"})
            )
        await client.delete_annotation(phoenix.project, note)
        on_trace = AnnotationTarget.trace(trace_id)
        verdict, trace_note = await client.create_annotations(
            phoenix.project,
            [
                AnnotationDraft(on_trace, name, label="fine"),
                AnnotationDraft(on_trace, "note", explanation="the trace's, to delete"),
            ],
        )
        renamed = await client.update_annotation(
            phoenix.project, verdict, AnnotationChange({"name": other, "label": "poor"})
        )
        assert (renamed.name, renamed.label, renamed.target) == (other, "poor", on_trace)
        await client.delete_annotation(phoenix.project, trace_note)
    on_the_trace = rest(
        phoenix.base_url, f"projects/{phoenix.project}/trace_annotations", trace_ids=[trace_id]
    )
    mine = [r for r in on_the_trace if r["name"] in (name, other, "note")]
    assert [(r["id"], r["name"], r["result"]["label"]) for r in mine] == [
        (verdict.id, other, "poor")
    ]
    read = rest(
        phoenix.base_url, f"projects/{phoenix.project}/span_annotations", span_ids=[span_id]
    )
    ids = {record["id"]: record for record in read}
    assert ids[kept.id or ""]["result"]["label"] == "curt"
    assert ids[kept.id or ""]["result"]["score"] == 0.5
    assert gone.id not in ids and note.id not in ids


async def test_what_phoenix_cannot_keep_is_refused_before_sending(
    scratch: Scratch,
) -> None:
    phoenix = scratch
    trace_id = scratch.traces[4]
    before = rest(
        phoenix.base_url, f"projects/{phoenix.project}/trace_annotations", trace_ids=[trace_id]
    )
    async with PhoenixClient(phoenix.base_url) as client:
        sent = len(client.log)
        with pytest.raises(ValidationFailed) as refused:
            await client.create_annotations(
                phoenix.project,
                [
                    AnnotationDraft(AnnotationTarget.trace(trace_id), unique("ok"), score=1),
                    AnnotationDraft(
                        AnnotationTarget.trace(trace_id), "note", score=0.5, explanation="x"
                    ),
                ],
            )
        assert refused.value.field_messages() == {
            "data[1].score": "Phoenix keeps a note's text only."
        }
        assert len(client.log) == sent  # nothing was sent
        with pytest.raises(NotOffered, match="trace, a span or a session"):
            await client.list_annotations(phoenix.project)
    after = rest(
        phoenix.base_url, f"projects/{phoenix.project}/trace_annotations", trace_ids=[trace_id]
    )
    assert json.dumps(after, sort_keys=True) == json.dumps(before, sort_keys=True)


def test_the_command_line_annotates_and_exports_through_phoenix(
    phoenix: SeededPhoenix,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`tracetui annotate` and `tracetui export` with a Phoenix's address (recognised as one):
    the id printed is the one Phoenix's REST lists; the export's line carries it."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # no config file of the user's
    monkeypatch.setenv("TRACETUI_BASE_URL", phoenix.base_url)
    monkeypatch.delenv("TRACETUI_API_KEY", raising=False)
    trace_id = phoenix.tool_trace_id  # its own annotation: no span of it gets a mark
    name = unique("cli")
    assert main(["annotate", trace_id, "--name", name, "--label", "ok", "--score", "1"]) == 0
    printed = capsys.readouterr().out.strip()
    read = rest(
        phoenix.base_url, f"projects/{phoenix.project}/trace_annotations", trace_ids=[trace_id]
    )
    assert [(r["id"], r["result"]["label"]) for r in read if r["name"] == name] == [(printed, "ok")]
    note = ["annotate", trace_id, "--name", "note", "--note", "from the shell", "--kind", "LLM"]
    assert main(note) != 0  # Phoenix keeps notes as HUMAN: refused, in words
    assert "HUMAN" in capsys.readouterr().err

    assert (
        main(["export", "--project", phoenix.project, "--range", "30d", "--format", "jsonl"]) == 0
    )
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    exported = next(line for line in lines if line["trace_id"] == trace_id)
    assert [a["id"] for a in exported["annotations"] if a["name"] == name] == [printed]


async def test_the_trace_list_sums_up_each_row_s_own_annotations(scratch: Scratch) -> None:
    """In the same GraphQL query as the rows' costs: the trace's own annotations (its spans'
    are not Phoenix's to give there: they show in the trace)."""
    trace_id, name = scratch.traces[0], unique("verdict")
    async with PhoenixClient(scratch.base_url) as client:
        for label in ("right", "wrong"):
            draft = AnnotationDraft(
                AnnotationTarget.trace(trace_id), name, label=label, identifier=label
            )
            await client.create_annotations(scratch.project, [draft])
        page = await client.list_traces(scratch.project, limit=1000)
    row = next(trace for trace in page.items if trace.id == trace_id)
    assert row.annotations[name]["label"] == "wrong" and row.annotations[name]["count"] == 2
    others = [t for t in page.items if t.id not in scratch.traces]
    assert others and all(t.annotations == {} for t in others)


async def test_a_bulk_write_on_every_trace_and_its_resend_add_one_each(scratch: Scratch) -> None:
    """The query line's bulk write (annotation_batches.BatchedWrite), its batch sent twice under
    one identifier (as after a failure whose outcome was unknown): one annotation a trace."""
    name = unique("triage")
    targets = [AnnotationTarget.trace(trace_id) for trace_id in scratch.traces]
    write = BatchedWrite(scratch.project, targets)
    async with PhoenixClient(scratch.base_url) as client:
        await write.run(client, Values(name, label="seen"))
        assert write.done
        await client.create_annotations(scratch.project, write.drafts(0, Values(name, "seen")))
    read = rest(
        scratch.base_url,
        f"projects/{scratch.project}/trace_annotations",
        trace_ids=scratch.traces,
        include_annotation_names=[name],
    )
    assert sorted(r["trace_id"] for r in read) == sorted(scratch.traces)
    assert {(r["result"]["label"], r["identifier"]) for r in read} == {("seen", write.identifier)}


async def test_a_trace_opened_carries_its_spans_annotations_from_one_graphql_query(
    scratch: Scratch,
) -> None:
    """The trace's spans' annotations come from GraphQL (the spans that have one), not from a
    REST request per 200 spans; the summaries are the local service's shape."""
    trace_id = scratch.traces[1]
    span_id = child_span(scratch, trace_id)
    name = unique("grounded")
    async with PhoenixClient(scratch.base_url) as client:
        await client.create_annotations(
            scratch.project,
            [AnnotationDraft(AnnotationTarget.span(trace_id, span_id), name, score=0.75)],
        )
        asked = len(client.log)
        trace = await client.get_trace(trace_id, scratch.project)
        urls = [entry.url for entry in list(client.log)[asked:]]
    assert not any("span_annotations" in url for url in urls), urls
    span = next(s for s in trace.spans if s.id == span_id)
    assert span.annotations[name]["score"] == 0.75 and span.annotations[name]["count"] == 1
    assert trace.annotations[name]["score"] == 0.75
    others = [s for s in trace.spans if s.id != span_id]
    assert others and all(not s.annotations for s in others)
