"""SVG snapshots of the conversation view at 80x24 and 160x48: a support agent's turn (a system
prompt, tools, a multi-turn history with a tool call and its result, the answer with markdown
and a code block), zoomed, and a tool span's fields with its arguments open."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.chat_traces import CHAT_SCENES, chat_service
from tests.support.scenes import SIZES, Scene, make_app, pin_time_zone, run_before
from tui.demo.data import DemoKeys
from tui.server.run import LocalService


@pytest.fixture(scope="module")
def chat_app_service(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[LocalService, DemoKeys]]:
    pin_time_zone()
    service, keys = chat_service(tmp_path_factory.mktemp("chat-snapshots") / "chat.sqlite3")
    yield service, keys
    service.stop()


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("scene", CHAT_SCENES, ids=[s.name for s in CHAT_SCENES])
def test_conversation(
    snap_compare: Any, chat_app_service: tuple[LocalService, DemoKeys], scene: Scene, size: str
) -> None:
    service, keys = chat_app_service
    app = make_app(service, keys, scene)
    assert snap_compare(app, terminal_size=SIZES[size], run_before=run_before(scene))
