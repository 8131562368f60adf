"""SVG snapshots of every screen at 80x24 and 160x48, on fixed demo data."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.scenes import (
    SCENES,
    SIZES,
    Scene,
    demo_service,
    make_app,
    pin_time_zone,
    run_before,
)
from tui.demo.data import DemoKeys
from tui.server.run import LocalService


@pytest.fixture(scope="module")
def fixed_service(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[LocalService, DemoKeys]]:
    pin_time_zone()
    service, keys = demo_service(tmp_path_factory.mktemp("snapshots") / "demo.sqlite3")
    yield service, keys
    service.stop()


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("scene", SCENES, ids=[s.name for s in SCENES])
def test_screen(
    snap_compare: Any, fixed_service: tuple[LocalService, DemoKeys], scene: Scene, size: str
) -> None:
    service, keys = fixed_service
    app = make_app(service, keys, scene)
    assert snap_compare(app, terminal_size=SIZES[size], run_before=run_before(scene))


def test_every_scene_starts_at_a_trace_its_data_holds(
    fixed_service: tuple[LocalService, DemoKeys],
) -> None:
    """A scene opened at a trace the data lacks draws "not found", which a snapshot keeps as
    faithfully as the screen it was meant to show."""
    service, _ = fixed_service
    wanted = {s.name: s.start.trace_id for s in SCENES if s.start.trace_id is not None}
    assert wanted and all(service.store.get_trace(t) is not None for t in wanted.values()), {
        name: t for name, t in wanted.items() if service.store.get_trace(t) is None
    }
