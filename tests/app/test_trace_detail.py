"""A trace's screen: export and copy, span search, and span names and attributes shown
literally, triggering nothing when clicked."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.support.app import (
    detail_lines,
    open_first_trace,
    running_app,
    showing,
    tree_lines,
    tree_shown,
    wait_for,
)
from tests.support.service import RunningService
from tui.server.store.rows import SpanRow, TraceRow, now_ms
from tui.ui.app import StartAt
from tui.ui.screens.prompts import ExportPrompt
from tui.ui.screens.trace_detail import TraceDetailScreen
from tui.ui.widgets.span_tree import SpanTreeView


async def test_export_and_copy(
    service: RunningService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # the export's default folder is under it
    folder = tmp_path / "tracetui" / "exports"
    async with running_app(service, StartAt(project_id="proj_agent")) as (app, pilot):
        detail = await open_first_trace(app, pilot)
        await pilot.press("down", "y")
        copied = json.loads(app.clipboard)
        assert copied["id"] == detail.query_one(SpanTreeView).trace_tree.spans[1].id
        await pilot.press("e")
        await wait_for(pilot, lambda: showing(app, ExportPrompt))
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(folder.glob("trace-*.json")))
        exported = sorted(folder.glob("trace-*.json"))
        assert len(exported) == 1
        body = json.loads(exported[0].read_text())
        assert body["id"] == detail.trace_id and len(body["spans"]) == body["span_count"]


def a_trace_with_a_span_named(service: RunningService, project_id: str, name: str) -> str:
    """A trace of the project with a span called `name` (other tests add newer traces, of
    other shapes, to the demo's projects)."""
    traces, _ = service.store.list_traces(project_id, 0, 2**62, 500)
    return next(t.id for t in traces if any(s.name == name for s in service.store.list_spans(t.id)))


async def test_span_search_jumps_to_the_next_match(service: RunningService) -> None:
    trace_id = a_trace_with_a_span_named(service, "proj_support", "draft_reply")
    async with running_app(service, StartAt(trace_id=trace_id)) as (app, pilot):
        await wait_for(pilot, lambda: tree_shown(app))
        view = app.screen.query_one(SpanTreeView)
        await pilot.press("slash", *"draft_reply", "enter")
        position = view.position
        assert position is not None and view.trace_tree.spans[position].name == "draft_reply"
        await pilot.press("escape")
        assert isinstance(app.screen, TraceDetailScreen)  # the first escape only closes search


HOSTILE = "[@click=app.quit]x[/]"


async def test_hostile_span_names_are_shown_literally_and_trigger_nothing(
    service: RunningService,
) -> None:
    trace_id = f"hostile-{uuid.uuid4().hex[:6]}"
    t = now_ms() - 1000
    project = f"proj_{trace_id}"
    attrs = json.dumps(
        {"[b]key[/b]": "\x1b]52;c;cHduZWQ=\x07", "nested": {"x": "[@click=app.quit]y"}}
    )
    with service.store.transaction() as db:
        service.store.insert_project(db, HOSTILE, HOSTILE, 30, project_id=project)
        service.store.insert_traces(
            db,
            [TraceRow(trace_id, project, HOSTILE, t, 10, 2, 0, 0, 0.0, "error", 1, "{}")],
            [
                SpanRow(
                    trace_id, "a", None, HOSTILE, "agent", None, t, 10, 0, 0, 0.0, "ok", None, attrs
                ),
                SpanRow(
                    trace_id,
                    "b",
                    "a",
                    "clear\x1b[2Jscreen",
                    "llm",
                    "[red]m[/red]",
                    t + 1,
                    5,
                    1,
                    1,
                    0.0,
                    "error",
                    "boom \x1b[2J [@click=app.quit]q[/]",
                    "{}",
                ),
            ],
        )
    async with running_app(service, StartAt(trace_id=trace_id), size=(160, 48)) as (app, pilot):
        await wait_for(pilot, lambda: tree_shown(app))
        lines = tree_lines(app)
        assert HOSTILE in lines[0]
        assert "clear␛[2Jscreen" in lines[1] and "\x1b" not in "".join(lines)
        await pilot.press("down")
        for y in range(3, 20):
            await pilot.click(offset=(10, y))  # clicking anything triggers nothing
        detail = "\n".join(detail_lines(app))
        assert "␛[2J [@click=app.quit]q[/]" in detail
        assert app.is_running and isinstance(app.screen, TraceDetailScreen)


async def test_the_tree_header_follows_the_tree_width(service: RunningService) -> None:
    """The column header is drawn to the span tree's own width whenever that changes, not only
    when the terminal does (the tree gets its first width after the frame it was mounted in)."""
    from textual.widgets import Static

    from tui.ui.widgets.span_tree import header_line

    async with running_app(service, StartAt(project_id="proj_agent")) as (app, pilot):
        screen = await open_first_trace(app, pilot)
        view = screen.query_one(SpanTreeView)
        header = screen.query_one("#tree-header", Static)
        screen.query_one("#tree-pane").styles.width = 50  # the tree alone narrows
        await wait_for(
            pilot,
            lambda: (
                0 < view.content_width <= 50
                and str(header.render()) == header_line(view.content_width)
            ),
            what="the header drawn to the narrower tree",
        )
