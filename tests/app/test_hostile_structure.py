"""Hostile structure through the client into the trace screen: cycles, duplicates, missing ids,
orphans, 100,000 attributes, attributes 10,000 deep, absurd numbers and times, megabyte strings.
Nothing hangs, nothing recurses without bound, nothing crashes, and the oddities are flagged."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from tests.support.app import detail_lines, tree_lines, tree_shown, wait_for
from tests.support.hostile import HOSTILE, MEGABYTE
from tui.api import ApiClient
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.prompts import ExportPrompt
from tui.ui.widgets.span_tree import SpanTreeView

DEEP = "[" * 10_000 + '"bottom"' + "]" * 10_000


def span(span_id: Any, parent: Any = None, **fields: Any) -> dict[str, Any]:
    return {"id": span_id, "parent_id": parent, "name": f"span {span_id}", **fields}


SPANS = [
    span("root", started_at="2026-11-21T09:00:00Z", duration_ms=1000),
    span("self", "self"),  # its own parent
    span("a", "b"),  # a and b: a two-span cycle
    span("b", "a"),
    span("dup", "root"),
    span("dup", "root", name="the duplicate"),
    span(None, "root", name="no id"),
    span("orphan", "not-in-this-trace"),
    span("wide", "root", attributes={f"k{i}": i for i in range(100_000)}),
    span("deep", "root", attributes={"deep": "DEEP-PLACEHOLDER"}),
    span("numbers", "root", duration_ms=-5, input_tokens=-1, output_tokens=10**30, cost_usd=1e308),
    span("nan", "root", duration_ms="NAN-PLACEHOLDER", cost_usd="INF-PLACEHOLDER"),
    span("past", "root", started_at="0001-01-01T00:00:00Z", ended_at="9999-12-31T23:59:59Z"),
    span("epoch", "root", started_at=10**20, ended_at=-(10**20)),
    span("mega", "root", name=MEGABYTE, model=HOSTILE, error_message=MEGABYTE),
]


def body() -> bytes:
    text = json.dumps({"id": "hostile-structure", "name": HOSTILE, "spans": SPANS})
    text = text.replace('"DEEP-PLACEHOLDER"', DEEP)
    text = text.replace('"NAN-PLACEHOLDER"', "NaN").replace('"INF-PLACEHOLDER"', "Infinity")
    return text.encode()


def answering(trace: bytes) -> Callable[[httpx.Request], httpx.Response]:
    """A server with no projects, answering `trace` for any trace."""

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/projects"):
            return httpx.Response(200, json={"data": []})
        return httpx.Response(200, content=trace, headers={"content-type": "application/json"})

    return handler


async def test_a_trace_of_hostile_structure_opens_and_every_span_shows() -> None:
    transport = httpx.MockTransport(answering(body()))
    async with ApiClient("http://hostile.example/v1", SecretStr("k"), transport=transport) as c:
        app = TraceTuiApp(c, StartAt(trace_id="hostile-structure"))
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: tree_shown(app))
            view = app.screen.query_one(SpanTreeView)
            tree = view.trace_tree
            assert tree.size == len(SPANS)  # nothing lost
            flags = {tree.keys[i]: tree.flags[i] for i in range(tree.size)}
            assert "cycle" in flags["self"] and "orphan" in flags["orphan"]
            assert any("cycle" in flags[k] for k in ("a", "b"))
            assert "duplicate id" in flags["dup#5"] and "no id" in flags["#6"]
            await pilot.press("plus")
            for _ in range(tree.size):  # every span, in the tree and the detail panel
                await pilot.press("down")
            await pilot.pause()
            assert [n.message for n in app._notifications] == []  # no "tracetui bug", no error
            # The megabyte span: its row is cut; its fields are folded to their first rows,
            # which say how much more there is (not wrapped whole up front).
            view.move_to(view.view.rows.index(tree.keys.index("mega")))
            await pilot.pause()
            fields = detail_lines(app)
            assert sum(map(len, fields)) < 20_000
            assert sum("more characters · enter unfolds" in line for line in fields) == 2
            assert all(len(line) <= 120 for line in tree_lines(app))
            # The deep attributes are kept down to 200 levels; the rest says it was cut.
            deep = tree.spans[tree.keys.index("deep")].attributes["deep"]
            while isinstance(deep, list):
                deep = deep[0]
            assert "nested deeper than 200 levels" in deep
            assert app.is_running


async def test_lone_surrogates_are_shown_copied_and_exported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """JSON may escape half a UTF-16 pair ("\\ud800"): Python reads it into a str that cannot
    be encoded. It is shown visibly, and copying or exporting the span does not crash."""
    spans = [span("root", name="lone \ud800 half", attributes={"\udfff key": "v\ud83d"})]
    payload = json.dumps({"id": "surrogates", "name": "t\udc00", "spans": spans}).encode()
    assert b"\\ud800" in payload  # as a server would send it: valid JSON, ASCII only
    transport = httpx.MockTransport(answering(payload))
    monkeypatch.setenv("HOME", str(tmp_path))  # the export's default folder is under it
    async with ApiClient("http://hostile.example/v1", SecretStr("k"), transport=transport) as c:
        app = TraceTuiApp(c, StartAt(trace_id="surrogates"))
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: tree_shown(app))
            assert "lone <U+D800" in tree_lines(app)[0]
            assert any('<U+DFFF> key: "v<U+D83D>"' in line for line in detail_lines(app))
            await pilot.press("y", "e")
            await wait_for(pilot, lambda: isinstance(app.screen, ExportPrompt))
            await pilot.press("enter")
            await wait_for(pilot, lambda: any(exports(tmp_path)))
            assert app.is_running
            assert not [n for n in app._notifications if n.severity == "error"]
            assert json.loads(app.clipboard)["name"] == "lone \ud800 half"
    assert read_export(tmp_path)["spans"][0]["name"] == "lone \ud800 half"


def exports(home: Path) -> list[Path]:
    """The traces exported under `home` (the export prompt's default folder)."""
    return list((home / "tracetui" / "exports").glob("trace-surrogates-*.json"))


def read_export(folder: Path) -> Any:
    """The one exported trace in `folder`: valid UTF-8 JSON, with the halves escaped."""
    (exported,) = exports(folder)
    return json.loads(exported.read_text(encoding="utf-8"))
