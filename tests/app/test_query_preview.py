"""The trace list's preview of what is typed in the query line, with Pilot against the search
contract's mock server (tests/app/test_search.py): it says over which rows it is, never counts
rows loaded for another query, names the conditions the loaded rows cannot judge, and says what
is wrong with what is typed while the list stays as it was."""

from __future__ import annotations

from tests.app.test_search import ROWS, SearchServer, app_for, header
from tests.support.app import loaded_traces, rendered_text, settled, wait_for
from tui.ui.screens.traces import TracesScreen
from tui.ui.widgets.query_line import QueryLine
from tui.ui.widgets.trace_table import TraceTable


def preview(screen: TracesScreen) -> str:
    return " ".join(rendered_text(screen.query_one("#preview")).split())


def ids(screen: TracesScreen) -> list[str]:
    return [trace.id or "" for trace in screen.query_one(TraceTable).rows]


async def test_a_preview_over_rows_loaded_for_another_query_is_not_counted() -> None:
    """With `error` found by the server, typing `refund` does not count the refunds among the
    errors: the list stays, the header keeps the query's own words and count, and the line
    says the loaded rows cannot preview it. Enter then finds them."""
    server = SearchServer()
    client, app = app_for(server)
    errors = [r["id"] for r in ROWS if r["status"] == "error"]
    refunds = [r["id"] for r in ROWS if "refund" in f"{r['name']} {r['output_preview']}"]
    async with client, app.run_test(size=(80, 24)) as pilot:
        screen = await loaded_traces(app, pilot)
        await pilot.press("slash", *"error", "enter")
        await wait_for(pilot, lambda: screen.state.asked is not None and not screen.fetching)
        assert ids(screen) == errors
        await pilot.press("slash", "ctrl+u", *"refund")
        await wait_for(pilot, lambda: screen.query_one(QueryLine).value == "refund")
        await settled(pilot)
        assert ids(screen) == errors  # the list as it was
        said = preview(screen)
        assert "no preview" in said and "only those of error" in said
        assert "enter asks the server" in said
        top = header(screen)
        assert f"{len(errors)} found" in top and " 0 found" not in top
        await pilot.press("enter")
        await wait_for(pilot, lambda: not screen.fetching and ids(screen) == refunds)
        assert f"{len(refunds)} found" in header(screen)


async def test_a_preview_applies_what_it_can_and_names_what_it_cannot() -> None:
    """The rows carry no models: `model:gpt-4o` cannot be judged on them, and the line says
    so; the other conditions are applied."""
    server = SearchServer()
    client, app = app_for(server)
    loaded = ROWS[:200]
    kept = [r["id"] for r in loaded if r["status"] == "error" and r["duration_ms"] >= 2000]
    async with client, app.run_test(size=(100, 24)) as pilot:
        screen = await loaded_traces(app, pilot)
        await pilot.press("slash", *"error model:gpt-4o latency>2s")
        await wait_for(pilot, lambda: ids(screen) == kept, what="the preview's rows")
        await wait_for(pilot, lambda: "enter asks the server" in preview(screen))
        said = preview(screen)
        assert f"preview: {len(kept)} of 200 loaded rows" in said
        assert "model: not judged here" in said


async def test_what_is_typed_that_does_not_read_is_said_and_the_list_stays() -> None:
    """On loaded rows (a server without filters), with `error` on: a latency without a unit
    and an unclosed quote each say what is wrong, and the list keeps the query's rows."""
    server = SearchServer(offers=False)
    client, app = app_for(server)
    errors = [r["id"] for r in ROWS[:200] if r["status"] == "error"]
    async with client, app.run_test(size=(100, 24)) as pilot:
        screen = await loaded_traces(app, pilot)
        await pilot.press("slash", *"error", "enter")
        await wait_for(pilot, lambda: ids(screen) == errors, what="the errors, here")
        for typed, wrong in (
            ("latency>abc", "a latency is a number with a unit"),
            ('"refund', 'a quote (") is not closed'),
        ):
            await pilot.press("slash", "ctrl+u", *typed)
            await wait_for(pilot, lambda: wrong in preview(screen), what=wrong)  # noqa: B023
            assert ids(screen) == errors, typed
            assert "filtering loaded rows: 29 of 200" in header(screen)
            await pilot.press("escape")  # closes the line and drops the query
            await wait_for(pilot, lambda: len(ids(screen)) == 200)
            await pilot.press("slash", "ctrl+u", *"error", "enter")
            await wait_for(pilot, lambda: ids(screen) == errors)


async def test_at_80_columns_an_active_query_keeps_the_header_on_one_line() -> None:
    """The header does not wrap: the least needed parts go first, then the query is cut (with
    an ellipsis); the count and `(x clears)` stay, and `/` shows the whole query."""
    server = SearchServer()
    client, app = app_for(server)
    query = "error user:alice latency>1s sort:-latency refund"
    async with client, app.run_test(size=(80, 24)) as pilot:
        screen = await loaded_traces(app, pilot)
        await pilot.press("slash", *query, "enter")
        await wait_for(pilot, lambda: screen.state.asked is not None and not screen.fetching)
        await settled(pilot)
        field = screen.query_one("#header")
        lines = rendered_text(field).rstrip("\n").split("\n")
        assert len(lines) == 1 and field.size.height == 1, lines
        found = len(screen.query_one(TraceTable).rows)
        assert lines[0].startswith("p · slowest first · error user:al")
        assert "… (x clears)" in lines[0] and lines[0].rstrip().endswith(f"· {found} found")
        await pilot.press("slash")
        assert screen.query_one(QueryLine).value == query
