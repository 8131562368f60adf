"""The diff screen with Pilot against the local service, at 80x24, keyboard only, on the demo's
summarizer (tui/demo/regression.py): from a trace, D compares it with its last good run and the
first lines say why it failed; from the trace list, m marks A and D diffs another against it;
n/N go from difference to difference; p picks another A (also when there is no last good one);
every key is in the footer or `?`; span strings reach the screen only made visible."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from typing import Any

from textual.widgets import Input, OptionList

from tests.support.app import loaded_traces, rendered_text, running_app, showing, wait_for
from tests.support.chat_traces import SpanSpec, add_trace
from tests.support.service import RunningService
from tui.demo.regression import NAME, PROJECT
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.diff import DiffScreen
from tui.ui.screens.diff_pick import PickDiffBase
from tui.ui.screens.help import HelpScreen, keys_table
from tui.ui.screens.trace_detail import TraceDetailScreen
from tui.ui.widgets.diff_detail import DiffDocument
from tui.ui.widgets.diff_tree import DiffTreeView
from tui.ui.widgets.trace_table import TraceTable


def summarizer_runs(service: RunningService) -> list[dict[str, Any]]:
    since = (datetime.now(timezone.utc) - timedelta(days=3)).isoformat()
    params = {"project_id": PROJECT, "name": NAME, "limit": 100, "from": since}
    with service.client() as api:
        rows: list[dict[str, Any]] = api.get("traces", params=params).json()["data"]
    return rows


def diff_loaded(app: TraceTuiApp) -> bool:
    screen = app.screen
    return (
        showing(app, DiffScreen)
        and screen.loaded is not None
        and bool(screen.query(DiffTreeView))
        and screen.query_one(DiffTreeView).size.height > 0
    )


def detail_text(app: TraceTuiApp) -> str:
    return "\n".join(app.screen.query_one(DiffDocument).text_lines())


def tree_text(app: TraceTuiApp) -> list[str]:
    view = app.screen.query_one(DiffTreeView)
    return [view.render_line(y).text for y in range(view.size.height)]


async def open_diff_from_trace(app: TraceTuiApp, pilot: Any) -> DiffScreen:
    await wait_for(pilot, lambda: showing(app, TraceDetailScreen) and app.screen.trace is not None)
    await pilot.press("D")
    await wait_for(pilot, lambda: diff_loaded(app), what="the diff loaded")
    assert isinstance(app.screen, DiffScreen)
    return app.screen


async def test_d_on_a_failed_trace_shows_why_in_the_first_lines(service: RunningService) -> None:
    runs = summarizer_runs(service)
    b, good = runs[0], next(r for r in runs if r["status"] == "ok")
    start = StartAt(project_id=PROJECT, trace_id=b["id"])
    async with running_app(service, start) as (app, pilot):
        screen = await open_diff_from_trace(app, pilot)
        top = rendered_text(screen.query_one("#traces")).splitlines()
        assert top[0].startswith(f"A  {good['id'][:15]}") and top[1].startswith(
            f"B  {b['id'][:15]}"
        )
        assert top[2].startswith(f"A is the last good {NAME}, ") and "p picks another" in top[2]
        summary = rendered_text(screen.query_one("#summary")).splitlines()
        assert summary[0].startswith("· write_summary failed: BadRequestError")
        assert (
            summary[1]
            == "· the model changed claude-3-5-sonnet-20241022 → gpt-4o-mini in write_summary"
        )
        # The first row's detail holds the whole summary (the top has room for two sentences).
        text = detail_text(app)
        assert "· 5 load_revision tool calls added" in text
        assert "· 1 check_summary model call removed" in text
        # The aligned tree: the three revisions both loaded are the same, five are added.
        rows = tree_text(app)
        assert rows[0].startswith("~ ▾ ✗ summarize_page")
        assert [row[:1] for row in rows[2:5]] == ["=", "=", "="]
        assert rows[5].startswith("+     load_revision #4")


async def test_n_and_N_go_from_difference_to_difference(service: RunningService) -> None:
    b = summarizer_runs(service)[0]
    async with running_app(service, StartAt(project_id=PROJECT, trace_id=b["id"])) as (app, pilot):
        screen = await open_diff_from_trace(app, pilot)
        view = screen.query_one(DiffTreeView)
        seen = []
        for _ in range(7):
            await pilot.press("n")
            await wait_for(pilot, lambda: view.row is not None)
            seen.append(view.diff.name(view.row or 0))
        assert seen == ["load_revision"] * 5 + ["write_summary", "check_summary"]
        await wait_for(
            pilot, lambda: "− only in A" in detail_text(app) or "- only in A" in detail_text(app)
        )
        await pilot.press("N")
        await wait_for(
            pilot, lambda: "model      claude-3-5-sonnet-20241022 → gpt-4o-mini" in detail_text(app)
        )
        text = detail_text(app)
        assert "input 1 · system  ~ changed" in text
        assert "- Summarize the last three changes" in text
        assert "+ Summarize every change" in text
        assert "error  + only in B" in text
        # The pair's diff takes the focus (tab) and the whole screen (z).
        await pilot.press("tab")
        await wait_for(pilot, lambda: app.focused is screen.query_one(DiffDocument))
        await pilot.press("z")
        await wait_for(pilot, lambda: screen.has_class("-zoom"))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not screen.has_class("-zoom"))


async def test_mark_on_the_list_then_diff_another_against_it(service: RunningService) -> None:
    runs = summarizer_runs(service)
    b, a = runs[0], next(r for r in runs if r["status"] == "ok")
    async with running_app(service, StartAt(project_id=PROJECT)) as (app, pilot):
        traces = await loaded_traces(app, pilot)
        table = traces.query_one(TraceTable)

        def put_cursor_on(trace_id: str) -> None:
            table.move_to(next(n for n, t in enumerate(table.rows) if t.id == trace_id))

        await wait_for(pilot, lambda: any(t.id == a["id"] for t in table.rows))
        put_cursor_on(a["id"])
        await pilot.press("m")
        await wait_for(pilot, lambda: app.diff_mark is not None)
        assert app.diff_mark == (a["id"], PROJECT, app.diff_mark[2])
        marked = next(n for n, t in enumerate(table.rows) if t.id == a["id"])
        put_cursor_on(b["id"])
        await pilot.pause()
        row = table.render_row(marked, table.size.width, False).text
        assert row.startswith("A") and row.strip()[0] == "A"  # the list shows which one is A
        await pilot.press("D")
        await wait_for(pilot, lambda: diff_loaded(app))
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        assert screen.loaded is not None
        assert (screen.loaded.a.id, screen.loaded.b.id) == (a["id"], b["id"])
        assert screen.found is None  # A was given, not looked for
        # x swaps them: what B added is now what A alone has.
        await pilot.press("x")
        await wait_for(pilot, lambda: screen.loaded is not None and screen.loaded.a.id == b["id"])
        assert tree_text(app)[5].startswith("−     load_revision #4")


async def test_no_last_good_one_says_so_and_p_picks_another(service: RunningService) -> None:
    runs = summarizer_runs(service)
    first, newest = runs[-1], runs[0]
    start = StartAt(project_id=PROJECT, trace_id=first["id"])
    async with running_app(service, start) as (app, pilot):
        await wait_for(
            pilot, lambda: showing(app, TraceDetailScreen) and app.screen.trace is not None
        )
        await pilot.press("D")
        await wait_for(pilot, lambda: showing(app, DiffScreen) and app.screen.has_class("-failed"))
        message = rendered_text(app.screen.query_one("#message"))
        assert f"No earlier trace named {NAME} without an error" in message
        assert "Press p to compare it with another trace" in message
        await pilot.press("p")
        await wait_for(pilot, lambda: showing(app, PickDiffBase))
        field = app.screen.query_one("#trace-id", Input)
        await wait_for(pilot, lambda: app.focused is field)
        await pilot.press(*str(newest["id"]), "enter")
        await wait_for(pilot, lambda: diff_loaded(app))
        screen = app.screen
        assert isinstance(screen, DiffScreen) and screen.loaded is not None
        assert (screen.loaded.a.id, screen.loaded.b.id) == (newest["id"], first["id"])


async def test_p_offers_the_earlier_runs_the_search_saw(service: RunningService) -> None:
    runs = summarizer_runs(service)
    b = runs[0]
    async with running_app(service, StartAt(project_id=PROJECT, trace_id=b["id"])) as (app, pilot):
        screen = await open_diff_from_trace(app, pilot)
        first_a = screen.loaded.a.id if screen.loaded else None
        await pilot.press("p")
        await wait_for(pilot, lambda: showing(app, PickDiffBase))
        options = app.screen.query_one(OptionList)
        prompts = [str(options.get_option_at_index(n).prompt) for n in range(options.option_count)]
        # The local service was asked for good runs only: those, newest first.
        assert len(prompts) >= 2 and all(p.startswith("✓ ") for p in prompts)
        assert prompts[0].endswith(str(first_a)[:15] + "…")  # the id, cut
        await pilot.press("down", "enter")  # the one before
        await wait_for(
            pilot,
            lambda: (
                showing(app, DiffScreen)
                and app.screen.loaded is not None
                and app.screen.loaded.a.id not in (first_a, None)
            ),
        )


async def test_every_key_is_in_the_footer_or_help(service: RunningService) -> None:
    b = summarizer_runs(service)[0]
    async with running_app(service, StartAt(project_id=PROJECT, trace_id=b["id"])) as (app, pilot):
        screen = await open_diff_from_trace(app, pilot)
        await wait_for(pilot, lambda: bool(list(screen.query("FooterKey"))))
        footer = " ".join(
            f"{key.key_display} {key.description}" for key in screen.query("FooterKey")
        )
        for shown in ("space Fold", "n Next diff", "tab Pane", "p Other A", "? Keys", "q Quit"):
            assert shown in footer
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: showing(app, HelpScreen))
        ids = {str(cell) for cell in keys_table(screen).columns[2].cells}
        for binding_id in (
            "diff.pick",
            "diff.swap",
            "diff.zoom",
            "diff.search",
            "diff.open_b",
            "difftree.next",
            "difftree.previous",
            "difftree.fold_unchanged",
        ):
            assert binding_id in ids


async def test_span_strings_reach_the_screen_made_visible(service: RunningService) -> None:
    """A name holding markup and an escape sequence, an error holding a bidi override: shown
    as characters, acting as nothing."""
    project = "proj_hostile_diff"
    hostile = "[@click=app.quit]boom[/] \x1b[2J\u202e"
    if service.store.get_project(project) is None:
        start = int(time.time() * 1000) - 60_000
        for n, (trace_id, error) in enumerate((("hostile-a", None), ("hostile-b", hostile))):
            spans = [
                SpanSpec("r", None, "root", "chain", 0, 900, error=error),
                SpanSpec(
                    "c",
                    "r",
                    hostile,
                    "llm",
                    1,
                    50,
                    "gpt-4o",
                    (10, 2),
                    0.001,
                    {"k": hostile if error else "x"},
                ),
            ]
            add_trace(
                service.store,
                trace_id,
                spans,
                project_id=project,
                name="root",
                started_ms=start + n * 1000,
            )
    async with running_app(service, StartAt(project_id=project)) as (app, pilot):
        await loaded_traces(app, pilot)
        app.open_diff("hostile-b", project, "hostile-a")
        await wait_for(pilot, lambda: diff_loaded(app))
        await pilot.press("n", "n")
        await pilot.pause()
        shown = (
            "\n".join(tree_text(app))
            + detail_text(app)
            + rendered_text(app.screen.query_one("#summary"))
        )
        assert "\x1b" not in shown and "\u202e" not in shown
        assert "[@click=app.quit]boom[/]" in shown and "␛[2J" in shown
        assert app.is_running and showing(app, DiffScreen)


async def test_another_a_that_cannot_be_loaded_leaves_the_diff_shown(
    service: RunningService,
) -> None:
    b = summarizer_runs(service)[0]
    async with running_app(service, StartAt(project_id=PROJECT, trace_id=b["id"])) as (app, pilot):
        screen = await open_diff_from_trace(app, pilot)
        shown_a = screen.loaded.a.id if screen.loaded else None
        await pilot.press("p")
        await wait_for(pilot, lambda: showing(app, PickDiffBase))
        await pilot.press("tab")  # from the list to the id field
        field = app.screen.query_one("#trace-id", Input)
        await wait_for(pilot, lambda: app.focused is field)
        await pilot.press(*"no-such-trace", "enter")
        await wait_for(
            pilot,
            lambda: any("No trace no-such-trace" in str(n.message) for n in app._notifications),
            what="the app says which trace was not found",
        )
        assert showing(app, DiffScreen) and screen.loaded is not None
        assert screen.loaded.a.id == shown_a and screen.a_id == shown_a
        assert not screen.has_class("-failed")
