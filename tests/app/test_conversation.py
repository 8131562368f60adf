"""The conversation view and the detail pane with Pilot, against the local service: what shows
first, the keys (Tab, c, z, fold, search, copy), the pane starting at the top, the trace's own
attributes, span search in message text, and the trace list's input preview."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.support.app import (
    detail_lines,
    loaded_traces,
    rendered_text,
    running_app,
    tree_shown,
    wait_for,
)
from tests.support.builders import add_bulk_traces
from tests.support.chat_app import chat_trace, document, flat, on_screen, select
from tests.support.chat_traces import (
    ANSWER,
    FOLLOW_UP,
    QUESTION,
    SYSTEM_PROMPT,
    SpanSpec,
    genai,
    text,
)
from tests.support.otlp import (
    new_project,
    new_span_id,
    new_trace_id,
    partial,
    post,
    request,
    root_client,
    span,
)
from tests.support.service import RunningService
from tui.server.store.rows import now_ms
from tui.ui.app import StartAt
from tui.ui.screens.help import HelpScreen
from tui.ui.widgets.document import DocumentView
from tui.ui.widgets.span_detail import SpanDetail
from tui.ui.widgets.span_tree import SpanTreeView
from tui.ui.widgets.trace_table import TraceTable


async def test_an_llm_span_shows_its_conversation_first_at_120x40(service: RunningService) -> None:
    async with chat_trace(service, size=(120, 40)) as (app, pilot, _):
        await pilot.press("down")  # the model call
        await pilot.pause()
        assert app.screen.query_one(SpanDetail).view == "chat"
        shown = "\n".join(on_screen(app))  # without further keys: on screen, not scrolled to
        assert "● user" in shown and QUESTION[:30] in shown
        assert "◆ assistant" in shown and "output · finish: stop" in shown
        assert "Good news: order **#48213** shipped" in shown
        whole = "\n".join(detail_lines(app))
        assert "■ system" in whole and "You are the support assistant" in whole
        assert "⚒ tools (2): lookup_order, escalate" in whole
        assert "◆ assistant  → call lookup_order  call_7Qx" in whole
        assert '{"order_id": 48213, "include": ["shipping"]}' in flat(whole)
        assert "◇ tool  ← result  call_7Qx" in whole and '"status": "shipped"' in whole
        assert "│ https://dhl.example/track?id=JD01460000382\n│ 71" in whole  # a code block
        assert "• Carrier: DHL" in whole
        assert "read as OTel GenAI" in whole


async def test_a_long_history_starts_closed_so_the_turn_shows(service: RunningService) -> None:
    history = []
    for n in range(10):
        history += [
            genai("user", text(f"question {n}: " + "words " * 30)),
            genai("assistant", text(f"answer {n}: " + "more words " * 30)),
        ]
    history.append(genai("user", text("And the last question?")))
    attributes = {
        "gen_ai.input.messages": json.dumps(history),
        "gen_ai.output.messages": json.dumps([genai("assistant", text("The last answer."))]),
    }
    spans = [SpanSpec("a", None, "long chat", "llm", attributes=attributes)]
    async with chat_trace(service, size=(120, 40), spans=spans) as (app, pilot, _):
        shown = "\n".join(on_screen(app))
        assert "▸ ⋯ 20 earlier messages" in shown
        assert "And the last question?" in shown and "The last answer." in shown
        assert "question 3" not in shown
        await pilot.press("tab", "slash", *"answer 7", "enter")
        await pilot.pause()
        assert "answer 7" in document(app).text_lines()[document(app).cursor]  # opened to it
        assert any("▾ ⋯ 20 earlier messages" in line for line in detail_lines(app))


async def test_tool_retrieval_and_openinference_spans(service: RunningService) -> None:
    async with chat_trace(service, size=(120, 40)) as (app, pilot, _):
        await select(pilot, app, "lookup_order")
        tool = "\n".join(detail_lines(app))
        assert "◇ tool call · lookup_order  call_7Qx" in tool
        assert '{"order_id": 48213, "include": ["shipping"]}' in tool and "◇ result" in tool
        await select(pilot, app, "kb.search")
        retrieval = "\n".join(detail_lines(app))
        assert "? query" in retrieval and "change delivery address" in retrieval
        assert "▤ document 1 · kb-118 · score 0.873" in retrieval
        assert "Addresses can be changed until the parcel leaves the depot." in flat(retrieval)
        await select(pilot, app, "chat gpt-4o-mini")
        second = "\n".join(detail_lines(app))
        assert FOLLOW_UP in second and "read as OpenInference" in second


async def test_an_unknown_shape_shows_the_fields_and_the_json_tree(service: RunningService) -> None:
    async with chat_trace(service) as (app, pilot, _):
        await select(pilot, app, "custom.step")
        detail = app.screen.query_one(SpanDetail)
        assert detail.view == "fields"
        lines = detail_lines(app)
        assert any(line.startswith("name") and "custom.step" in line for line in lines)
        assert "▾ attributes {1}" in lines
        assert "  ▾ custom {1}" in lines and "    ▾ shape [2]" in lines  # small: open
        assert "      [0]: 1" in lines


async def test_c_switches_between_conversation_and_fields_and_the_choice_holds(
    service: RunningService,
) -> None:
    async with chat_trace(service) as (app, pilot, _):
        await select(pilot, app, "chat gpt-4o")
        detail = app.screen.query_one(SpanDetail)
        assert detail.view == "chat" and "Conversation" in str(detail.border_title)
        await pilot.press("c")
        assert detail.view == "fields"
        assert any("gen_ai.input.messages" in line for line in detail_lines(app))
        await select(pilot, app, "chat gpt-4o-mini")  # the next span: still the fields
        assert detail.view == "fields"
        await pilot.press("c")  # back to the conversation, for any span
        assert detail.view == "chat"
        await select(pilot, app, "custom.step")
        assert detail.view == "fields"  # nothing to read as a conversation: the fields
        await pilot.press("c")
        assert detail.view == "chat"
        assert any("No messages, tool call or documents" in line for line in detail_lines(app))


async def test_tab_reaches_the_pane_in_one_press_and_is_listed_in_help(
    service: RunningService,
) -> None:
    async with chat_trace(service) as (app, pilot, screen):
        tree = screen.query_one(SpanTreeView)
        await pilot.pause()
        assert app.focused is tree
        before = screen.query_one(SpanDetail).size.height
        await pilot.press("tab")
        await pilot.pause()
        assert app.focused is document(app)
        # It gets the room: the tree keeps five rows (its cursor among them), the pane the rest.
        assert screen.query_one(SpanDetail).size.height > before
        assert screen.query_one("#tree-pane").size.height == 5
        await pilot.press("tab")
        assert app.focused is tree
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        keys = rendered_text(app.screen.query_one("#keys"))
        assert "tab" in keys and "Pane" in keys and "Zoom" in keys and "View" in keys


async def test_z_zooms_the_pane_to_the_whole_screen_at_80x24(service: RunningService) -> None:
    async with chat_trace(service) as (app, pilot, screen):
        await select(pilot, app, "chat gpt-4o")
        await pilot.press("z")
        await pilot.pause()
        assert not screen.query_one("#tree-pane").display and app.focused is document(app)
        assert document(app).size.height >= 18  # all but the title, status and footer rows
        await pilot.press("escape")  # esc leaves the zoom first, not the trace
        await pilot.pause()
        assert screen.query_one("#tree-pane").display and app.screen is screen
        assert app.focused is document(app)
        await pilot.press("escape")  # then the pane, for the tree
        assert app.focused is screen.query_one(SpanTreeView) and app.screen is screen
        await pilot.press("escape")  # then the trace
        assert app.screen is not screen


async def test_the_pane_starts_at_the_top_for_each_span(service: RunningService) -> None:
    async with chat_trace(service, size=(80, 24)) as (app, pilot, _):
        await select(pilot, app, "chat gpt-4o")
        await pilot.press("tab", "end")
        await pilot.pause()
        view = document(app)
        assert view.scroll_offset.y > 0 and view.cursor > 0
        await pilot.press("tab", "down")
        await pilot.pause()
        assert view.scroll_offset.y == 0 and view.cursor == 0


async def test_a_long_message_folds_and_enter_unfolds_it(service: RunningService) -> None:
    async with chat_trace(service, long_lines=60) as (app, pilot, _):
        await select(pilot, app, "chat gpt-4o-mini")
        lines = detail_lines(app)
        assert "… 49 more lines · enter unfolds" in lines
        assert not any("detail line 59" in line for line in lines)
        await pilot.press("tab")
        view = document(app)
        row = next(i for i, line in enumerate(view.text_lines()) if "detail line 0" in line)
        view.move_to(row)
        await pilot.press("enter")
        lines = detail_lines(app)
        assert any("detail line 59" in line for line in lines) and not any(
            "more lines" in line for line in lines
        )
        await pilot.press("enter")
        assert "… 49 more lines · enter unfolds" in detail_lines(app)
        note = next(i for i, line in enumerate(view.text_lines()) if "enter unfolds" in line)
        view.scroll_to(y=note - 2, animate=False, immediate=True)
        await pilot.pause()
        await pilot.click(DocumentView, offset=(4, note - int(view.scroll_offset.y)))
        assert not any("more lines" in line for line in detail_lines(app))  # a click unfolds


async def test_slash_searches_the_conversation_and_unfolds_to_the_match(
    service: RunningService,
) -> None:
    async with chat_trace(service, long_lines=60) as (app, pilot, _):
        await select(pilot, app, "chat gpt-4o-mini")
        await pilot.press("tab", "slash", *"line 42", "enter")
        await pilot.pause()
        view = document(app)
        assert view.current is not None
        cursor_line = view.text_lines()[view.cursor]
        assert "detail line 42" in cursor_line  # unfolded, and the cursor on the match
        assert any("detail line 42" in line for line in on_screen(app))  # scrolled to it
        await pilot.press("escape")
        assert app.focused is view
        await pilot.press("n")  # the next match: none after 42 holds "line 42", so it wraps
        assert "detail line 42" in view.text_lines()[view.cursor]
        await pilot.press("slash", "ctrl+u", *"no such text at all", "enter")
        assert any("Nothing in this span matches" in n.message for n in app._notifications)


async def test_y_copies_the_message_under_the_cursor(service: RunningService) -> None:
    async with chat_trace(service) as (app, pilot, _):
        await select(pilot, app, "chat gpt-4o")
        await pilot.press("tab")
        view = document(app)
        view.move_to(next(i for i, line in enumerate(view.text_lines()) if QUESTION[:20] in line))
        await pilot.press("y")
        assert app.clipboard == QUESTION
        assert any("Copied the user message" in n.message for n in app._notifications)
        view.move_to(next(i for i, line in enumerate(view.text_lines()) if "■ system" in line))
        await pilot.press("y")
        assert app.clipboard == SYSTEM_PROMPT  # whole, though folded on screen
        view.move_to(next(i for i, line in enumerate(view.text_lines()) if "finish: stop" in line))
        await pilot.press("y")
        assert app.clipboard == ANSWER
        await pilot.press("tab", "y")  # in the tree, y still copies the span as JSON
        assert json.loads(app.clipboard)["name"] == "chat gpt-4o"


async def test_brackets_go_by_message_and_arrows_open_and_close(service: RunningService) -> None:
    async with chat_trace(service, size=(120, 40)) as (app, pilot, _):
        await select(pilot, app, "chat gpt-4o")
        await pilot.press("tab")
        view = document(app)

        def at_cursor() -> str:
            return view.text_lines()[view.cursor]

        headers = []
        for _ in range(6):
            await pilot.press("right_square_bracket")
            headers.append(at_cursor().split(" ─")[0])
        assert "output · finish: stop" in at_cursor()
        assert headers[:5] == [
            "■ system",
            "▸ ⚒ tools (2): lookup_order, escalate",
            "● user",
            "◆ assistant  → call lookup_order  call_7Qx",
            "◇ tool  ← result  call_7Qx",
        ]
        assert headers[5] == "◆ assistant"
        await pilot.press("left_square_bracket", "left_square_bracket", "left_square_bracket")
        assert at_cursor().startswith("● user")
        await pilot.press("left_square_bracket", "right")  # the tools: right opens them
        assert at_cursor().startswith("▾ ⚒ tools (2)")
        assert any(line.startswith("  ▾ lookup_order {4}") for line in view.text_lines())
        await pilot.press("left")  # and left closes them again
        assert at_cursor().startswith("▸ ⚒ tools (2)")


async def test_span_search_matches_message_text(service: RunningService) -> None:
    async with chat_trace(service) as (app, pilot, _):
        view = app.screen.query_one(SpanTreeView)
        await pilot.press("slash", *"change the delivery address", "enter")
        await wait_for(pilot, lambda: view.position != 0)
        assert view.trace_tree.spans[view.position or 0].name == "chat gpt-4o-mini"
        await pilot.press("ctrl+u", *"no span says this", "enter")
        await wait_for(
            pilot, lambda: any("No span matches" in n.message for n in app._notifications)
        )


async def test_the_summary_shows_the_traces_own_attributes(service: RunningService) -> None:
    async with chat_trace(service) as (_app, _, screen):
        summary = rendered_text(screen.query_one("#summary"))
        for shown in ("user u-42", "session sess-9f2", "tags vip, eu", f"input {QUESTION[:20]}"):
            assert shown in " ".join(summary.split())


async def test_fields_show_long_values_whole_after_unfolding(service: RunningService) -> None:
    long_value = " ".join(f"w{n}" for n in range(3000))  # about 15,000 characters
    spans = [
        SpanSpec("a", None, "step", "chain", attributes={"note": long_value, "args": {"x": 1}})
    ]
    async with chat_trace(service, size=(120, 40), spans=spans) as (app, pilot, _):
        lines = detail_lines(app)
        assert any("enter unfolds" in line for line in lines)
        assert "  ▾ args {1}" in lines and "    x: 1" in lines  # a small object opens by itself
        await pilot.press("tab")
        view = document(app)
        view.move_to(next(i for i, line in enumerate(view.text_lines()) if "note:" in line))
        await pilot.press("enter")
        words = " ".join(detail_lines(app)).split()
        assert 'w2999"' in words and "\\n" not in " ".join(detail_lines(app))


class AddsPreviews(httpx.AsyncBaseTransport):
    """The real service, with an input preview on each trace of a list (as the service will
    send one): "preview of <name>"."""

    def __init__(self) -> None:
        self.real = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.real.handle_async_request(request)
        body = await response.aread()
        if request.url.path.endswith("/traces") and response.status_code == 200:
            page = json.loads(body)
            for row in page["data"]:
                row["input_preview"] = f"preview of {row['id'][-6:]}"
            body = json.dumps(page).encode()
        headers = [(k, v) for k, v in response.headers.items() if k.lower() != "content-length"]
        return httpx.Response(response.status_code, headers=headers, content=body)


async def test_the_trace_list_shows_an_input_preview_and_filters_by_it(
    service: RunningService,
) -> None:
    async with running_app(service, StartAt(project_id="proj_rag"), transport=AddsPreviews()) as (
        app,
        pilot,
    ):
        screen = await loaded_traces(app, pilot)
        table = screen.query_one(TraceTable)
        await pilot.pause()
        assert table.previews and "input" in rendered_text(screen.query_one("#columns"))
        assert "preview of" in table.render_line(0).text
        wanted = table.rows[3]
        await pilot.press("slash", *f"preview of {wanted.id[-6:]}")
        assert table.rows == [wanted]


async def test_no_preview_no_input_column(service: RunningService) -> None:
    # Traces whose rows carry no input preview (nor an `input`): the list looks as it did.
    project_id = "proj_no_preview"
    if service.store.get_project(project_id) is None:
        with service.store.transaction() as db:
            service.store.insert_project(db, project_id, None, 30, project_id=project_id)
        add_bulk_traces(service.store, project_id, 30, now_ms())
    async with running_app(service, StartAt(project_id=project_id)) as (app, _):
        screen = await loaded_traces(app, _)
        assert not screen.query_one(TraceTable).previews
        assert "input" not in rendered_text(screen.query_one("#columns"))


@pytest.mark.parametrize("width", [80, 160])
async def test_the_footer_keeps_the_pane_keys_at(service: RunningService, width: int) -> None:
    async with chat_trace(service, size=(width, 24)) as (_app, pilot, screen):
        await pilot.pause()
        footer = " ".join(
            f"{key.key_display} {key.description}" for key in screen.query("FooterKey")
        )
        for shown in ("tab Pane", "c View", "z Zoom", "/ Find", "? Keys", "q Quit"):
            assert shown in footer


async def test_the_services_preview_fills_the_input_column(service: RunningService) -> None:
    """The local service gives list rows an input_preview (an extension): the column shows."""
    async with running_app(service, StartAt(project_id="proj_rag")) as (app, _):
        screen = await loaded_traces(app, _)
        assert screen.query_one(TraceTable).previews
        assert "input" in rendered_text(screen.query_one("#columns"))


async def test_a_chat_span_ingested_over_otlp_shows_its_question_and_answer_at_120x40(
    service: RunningService,
) -> None:
    """The whole way: OTLP protobuf into the service (children first, the root last, as batch
    processors send them), then the app on the trace: one key down to the model call, and the
    user's question and the assistant's answer are on screen."""
    question = "Can I change the delivery address of order #77120?"
    answer = "Yes: until it ships, under Orders -> #77120 -> Change address."
    trace, root, chat = new_trace_id(), new_span_id(), new_span_id()
    t0 = now_ms() - 30_000
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.usage.input_tokens": 420,
        "gen_ai.usage.output_tokens": 38,
        "gen_ai.input.messages": json.dumps([genai("user", text(question))]),
        "gen_ai.output.messages": json.dumps(
            [genai("assistant", text(answer)) | {"finish_reason": "stop"}]
        ),
    }
    _, key = new_project(service)  # a late root moves its start: not in a shared project
    with root_client(service.base_url, key) as client:
        assert partial(
            post(client, request(span(trace, chat, root, "chat", t0 + 5, 900, attributes)))
        ) == (0, "")
        assert partial(post(client, request(span(trace, root, b"", "invoke_agent", t0, 1000)))) == (
            0,
            "",
        )
    async with running_app(service, StartAt(trace_id=trace.hex()), size=(120, 40)) as (app, pilot):
        await wait_for(pilot, lambda: tree_shown(app))
        await pilot.press("down")  # the model call
        await pilot.pause()
        shown = flat("\n".join(on_screen(app)))
        assert question in shown and answer in shown
        assert "read as OTel GenAI" in shown
