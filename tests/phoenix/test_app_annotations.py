"""Annotating from the keyboard with Pilot against a real Phoenix: a span's verdict and a note
written from the trace detail are read back by Phoenix's own REST (plain httpx); the trace,
opened again, marks the span and sums its annotations up; a note, which Phoenix cannot change,
is refused in words in the form, keeping what was typed."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.phoenix.conftest import SeededPhoenix, SessionsSeeded
from tests.phoenix.test_app import phoenix_app
from tests.support.app import has_focus, rendered_text, showing, tree_lines, tree_shown, wait_for
from tui.api.phoenix.client import PhoenixClient
from tui.ui.app import StartAt
from tui.ui.screens.annotate_form import AnnotateForm
from tui.ui.screens.annotations import AnnotationsScreen
from tui.ui.screens.trace_detail import TraceDetailScreen
from tui.ui.widgets.span_tree import SpanTreeView


async def project_gid(phoenix: SeededPhoenix, name: str) -> str:
    async with PhoenixClient(phoenix.base_url) as client:
        projects = await client.list_projects()
    return next(p.id for p in projects if p.name == name and p.id)


def span_annotations(sessions: SessionsSeeded, span_id: str) -> list[dict[str, Any]]:
    """The span's annotations as Phoenix's REST lists them (not through tracetui)."""
    answer = httpx.get(
        f"{sessions.base_url}/v1/projects/{sessions.project}/span_annotations",
        params={"span_ids": [span_id], "limit": 1000},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    data: list[dict[str, Any]] = answer.json()["data"]
    return data


async def opened_detail(app: Any, pilot: Any) -> TraceDetailScreen:
    await wait_for(
        pilot,
        lambda: showing(app, TraceDetailScreen) and tree_shown(app) and len(tree_lines(app)) >= 2,
        what="the trace's tree",
    )
    screen = app.screen
    assert isinstance(screen, TraceDetailScreen)
    return screen


async def form(app: Any, pilot: Any) -> AnnotateForm:
    await wait_for(pilot, lambda: showing(app, AnnotateForm), what="the annotate form")
    await pilot.press("tab")
    await wait_for(pilot, lambda: has_focus(app, "#field-name"), what="the name field")
    screen = app.screen
    assert isinstance(screen, AnnotateForm)
    return screen


async def test_a_span_annotated_from_the_keyboard_is_read_back_by_phoenix(
    phoenix: SeededPhoenix, phoenix_sessions: SessionsSeeded
) -> None:
    """In the sessions project, whose trees no other test reads line by line."""
    name = f"correctness_{uuid.uuid4().hex[:6]}"
    project = await project_gid(phoenix, phoenix_sessions.project)
    start = StartAt(project_id=project, trace_id=phoenix_sessions.turns["sess-alpha"][-1])
    async with phoenix_app(phoenix, start, size=(80, 24)) as (app, pilot):
        detail = await opened_detail(app, pilot)
        await pilot.press("down")  # the tree's cursor onto the model call
        await wait_for(pilot, lambda: app.screen.query_one(SpanTreeView).position == 1)
        tree = detail.trace_tree
        assert tree is not None
        span_id = tree.spans[1].id
        assert span_id
        await pilot.press("A")
        annotate = await form(app, pilot)
        assert "span llm" in rendered_text(annotate.query_one("#target"))
        await pilot.press(*name, "tab", *"wrong", "tab", *"0.2", "tab", *"quoted the old policy")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.screen is detail and 1 in detail.marked, what="a mark")
        assert "✎" in tree_lines(app)[1]

        await pilot.press("A")
        await form(app, pilot)
        await pilot.press(*"note", "tab", "tab", "tab", *"the retriever missed it")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.screen is detail, what="the note stored")

    stored = span_annotations(phoenix_sessions, span_id)
    mine = [r for r in stored if r["name"] == name]
    assert [(r["result"], r["annotator_kind"]) for r in mine] == [
        ({"label": "wrong", "score": 0.2, "explanation": "quoted the old policy"}, "HUMAN")
    ]
    notes = [r["result"]["explanation"] for r in stored if r["name"] == "note"]
    assert "the retriever missed it" in notes

    async with phoenix_app(phoenix, start, size=(80, 24)) as (app, pilot):
        detail = await opened_detail(app, pilot)
        await wait_for(
            pilot, lambda: 1 in detail.marked, what="the annotated span marked when opened"
        )
        await wait_for(
            pilot,
            lambda: f"{name} wrong" in rendered_text(detail.query_one("#summary")),
            what="the trace's annotations under its summary",
        )


async def test_a_note_phoenix_cannot_change_is_said_and_kept(
    phoenix: SeededPhoenix, phoenix_sessions: SessionsSeeded
) -> None:
    text = f"first words {uuid.uuid4().hex[:6]}"
    trace_id = phoenix_sessions.turns["sess-beta"][-1]
    async with httpx.AsyncClient(timeout=30) as http:
        written = await http.post(
            f"{phoenix.base_url}/v1/trace_notes",
            json={"data": {"trace_id": trace_id, "note": text}},
        )
    assert written.status_code == 200, written.text
    project = await project_gid(phoenix, phoenix_sessions.project)
    start = StartAt(project_id=project, trace_id=trace_id)
    async with phoenix_app(phoenix, start, size=(80, 24)) as (app, pilot):
        await opened_detail(app, pilot)
        await pilot.press("v")
        await wait_for(
            pilot,
            lambda: (
                showing(app, AnnotationsScreen)
                and any(a.explanation == text for a in app.screen.annotations)
            ),
            what="the note listed",
        )
        listing = app.screen
        assert isinstance(listing, AnnotationsScreen)
        row = next(i for i, a in enumerate(listing.annotations) if a.explanation == text)
        for _ in range(row):
            await pilot.press("down")
        await wait_for(
            pilot, lambda: listing.selected is not None and listing.selected.explanation == text
        )
        await pilot.press("e")
        await wait_for(pilot, lambda: showing(app, AnnotateForm), what="the edit form")
        annotate = app.screen
        assert isinstance(annotate, AnnotateForm)
        annotate.query_one("#field-note").focus()
        await wait_for(pilot, lambda: has_focus(app, "#field-note"), what="the note's field")
        await pilot.press("end", *" and more")
        await pilot.press("ctrl+s")
        await wait_for(
            pilot,
            lambda: "cannot change a note" in rendered_text(annotate.query_one("#form-error")),
            what="the refusal in words",
        )
        assert showing(app, AnnotateForm)
        assert annotate.values()["note"] == f"{text} and more"  # what was typed stays
    async with httpx.AsyncClient(timeout=30) as http:
        listed = await http.get(
            f"{phoenix.base_url}/v1/projects/{phoenix_sessions.project}/trace_annotations",
            params={"trace_ids": [trace_id], "limit": 1000},
        )
    notes = listed.json()["data"]
    assert text in [n["result"]["explanation"] for n in notes if n["name"] == "note"]
