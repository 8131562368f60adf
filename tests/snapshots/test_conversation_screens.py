"""SVG snapshots of the conversation view at 80x24 and 160x48: a support agent's turn (a system
prompt, tools, a multi-turn history with a tool call and its result, the answer with markdown
and a code block), zoomed at 80x24, and a tool span's fields with its arguments open."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.chat_traces import CHAT_TRACE_ATTRIBUTES, add_trace, chat_spans
from tests.scenes import FIXED_NOW_MS, SIZES, Scene, make_app, pin_time_zone, run_before
from tui.app import StartAt
from tui.server.demo import DemoKeys, populate
from tui.server.run import LocalService
from tui.server.store import Store

CHAT_TRACE_ID = "5a1e5c0ffee0c4a7d00d5a1e5c0ffee0"

SCENES = (
    Scene("chat", StartAt(trace_id=CHAT_TRACE_ID), ("down",), "A model call's conversation"),
    Scene("chat-zoomed", StartAt(trace_id=CHAT_TRACE_ID), ("down", "z"), "z: the pane alone"),
    Scene(
        "tool-fields",
        StartAt(trace_id=CHAT_TRACE_ID),
        ("down", "down", "c"),
        "A tool span's fields: its arguments open in the JSON tree",
    ),
)


@pytest.fixture(scope="module")
def chat_service(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[LocalService, DemoKeys]]:
    pin_time_zone()
    store = Store(tmp_path_factory.mktemp("chat-snapshots") / "chat.sqlite3")
    keys = populate(store, seed=7, now=FIXED_NOW_MS, scale=0.01, big_traces=False)
    add_trace(
        store,
        CHAT_TRACE_ID,
        chat_spans(),
        project_id="proj_support",
        name="support_turn",
        started_ms=FIXED_NOW_MS - 90_000,
        attributes=CHAT_TRACE_ATTRIBUTES,
    )
    service = LocalService(store, rate_limit=1000).start()
    yield service, keys
    service.stop()


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("scene", SCENES, ids=[s.name for s in SCENES])
def test_conversation(
    snap_compare: Any, chat_service: tuple[LocalService, DemoKeys], scene: Scene, size: str
) -> None:
    service, keys = chat_service
    app = make_app(service, keys, scene)
    assert snap_compare(app, terminal_size=SIZES[size], run_before=run_before(scene))
