"""A collapsed span says how many errors its hidden descendants have (a red ✗ count beside its
name), so no failure goes unseen under a folded node; an expanded one adds nothing."""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import SecretStr

from tests.support.app import tree_lines, tree_shown, wait_for
from tui.api import ApiClient
from tui.api.models import Span
from tui.model.spans import build_tree
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.widgets.span_tree import ERROR_NAME, SpanTreeView

START = "2026-11-21T09:00:00Z"


def span(span_id: str, parent: str | None, error: bool = False, **more: Any) -> dict[str, Any]:
    return {
        "id": span_id,
        "parent_id": parent,
        "name": span_id,  # short: the tree's name column is narrow beside the detail pane
        "started_at": START,
        "duration_ms": 100,
        "status": "error" if error else "ok",
        **more,
    }


# root ─┬─ step ── call (error)    the error is step's child, root's grandchild
#       ├─ fine ── quiet
#       └─ tool (error)
SPANS = [
    span("root", None, name="root of a long run"),
    span("step", "root"),
    span("call", "step", error=True),
    span("fine", "root"),
    span("quiet", "fine"),
    span("tool", "root", error=True),
]


def answering(request: httpx.Request) -> httpx.Response:
    if request.url.path.endswith("/projects"):
        return httpx.Response(200, json={"data": []})
    return httpx.Response(200, json={"id": "folded-errors", "name": "t", "spans": SPANS})


def line_of(app: TraceTuiApp, name: str) -> str:
    found = [line for line in tree_lines(app) if f" {name} " in f" {line}"]
    assert len(found) == 1, tree_lines(app)
    return found[0]


def test_hidden_errors_count_only_the_spans_below() -> None:
    tree = build_tree([Span.model_validate(s) for s in SPANS])
    by_key = {key: i for i, key in enumerate(tree.keys)}
    assert tree.hidden_errors(by_key["root"]) == 2  # call and tool; root itself is fine
    assert tree.hidden_errors(by_key["step"]) == 1
    assert tree.hidden_errors(by_key["fine"]) == 0
    assert tree.hidden_errors(by_key["call"]) == 0  # its own error is not hidden


async def test_a_collapsed_span_shows_the_errors_it_hides() -> None:
    transport = httpx.MockTransport(answering)
    async with ApiClient("http://folded.example/v1", SecretStr("k"), transport=transport) as c:
        app = TraceTuiApp(c, StartAt(trace_id="folded-errors"))
        async with app.run_test(size=(120, 50)) as pilot:
            await wait_for(pilot, lambda: tree_shown(app))
            view = app.screen.query_one(SpanTreeView)
            await wait_for(pilot, lambda: " tool" in "".join(tree_lines(app)))
            # Open: the erroring spans show themselves, their ancestors add nothing.
            assert "✗" not in line_of(app, "root") and "✗" not in line_of(app, "step")
            assert "✗ call" in line_of(app, "call")

            view.focus()
            await pilot.press("down", "space")  # fold `step`, hiding its erroring child
            await wait_for(pilot, lambda: view.view.is_collapsed(1) and view.position == 1)
            step = line_of(app, "step")
            assert "✗ 1" in step and step.index("step") < step.index("✗ 1"), step
            assert " call" not in "".join(tree_lines(app))
            lengths = {view.render_line(row).cell_length for row in range(3)}
            assert len(lengths) == 1  # the row with the count keeps the width of the others

            await pilot.press("down", "space")  # fold `fine`: nothing below it fails
            await wait_for(pilot, lambda: view.view.is_collapsed(3))
            assert "✗" not in line_of(app, "fine")

            await pilot.press("minus")  # fold everything: root hides both errors
            await wait_for(pilot, lambda: len(tree_lines(app)[0].strip()) > 0 and view.cursor == 0)
            await wait_for(pilot, lambda: "✗ 2" in line_of(app, "root"))
            segments = list(view.render_row(0, 100, selected=False))  # the cursor row is one style
            badge = [seg for seg in segments if "✗ 2" in seg.text]
            assert badge and badge[0].style and badge[0].style.color == ERROR_NAME.color
            narrow = view.render_row(0, 60, selected=False).text  # the narrowest name column
            assert "✗ 2" in narrow and "…" in narrow  # the name is cut, the count kept whole

            await pilot.press("plus")  # open again: the children show themselves
            await wait_for(pilot, lambda: " call" in "".join(tree_lines(app)))
            assert "✗" not in line_of(app, "root") and "✗" not in line_of(app, "step")
