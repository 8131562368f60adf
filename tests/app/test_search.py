"""The trace list's query line and the sessions screen, with Pilot, against an
httpx.MockTransport server shaped as the search contract says (GET /v1/traces's filters and
sorts, listed in /v1/openapi.json; a project's sessions), and against one without them (the
query filters the loaded rows, and says so)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
from pydantic import SecretStr

from tests.support.app import loaded_traces, rendered_text, settled, showing, wait_for
from tui.api import ApiClient
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.session import SessionScreen
from tui.ui.screens.sessions import SessionsScreen
from tui.ui.screens.traces import TracesScreen
from tui.ui.widgets.document import DocumentView
from tui.ui.widgets.query_line import QueryLine
from tui.ui.widgets.trace_table import TraceTable

NOW = datetime.now(timezone.utc).replace(microsecond=0)
FILTERS = [
    "project_id",
    "from",
    "to",
    "limit",
    "cursor",
    "q",
    "status",
    "model",
    "name",
    "min_latency_ms",
    "max_latency_ms",
    "min_cost_usd",
    "user_id",
    "session_id",
    "tag",
    "sort",
    "order",
]
TOTAL = 260  # two pages of 200 under the server's limit


def row(n: int) -> dict[str, Any]:
    return {
        "id": f"t{n:04d}",
        "name": "refund agent" if n % 5 == 0 else "chat",
        "started_at": (NOW - timedelta(seconds=n * 30)).isoformat(),
        "duration_ms": 100 + n * 20,
        "status": "error" if n % 7 == 0 else "ok",
        "total_cost_usd": 0.001 * n,
        "user_id": "alice" if n % 2 else "bob",
        "session_id": f"s{n // 3}",
        "tags": ["prod"] if n % 4 == 0 else [],
        "input_preview": f"question {n}",
        "output_preview": f"answer {n}: refund granted" if n % 5 == 0 else f"answer {n}",
    }


ROWS = [row(n) for n in range(TOTAL)]


class SearchServer:
    """Traces, sessions and (with `offers`) the filters, as the contract says; requests kept."""

    def __init__(self, offers: bool = True, fail_filtered: bool = False) -> None:
        self.offers = offers
        self.fail_filtered = fail_filtered
        self.trace_requests: list[httpx.QueryParams] = []

    def document(self) -> dict[str, Any]:
        if not self.offers:
            return {"paths": {"/v1/traces": {"get": {"parameters": []}}}}
        parameters = [{"name": name, "in": "query"} for name in FILTERS]
        return {
            "paths": {
                "/v1/traces": {"get": {"parameters": parameters}},
                "/v1/projects/{project_id}/sessions": {"get": {}},
            }
        }

    def traces(self, params: httpx.QueryParams) -> httpx.Response:
        self.trace_requests.append(params)
        filtered = self.offers and any(p in params for p in ("q", "status", "user_id", "sort"))
        if filtered and self.fail_filtered:
            return httpx.Response(500, json={"error": {"message": "the index is rebuilding"}})
        rows = ROWS
        if self.offers:
            if "status" in params:
                rows = [r for r in rows if r["status"] == params["status"]]
            if "user_id" in params:
                rows = [r for r in rows if r["user_id"] == params["user_id"]]
            if "session_id" in params:
                rows = [r for r in rows if r["session_id"] == params["session_id"]]
            for word in params.get("q", "").split():
                rows = [r for r in rows if word in f"{r['name']} {r['output_preview']}"]
            if "min_latency_ms" in params:
                rows = [r for r in rows if r["duration_ms"] >= float(params["min_latency_ms"])]
            if params.get("sort") == "duration_ms":
                rows = sorted(
                    rows, key=lambda r: r["duration_ms"], reverse=params.get("order") != "asc"
                )
            elif params.get("sort") == "started_at" and params.get("order") == "asc":
                rows = list(reversed(rows))
        start = int(params.get("cursor") or 0)
        page = rows[start : start + 200]
        more = start + 200 < len(rows)
        return httpx.Response(
            200,
            json={
                "data": page,
                "next_cursor": str(start + 200) if more else None,
                "has_more": more,
            },
        )

    def trace(self, trace_id: str) -> httpx.Response:
        n = int(trace_id[1:])
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": f"question {n}"}]}]
            ),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": f"answer {n}"}]}]
            ),
        }
        span = {
            "id": f"{trace_id}-root",
            "trace_id": trace_id,
            "name": "chat gpt-4o",
            "kind": "llm",
            "started_at": ROWS[n]["started_at"],
            "duration_ms": 10,
            "attributes": attributes,
        }
        return httpx.Response(200, json={**ROWS[n], "spans": [span]})

    async def handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path.removeprefix("/v1")
        if path == "/openapi.json":
            return httpx.Response(200, json=self.document())
        if path == "/projects":
            return httpx.Response(200, json={"data": [{"id": "p", "name": "shop"}]})
        if path == "/traces":
            return self.traces(request.url.params)
        if path.startswith("/traces/"):
            return self.trace(path.rsplit("/", 1)[1])
        if path == "/projects/p/sessions" and self.offers:
            sessions = [
                {
                    "id": "s1",
                    "user_id": "alice",
                    "first_seen": ROWS[5]["started_at"],
                    "last_seen": ROWS[3]["started_at"],
                    "trace_count": 3,
                    "total_tokens": 300,
                    "total_cost_usd": 0.012,
                    "error_count": 0,
                }
            ]
            return httpx.Response(200, json={"data": sessions, "next_cursor": None})
        return httpx.Response(404, json={"error": {"message": "no such thing"}})


def app_for(server: SearchServer) -> tuple[ApiClient, TraceTuiApp]:
    transport = httpx.MockTransport(server.handle)
    client = ApiClient("http://search.example/v1", SecretStr("k" * 20), transport=transport)
    return client, TraceTuiApp(client, StartAt(project_id="p"))


def footer_text(screen: Any) -> str:
    return " ".join(f"{key.key_display} {key.description}" for key in screen.query("FooterKey"))


def header(screen: TracesScreen) -> str:
    return " ".join(rendered_text(screen.query_one("#header")).split())


async def test_a_query_goes_to_the_server_pages_under_it_and_x_clears_it() -> None:
    server = SearchServer()
    client, app = app_for(server)
    async with client, app.run_test(size=(80, 24)) as pilot:
        screen = await loaded_traces(app, pilot)
        table = screen.query_one(TraceTable)
        await pilot.press("slash", *"error user:alice latency>1s sort:-latency", "enter")
        await wait_for(pilot, lambda: screen.state.asked is not None and not screen.fetching)
        sent = server.trace_requests[-1]
        assert sent["status"] == "error" and sent["user_id"] == "alice"
        assert float(sent["min_latency_ms"]) == 1000.0
        assert (sent["sort"], sent["order"]) == ("duration_ms", "desc")
        expected = sorted(
            (
                r
                for r in ROWS
                if r["status"] == "error" and r["user_id"] == "alice" and r["duration_ms"] >= 1000
            ),
            key=lambda r: -r["duration_ms"],
        )
        assert [t.id for t in table.rows] == [r["id"] for r in expected]
        text = header(screen)
        assert "error user:a" in text  # cut at 80 columns: `/` shows it whole
        assert "slowest first" in text and "found" in text and "filtering loaded" not in text
        assert "(x clears)" in text  # the header says so: the footer has no room at 80
        # x: every trace again, newest first, without the filter.
        await pilot.press("x")
        await wait_for(pilot, lambda: screen.state.asked is None and not screen.fetching)
        assert "status" not in server.trace_requests[-1] and screen.state.query_text == ""
        assert len(table.rows) == 200


async def test_cursor_paging_carries_the_filter() -> None:
    server = SearchServer()
    client, app = app_for(server)
    async with client, app.run_test(size=(80, 24)) as pilot:
        screen = await loaded_traces(app, pilot)
        await pilot.press("slash", *"chat", "enter")  # 208 of the 260 rows: two pages
        await wait_for(pilot, lambda: screen.state.asked is not None and not screen.fetching)
        assert len(screen.traces) == 200
        await pilot.press("end")
        await wait_for(pilot, lambda: screen.ended and not screen.fetching)
        last = server.trace_requests[-1]
        assert last["cursor"] == "200" and last["q"] == "chat"
        ids = [t.id for t in screen.traces]
        assert len(ids) == len(set(ids)) == sum(1 for r in ROWS if "chat" in r["name"])


async def test_without_the_extension_the_query_filters_the_loaded_rows_and_says_so() -> None:
    server = SearchServer(offers=False)
    client, app = app_for(server)
    async with client, app.run_test(size=(80, 24)) as pilot:
        screen = await loaded_traces(app, pilot)
        table = screen.query_one(TraceTable)
        requests = len(server.trace_requests)
        await pilot.press("slash", *"error refund", "enter")
        loaded = ROWS[:200]
        wanted = [r["id"] for r in loaded if r["status"] == "error" and "refund" in r["name"]]
        # "filtering loaded rows: N of 200" where there is room; at 80 columns, said short.
        await wait_for(pilot, lambda: f"{len(wanted)} of 200 loaded" in header(screen))
        await settled(pilot)
        assert [t.id for t in table.rows] == wanted and len(screen.traces) == 200
        assert screen.state.query_here is not None  # the loaded rows, not the server
        assert len(server.trace_requests) == requests  # nothing asked of the server
        await pilot.press("escape")  # esc clears the query before it leaves
        assert len(table.rows) == 200 and app.screen is screen


async def test_a_failed_filtered_request_keeps_what_was_loaded() -> None:
    server = SearchServer(fail_filtered=True)
    client, app = app_for(server)
    async with client, app.run_test(size=(80, 24)) as pilot:
        screen = await loaded_traces(app, pilot)
        table = screen.query_one(TraceTable)
        await pilot.press("slash", *"user:alice", "enter")
        await wait_for(pilot, lambda: screen.load_error is not None and not screen.fetching)
        assert len(screen.traces) == 200  # the unfiltered rows stay, filtered here
        assert [t.id for t in table.rows] == [
            r["id"] for r in ROWS[:200] if r["user_id"] == "alice"
        ]
        text = header(screen)  # at 80 columns, said short: filtering the loaded rows here
        kept = len(table.rows)
        assert f"{kept} of 200 loaded" in text and "(ctrl+r retries)" in text


async def test_a_query_that_does_not_read_says_why_and_stays_open() -> None:
    server = SearchServer()
    client, app = app_for(server)
    async with client, app.run_test(size=(80, 24)) as pilot:
        screen = await loaded_traces(app, pilot)
        await pilot.press("slash", *"latency>2", "enter")
        await wait_for(pilot, lambda: bool(app._notifications))
        said = " ".join(str(n.message) for n in app._notifications)
        assert "a latency is a number with a unit, ms, s or m" in said
        line = screen.query_one(QueryLine)
        assert line.has_focus and line.value == "latency>2" and screen.state.query_text == ""


async def test_completion_offers_field_names_and_values_seen() -> None:
    server = SearchServer()
    client, app = app_for(server)
    async with client, app.run_test(size=(100, 24)) as pilot:
        screen = await loaded_traces(app, pilot)
        line = screen.query_one(QueryLine)
        await pilot.press("slash", *"error us")
        await wait_for(pilot, lambda: line._suggestion == "error user:")
        await pilot.press("right", *"al")
        await wait_for(pilot, lambda: line._suggestion == "error user:alice")
        await pilot.press("right")
        assert line.value == "error user:alice"


async def test_sessions_open_as_one_conversation_in_order() -> None:
    server = SearchServer()
    client, app = app_for(server)
    async with client, app.run_test(size=(80, 24)) as pilot:
        await loaded_traces(app, pilot)
        await pilot.press("S")
        await wait_for(pilot, lambda: showing(app, SessionsScreen) and app.screen.sessions)
        await pilot.press("enter")
        await wait_for(pilot, lambda: showing(app, SessionScreen))
        session = app.screen
        assert isinstance(session, SessionScreen)
        await wait_for(pilot, lambda: len(session.traces) == 3, what="the session's traces")
        asked = server.trace_requests[-1]
        assert asked["session_id"] == "s1" and (asked["sort"], asked["order"]) == (
            "started_at",
            "asc",
        )
        lines = "\n".join(session.query_one(DocumentView).text_lines())
        # Oldest first: t0005, t0004, t0003, each after its divider.
        order = [lines.index(f"question {n}") for n in (5, 4, 3)]
        assert order == sorted(order) and [f"── {n}/3 " in lines for n in (1, 2, 3)] == [True] * 3
        assert "answer 3" in lines


async def test_a_server_without_sessions_says_so() -> None:
    server = SearchServer(offers=False)
    client, app = app_for(server)
    async with client, app.run_test(size=(80, 24)) as pilot:
        await loaded_traces(app, pilot)
        await pilot.press("S")
        await wait_for(pilot, lambda: showing(app, SessionsScreen))
        await wait_for(
            pilot,
            lambda: "has no sessions" in rendered_text(app.screen.query_one("#header")),
        )


def test_the_trace_summary_shows_the_answer_first() -> None:
    from rich.console import Console

    from tui.api.models import Span, Trace
    from tui.model.spans import build_tree
    from tui.ui.screens.trace_detail import summary_text

    def shown(trace: Trace) -> str:
        console = Console(width=300, record=True, file=None, color_system=None)
        with console.capture() as capture:
            console.print(summary_text(trace, build_tree(trace.spans), NOW))
        return capture.get()

    given = Trace.model_validate({**ROWS[5], "spans": []})
    assert "user alice · session s1 · answer answer 5: refund granted · input question 5" in shown(
        given
    )
    # No preview from the server: the root's output.
    derived = Trace.model_validate({"id": "t", "name": "chat"})
    derived.spans = [Span.model_validate(s) for s in SearchServer().trace("t0003").json()["spans"]]
    assert "answer answer 3" in shown(derived)


def test_completion_never_offers_a_value_it_would_have_to_make_visible() -> None:
    """A user id with an escape sequence or a bidi override is a server's, drawn as typed once
    accepted: it is not offered; plain values are."""
    from tui.api import Trace
    from tui.ui.widgets.query_line import QueryLine

    line = QueryLine()
    line.remember(
        [
            Trace.model_validate({"id": "a", "user_id": "alice", "tags": ["prod"]}),
            Trace.model_validate({"id": "b", "user_id": "\x1b[31mmallory", "tags": ["\u202eevil"]}),
        ]
    )
    assert line.seen["user"] == {"alice"} and line.seen["tag"] == {"prod"}
