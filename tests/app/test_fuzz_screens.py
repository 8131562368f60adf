"""Hypothesis-driven server responses through the app's screens: whatever the projects, trace
list, trace, spans and alerts endpoints answer (records of odd shapes and hostile strings,
envelopes, errors, garbage), a walk over every screen neither crashes nor hangs, and nothing
the server wrote reaches the screen raw.

Bounded: a fixed number of examples, each a short walk (see EXAMPLES)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.support.app import DEADLINE_SECONDS
from tests.support.helpers import mock_client
from tests.support.hostile import HOSTILE, RAW
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.api_log import ApiLogScreen
from tui.ui.screens.trace_detail import TraceDetailScreen
from tui.ui.screens.traces import TracesScreen

EXAMPLES = 20  # about 2 s each on the 2-core machine, most of it Pilot starting and pressing keys

# Characters that must never reach the screen as they are (they are shown as ␛, <U+202E>...).
text = (
    st.sampled_from(
        [HOSTILE, "[@click=app.quit]q[/]", "\x1b]52;c;eA==\x07", "\u202eevil", "half \ud800", ""]
    )
    | st.text(max_size=30)
    | st.text(st.sampled_from("[]@=/\x1b\x00\x9b\u202e漢🙂 a"), max_size=30)
)
scalars = (
    text
    | st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from(
        ["2026-11-21T09:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "1e20", "-5"]
    )
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=12,
)
ids = st.sampled_from(["a", "b", "c", "d", "t", "", None, 7, HOSTILE])


def record(*fields: str) -> st.SearchStrategy[dict[str, Any]]:
    """A record: some of `fields` with any values, ids from a small set (so they repeat and
    cycle), and sometimes a key no one expects."""
    known = st.fixed_dictionaries(
        {},
        optional={
            **{field: values for field in fields},
            "id": ids,
            "parent_id": ids,
            "trace_id": ids,
        },
    )
    extra = st.dictionaries(text, values, max_size=2)
    return st.builds(lambda a, b: {**b, **a}, known, extra)


def envelope(items: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """The shapes a list comes in, and some it should not."""
    listed = st.lists(items, max_size=6)
    return st.one_of(
        listed,
        st.builds(lambda d, c: {"data": d, "next_cursor": c}, listed, st.none() | text),
        st.builds(lambda d, m: {"items": d, "has_more": m}, listed, st.booleans()),
        values,
    )


TRACE_FIELDS = ("name", "started_at", "duration_ms", "status", "span_count", "total_cost_usd")
SPAN_FIELDS = (
    "name",
    "kind",
    "model",
    "started_at",
    "ended_at",
    "duration_ms",
    "status",
    "error_message",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "attributes",
)
ALERT_FIELDS = ("name", "metric", "condition", "threshold", "webhook_url", "enabled")
PROJECT_FIELDS = ("name", "description", "retention_days", "created_at")

answer_body = st.one_of(
    st.just("json"),  # the generated JSON
    st.sampled_from([b"", b"<html>oops</html>", b'{"data": [', b"\x00\xff\x1b[2J"]),
)
statuses = st.sampled_from([200, 200, 200, 200, 404, 429, 500])


class Server:
    """Answers each endpoint with its generated body and status."""

    def __init__(self, bodies: dict[str, Any], statuses: dict[str, int]) -> None:
        self.bodies = bodies
        self.statuses = statuses

    def route(self, path: str) -> str:
        if path.endswith("/alerts"):
            return "alerts"
        if path.endswith("/spans"):
            return "spans"
        if "/traces/" in path:
            return "trace"
        return "traces" if path.endswith("/traces") else "projects"

    def __call__(self, request: httpx.Request) -> httpx.Response:
        name = self.route(request.url.path)
        body = self.bodies[name]
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        return httpx.Response(
            self.statuses[name], content=content, headers={"content-type": "application/json"}
        )


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # no shrinking: bounded in time
    print_blob=True,
)
@given(
    projects=envelope(record(*PROJECT_FIELDS)),
    traces=envelope(record(*TRACE_FIELDS)),
    trace=record(*TRACE_FIELDS, "spans")
    | st.builds(
        lambda t, s: {**t, "spans": s}, record(*TRACE_FIELDS), st.lists(record(*SPAN_FIELDS))
    ),
    spans=envelope(record(*SPAN_FIELDS)),
    alerts=envelope(record(*ALERT_FIELDS)),
    garbage=st.dictionaries(
        st.sampled_from(["projects", "traces", "trace", "spans", "alerts"]), answer_body
    ),
    status=st.dictionaries(
        st.sampled_from(["projects", "traces", "trace", "spans", "alerts"]), statuses
    ),
)
def test_any_answers_walk_every_screen_without_harm(
    projects: Any,
    traces: Any,
    trace: Any,
    spans: Any,
    alerts: Any,
    garbage: dict[str, Any],
    status: dict[str, int],
) -> None:
    bodies = {"projects": projects, "traces": traces, "trace": trace, "spans": spans}
    bodies["alerts"] = alerts
    for name, raw in garbage.items():
        if raw != "json":
            bodies[name] = raw
    server = Server(bodies, {name: status.get(name, 200) for name in bodies})
    asyncio.run(walk(server))


async def walk(server: Server) -> None:
    """Every screen, as a user would reach it; each one's picture checked for raw characters."""
    async with mock_client(server, max_retries=0, max_rate_limit_retries=0) as client:
        app = TraceTuiApp(client, StartAt(project_id="p"))
        async with app.run_test(size=(100, 30)) as pilot:
            steps: list[tuple[Any, type[Any] | None]] = [
                (("down", "enter"), None),  # the first row, whatever it holds
                (lambda: back_to_traces(app), TracesScreen),
                (("s",), TracesScreen),  # sorted by duration, whatever the durations
                (lambda: app.open_trace("t", "p"), TraceDetailScreen),
                (("plus", "down"), TraceDetailScreen),  # everything expanded, a span's detail
                (("escape", "a"), None),  # the project's alerts
                (("escape", "escape"), None),  # the projects
                (lambda: app.push_screen(ApiLogScreen()), ApiLogScreen),
            ]
            await settle(pilot, app)
            for step, expected in steps:
                if callable(step):
                    step()
                else:
                    await pilot.press(*step)
                await settle(pilot, app)
                if expected is not None:
                    assert isinstance(app.screen, expected)
                check_screen(app)
            assert app.is_running


def back_to_traces(app: TraceTuiApp) -> None:
    if not isinstance(app.screen, TracesScreen):
        app.pop_screen()


async def settle(pilot: Any, app: TraceTuiApp) -> None:
    """Wait until every load has finished, however it ended; a worker that died of an
    unexpected exception (a screen left loading for ever) fails the test here."""
    await pilot.pause()
    await asyncio.wait_for(app.workers.wait_for_complete(), timeout=DEADLINE_SECONDS)
    await pilot.pause()


def check_screen(app: TraceTuiApp) -> None:
    picture = app.export_screenshot()
    found = [c for c in RAW if c in picture]
    assert not found, f"raw {found!r} on {type(app.screen).__name__}"
