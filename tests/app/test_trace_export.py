"""Exporting a trace asks where (a path under ~/tracetui/exports filled in), writes there, says
the path, and never writes over a file that is there."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from textual.widgets import Input

from tests.support.app import loaded_traces, open_first_trace, running_app, showing, wait_for
from tests.support.service import RunningService
from tui.ui.app import StartAt
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.prompts import ExportPrompt

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"  # a whole id: the path is wider than the field


def toasts(app: object) -> list[str]:
    return [str(n.message) for n in app._notifications]  # type: ignore[attr-defined]


def exports_in(folder: Path) -> list[Path]:
    return list(folder.glob("trace-*.json"))


async def test_export_asks_where_and_says_the_path(
    service: RunningService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    async with running_app(service) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        app.export_trace(TRACE_ID, lambda: json.dumps({"id": "abc123"}))
        await wait_for(pilot, lambda: showing(app, ExportPrompt))
        field = app.screen.query_one("#export-path", Input)
        # Under the home folder as ~/, the file named with a readable local time.
        assert re.fullmatch(
            rf"~/tracetui/exports/trace-{TRACE_ID}-\d{{4}}-\d\d-\d\d_\d{{6}}\.json", field.value
        ), field.value
        # The path's start is what the field shows (its end once hid where it goes).
        await wait_for(pilot, lambda: field.render_line(0).text.lstrip().startswith("~/tracetui"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("exported to" in t for t in toasts(app)))
        [written] = (tmp_path / "tracetui" / "exports").iterdir()
        assert json.loads(written.read_text()) == {"id": "abc123"}
        assert str(written) in " ".join(toasts(app))
        assert not exports_in(tmp_path)  # nothing in the working directory

        app.export_trace("abc123", lambda: "{}")  # to a file that is there: refused, said
        await wait_for(pilot, lambda: showing(app, ExportPrompt))
        field = app.screen.query_one("#export-path")
        field.value = str(written)
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("already exists" in t for t in toasts(app)))
        assert json.loads(written.read_text()) == {"id": "abc123"}


async def test_e_on_a_trace_asks_where(
    service: RunningService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    async with running_app(service, StartAt("proj_support")) as (app, pilot):
        await loaded_traces(app, pilot)
        screen = await open_first_trace(app, pilot)
        await pilot.press("e")
        await wait_for(pilot, lambda: showing(app, ExportPrompt))
        await pilot.press("enter")
        await wait_for(pilot, lambda: showing(app, type(screen)))
        await wait_for(pilot, lambda: any((tmp_path / "tracetui" / "exports").glob("*.json")))
